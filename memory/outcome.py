"""Turn a graph run's output into the facade's result, logging what went wrong.

A failed consolidation never raises: the raw turns are stored, so ``add`` reports the
failure in its result and logs it. ``answer`` raises when no LLM call reached the model,
since there is no answer to give.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from langchain_core.language_models import BaseChatModel

from ..core.calls import LLMCall
from ..errors import ModelUnreachableError
from ..llm.reachability import unreachable_error
from .hits import hit_from_candidate
from .results import AddResult, AnswerResult

logger = logging.getLogger("lamina.memory")

ModelGetter = Callable[[], BaseChatModel]


def model_error(calls: list[LLMCall], model: ModelGetter) -> ModelUnreachableError | None:
    """The error to report when LLM calls were made and none reached the model."""
    if not calls or not all(c.unreachable for c in calls):
        return None
    detail = calls[0].error or ""
    return unreachable_error(model(), "no request got through", detail)


def added(output: Any, namespace: str, model: ModelGetter) -> AddResult:
    """The ingest path's output as an AddResult; consolidation failures are logged at WARNING."""
    fields = ("new_raw_ids", "duplicate_raw_ids", "written", "failures", "llm_calls")
    result = AddResult.model_validate({name: list(output.get(name) or []) for name in fields})
    error = model_error(result.llm_calls, model)
    if error is not None:
        result.model_error = str(error)
        logger.warning(
            "add(namespace=%r): %d raw turn(s) stored, consolidation skipped: %s",
            namespace,
            len(result.new_raw_ids),
            error,
        )
    elif result.failures:
        steps = ", ".join(sorted({f"{f.node}/{f.step}" for f in result.failures}))
        logger.warning(
            "add(namespace=%r): %d raw turn(s) stored; %d consolidation step(s) failed "
            "(%s), see AddResult.failures",
            namespace,
            len(result.new_raw_ids),
            len(result.failures),
            steps,
        )
    return result


def answered(output: Any, question: str, namespace: str, model: ModelGetter) -> AnswerResult:
    """The recall path's output as an AnswerResult.

    Raises:
        ModelUnreachableError: No LLM call reached the model.
    """
    result = AnswerResult(
        question=question,
        verdicts=[dict(v) for v in output.get("verdicts") or []],
        queries=list(dict.fromkeys(output.get("queries_tried") or [])),
        answer=str(output.get("answer") or ""),
        citations=list(output.get("citations") or []),
        refused=bool(output.get("refused", False)),
        memories=[hit_from_candidate(c) for c in output.get("candidates") or []],
        rounds=int(output.get("rounds") or 0),
        failures=list(output.get("failures") or []),
        llm_calls=list(output.get("llm_calls") or []),
    )
    error = model_error(result.llm_calls, model)
    if error is not None:
        raise error
    if result.failures:
        steps = ", ".join(sorted({f"{f.node}/{f.step}" for f in result.failures}))
        logger.warning(
            "answer(namespace=%r): %d LLM step(s) failed (%s); the answer may be degraded",
            namespace,
            len(result.failures),
            steps,
        )
    return result
