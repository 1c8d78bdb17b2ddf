"""lamina-bench (bench/) keeps the few things it copies from lamina equal to lamina's.

The lab imports lamina's public faces only (pyproject's ``bench-public-api`` contract),
so two small pieces are written there again on purpose: the rule that quotes a context as
data, which the shared answer prompt must state word for word as lamina's prompts do, and
the scheme of lamina's record ids, which the derived-oracle records follow.
"""

from __future__ import annotations

from lamina.cli import build_parser
from lamina.prompts.construction import DATA_RULE
from lamina.records.model import stable_id
from lamina_bench.evaluation import ingest, prompts


def test_the_shared_answer_prompt_quotes_its_context_as_lamina_does() -> None:
    assert prompts.DATA_RULE == DATA_RULE
    system = prompts.EVAL_ANSWER.messages[0].prompt.template  # type: ignore[union-attr]
    assert DATA_RULE in system


def test_derived_oracle_ids_follow_lamina_s_id_scheme() -> None:
    parts = ("oracle-observation", "derived-oracle/conv-26", "3")
    assert ingest.stable_id(*parts) == stable_id(*parts)


def test_the_product_command_line_has_no_eval_command() -> None:
    commands = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert "eval" not in commands and "demo" in commands
