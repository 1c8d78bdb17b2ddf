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
from .hits import add_result, answer_result
from .results import AddResult, AnswerResult

logger = logging.getLogger("lamina.memory")
"""The facade's logger; its name stayed ``lamina.memory`` when the facade became a package."""

ModelGetter = Callable[[], BaseChatModel]


def model_error(calls: list[LLMCall], model: ModelGetter) -> ModelUnreachableError | None:
    """The error to report when LLM calls were made and none reached the model."""
    if not calls or not all(c.unreachable for c in calls):
        return None
    detail = calls[0].error or ""
    return unreachable_error(model(), "no request got through", detail)


def added(output: Any, namespace: str, model: ModelGetter) -> AddResult:
    """The AddResult; consolidation failures are logged at WARNING and reported."""
    result = add_result(output)
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
    """The AnswerResult, or ModelUnreachableError when no LLM call reached the model."""
    result = answer_result(output, question)
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
