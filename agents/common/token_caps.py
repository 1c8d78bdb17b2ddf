"""A per-node cap on what the model may generate.

The recall nodes read their caps from the run's context and ask through a caller whose
model carries the cap (``max_tokens``). A model without such a field is used as it is;
a cap the caller already set lower is kept.
"""

from __future__ import annotations

from dataclasses import replace

from langchain_core.language_models import BaseChatModel

from ...llm.structured import StructuredCaller
from .deps import NodeDeps, StepLog


def with_max_tokens(model: BaseChatModel, cap: int) -> BaseChatModel:
    """``model`` generating at most ``cap`` tokens (a copy; the original is untouched)."""
    if "max_tokens" not in type(model).model_fields:
        return model
    current = getattr(model, "max_tokens", None)
    if isinstance(current, int) and 0 < current <= cap:
        return model
    return model.model_copy(update={"max_tokens": cap})


def capped_log(node: str, deps: NodeDeps, cap: int) -> StepLog:
    """A step log for ``node`` whose structured calls generate at most ``cap`` tokens."""
    caller = deps.caller
    capped = StructuredCaller(
        with_max_tokens(caller.model, cap), method=caller.method, max_attempts=caller.max_attempts
    )
    return StepLog(node, replace(deps, caller=capped))


__all__ = ["capped_log", "with_max_tokens"]
