"""Which namespace an MCP call reads and writes: the server decides, never the model alone.

* ``NamespacePolicy(default="user:alice")`` pins the server: every call uses that
  namespace, and a call that names another one is refused.
* ``NamespacePolicy(allowed=("team:acme/*",), default=...)`` lets a call name its own
  namespace when it matches an allowed pattern: an exact namespace, a prefix ending in
  ``*``, or ``*`` alone for any namespace (only for a client you trust with all of them).
  A call that names none uses ``default``; with no default it must name one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...errors import InvalidTypeError, NamespaceError
from ...records.model import NAMESPACE_PATTERN, validate_namespace


def _check_pattern(pattern: object) -> str:
    if not isinstance(pattern, str):
        raise InvalidTypeError(f"an allowed namespace pattern must be a str, got {pattern!r}")
    stem = pattern.removesuffix("*")
    if pattern == "*" or (stem and NAMESPACE_PATTERN.fullmatch(stem) and "*" not in stem):
        return pattern
    raise NamespaceError(
        f"invalid allowed namespace pattern {pattern!r}: use a namespace ('user:alice'), "
        "a prefix ending in '*' ('team:acme/*'), or '*' for any namespace"
    )


@dataclass(frozen=True)
class NamespacePolicy:
    """The namespace rule of one MCP server (see the module docs)."""

    default: str | None = None
    """The namespace of calls that name none; alone, it pins the server."""
    allowed: tuple[str, ...] = ()
    """Patterns a call's own namespace must match; empty: calls cannot name one."""

    def __post_init__(self) -> None:
        if self.default is not None:
            validate_namespace(self.default)
        allowed: object = self.allowed
        if isinstance(allowed, str) or not isinstance(allowed, Sequence):
            raise InvalidTypeError(f"allowed must be a list of namespace patterns, got {allowed!r}")
        object.__setattr__(self, "allowed", tuple(_check_pattern(p) for p in allowed))
        if self.default is None and not self.allowed:
            raise NamespaceError(
                "the MCP server needs a namespace: pin one (--namespace user:alice) or "
                "let calls name theirs (--allow-namespace 'user:*')"
            )

    @property
    def per_call(self) -> bool:
        """Whether a call may name its own namespace."""
        return bool(self.allowed)

    def permits(self, namespace: str) -> bool:
        """Whether a call may use ``namespace``."""
        if namespace == self.default:
            return True
        return any(
            p == namespace or (p.endswith("*") and namespace.startswith(p[:-1]))
            for p in self.allowed
        )

    def resolve(self, requested: str | None) -> str:
        """The namespace of a call that asked for ``requested`` (None: it named none).

        Raises:
            NamespaceError: The call named a namespace this server does not allow, a
                malformed one, or none while the server has no default.
        """
        if requested is None:
            if self.default is None:
                raise NamespaceError(
                    "this server has no default namespace; pass namespace (allowed: "
                    f"{', '.join(self.allowed)})"
                )
            return self.default
        validate_namespace(requested)
        if not self.per_call and requested != self.default:
            raise NamespaceError(
                f"this server is pinned to namespace {self.default!r}; a call cannot choose another"
            )
        if not self.permits(requested):
            raise NamespaceError(
                f"namespace {requested!r} is not allowed by this server (allowed: "
                f"{', '.join(self.allowed)})"
            )
        return requested
