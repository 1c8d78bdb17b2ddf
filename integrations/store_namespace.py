"""LangGraph namespace tuples: LangGraph's validation rules and their lamina namespaces.

A LangGraph store addresses items by a tuple of labels, ``("memories", "user-1")``.
lamina addresses records by one namespace string. A tuple maps to
``"<root>/<label>/<label>..."``: characters a lamina namespace cannot hold (and ``/``,
the separator) are written as ``.`` plus two hex digits per UTF-8 byte. LangGraph forbids
``.`` in a label, so the mapping is one-to-one: two tuples never share a namespace.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from langgraph.store.base import InvalidNamespaceError, MatchCondition

from ..errors import InvalidInputError, NamespaceError
from ..records.model import validate_namespace

_KEEP = re.compile(r"[A-Za-z0-9_:@\-]")
_MAX_NAMESPACE = 256


class StoreNamespaceError(NamespaceError, InvalidNamespaceError):
    """A namespace tuple LangGraph or lamina rejects.

    It is both lamina's :class:`~lamina.errors.NamespaceError` and LangGraph's
    ``InvalidNamespaceError``, so callers catching either keep working.
    """


def check_labels(namespace: object, *, what: str = "namespace") -> tuple[str, ...]:
    """Apply LangGraph's label rules; return the namespace as a tuple.

    Every label must be a non-empty string without ``.`` or NUL. An empty tuple passes
    here (a search or list over the whole store); writes check that separately.

    Raises:
        StoreNamespaceError: naming the first bad label and how to fix it.
    """
    if not isinstance(namespace, tuple | list):
        raise StoreNamespaceError(
            f"{what} must be a tuple of strings such as ('memories', 'user-1'), "
            f"got {type(namespace).__name__}"
        )
    labels = tuple(namespace)
    for label in labels:
        if not isinstance(label, str):
            raise StoreNamespaceError(
                f"{what} {labels!r}: label {label!r} is a {type(label).__name__}; "
                "every label must be a string"
            )
        if not label:
            raise StoreNamespaceError(f"{what} {labels!r}: labels cannot be empty strings")
        if "." in label:
            raise StoreNamespaceError(
                f"{what} {labels!r}: label {label!r} contains '.', which LangGraph forbids; "
                "use another separator such as '-' or ':'"
            )
        if "\x00" in label:
            raise StoreNamespaceError(f"{what} {labels!r}: label {label!r} contains a NUL byte")
        try:
            label.encode("utf-8")
        except UnicodeEncodeError:
            raise StoreNamespaceError(
                f"{what} {labels!r}: label {label!r} holds a lone UTF-16 surrogate, which is "
                "not valid text; decode the original bytes with errors='replace' first"
            ) from None
    return labels


def check_writable(namespace: object) -> tuple[str, ...]:
    """Labels as :func:`check_labels`, and not empty: an item needs a namespace.

    Raises:
        StoreNamespaceError: for an empty tuple or a bad label.
    """
    labels = check_labels(namespace)
    if not labels:
        raise StoreNamespaceError(
            "namespace cannot be empty; put items under a tuple such as ('memories', 'user-1')"
        )
    return labels


def _escape(label: str) -> str:
    out = []
    for char in label:
        if _KEEP.fullmatch(char):
            out.append(char)
        else:
            out.extend(f".{byte:02x}" for byte in char.encode("utf-8"))
    return "".join(out)


def to_lamina(root: str, namespace: Sequence[str]) -> str:
    """The lamina namespace of a LangGraph namespace tuple.

    Raises:
        StoreNamespaceError: if the mapped namespace is longer than lamina allows.
    """
    mapped = "/".join([root, *(_escape(label) for label in namespace)])
    if len(mapped) > _MAX_NAMESPACE:
        raise StoreNamespaceError(
            f"namespace {tuple(namespace)!r} maps to a lamina namespace of {len(mapped)} "
            f"characters (at most {_MAX_NAMESPACE}); use fewer or shorter labels"
        )
    try:
        return validate_namespace(mapped)
    except NamespaceError as e:  # unreachable with a valid root; kept as a guard
        raise StoreNamespaceError(str(e)) from e


def matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    """Whether ``namespace`` satisfies a prefix or suffix condition (``*`` is any label).

    Raises:
        InvalidInputError: for a match type other than ``prefix`` or ``suffix``.
    """
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise InvalidInputError(
            f"unsupported match type {condition.match_type!r}; use prefix or suffix"
        )
    return all(want == "*" or label == want for label, want in pairs)
