"""The write path: check records, embed only what changed, upsert them in pages, announce.

Every record of a call is validated and embedded before the first write, so bad input
or a failing embedding model leaves the store untouched. A stored record whose index
text is unchanged keeps its vector, so re-adding a record or updating only its metadata
costs no embedding call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from chromadb.api.models.Collection import Collection
from langchain_core.embeddings import Embeddings

from ..errors import InvalidInputError
from ..records.model import Granularity, MemoryRecord
from .changelog import ChangeLog
from .chroma_calls import ChromaCalls
from .codec import from_metadata, row_id, to_metadata
from .filters import USER_META_PREFIX
from .indexing import IndexTextPolicy
from .journal import Journals, journal_lock, journal_step
from .keyword import KeywordIndex
from .lexical import Analyzer
from .mirror import MirrorRow, WriteEvent
from .rows import rows_by_id


@dataclass(frozen=True)
class Batch:
    """Records of one granularity and namespace, embedded and encoded, ready to write."""

    granularity: Granularity
    namespace: str
    records: list[MemoryRecord]
    texts: list[str]
    vectors: list[list[float]]
    metadatas: list[dict[str, Any]]

    def pages(self, size: int) -> list[Batch]:
        """This batch cut into batches of at most ``size`` records."""
        return [
            Batch(
                self.granularity,
                self.namespace,
                self.records[i : i + size],
                self.texts[i : i + size],
                self.vectors[i : i + size],
                self.metadatas[i : i + size],
            )
            for i in range(0, len(self.records), size)
        ]

    def mirror_rows(self, analyzer: Analyzer | None = None) -> list[MirrorRow]:
        """The batch as rows for a namespace mirror, with their BM25 terms given ``analyzer``.

        A key unset by :func:`unset_stale` (None) is left out, as Chroma then stores it.
        """
        return [
            MirrorRow(
                r.id,
                text,
                {k: v for k, v in meta.items() if v is not None},
                vector,
                None if analyzer is None else tuple(analyzer(text)),
            )
            for r, text, meta, vector in zip(
                self.records, self.texts, self.metadatas, self.vectors, strict=True
            )
        ]


def stored_vectors(
    calls: ChromaCalls,
    collection: Collection,
    granularity: Granularity,
    policy: IndexTextPolicy,
    namespace: str,
    ids: list[str],
    *,
    keys: dict[str, frozenset[str]] | None = None,
) -> dict[str, tuple[str, list[float]]]:
    """``{id: (index text, vector)}`` of the records that exist with a readable vector.

    Given ``keys``, the metadata keys of every existing row go there, by record id.
    """
    found: dict[str, tuple[str, list[float]]] = {}
    for row in rows_by_id(calls, collection, namespace, ids, vectors=True):
        record = from_metadata(granularity, row.metadata)
        if keys is not None:
            keys[record.id] = frozenset(row.metadata)
        if row.vector is None:
            continue
        found[record.id] = (policy.render(record), [float(x) for x in row.vector])
    return found


RECORD_KEYS = frozenset({"subject", "valid_from_ts", "valid_to_ts", "source_ids"})
"""Row metadata keys a record writes only when it has the field (:func:`.codec.to_metadata`)."""


def unset_stale(batch: Batch, stored_keys: dict[str, frozenset[str]]) -> Batch:
    """The batch with every key a row held and its record no longer has set to None.

    Chroma's upsert keeps the metadata keys it does not name, and None removes one: a
    record rewritten without a metadata entry (a cleared flag) or a field (a reopened
    validity) would otherwise still match a filter on the old value. Only the keys
    records write are unset, never the row's own bookkeeping (a pending audit entry).
    """
    for record, metadata in zip(batch.records, batch.metadatas, strict=True):
        for key in stored_keys.get(record.id, frozenset()) - metadata.keys():
            if key.startswith(USER_META_PREFIX) or key in RECORD_KEYS:
                metadata[key] = None
    return batch


def prepare(
    granularity: Granularity,
    namespace: str,
    records: list[MemoryRecord],
    *,
    policy: IndexTextPolicy,
    embeddings: Embeddings,
    stored: Callable[[list[str]], dict[str, tuple[str, list[float]]]],
) -> Batch:
    """Render and embed ``records``, reusing the stored vector of unchanged ones."""
    texts = [policy.render(r) for r in records]
    known = stored([r.id for r in records])
    vectors: list[list[float] | None] = []
    for record, text in zip(records, texts, strict=True):
        old_text, old_vector = known.get(record.id, ("", None))
        vectors.append(old_vector if old_text == text else None)
    todo = [i for i, v in enumerate(vectors) if v is None]
    if todo:
        fresh = embeddings.embed_documents([texts[i] for i in todo])
        if len(fresh) != len(todo):
            raise InvalidInputError(
                f"the embeddings returned {len(fresh)} vectors for {len(todo)} texts"
            )
        for i, vector in zip(todo, fresh, strict=True):
            vectors[i] = list(vector)
    return Batch(
        granularity,
        namespace,
        records,
        texts,
        [v for v in vectors if v is not None],
        [to_metadata(r) for r in records],
    )


def upsert_page(calls: ChromaCalls, collection: Collection, page: Batch) -> None:
    """Write one page of a batch to its collection (one Chroma call)."""
    calls.write(
        collection.upsert,
        ids=[row_id(page.namespace, r.id) for r in page.records],
        embeddings=page.vectors,
        documents=[r.text for r in page.records],
        metadatas=page.metadatas,
    )


def _intent(
    journals: Journals, log: ChangeLog, gran: Granularity, namespace: str, ids: list[str]
) -> bool:
    """Note the ids about to land (:meth:`.journal.Journals.mark_intent`); False if not made."""
    by = None if log.presence is None else log.presence.path.name
    try:
        return journals.mark_intent(gran, namespace, ids, by)
    except OSError:  # unnoted: a kill before the record is then a miss until a rebuild
        return False


@dataclass(frozen=True)
class WriteUnit:
    """The one sequence every write of a store follows: land, claim, announce.

    The ``changelog`` tells every process of a write; the keyword ``index`` and the
    ``journals`` (a persistent path's only) learn what its slot holds.
    """

    changelog: ChangeLog
    index: KeywordIndex
    journals: Journals | None
    unrecorded: set[tuple[Granularity, str]] = field(default_factory=set)
    """Namespaces whose journal missed a write made alone: they claim every write since, so
    a cold load replays the journal and reads the missed slot from the change log."""

    def commit(
        self,
        gran: Granularity,
        namespace: str,
        land: Callable[[], object],
        *,
        rows: Sequence[MirrorRow] = (),
        deleted: Sequence[str] = (),
        reset: bool = False,
    ) -> None:
        """Land a change in Chroma, claim its change-log slot, then announce it.

        A store alone on its folder claims no slot (:mod:`.presence`): the journal entry
        alone records the write, and an entry that cannot be written is claimed after all.

        All under the namespace's journal lock, so slot order is write order: ``land``
        puts ``rows`` or deletes ``deleted`` in Chroma; the next slot then tells every
        process; then the index and the journal learn what that slot holds. A ``reset``
        (``land`` deletes the whole namespace) empties the journal before anything is
        deleted, so no journal proves rows Chroma lost, and blanks the older slots; the
        store tells the index itself (``drop``).
        """
        journals = self.journals
        ids = [row.record_id for row in rows] + list(deleted)
        with journal_lock(journals, gran, namespace):
            if reset:
                journal_step(journals, lambda j: j.reset(gran, namespace))
            log = self.changelog
            made = (
                journals is not None and not reset and _intent(journals, log, gran, namespace, ids)
            )
            land()
            claimed = (
                reset or journals is None or (gran, namespace) in self.unrecorded or log.shared()
            )
            if claimed:
                slot = log.claim(gran, namespace, ids, reset=reset)
            else:
                slot = log.position(gran, namespace)  # alone: the journal alone records it
            if reset:
                log.scrub(gran, namespace, before=slot)
                return
            write = WriteEvent(gran, namespace, slot, rows=rows, deleted=deleted, claimed=claimed)
            self.index.applied(write)
            if claimed:
                journal_step(journals, lambda j: j.append(write))
            else:
                assert journals is not None
                try:
                    journals.append(write)
                except OSError:  # unrecorded: claim it (and every later write of the namespace)
                    self.unrecorded.add((gran, namespace))
                    log.claim(gran, namespace, ids)
            if made:  # recorded: the slot or the journal now tells every load of it
                journal_step(journals, lambda j: j.landed(gran, namespace))
