"""Mirror journals beside a persistent Chroma directory, so a cold mirror skips Chroma.

Loading a namespace mirror from Chroma reads every row, so a store on a persistent path
also keeps, per (granularity, namespace), an append-only journal file of what its mirror is
made of: each write appends the rows it wrote (id, metadata, BM25 terms, vector) or the
ids it deleted, labelled with the change-log slot it claimed. A cold mirror replays the
journal, then catches up with the change log from Chroma as any mirror does.

The journal is never trusted beyond what it proves:

- its header names the namespace, the granularity, the ids of the Chroma collections
  and the analyser and index policy the terms came from; any mismatch ignores it;
- each entry carries a CRC-32; replay stops at the first bad or torn entry, and at the
  first slot gap (a writer that died between its claim and its append), and the change
  log serves everything after that point from Chroma;
- writers of one namespace hold a file lock from their row upsert to their append, so
  slot order is write order and replaying entries in slot order gives Chroma's state.

A server (``chroma run``) store keeps no journal: its processes share no directory.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from chromadb.api import ClientAPI
from chromadb.api.models.Collection import Collection

from ..records.model import Granularity
from .changelog import ChangeLog
from .indexing import IndexTextPolicy
from .journal_format import Replay, encode_entry, replay_entries
from .lexical import Analyzer
from .mirror import WriteEvent
from .schema import persist_directory
from .snapshot import read_snapshot, write_snapshot
from .snapshot_merge import merge_rows, pruned

FORMAT = 1
MERGE_BYTES = 2 << 20
"""A journal reaching this size (about 850 rows with 384-dimensional vectors) and
:data:`MERGE_SHARE` of its snapshot's is folded into the snapshot by the writer."""
MERGE_SHARE = 8
"""The journal is folded once it reaches 1/8 of the snapshot's size: every fold rewrites
the snapshot, so a namespace of n rows is rewritten O(n) bytes in all, not O(n^2)."""
_LOCK_RANGES = 4096
"""Byte ranges of the lock file; namespaces share a range only by hash collision."""


