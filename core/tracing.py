"""OpenTelemetry spans for graph nodes and store calls, once the application sets up OTel.

lamina emits no telemetry of its own accord. When the application has installed an
OpenTelemetry SDK tracer provider (``trace.set_tracer_provider(...)``, or the
``opentelemetry-instrument`` launcher; the ``otel`` extra brings the SDK and the OTLP
exporter), or passes one to :func:`use_tracer_provider`, every graph node becomes a span
``lamina.<node>`` with its tokens, LLM calls, failures and records written, and every
store call a child span ``lamina.store.<call>`` (:mod:`lamina.stores.traced`), and every
call of ``Memory`` a span ``lamina.memory.<call>`` (:mod:`lamina.memory.spans`); the async
twins are spans under their sync call's name. Both wrap their methods with
:func:`traced_method`. Span durations are the latency. Without a provider every call
runs as it is and no span is made.

A namespace names a tenant, so spans carry its SHA-256 prefix
(``lamina.namespace.hash``) unless ``LAMINA_OTEL_NAMESPACE=plain`` asks for the
namespace itself (``lamina.namespace``).
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar, cast

NAMESPACE_MODE_VAR = "LAMINA_OTEL_NAMESPACE"
"""``hash`` (the default) or ``plain``: how spans name the namespace."""
TRACER_NAME = "lamina"

F = TypeVar("F", bound=Callable[..., Any])
Scope = Callable[[dict[str, Any]], tuple[str | None, Mapping[str, Any]]]
"""A traced call's namespace and span attributes, read from its bound arguments."""
Figures = Callable[[Any], Mapping[str, Any]]
"""A traced call's span attributes read from its result (records, tokens...)."""

_provider: Any = None
_open: ContextVar[str | None] = ContextVar("lamina_open_span", default=None)
"""The name of the span :func:`traced_method` has open in this context, if any."""

__all__ = [
    "NAMESPACE_MODE_VAR",
    "TRACER_NAME",
    "enabled",
    "namespace_attributes",
    "span",
    "traced_method",
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


def traced_method(method: F, name: str, scope: Scope, figures: Figures) -> F:
    """``method`` (sync or async) as a span ``name`` while tracing is on.

    The span carries what ``scope`` reads from the call's arguments (its namespace,
    hashed by default, and attributes) and what ``figures`` reads from its result; an
    exception is recorded on it and raised. A call that runs directly inside a span of
    the same name (an async twin running its sync call in a worker thread) makes none
    of its own. Without a tracer provider the method runs as it is.
    """
    signature = inspect.signature(method)

    def off() -> bool:
        return _open.get() == name or not enabled()

    @contextmanager
    def opened(self: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Iterator[Any]:
        try:
            arguments = signature.bind(self, *args, **kwargs).arguments
        except TypeError:  # the call itself raises the error the caller should see
            arguments = {}
        namespace, attributes = scope(arguments)
        token = _open.set(name)
        try:
            with span(name, namespace, attributes) as current:
                yield current
        finally:
            _open.reset(token)

    def record(current: Any, result: Any) -> Any:
        if current is not None:  # None: a provider that makes no spans
            current.set_attributes(dict(figures(result)))
        return result

    if inspect.iscoroutinefunction(method):

        @functools.wraps(method)
        async def acall(self: Any, *args: Any, **kwargs: Any) -> Any:
            if off():
                return await method(self, *args, **kwargs)
            with opened(self, args, kwargs) as current:
                return record(current, await method(self, *args, **kwargs))

        return cast(F, acall)

    @functools.wraps(method)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        if off():
            return method(self, *args, **kwargs)
        with opened(self, args, kwargs) as current:
            return record(current, method(self, *args, **kwargs))

    return cast(F, call)
