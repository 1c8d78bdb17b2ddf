"""OpenTelemetry spans for graph nodes and store calls, once the application sets up OTel.

lamina emits no telemetry of its own accord. When the application has installed an
OpenTelemetry SDK tracer provider (``trace.set_tracer_provider(...)``, or the
``opentelemetry-instrument`` launcher; the ``otel`` extra brings the SDK and the OTLP
exporter), or passes one to :func:`use_tracer_provider`, every graph node becomes a span
``lamina.<node>`` with its tokens, LLM calls, failures and records written, and every
store call a child span ``lamina.store.<call>`` (:mod:`lamina.stores.traced`). Span
durations are the latency. Without a provider nothing is wrapped and no span is made.

A namespace names a tenant, so spans carry its SHA-256 prefix
(``lamina.namespace.hash``) unless ``LAMINA_OTEL_NAMESPACE=plain`` asks for the
namespace itself (``lamina.namespace``).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

NAMESPACE_MODE_VAR = "LAMINA_OTEL_NAMESPACE"
"""``hash`` (the default) or ``plain``: how spans name the namespace."""
TRACER_NAME = "lamina"

_provider: Any = None

__all__ = [
    "NAMESPACE_MODE_VAR",
    "TRACER_NAME",
    "enabled",
    "namespace_attributes",
    "span",
    "use_tracer_provider",
]


def use_tracer_provider(provider: Any) -> None:
    """Send lamina's spans to ``provider`` (None: back to the global provider)."""
    global _provider
    _provider = provider


def _tracer() -> Any:
    """The tracer of lamina's spans, or None when no SDK tracer provider is set up."""
    try:
        from opentelemetry import trace
    except ImportError:  # OpenTelemetry is not installed: no spans
        return None
    provider = _provider if _provider is not None else trace.get_tracer_provider()
    if isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
        return None  # the API's default: nobody collects spans
    return provider.get_tracer(TRACER_NAME)


def enabled() -> bool:
    """Whether spans are collected (an SDK tracer provider is set up)."""
    return _tracer() is not None


def namespace_attributes(namespace: str | None) -> dict[str, str]:
    """The span attribute naming ``namespace``: its hash by default."""
    if not namespace:
        return {}
    if os.environ.get(NAMESPACE_MODE_VAR, "hash").strip().lower() == "plain":
        return {"lamina.namespace": namespace}
    digest = hashlib.sha256(namespace.encode("utf-8")).hexdigest()[:16]
    return {"lamina.namespace.hash": digest}


@contextmanager
def span(
    name: str, namespace: str | None = None, attributes: Mapping[str, Any] | None = None
) -> Iterator[Any]:
    """A span named ``name`` (None inside when spans are off); errors are recorded on it."""
    tracer = _tracer()
    if tracer is None:
        yield None
        return
    with tracer.start_as_current_span(name) as current:
        current.set_attributes({**namespace_attributes(namespace), **(attributes or {})})
        yield current
