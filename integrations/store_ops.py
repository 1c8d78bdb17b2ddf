"""Op-level helpers of :class:`LaminaStore`: the index config, paging, listings, hits."""

from __future__ import annotations

from collections.abc import Mapping

from langgraph.store.base import IndexConfig, Item, ListNamespacesOp, SearchItem

from ..errors import InvalidInputError, InvalidTypeError
from ..records.model import require_encodable
from ..stores.base import MemoryStore
from .store_items import WHOLE, IndexPaths, index_paths
from .store_namespace import matches


def search_hit(item: Item, score: float | None) -> SearchItem:
    """A search result: the item with its score (None when no vector ranked it)."""
    return SearchItem(
        namespace=item.namespace,
        key=item.key,
        value=item.value,
        created_at=item.created_at,
        updated_at=item.updated_at,
        score=score,
    )


def listed(op: ListNamespacesOp, spaces: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """LangGraph's namespace listing: match conditions, then depth, sorted, then a page."""
    chosen = [ns for ns in spaces if all(matches(c, ns) for c in op.match_conditions or ())]
    if op.max_depth is not None:
        chosen = list({ns[: op.max_depth] for ns in chosen})
    return sorted(chosen)[op.offset : op.offset + op.limit]


def check_page(limit: object, offset: object) -> None:
    """Validate a page of results.

    Raises:
        InvalidInputError: if ``limit`` or ``offset`` is not an int >= 0.
    """
    for name, value in (("limit", limit), ("offset", offset)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise InvalidInputError(f"{name} must be an int >= 0, got {value!r}")


def check_key(key: object) -> str:
    """Validate an item key: a str that is valid text.

    Raises:
        InvalidTypeError: if ``key`` is not a str.
        InvalidInputError: if it holds a lone UTF-16 surrogate.
    """
    if not isinstance(key, str):
        raise InvalidTypeError(f"an item key must be a str, got {type(key).__name__}")
    return require_encodable("key", key)


def check_depth(max_depth: object) -> None:
    """Validate a listing's ``max_depth``.

    Raises:
        InvalidInputError: if ``max_depth`` is neither None nor an int >= 0.
    """
    if max_depth is not None and (
        not isinstance(max_depth, int) or isinstance(max_depth, bool) or max_depth < 0
    ):
        raise InvalidInputError(f"max_depth must be an int >= 0 or None, got {max_depth!r}")


def index_config(store: MemoryStore, index: object) -> tuple[IndexConfig | None, IndexPaths]:
    """Validate LangGraph's index config against the lamina store's embeddings.

    Raises:
        InvalidTypeError: if ``index`` is not a dict.
        InvalidInputError: for unknown settings, bad dims or fields, or an ``embed``
            other than the store's embeddings.
    """
    if index is None:
        return None, index_paths([WHOLE])
    if not isinstance(index, Mapping):
        raise InvalidTypeError(
            f"index must be a dict such as {{'fields': ['content']}}, got {type(index).__name__}"
        )
    unknown = set(index) - {"dims", "embed", "fields"}
    if unknown:
        raise InvalidInputError(
            f"unknown index settings {sorted(unknown)}; use dims, embed, fields"
        )
    embed = index.get("embed")
    if embed is not None and embed is not getattr(store, "embeddings", None):
        raise InvalidInputError(
            "lamina embeds with the store's own embeddings; build the store with them "
            "(e.g. ChromaMemoryStore.persistent(path, embeddings=my_embeddings)) and leave "
            "'embed' out of index, or pass that same object"
        )
    dims = index.get("dims")
    if dims is not None and (not isinstance(dims, int) or isinstance(dims, bool) or dims < 1):
        raise InvalidInputError(f"index dims must be a positive int, got {dims!r}")
    fields = index.get("fields") or [WHOLE]
    config: IndexConfig = {**index, "fields": list(fields)}  # type: ignore[typeddict-item]
    return config, index_paths(fields)
