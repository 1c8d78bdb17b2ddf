"""Argument checks shared by the store's public methods."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Unpack

from langchain_core.embeddings import Embeddings
from pydantic import ValidationError

from ..errors import InvalidInputError, InvalidTypeError
from ..records.model import (
    RECORD_TYPES,
    FactRecord,
    Granularity,
    MemoryRecord,
    parse_granularity,
    validate_namespace,
)
from .audited import Supersede
from .base import GetOptions, Scope, SupersedeOptions, keywords


def as_embeddings(embeddings: object) -> Embeddings:
    """A store's embedder: MiniLM when none is given; anything but an ``Embeddings`` refused."""
    if embeddings is None:
        from ..embedders.minilm import MiniLMEmbeddings

        embeddings = MiniLMEmbeddings()
    if not isinstance(embeddings, Embeddings):
        raise InvalidTypeError(
            "embeddings must be a langchain_core Embeddings, e.g. "
            f"lamina.embedders.MiniLMEmbeddings(); got {type(embeddings).__name__}"
        )
    return embeddings


def check_record(namespace: str, record: object) -> MemoryRecord:
    """Re-validate one record for ``namespace``; raise a fix-it error if it is bad."""
    if not isinstance(record, MemoryRecord) or type(record) not in RECORD_TYPES.values():
        raise InvalidTypeError(
            "records must be RawTurn, FactRecord, EpisodeRecord or SceneRecord instances, "
            f"got {type(record).__name__}"
        )
    # re-validate: model_construct() or attribute tricks must not smuggle bad data in
    try:
        checked = type(record).model_validate(record.model_dump())
    except ValidationError as e:
        raise InvalidInputError(f"invalid {record.granularity.value} record: {e}") from e
    if checked.namespace != namespace:
        raise InvalidInputError(
            f"record {checked.id!r} belongs to namespace {checked.namespace!r}, "
            f"not {namespace!r}; one call writes to one namespace"
        )
    return checked


def checked_records(namespace: str, records: object) -> list[MemoryRecord]:
    """The records of an add() to ``namespace``, each re-validated (:func:`check_record`)."""
    validate_namespace(namespace)
    return [check_record(namespace, r) for r in as_records(records)]


def by_granularity(records: list[MemoryRecord]) -> dict[Granularity, list[MemoryRecord]]:
    """The records of each granularity; an id repeated is one upsert, of its last record."""
    groups: dict[Granularity, list[MemoryRecord]] = {}
    for record in records:
        groups.setdefault(record.granularity, []).append(record)
    return {g: list({r.id: r for r in group}.values()) for g, group in groups.items()}


def as_records(records: object) -> Sequence[MemoryRecord]:
    """Accept one record or a sequence of them; reject strings, dicts and the like."""
    if isinstance(records, MemoryRecord):
        return [records]
    if isinstance(records, str | bytes) or not isinstance(records, Sequence):
        raise InvalidTypeError(
            f"records must be a list of memory records, got {type(records).__name__}"
        )
    return records


def as_ids(ids: object) -> list[str]:
    """Accept a sequence of string ids (not a bare string); drop repeats, keep order."""
    if isinstance(ids, str) or not isinstance(ids, Sequence):
        raise InvalidTypeError(f"ids must be a list of strings, got {type(ids).__name__}")
    bad = [i for i in ids if not isinstance(i, str)]
    if bad:
        raise InvalidTypeError(f"ids must be strings, got {bad[:3]!r}")
    return list(dict.fromkeys(ids))


def get_limit(options: GetOptions) -> int | None:
    """The ``limit`` of a get(), its keywords checked."""
    keywords("get", options, GetOptions)
    limit = options.get("limit")
    if limit is not None and limit < 1:
        raise InvalidInputError(f"limit must be >= 1, got {limit}")
    return limit


class CheckedCalls:
    """``get``, ``delete`` and ``mark_superseded`` of lamina's stores, arguments checked.

    Each checks what it is given, then hands it to the store's ``_get``, ``_delete`` or
    ``_supersede``.
    """

    _get: Callable[[Granularity, str, Sequence[str] | None, Scope], list[MemoryRecord]]
    _delete: Callable[[Granularity, str, Sequence[str] | None, Scope], int]
    _supersede: Callable[[Supersede], FactRecord]

    def get(
        self,
        granularity: Granularity | str,
        namespace: str,
        ids: Sequence[str] | None = None,
        **options: Unpack[GetOptions],
    ) -> list[MemoryRecord]:
        """Return records by id (in the order asked) or by filter (in time order)."""
        gran = parse_granularity(granularity)
        limit = get_limit(options)
        return self._get(gran, namespace, ids, options)[:limit]

    def delete(
        self,
        granularity: Granularity | str,
        namespace: str,
        ids: Sequence[str] | None = None,
        **scope: Unpack[Scope],
    ) -> int:
        """Delete matching records of one namespace; return how many were deleted.

        One that names no ids, window or filter is refused: a namespace is wiped on purpose.
        """
        gran = parse_granularity(granularity)
        keywords("delete", scope, Scope)
        if ids is None and scope.get("window") is None and not scope.get("where"):
            raise InvalidInputError(
                "delete() needs ids, a window or where; to wipe a namespace use delete_namespace()"
            )
        return self._delete(gran, namespace, ids, scope)

    def mark_superseded(
        self,
        namespace: str,
        fact_id: str,
        *,
        superseded_by: str,
        **options: Unpack[SupersedeOptions],
    ) -> FactRecord:
        """Set ``superseded_by`` and close ``valid_to``; the fact is kept.

        ``valid_to`` is ``at``, else the event time of the replacing fact when it is
        stored in the namespace (see :meth:`FactRecord.event_time`). Only when neither
        exists is it the clock time, and the audit entry then says so. With ``audit``,
        the entry lands with the supersede or not at all.
        """
        keywords("mark_superseded", options, SupersedeOptions)
        return self._supersede(Supersede.checked(namespace, fact_id, superseded_by, options))