class Journals:
    """The mirror journals of one store, in ``root`` (one file per granularity and namespace)."""

    def __init__(self, root: Path, identity: dict[str, Any]) -> None:
        self.root = root
        self.identity = {"format": FORMAT, **identity}
        """What a journal must have been written for (collections, analyser, policy)."""
        root.mkdir(parents=True, exist_ok=True)
        self._lock_file = root / "journals.lock"
        self._thread_lock = _process_lock(self._lock_file)
        self._unmerged: dict[tuple[Granularity, str], int] = {}
        """Journal sizes at which a fold was refused: the next try waits for twice that."""

    def path(self, gran: Granularity, namespace: str) -> Path:
        """The journal file of a namespace (hashed: any namespace string is a safe name)."""
        digest = hashlib.sha256(f"{gran.value}|{namespace}".encode()).hexdigest()[:40]
        return self.root / gran.value / f"{digest}.jnl"

    def writing(self, gran: Granularity, namespace: str) -> AbstractContextManager[None]:
        """Hold the namespace's write lock (threads and processes) across upsert, claim, append."""
        return self._locked(1, _lock_offset(gran, namespace))

    def writing_all(self) -> AbstractContextManager[None]:
        """Hold every namespace's write lock at once (the whole lock file), e.g. to vacuum."""
        return self._locked(0, 0)

    @contextmanager
    def _locked(self, length: int, offset: int) -> Iterator[None]:
        with self._thread_lock, open(self._lock_file, "a+b") as f:
            fcntl.lockf(f, fcntl.LOCK_EX, length, offset)
            try:
                yield
            finally:
                fcntl.lockf(f, fcntl.LOCK_UN, length, offset)

    @contextmanager
    def try_writing(self, gran: Granularity, namespace: str) -> Iterator[bool]:
        """:meth:`writing` if it is free now (True), else nothing is held (False); never waits."""
        offset = _lock_offset(gran, namespace)
        if not self._thread_lock.acquire(blocking=False):
            yield False
            return
        try:
            with open(self._lock_file, "a+b") as f:
                try:
                    fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, offset)
                except OSError:  # another process writes this namespace now
                    yield False
                    return
                try:
                    yield True
                finally:
                    fcntl.lockf(f, fcntl.LOCK_UN, 1, offset)
        finally:
            self._thread_lock.release()

    # ------------------------------------------------------------------ writes
    def intent_path(self, gran: Granularity, namespace: str) -> Path:
        """The namespace's write intents: ids a writer is landing in Chroma, not yet recorded."""
        return self.path(gran, namespace).with_suffix(".intent")

    def mark_intent(
        self, gran: Granularity, namespace: str, ids: Sequence[str], by: str | None = None
    ) -> bool:
        """Note ``ids`` before they land (inside :meth:`writing`); True if this made the file.

        A writer killed between landing rows in Chroma and recording them (its slot, its
        journal entry) leaves the file behind, so the next cold load knows the journal and
        snapshot miss rows Chroma holds (:meth:`intent_size`), and a live store catching up
        on the change log records the write for it (:meth:`read_intent`). A file already
        there is a dead writer's: the ids are added to it and it is left for those to clear.
        ``by``: the writer's registration (:meth:`~.presence.Presence.alive`), if it has one.
        """
        path = self.intent_path(gran, namespace)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "ab") as f:
            made = f.tell() == 0
            f.write(json.dumps({"by": by, "ids": list(ids)}).encode() + b"\n")
        return made

    def landed(self, gran: Granularity, namespace: str) -> None:
        """The write that made the intent file is recorded: remove it (inside :meth:`writing`)."""
        self.intent_path(gran, namespace).unlink(missing_ok=True)

    def intent_size(self, gran: Granularity, namespace: str) -> int:
        """Bytes of unrecorded intents (0: none), read without the lock."""
        return _size(self.intent_path(gran, namespace))

    def read_intent(self, gran: Granularity, namespace: str) -> Intents | None:
        """The namespace's unrecorded intents, None if there are none (or they cannot be read).

        Inside :meth:`writing` every id there is of a write that ended: each writer holds
        the lock from its note to its record, and a dead one's lock died with it.
        """
        try:
            data = self.intent_path(gran, namespace).read_bytes()
        except OSError:
            return None
        ids: list[str] = []
        writers: set[str | None] = set()
        whole = True
        for line in data.split(b"\n"):
            if not line:
                continue
            try:
                note = json.loads(line)
            except ValueError:
                whole = False  # torn by a kill inside the append: that writer landed nothing
                continue
            if isinstance(note, list):  # written before intents named their writer
                note = {"ids": note}
            got = note.get("ids") if isinstance(note, dict) else None
            if not isinstance(got, list) or not all(isinstance(i, str) for i in got):
                whole = False
                continue
            ids += got
            by = note.get("by")
            writers.add(by if isinstance(by, str) else None)
        return Intents(tuple(dict.fromkeys(ids)), frozenset(writers), whole)

    def append(self, write: WriteEvent) -> None:
        """Record a write after its claim, or after it landed alone (inside :meth:`writing`)."""
        gran, namespace, slot = write.granularity, write.namespace, write.slot
        path = self.path(gran, namespace)
        lo = slot - 1 if write.claimed else slot  # unclaimed: follows ``slot`` (lo == hi)
        entry = encode_entry(lo, slot, write.rows, write.deleted, base=False)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "ab") as f:
            if f.tell() == 0:
                f.write(self._header(gran, namespace))
            f.write(entry)
            size = f.tell()
        key = (gran, namespace)
        if size < max(MERGE_BYTES, 2 * self._unmerged.get(key, 0)):
            return  # most writes stop here, without looking at the snapshot
        if size >= _size(self.snapshot_path(gran, namespace)) // MERGE_SHARE:
            try:
                merged = self.merge(gran, namespace, upto=slot)
            except (OSError, ValueError, KeyError):
                merged = False  # an accelerator only: the journal still proves the write
            if merged:
                self._unmerged.pop(key, None)
            else:  # a gap or mixed vectors: do not re-read the journal on every write
                self._unmerged[key] = size

    def merge(
        self, gran: Granularity, namespace: str, upto: int | None = None, *, prune: bool = False
    ) -> bool:
        """Fold the journal into the snapshot and empty it (call inside :meth:`writing`).

        A cold mirror then maps the snapshot and replays a short tail. Skipped (False)
        when the journal does not prove every slot up to ``upto`` (an append was lost:
        the change log serves that part), or when its rows cannot keep vectors
        consistently with the snapshot's. ``prune``: also drop the terms and filter
        values no live row holds (:func:`~.snapshot_merge.pruned`).
        """
        found = self.read_snapshot(gran, namespace)
        start = None if found is None else int(found[0]["position"])
        tail = self.read(gran, namespace, start=start)
        if tail is None or not tail.trusted or (upto is not None and tail.position != upto):
            return False
        if tail.based:
            found = None  # the journal holds the whole namespace from its base entry on
        header, arrays = found if found is not None else (None, None)
        rows = list(tail.rows.values())
        merged = merge_rows(header, arrays, rows, tail.deleted, tail.position)
        if merged is None:
            return False
        self._replace(gran, namespace, *(pruned(*merged) if prune else merged))
        return True

    def erase(self, gran: Granularity, namespace: str, upto: int) -> None:
        """Rewrite a namespace's files to hold its live rows only (call inside :meth:`writing`).

        After a forget the journal still holds the deleted rows whole, and the snapshot
        their terms: both are folded into one pruned snapshot as of slot ``upto`` (the
        change log's end), or, when the journal cannot prove that far, both are removed
        (a cold load then reads Chroma). Temporary files a crashed writer left are removed
        too: no writer of this namespace is running while the lock is held.
        """
        done = False
        try:
            done = self.merge(gran, namespace, upto=upto, prune=True)
        except (OSError, ValueError, KeyError):
            done = False
        if not done:
            self.reset(gran, namespace)
        for leftover in self.path(gran, namespace).parent.glob(
            f"{self.path(gran, namespace).stem}.*.tmp"
        ):
            leftover.unlink(missing_ok=True)
        self._unmerged.pop((gran, namespace), None)

    def reset(self, gran: Granularity, namespace: str) -> None:
        """Forget a namespace's journal and snapshot (call inside :meth:`writing`).

        Its namespace was wiped: nothing either holds is true any more.
        """
        self.snapshot_path(gran, namespace).unlink(missing_ok=True)
        self.path(gran, namespace).unlink(missing_ok=True)

    def snapshot_path(self, gran: Granularity, namespace: str) -> Path:
        """The snapshot file of a namespace's mirror (beside its journal)."""
        return self.path(gran, namespace).with_suffix(".snap")

    def save_snapshot(
        self,
        gran: Granularity,
        namespace: str,
        header: dict[str, Any],
        arrays: dict[str, np.ndarray],
        stamp: tuple[int, int] | None,
    ) -> bool:
        """Write a mirror snapshot and empty the journal it makes redundant.

        Skipped (False) when the journal changed since ``stamp``: a writer appended,
        and a later cold load will snapshot. The snapshot lands first; a crash before the
        journal is emptied leaves entries that a replay from the snapshot skips.
        """
        path = self.path(gran, namespace)
        path.parent.mkdir(parents=True, exist_ok=True)
        with self.writing(gran, namespace):
            if _stamp(path) != stamp:
                return False
            self._replace(gran, namespace, header, arrays)
        return True

    def _replace(
        self, gran: Granularity, namespace: str, header: dict[str, Any], arrays: dict[str, Any]
    ) -> None:
        """Write the snapshot, then empty the journal.

        A crash between the two leaves entries that a replay from the new snapshot skips
        as covered.
        """
        write_snapshot(
            self.snapshot_path(gran, namespace),
            {**self._identity(gran, namespace), **header},
            arrays,
        )
        path = self.path(gran, namespace)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(self._header(gran, namespace))
        os.replace(tmp, path)

    def read_snapshot(
        self, gran: Granularity, namespace: str
    ) -> tuple[dict[str, Any], dict[str, np.ndarray]] | None:
        """A namespace's mirror snapshot, None if it is absent, foreign or damaged."""
        return read_snapshot(self.snapshot_path(gran, namespace), self._identity(gran, namespace))

    def _identity(self, gran: Granularity, namespace: str) -> dict[str, Any]:
        return {**self.identity, "granularity": gran.value, "namespace": namespace}

    def _header(self, gran: Granularity, namespace: str) -> bytes:
        return json.dumps(self._identity(gran, namespace), sort_keys=True).encode() + b"\n"

    # ------------------------------------------------------------------- reads
    def stamp(self, gran: Granularity, namespace: str) -> tuple[int, int] | None:
        """(inode, size) of a namespace's journal, None if it has none."""
        return _stamp(self.path(gran, namespace))

    def read(self, gran: Granularity, namespace: str, start: int | None = None) -> Replay | None:
        """Replay a journal up to its first gap or bad entry; None if it is absent or foreign.

        ``start``: the change-log slot a snapshot already covers
        (:func:`~.journal_format.replay_entries`).
        """
        path = self.path(gran, namespace)
        try:
            stamp = _stamp(path)
            data = path.read_bytes()
        except OSError:
            return None
        end = data.find(b"\n")
        try:
            head = json.loads(data[:end]) if end > 0 else None
        except ValueError:
            return None
        if head != self._identity(gran, namespace):
            return None
        return replay_entries(data, end + 1, namespace, start, stamp)


