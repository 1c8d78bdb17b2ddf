"""The namespace mirrors of one store: loaded on first touch, kept coherent, LRU-bounded.

A mirror is loaded from Chroma the first time its (granularity, namespace) is searched
and held in a least-recently-used cache whose estimated size stays under
:attr:`~lamina.stores.mirror.MirrorConfig.budget_bytes`. Before each use, the mirror
reads the namespace's :class:`~lamina.stores.changelog.ChangeLog` (one ``get`` by
id, shared by the mirrors one search request touches) and re-reads the records that any
process changed since, so every search sees every write that landed before it. A store
alone on its folder since the mirror's last read skips that read (:mod:`.presence`).

On a persistent path a cold mirror is first mapped from its snapshot (:mod:`.snapshot`)
and the journal entries written since (:mod:`.journal`), or replayed from the journal
alone, so only the writes neither proves are read from Chroma. A load that had to read
or replay much leaves a snapshot (and an emptied journal) for the next one. A write whose
writer died between landing it and recording it is recorded for it by the next cold load
or catch-up that finds its intent file (:meth:`MirrorCache._adopt`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import fields, replace

from chromadb.api.models.Collection import Collection
from langchain_core.embeddings import Embeddings

from ..records.model import Granularity
from .changelog import Change, ChangeLog
from .chroma_calls import ChromaCalls
from .codec import from_metadata
from .indexing import IndexTextPolicy
from .journal import Journals, journal_step
from .journal_format import Replay
from .keyword import KeywordSources
from .lexical import Analyzer
from .mirror import MirrorConfig, MirrorRow, NamespaceMirror, WriteEvent
from .mirror_snapshot import mirror_from_snapshot, snapshot_arrays
from .okapi import BM25Params
from .presence import Token
from .rows import Row, namespace_ids, rows_by_id, small_namespace

Key = tuple[Granularity, str]

COMPACT_ENTRIES = 64
"""A cold load that replayed more journal entries than this compacts the journal."""
COMPACT_ROWS = 256
"""A cold load that read more records than this from Chroma compacts the journal."""


class MirrorCache:
    """Per-(granularity, namespace) mirrors of a store's record collections."""

    def __init__(
        self,
        *,
        collections: dict[Granularity, Collection],
        calls: ChromaCalls,
        changelog: ChangeLog,
        embeddings: Embeddings,
        policy: IndexTextPolicy,
        analyzer: Analyzer,
        bm25: BM25Params,
        config: MirrorConfig,
        journals: Journals | None = None,
    ) -> None:
        self._collections = collections
        self.journals = journals
        """Where cold mirrors are replayed from (persistent paths only), or None."""
        self._calls = calls
        self._log = changelog
        self._embeddings = embeddings
        self._policy = policy
        self._analyzer = analyzer
        self._bm25 = bm25
        self.config = config
        self._lock = threading.Lock()
        self._mirrors: OrderedDict[Key, NamespaceMirror] = OrderedDict()
        self._sizes: dict[Key, int] = {}
        self._total = 0
        self._loading: dict[Key, threading.Lock] = {}
        self._tokens: dict[Key, Token | None] = {}
        """Per mirror, the presence look taken before it last read the log (or loaded)."""
        self._pending: dict[Key, list[WriteEvent]] = {}
        """This store's writes made while a namespace loads, applied to what it loads."""
        self.loads = 0
        """How many mirrors were built from Chroma (first touches, resets, evictions)."""
        self.replays = 0
        """How many cold mirrors came from a journal (and the change log) instead."""
        self.snapshots = 0
        """How many of those started from a snapshot."""
        self.rebuilds = 0
        """How many cold mirrors were read from Chroma because a write was left unrecorded."""
        self.adopted = 0
        """How many writes left unrecorded by a dead writer this store recorded for it."""

    # ------------------------------------------------------------------ access
    @classmethod
    def from_sources(
        cls, sources: KeywordSources, *, bm25: BM25Params, config: MirrorConfig
    ) -> MirrorCache:
        """The mirrors of a store's collections (the store's default keyword index)."""
        given = {f.name: getattr(sources, f.name) for f in fields(sources)}
        return cls(**given, bm25=bm25, config=config)

    def get(self, gran: Granularity, namespace: str) -> NamespaceMirror:
        """The mirror of a namespace, brought up to date with every process's writes."""
        return self.get_many([gran], namespace)[gran]

    def get_many(
        self, grans: Sequence[Granularity], namespace: str
    ) -> dict[Granularity, NamespaceMirror]:
        """Several granularities' mirrors of a namespace, brought up to date together.

        The mirrors that were loaded already read the change log at once (one ``get``
        for all of them); a mirror loaded now is up to date as it is.
        """
        found: dict[Granularity, NamespaceMirror] = {}
        stale: list[NamespaceMirror] = []
        for gran in dict.fromkeys(grans):
            key = (gran, namespace)
            found[gran], fresh = self._loaded(key)
            if fresh:
                continue
            with self._lock:
                token = self._tokens.get(key)
            if not self._log.quiet_since(token):  # alone since its last read: nothing to read
                stale.append(found[gran])  # (a load another thread began may predate a write)
        if stale:
            self._adopt_left(namespace, [m.granularity for m in stale])  # into the log first
            token = self._log.token()  # before the read: a process joining later is noticed
            with self._lock:
                self._tokens.update(((m.granularity, namespace), token) for m in stale)
        for mirror, read in zip(stale, self._catch_up_all(stale), strict=True):
            key = (mirror.granularity, namespace)
            if read is None:
                found[mirror.granularity] = self._load_and_install(key)
            elif read:
                self._resized(key, mirror)
        return found

    def _loaded(self, key: Key) -> tuple[NamespaceMirror, bool]:
        """The mirror of ``key``, and whether this call loaded it (cold, from Chroma)."""
        with self._lock:
            mirror = self._mirrors.get(key)
            if mirror is not None:
                self._mirrors.move_to_end(key)
                return mirror, False
            gate = self._loading.setdefault(key, threading.Lock())
        with gate:  # one thread loads a namespace; the others wait for it
            with self._lock:
                mirror = self._mirrors.get(key)
            loaded = mirror is None
            if mirror is None:
                token = self._log.token()  # before the load reads anything
                mirror = self._load_and_install(key)
                with self._lock:
                    self._tokens[key] = token
        with self._lock:
            self._loading.pop(key, None)
        return mirror, loaded

    def peek(self, gran: Granularity, namespace: str) -> NamespaceMirror | None:
        """The mirror if it is loaded, without syncing it or touching the LRU order."""
        with self._lock:
            return self._mirrors.get((gran, namespace))

    def drop(self, gran: Granularity, namespace: str) -> None:
        """Forget one mirror (it is rebuilt on next use)."""
        with self._lock:
            self._mirrors.pop((gran, namespace), None)
            self._total -= self._sizes.pop((gran, namespace), 0)
            self._tokens.pop((gran, namespace), None)

    def clear(self) -> None:
        """Forget every mirror."""
        with self._lock:
            self._mirrors.clear()
            self._sizes.clear()
            self._tokens.clear()
            self._total = 0

    def __len__(self) -> int:
        return len(self._mirrors)

    def nbytes(self) -> int:
        """Estimated memory held by all mirrors."""
        with self._lock:
            return self._total

    # ------------------------------------------------------------ own writes
    def applied(self, write: WriteEvent) -> None:
        """Apply this store's own write to its mirror, if that is loaded (or loading)."""
        key = (write.granularity, write.namespace)
        with self._lock:
            mirror = self._mirrors.get(key)
            if mirror is None:
                if key in self._pending:  # a write made alone reaches no change log
                    self._pending[key].append(write)
                return
        with mirror._lock:
            self._apply_own(mirror, write)
        self._resized(key, mirror)

    def _apply_own(self, mirror: NamespaceMirror, write: WriteEvent) -> None:
        if write.deleted:
            mirror.delete(write.deleted)
        if write.rows:
            mirror.upsert_rows(self._with_vectors(mirror, write.rows))
        if write.slot == mirror.position + 1:
            mirror.position = write.slot

    def _load_and_install(self, key: Key) -> NamespaceMirror:
        """Load a mirror and install it, with this store's writes made meanwhile applied.

        Those writes are applied in order over what the load read (each puts or deletes
        whole rows, so one the load saw already changes nothing), before any later one.
        """
        with self._lock:
            self._pending.setdefault(key, [])
        try:
            mirror = self._cold(*key)
            with mirror._lock:
                with self._lock:
                    self._mirrors[key] = mirror  # later writes go to the mirror, after these
                    self._mirrors.move_to_end(key)
                    pending = self._pending.pop(key, [])
                for write in pending:
                    self._apply_own(mirror, write)
        finally:
            with self._lock:
                self._pending.pop(key, None)
        return self._install(key, mirror)

    # ------------------------------------------------------------- internals
    def load(self, gran: Granularity, namespace: str) -> NamespaceMirror:
        """Build a mirror from Chroma (not cached; :meth:`get` caches it)."""
        position = self._log.end(gran, namespace)  # before the rows: later writes re-apply
        collection = self._collections[gran]
        small = small_namespace(self._calls, collection, namespace)
        if small is not None:
            keep = len(small) <= self.config.exact_limit
            rows = sorted(small, key=lambda row: row.record_id)
        else:
            ids = sorted(namespace_ids(self._calls, collection, namespace))
            keep = len(ids) <= self.config.exact_limit
            rows = rows_by_id(self._calls, collection, namespace, ids, vectors=keep)
        mirror = NamespaceMirror(
            gran, namespace, analyzer=self._analyzer, params=self._bm25, vectors=keep
        )
        mirror.upsert_rows(self._with_vectors(mirror, self._mirror_rows(gran, rows)))
        mirror.position = position
        self.loads += 1
        return mirror

    def _cold(self, gran: Granularity, namespace: str) -> NamespaceMirror:
        """A mirror for a namespace none holds.

        From its snapshot and journal, or its journal alone, when they prove enough, else
        built from Chroma; a load that read much from Chroma compacts the journal for the
        next one.
        """
        journals = self.journals
        if journals is None:
            return self.load(gran, namespace)
        if journals.intent_size(gran, namespace):
            return self._rebuilt(journals, gran, namespace)
        mapped = self._from_snapshot(journals, gran, namespace)
        if mapped is not None:
            return mapped
        replay = journals.read(gran, namespace)
        if replay is not None and not replay.based:
            if journals.snapshot_path(gran, namespace).exists():
                replay = None  # what the journal held is in that snapshot, and it failed
        if replay is not None and replay.trusted:
            mirror = self._replayed(gran, namespace, replay)
            read = None if mirror is None else self._catch_up_all([mirror])[0]
            if mirror is not None and read is not None:
                self.replays += 1
                if replay.entries > COMPACT_ENTRIES or read > COMPACT_ROWS:
                    self._compact(mirror, replay.stamp)
                return mirror
        stamp = journals.stamp(gran, namespace)
        mirror = self.load(gran, namespace)
        self._compact(mirror, stamp)
        return mirror

    def _rebuilt(self, journals: Journals, gran: Granularity, namespace: str) -> NamespaceMirror:
        """The mirror read from Chroma when a writer may have died between landing and recording.

        Its write intents (:meth:`~.journal.Journals.mark_intent`) name rows Chroma may hold
        that neither the journal, the snapshot nor the change log does. The load's snapshot
        replaces both files, and the intents are then recorded (:meth:`_adopt`), so the
        warm mirrors of other live processes re-read them too.
        """
        stamp = journals.stamp(gran, namespace)
        mirror = self.load(gran, namespace)
        self.rebuilds += 1
        self._compact(mirror, stamp)
        try:
            with journals.writing(gran, namespace):
                self._adopt(journals, gran, namespace, partial=True)
        except OSError:
            pass  # the intents stay: the next cold load reads Chroma again
        return mirror

    def _adopt_left(self, namespace: str, grans: Sequence[Granularity]) -> None:
        """Record the writes a dead writer left unrecorded in ``namespace``, before a catch-up.

        Costs one ``stat`` per granularity while no intent file is there. A file there is
        a write in flight, or a dead writer's: its namespace lock is free (the write ended),
        or a writer it names is no live registration (:meth:`~.presence.Presence.alive`;
        worth waiting for the lock then), and the write is recorded under that lock.
        """
        journals = self.journals
        if journals is None:
            return
        for gran in grans:
            if not journals.intent_size(gran, namespace):
                continue
            try:
                with journals.try_writing(gran, namespace) as held:
                    if held:
                        self._adopt(journals, gran, namespace)
                if held:
                    continue
                found = journals.read_intent(gran, namespace)
                presence = self._log.presence
                if found is None or (
                    presence is not None
                    and all(by is not None and presence.alive(by) for by in found.writers)
                ):
                    continue  # live writers' writes in flight: they record them
                with journals.writing(gran, namespace):
                    self._adopt(journals, gran, namespace)
            except OSError:
                pass  # the intents stay for the next catch-up or cold load

    def _adopt(
        self, journals: Journals, gran: Granularity, namespace: str, *, partial: bool = False
    ) -> None:
        """Record, under the namespace's journal lock, the writes its intent file names.

        Every such write ended (each writer holds the lock from its note to its record),
        so Chroma holds what it left: the ids get a change-log slot (every live mirror
        re-reads them) and a journal entry of the rows Chroma now has (the next cold load
        replays them), then the file goes. Recording the same ids twice re-reads them twice.
        A file with an unreadable line stays for a cold load, which reads all of Chroma
        (``partial``: that load did, so it records the ids it can read and clears the file).
        """
        found = journals.read_intent(gran, namespace)
        if found is None or not (found.whole or partial):
            return
        ids = list(found.ids)
        slot = self._log.claim(gran, namespace, ids)
        rows = rows_by_id(self._calls, self._collections[gran], namespace, ids, vectors=True)
        present = {row.record_id for row in rows}
        recorded = self._embedded(self._mirror_rows(gran, rows))
        deleted = [rid for rid in ids if rid not in present]
        write = WriteEvent(gran, namespace, slot, rows=recorded, deleted=deleted)
        journal_step(journals, lambda j: j.append(write))
        journals.landed(gran, namespace)
        self.adopted += 1

    def _from_snapshot(
        self, journals: Journals, gran: Granularity, namespace: str
    ) -> NamespaceMirror | None:
        """The snapshot's mirror, the journal entries after it and the change log applied.

        None when there is no usable snapshot (absent, damaged, foreign, without the
        vectors this size needs), or when the journal holds a whole namespace written
        after it, or the change log no longer reaches back to it.
        """
        found = journals.read_snapshot(gran, namespace)
        if found is None:
            return None
        header, arrays = found
        mirror = mirror_from_snapshot(
            gran,
            namespace,
            header,
            arrays,
            analyzer=self._analyzer,
            params=self._bm25,
            vectors=int(header["rows"]) <= self.config.exact_limit,
        )
        if mirror is None:
            return None
        tail = journals.read(gran, namespace, start=mirror.position)
        stamp = journals.stamp(gran, namespace) if tail is None else tail.stamp
        if tail is not None:
            if tail.based or not tail.trusted:
                return None  # the journal alone holds the namespace: replay it instead
            if tail.deleted:
                mirror.delete(sorted(tail.deleted))
            if tail.rows:
                rows = [tail.rows[rid] for rid in sorted(tail.rows)]
                mirror.upsert_rows(self._with_vectors(mirror, rows))
            mirror.position = tail.position
        read = self._catch_up_all([mirror])[0]
        if read is None:
            return None
        self.replays += 1
        self.snapshots += 1
        if read > COMPACT_ROWS:  # rows only Chroma had: snapshot the whole mirror
            self._compact(mirror, stamp)
        elif tail is not None and tail.entries > COMPACT_ENTRIES:
            self._merge(gran, namespace)
        return mirror

    def _merge(self, gran: Granularity, namespace: str) -> None:
        """Fold the journal into the snapshot, for the next cold load."""
        assert self.journals is not None
        try:
            with self.journals.writing(gran, namespace):
                self.journals.merge(gran, namespace)
        except (OSError, ValueError, KeyError):
            pass  # an accelerator only

    def _replayed(
        self, gran: Granularity, namespace: str, replay: Replay
    ) -> NamespaceMirror | None:
        keep = len(replay.rows) <= self.config.exact_limit
        if keep and any(row.vector is None for row in replay.rows.values()):
            return None  # written without vectors (a larger namespace): Chroma has them
        mirror = NamespaceMirror(
            gran, namespace, analyzer=self._analyzer, params=self._bm25, vectors=keep
        )
        mirror.upsert_rows(replay.rows[rid] for rid in sorted(replay.rows))
        mirror.position = replay.position
        return mirror

    def _compact(self, mirror: NamespaceMirror, stamp: tuple[int, int] | None) -> bool:
        """Leave a snapshot of ``mirror`` (and an empty journal) for the next cold load.

        False when it was not left: a writer appended since ``stamp``, or the files failed.
        """
        assert self.journals is not None
        try:
            header, arrays = snapshot_arrays(mirror)
            return self.journals.save_snapshot(
                mirror.granularity, mirror.namespace, header, arrays, stamp
            )
        except OSError:
            return False  # an accelerator only: the next cold load replays or reads Chroma

    def _catch_up_all(self, mirrors: Sequence[NamespaceMirror]) -> list[int | None]:
        """Apply every change after each mirror's position (one namespace's, read at once).

        Gives per mirror how many records were re-read from Chroma, or None when it must
        be rebuilt instead (its position was pruned from the log, or the namespace reset).
        """
        if not mirrors:
            return []
        order = list(Granularity)
        with ExitStack() as held:
            for mirror in sorted(mirrors, key=lambda m: order.index(m.granularity)):
                held.enter_context(mirror._lock)  # always in one order: no deadlock
            namespace = mirrors[0].namespace
            found = self._log.since_all(namespace, {m.granularity: m.position for m in mirrors})
            return [self._apply(m, found[m.granularity]) for m in mirrors]

    def _apply(self, mirror: NamespaceMirror, found: tuple[list[Change], int] | None) -> int | None:
        """Re-read from Chroma the records that ``found``'s changes name (mirror locked)."""
        if found is None or any(change.reset for change in found[0]):
            return None
        changes, position = found
        ids = sorted({rid for change in changes for rid in change.ids})
        if ids:
            collection = self._collections[mirror.granularity]
            rows = rows_by_id(
                self._calls, collection, mirror.namespace, ids, vectors=mirror.has_vectors
            )
            present = {row.record_id for row in rows}
            mirror.delete([rid for rid in ids if rid not in present])
            mirror.upsert_rows(
                self._with_vectors(mirror, self._mirror_rows(mirror.granularity, rows))
            )
        mirror.position = max(mirror.position, position)
        return len(ids) if changes else 0

    def _mirror_rows(self, gran: Granularity, rows: list[Row]) -> list[MirrorRow]:
        """Rows read from Chroma as a mirror (and a journal) takes them, with their terms."""
        out = []
        for row in rows:
            record = from_metadata(gran, row.metadata)
            text = self._policy.render(record)
            terms = tuple(self._analyzer(text))
            out.append(MirrorRow(record.id, text, row.metadata, row.vector, terms))
        return out

    def _with_vectors(self, mirror: NamespaceMirror, rows: Sequence[MirrorRow]) -> list[MirrorRow]:
        """The rows, embedded where they lack a vector, if ``mirror`` keeps vectors."""
        return self._embedded(rows) if mirror.has_vectors else list(rows)

    def _embedded(self, rows: Sequence[MirrorRow]) -> list[MirrorRow]:
        """Embed the rows that came without a vector (not in this process's HNSW segment)."""
        out = list(rows)
        todo = [i for i, row in enumerate(out) if row.vector is None]
        if todo:
            fresh = self._embeddings.embed_documents([out[i].text for i in todo])
            for i, vector in zip(todo, fresh, strict=True):
                out[i] = replace(out[i], vector=list(vector))
        return out

    def _install(self, key: Key, mirror: NamespaceMirror) -> NamespaceMirror:
        with self._lock:
            self._mirrors[key] = mirror
            self._mirrors.move_to_end(key)
            self._set_size(key, mirror.nbytes())
            self._evict(keep=key)
        return mirror

    def _resized(self, key: Key, mirror: NamespaceMirror) -> None:
        with self._lock:
            if self._mirrors.get(key) is mirror:
                self._set_size(key, mirror.nbytes())
                self._evict(keep=key)

    def _set_size(self, key: Key, size: int) -> None:
        self._total += size - self._sizes.get(key, 0)
        self._sizes[key] = size

    def _evict(self, *, keep: Key) -> None:
        """Drop least recently used mirrors (never ``keep``) until under the budget."""
        victims = (k for k in list(self._mirrors) if k != keep)
        while self._total > self.config.budget_bytes:
            oldest = next(victims, None)
            if oldest is None:
                break
            self._mirrors.pop(oldest)
            self._total -= self._sizes.pop(oldest, 0)
            self._tokens.pop(oldest, None)
