"""Erasure on a persistent Chroma store: after a forget, its files no longer hold the text.

A Chroma delete leaves the forgotten text in three places on disk, besides the mirror
files lamina keeps beside Chroma (:meth:`~lamina.stores.journal.Journals.erase` rewrites
those):

- Chroma's write-ahead queue (the ``embeddings_queue`` table), which keeps every write,
  document and metadata included, until its vector index flushes (every 1,000 writes of a
  collection, so a small collection keeps them all);
- the full-text index (an FTS5 table), whose segments keep deleted terms until merged;
- the free pages of ``chroma.sqlite3``: Chroma's SQLite does not overwrite deleted rows.

:func:`scrub_sqlite` empties the metadata (and so the document) of every queue entry that
a later entry for the same record replaces, once Chroma's metadata segment has applied
it (a replay after a crash reads only the vectors of entries its metadata segment has
applied, and the latest entry of each record stays whole); merges the full-text index
into one segment; then rewrites the file with ``VACUUM``. It also zeroes the unused
slots of the collections' vector index files, which Chroma fills with stray process
memory (:mod:`.chroma_hnsw_files`). The vectors of deleted records stay in the queue and
the vector index files until Chroma overwrites them: they are not text, and the docs say
so.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Collection as Many
from contextlib import nullcontext
from pathlib import Path

from chromadb.api import ClientAPI
from chromadb.api.models.Collection import Collection

from ..records.model import Granularity
from .changelog import ChangeLog
from .chroma_hnsw_files import clear_unused_slots
from .erasure import PARTS, erased_namespaces, erased_parts
from .journal import Journals
from .keyed import KeyedDocuments
from .schema import persist_directory

BUSY_TIMEOUT_S = 60.0
"""How long the vacuum waits for other connections (other processes) to finish."""


def sqlite_file(client: ClientAPI) -> Path | None:
    """The SQLite file of a persistent client, None for an in-memory or server client."""
    directory = persist_directory(client)
    path = None if directory is None else directory / "chroma.sqlite3"
    return path if path is not None and path.exists() else None


def scrub_sqlite(path: Path, collection_ids: Many[str], timeout: float = BUSY_TIMEOUT_S) -> int:
    """Clear replaced queue entries of ``collection_ids``, merge the text index, vacuum.

    Also clears the unused slots of every vector index file in the folder (they hold
    stray process memory: :func:`~.chroma_hnsw_files.clear_unused_slots`). Returns how
    many queue entries were emptied. Runs on a connection of its own with
    ``secure_delete`` on; the vacuum needs every other connection to be idle and waits up
    to ``timeout`` seconds for them.
    """
    db = sqlite3.connect(path, timeout=timeout, isolation_level=None)
    try:
        db.execute("PRAGMA secure_delete = ON")
        db.execute("BEGIN IMMEDIATE")
        try:
            for (segment,) in db.execute("SELECT id FROM segments WHERE scope = 'VECTOR'"):
                clear_unused_slots(path.parent / str(segment))  # any process memory
            emptied = _empty_replaced(db, set(collection_ids))
            if _has_table(db, "embedding_fulltext_search"):
                db.execute(
                    "INSERT INTO embedding_fulltext_search(embedding_fulltext_search) "
                    "VALUES ('optimize')"
                )
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("VACUUM")
    finally:
        db.close()
    return emptied


def _has_table(db: sqlite3.Connection, name: str) -> bool:
    found = db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone()
    return found is not None


def _empty_replaced(db: sqlite3.Connection, collection_ids: set[str]) -> int:
    """Empty the metadata of queue entries a later entry of the same record replaces."""
    if not _has_table(db, "embeddings_queue"):
        return 0
    applied = {
        str(collection): seq
        for collection, seq in db.execute(
            "SELECT s.collection, m.seq_id FROM segments s JOIN max_seq_id m "
            "ON m.segment_id = s.id WHERE s.scope = 'METADATA'"
        )
        if isinstance(seq, int)  # an old file's big-endian bytes: left alone
    }
    topics = [str(t) for (t,) in db.execute("SELECT DISTINCT topic FROM embeddings_queue")]
    db.execute("DROP TABLE IF EXISTS temp.lamina_latest")
    db.execute(
        "CREATE TEMP TABLE lamina_latest AS SELECT topic, id, MAX(seq_id) AS last "
        "FROM embeddings_queue GROUP BY topic, id"
    )
    db.execute("CREATE INDEX temp.lamina_latest_key ON lamina_latest (topic, id)")
    emptied = 0
    for topic in topics:
        collection = topic.rsplit("/", 1)[-1]
        if collection not in collection_ids or collection not in applied:
            continue
        emptied += db.execute(
            "UPDATE embeddings_queue SET metadata = '{}' WHERE topic = ? AND seq_id <= ? "
            "AND metadata IS NOT NULL AND metadata != '{}' AND seq_id < (SELECT l.last "
            "FROM temp.lamina_latest l WHERE l.topic = embeddings_queue.topic "
            "AND l.id = embeddings_queue.id)",
            (topic, applied[collection]),
        ).rowcount
    db.execute("DROP TABLE temp.lamina_latest")
    return emptied


class ChromaErasure:
    """``erase``: the part of :class:`~lamina.stores.chroma.ChromaMemoryStore` a forget ends with.

    The store sets the attributes below.
    """

    client: ClientAPI
    _lock: threading.RLock
    _collections: dict[Granularity, Collection]
    _profiles: KeyedDocuments
    _audit: KeyedDocuments
    _log: ChangeLog
    _journals: Journals | None

    def erase(self, namespaces: str | Many[str], parts: Many[str] = PARTS) -> float:
        """Rewrite the files that may still hold deleted or replaced content; return seconds.

        ``parts``: what changed (granularities, ``profile``, ``audit``); the mirror files of
        those granularities in each of ``namespaces`` are rewritten to hold live rows only,
        then the SQLite file is scrubbed and vacuumed once (:func:`scrub_sqlite`). An
        in-memory or server store has no such files here, and returns at once.
        """
        names = erased_namespaces(namespaces)
        grans = [g for g in Granularity if g.value in erased_parts(parts)]
        start = time.perf_counter()
        journals = self._journals
        with self._lock:
            if journals is not None:
                for ns in names:
                    for gran in grans:
                        with journals.writing(gran, ns):
                            journals.erase(gran, ns, upto=self._log.end(gran, ns))
                            if journals.stamp(gran, ns) is None:  # removed, not rewritten
                                # a slot, so a journal begun by a write made alone after
                                # this starts after a gap and is never replayed on its own
                                self._log.claim(gran, ns, [])
            path = sqlite_file(self.client)
            if path is not None:
                ids = {str(c.id) for c in self._collections.values()}
                ids |= {str(self._profiles.collection_id), str(self._audit.collection_id)}
                with journals.writing_all() if journals is not None else nullcontext():
                    scrub_sqlite(path, ids)
        return time.perf_counter() - start


__all__ = ["BUSY_TIMEOUT_S", "ChromaErasure", "scrub_sqlite", "sqlite_file"]
