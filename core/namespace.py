"""Namespaces: the tenant scope every read and write is confined to, and its one check."""

from __future__ import annotations

import re

from ..errors import NamespaceError

__all__ = ["NAMESPACE_PATTERN", "validate_namespace"]

NAMESPACE_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:@/\-]{0,255}$")
"""Allowed namespace strings: a letter or digit, then letters, digits and ``_.:@/-``."""


def validate_namespace(namespace: object) -> str:
    """Return ``namespace`` if it is a well-formed namespace string, else raise.

    Raises:
        NamespaceError: if the value is not a string or has characters outside
            ``[A-Za-z0-9_.:@/-]`` (so it can never inject into a filter expression).
    """
    if not isinstance(namespace, str):
        raise NamespaceError(
            f"namespace must be a str such as 'user:alice', got {type(namespace).__name__}"
        )
    if not NAMESPACE_PATTERN.fullmatch(namespace):
        raise NamespaceError(
            f"invalid namespace {namespace!r}: use 1-256 characters from A-Z a-z 0-9 _ . : @ / - "
            "starting with a letter or digit, e.g. 'user:alice' or 'org-1/user-7'"
        )
    return namespace
