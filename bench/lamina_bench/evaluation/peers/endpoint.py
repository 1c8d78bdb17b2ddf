"""The OpenAI-compatible endpoint a peer calls the run's model through (mem0, Graphiti).

Both peers make their calls with their own OpenAI clients, so they are given the run's
chat endpoint (base URL, model name, key), timeout and retries, read from the run's
``ChatOpenAI``, and its temperature, which mem0 takes and Graphiti leaves at its own
default.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lamina.errors import InvalidInputError


@dataclass(frozen=True)
class OpenAIEndpoint:
    """Where a peer's OpenAI client sends its calls, and how."""

    base_url: str
    model: str
    api_key: str
    temperature: float | None = None
    """The run's temperature (None: mem0's default, 0.1); Graphiti does not take it."""
    timeout: float | None = None
    """Seconds per request (None: the OpenAI client's default)."""
    max_retries: int | None = None
    """Retries of a failed request (None: the OpenAI client's default)."""

    def client_options(self) -> dict[str, Any]:
        """The OpenAI client's ``timeout`` and ``max_retries``, where the run sets them."""
        options: dict[str, Any] = {}
        if self.timeout is not None:
            options["timeout"] = self.timeout
        if self.max_retries is not None:
            options["max_retries"] = self.max_retries
        return options


def endpoint_of(chat_model: Any, peer: str) -> OpenAIEndpoint:
    """The OpenAI-compatible endpoint of the run's chat model (a ``ChatOpenAI``).

    Raises:
        InvalidInputError: the chat model is not an OpenAI-compatible client.
    """
    model = getattr(chat_model, "model_name", None)
    if model is None or not hasattr(chat_model, "openai_api_base"):
        raise InvalidInputError(
            f"{peer} calls the model through its OpenAI-compatible API, but the run's chat model "
            f"is a {type(chat_model).__name__}; give an endpoint (--base-url) or the local model"
        )
    key = getattr(chat_model, "openai_api_key", None)
    timeout = getattr(chat_model, "request_timeout", None)
    return OpenAIEndpoint(
        base_url=chat_model.openai_api_base or "https://api.openai.com/v1",
        model=str(model),
        api_key=key.get_secret_value() if key is not None else "not-needed",
        temperature=getattr(chat_model, "temperature", None),
        timeout=float(timeout) if isinstance(timeout, int | float) else None,
        max_retries=getattr(chat_model, "max_retries", None),
    )


__all__ = ["OpenAIEndpoint", "endpoint_of"]
