r"""How well does the rule check tell a turn the rule forbids from one it allows?

The rule check (``lamina.agents.ingest.extraction.withholding``) asks the model two opposite yes/no
questions about every turn when an application sets a "never store" rule: "does this
message mention any of <the rule's topics>?" and "is it free of any mention of them?".
This probe asks both, with the product's own prompts and the topics the product reads
from the rule, for every turn of ``tests/data/never_store`` (30 chats written for the
never-store benchmark, five languages). A turn "breaks the rule" when it holds one of its
chat's ``excluded`` words. Figures, overall and per language:

* ``auc_mentions``: ROC AUC of P(yes) to the first question alone;
* ``auc_difference``: ROC AUC of P(yes | mentions) - P(yes | free of);
* ``withheld``: what the check decides (mentions > free of): turns caught among those
  that break the rule, and turns withheld among the others;
* the same split at fixed thresholds of the first question alone, to show why a
  threshold is not used (where a model leaning to "yes" puts clean turns).

Usage::

    lamina serve-llm --model qwen --threads 2 --port 8091 &
    python benchmarks/rule_check_signal.py --base-url http://127.0.0.1:8091/v1 \
        --json benchmarks/rule_check_signal.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lamina.agents.common.deps import NodeDeps, StepLog
from lamina.agents.ingest.extraction.withholding import rule_topics
from lamina.llm.structured import StructuredCaller
from lamina.prompts.withholding import FREE_OF, MENTIONS
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "tests" / "data" / "never_store" / "conversations.json"
sys.path.insert(0, str(HERE))
from never_store import matches  # noqa: E402
from yes_no import auc, p_yes  # noqa: E402


def ask(base_url: str, template: Any, text: str, topics: str) -> float:
    """P(yes) to one of the product's two questions (its system and human messages)."""
    system, human = template.format_messages(text=text, topics=topics)
    return p_yes(base_url, str(human.content), system=str(system.content))


def summarise(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The split of a set of turns by the check and by thresholds of the first question."""
    bad = [r for r in rows if r["breaks"]]
    good = [r for r in rows if not r["breaks"]]
    return {
        "turns": len(rows),
        "breaking_rule": len(bad),
        "auc_mentions": auc([r["mentions"] for r in bad], [r["mentions"] for r in good]),
        "auc_difference": auc(
            [r["mentions"] - r["free"] for r in bad], [r["mentions"] - r["free"] for r in good]
        ),
        "withheld": {
            "caught": sum(r["mentions"] > r["free"] for r in bad),
            "of_breaking": len(bad),
            "clean_withheld": sum(r["mentions"] > r["free"] for r in good),
            "of_clean": len(good),
        },
        "mentions_at": {
            str(t): {
                "caught": sum(r["mentions"] >= t for r in bad),
                "clean_withheld": sum(r["mentions"] >= t for r in good),
            }
            for t in (0.5, 0.7, 0.9)
        },
    }


def probe(base_url: str, log: StepLog, rule: dict[str, Any]) -> dict[str, Any]:
    """Both questions for every turn under one rule, with the topics the product reads."""
    topics = rule_topics(log, rule["instruction"])
    listed = ", ".join(topics)
    rows = []
    for chat in rule["conversations"]:
        for turn in chat["turns"]:
            text = turn["text"]
            rows.append(
                {
                    "id": chat["id"],
                    "lang": chat["lang"],
                    "text": text,
                    "breaks": bool(matches(chat["excluded"], text)),
                    "mentions": round(ask(base_url, MENTIONS, text, listed), 4),
                    "free": round(ask(base_url, FREE_OF, text, listed), 4),
                }
            )
    langs = sorted({r["lang"] for r in rows})
    return {
        "rule": rule["instruction"],
        "topics_read": list(topics),
        "all": summarise(rows),
        "by_language": {lang: summarise([r for r in rows if r["lang"] == lang]) for lang in langs},
        "rows": rows,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Ask both questions for every turn; print and optionally save the figures."""
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--base-url", required=True, help="an OpenAI-compatible server")
    p.add_argument("--data", type=Path, default=DATA)
    p.add_argument("--json", type=Path, help="also write the figures here")
    args = p.parse_args(argv)
    from construction_run import local_model

    data = json.loads(args.data.read_text(encoding="utf-8"))
    model = local_model(args.base_url, prompt_cache=False)
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    log = StepLog(node="probe", deps=NodeDeps(store=store, caller=StructuredCaller(model)))
    started = time.perf_counter()
    rules = [{"instruction": data["instruction"], "conversations": data["conversations"]}]
    rules += list(data.get("rule_sets", {}).values())
    probed = [probe(args.base_url, log, rule) for rule in rules]
    out = {
        "command": "python benchmarks/rule_check_signal.py --base-url URL"
        + (f" --data {args.data}" if args.data != DATA else ""),
        "rule": data["instruction"],
        "topics_read": probed[0]["topics_read"],
        "seconds": round(time.perf_counter() - started, 1),
        **{k: probed[0][k] for k in ("all", "by_language", "rows")},
    }
    if len(probed) > 1:
        out["pooled"] = summarise([r for x in probed for r in x["rows"]])
        out["other_rules"] = probed[1:]
    shown = ("topics_read", "seconds", "all", "pooled")
    print(json.dumps({k: out[k] for k in shown if k in out}, indent=1))
    for other in out.get("other_rules", []):
        print(json.dumps({k: other[k] for k in ("rule", "topics_read", "all")}, indent=1))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