@dataclass(frozen=True)
class Intents:
    """What an intent file names: the ids of unrecorded writes, and who wrote them."""

    ids: tuple[str, ...]
    writers: frozenset[str | None]
    """Registrations of the writers (None: a writer without one, or an older file)."""
    whole: bool
    """False when a line could not be read (its writer was killed inside the append)."""


def _lock_offset(gran: Granularity, namespace: str) -> int:
    digest = hashlib.sha256(f"{gran.value}|{namespace}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % _LOCK_RANGES


_PROCESS_LOCKS: dict[Path, threading.RLock] = {}
_PROCESS_LOCKS_GUARD = threading.Lock()


def _process_lock(lock_file: Path) -> threading.RLock:
    """One thread lock per lock file in this process, shared by every store on the path.

    A file lock does not exclude threads of the process that holds it, and closing any
    descriptor of the file drops the process's locks; so two stores on one path in one
    process must also take turns here.
    """
    key = lock_file.resolve()
    with _PROCESS_LOCKS_GUARD:
        return _PROCESS_LOCKS.setdefault(key, threading.RLock())


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_ino, st.st_size)


def journals_for(
    client: ClientAPI,
    prefix: str,
    collections: dict[Granularity, Collection],
    log: ChangeLog,
    analyzer: Analyzer,
    policy: IndexTextPolicy,
) -> Journals | None:
    """The journals of a store on a persistent path (beside its Chroma files), else None.

    The identity ties every journal to these very collections (a collection deleted and
    made again gets a new id) and to the analyser and index policy its terms came from.
    """
    directory = persist_directory(client)
    if directory is None:
        return None
    identity = {
        "prefix": prefix,
        "collections": {g.value: str(c.id) for g, c in collections.items()},
        "log": str(log.collection_id),
        "analyzer": _fingerprint(analyzer),
        "policy": json.dumps(asdict(policy), sort_keys=True),
    }
    try:
        return Journals(directory / "lamina-mirrors" / prefix, identity)
    except OSError:
        return None  # a read-only directory: cold loads read Chroma


def _fingerprint(analyzer: Analyzer) -> str:
    words = "\n".join(sorted(analyzer.stop_words))
    text = f"{type(analyzer).__qualname__}|stem={analyzer.stem}|{words}"
    return hashlib.sha256(text.encode()).hexdigest()


def journal_lock(
    journals: Journals | None, gran: Granularity, namespace: str
) -> AbstractContextManager[None]:
    """The namespace's journal lock, held from a write's rows to its journal entry."""
    return nullcontext() if journals is None else journals.writing(gran, namespace)


def journal_step(journals: Journals | None, step: Callable[[Journals], None]) -> None:
    """Record a landed write in the journal; failing to is only a slower cold load."""
    if journals is not None:
        try:
            step(journals)
        except OSError:
            pass  # the slot stays uncovered: replay stops there and Chroma serves the rest
