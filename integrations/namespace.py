"""Where an agent integration finds the memory namespace: the agent's runtime context.

The namespace is never an argument a model can fill in. It is read from the context object
the application passes to ``agent.invoke(..., context=...)``, by attribute or key name, or
by a callable the application supplies.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..errors import InvalidTypeError, NamespaceError
from ..records.model import validate_namespace

NamespaceSource = str | Callable[[Any], object]
"""A context field name (``"user_id"``) or a function of the context returning the namespace."""

DEFAULT_NAMESPACE_KEY = "user_id"


def check_source(source: object, *, argument: str = "namespace_from") -> NamespaceSource:
    """Validate a namespace source at construction time.

    Raises:
        InvalidTypeError: if ``source`` is neither a non-empty string nor a callable.
    """
    if isinstance(source, str) and source.strip():
        return source
    if callable(source):
        return source
    raise InvalidTypeError(
        f"{argument} must be a context field name such as 'user_id' or a function "
        f"context -> namespace, got {source!r}"
    )


def context_value(context: object, key: str) -> object:
    """Read ``key`` from a dict-like, dataclass, pydantic or plain context object."""
    if context is None:
        return None
    if isinstance(context, Mapping):
        return context.get(key)
    return getattr(context, key, None)


def _describe(source: NamespaceSource) -> str:
    if isinstance(source, str):
        return f"field {source!r}"
    return f"function {getattr(source, '__name__', repr(source))}"


def resolve_namespace(context: object, source: NamespaceSource) -> str:
    """Return the validated namespace that ``source`` selects from ``context``.

    Raises:
        NamespaceError: if the context has no namespace there, or it is malformed.
    """
    value = context_value(context, source) if isinstance(source, str) else source(context)
    if value is None or value == "":
        hint = (
            f"invoke the agent with context={{'{source}': 'user:alice'}} (or a context "
            f"object with a {source!r} attribute)"
            if isinstance(source, str)
            else "make the function return a namespace string for this context"
        )
        raise NamespaceError(
            f"no memory namespace: the agent's runtime context has no value for "
            f"{_describe(source)}; {hint}"
        )
    try:
        return validate_namespace(value)
    except NamespaceError as e:
        raise NamespaceError(f"{_describe(source)} of the agent's context: {e}") from e
