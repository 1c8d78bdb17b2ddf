"""A lamina Chroma data folder, read for a copy: records with vectors, profiles, audit, settings.

Opening a persistent Chroma folder writes to it (Chroma replays its log into the vector
segments and saves them), so :meth:`ChromaSource.open` never opens the folder itself: it
reads a private copy, made in the temporary folder (``$TMPDIR``) with SQLite's backup of
the database (a read-only connection) and a plain copy of the vector segments, and
deletes the copy on :meth:`ChromaSource.close`. The mirror journals are left out: they
are rebuilt from the records.

On the copy, nothing is created or moved either: the collections are opened with
``get_collection``, and an audit entry a supersede left pending in a fact row (the
process died before moving it, see :mod:`lamina.stores.audited`) is read from the row and
handed over.

The folder is checked before anything is read: it must be a Chroma folder holding the
four record collections of a lamina store (``<prefix>_raw``, ``_fact``, ``_episode``,
``_scene``) at the schema version this code reads, all written with one embedder.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from chromadb.api import ClientAPI
from chromadb.api.models.Collection import Collection

from ...errors import InvalidInputError, StoreConfigurationError
from ...records.audit import AuditEntry
from ...records.model import Granularity, MemoryRecord, ProfileRecord
from ...records.settings import NamespaceSettings
from ..audited import PENDING, PENDING_ENTRY
from ..chroma_calls import ChromaCalls, describe_client
from ..codec import from_metadata
from ..keyed import every_document
from ..rows import rows_by_id
from ..schema import SCHEMA_VERSION, persistent_client

DATABASE_FILE = "chroma.sqlite3"
"""The file every persistent Chroma folder holds."""
MIRRORS = "lamina-mirrors"
"""The mirror journals a store keeps beside its Chroma files (:mod:`lamina.stores.journal`)."""


@dataclass(frozen=True)
class SourceRecord:
    """One stored record and its stored vector (None: Chroma could not give it)."""

    record: MemoryRecord
    vector: list[float] | None


def chroma_folder(path: str | Path) -> Path:
    """The persistent Chroma folder at ``path``, or inside it as ``chroma/`` (a data folder).

    Raises:
        InvalidInputError: ``path`` does not exist, is not a folder, or holds no Chroma
            database.
    """
    folder = Path(path).expanduser()
    if not folder.exists():
        raise InvalidInputError(f"the Chroma folder {str(folder)!r} does not exist")
    if not folder.is_dir():
        raise InvalidInputError(f"{str(folder)!r} is a file, not a Chroma folder")
    if (folder / DATABASE_FILE).is_file():
        return folder.resolve()
    if (folder / "chroma" / DATABASE_FILE).is_file():  # lamina's data folder
        return (folder / "chroma").resolve()
    raise InvalidInputError(
        f"{str(folder)!r} is not a Chroma folder (it has no {DATABASE_FILE}); pass the folder "
        "of lamina's persistent store, e.g. ~/.local/share/lamina/chroma"
    )


def snapshot(folder: Path, copy: Path) -> Path:
    """Copy the Chroma folder ``folder`` to ``copy`` without writing to ``folder``.

    The database goes through SQLite's backup API on a read-only connection, so the copy
    is one consistent state of it; the vector segments are copied as files.

    Raises:
        StoreConfigurationError: SQLite cannot read the database.
    """
    ignore = shutil.ignore_patterns(MIRRORS, f"{DATABASE_FILE}*")
    shutil.copytree(folder, copy, ignore=ignore)
    try:
        reading = sqlite3.connect(f"{(folder / DATABASE_FILE).as_uri()}?mode=ro", uri=True)
        try:
            writing = sqlite3.connect(copy / DATABASE_FILE)
            try:
                reading.backup(writing)
            finally:
                writing.close()
        finally:
            reading.close()
    except sqlite3.Error as e:
        raise StoreConfigurationError(
            f"cannot read the Chroma database {folder / DATABASE_FILE} ({e}); is it a Chroma "
            "folder, and is a process writing to it?"
        ) from e
    return copy


class ChromaSource:
    """The records, profiles, audit log and namespace settings of a lamina store in Chroma.

    Raises:
        InvalidInputError: the client holds no lamina store under ``prefix``.
        StoreConfigurationError: the store's schema version is not this code's, or its
            collections disagree on the embedder or index text policy.
    """

    def __init__(self, client: ClientAPI, *, prefix: str = "lamina", where: str = "") -> None:
        self.where = where or describe_client(client)
        self.prefix = prefix
        self._release: Callable[[], None] | None = None
        self.copy: Path | None = None
        """The private copy this source reads (None: it was given a client)."""
        self._calls = ChromaCalls(self.where, threading.RLock())
        with self._calls.guard():
            names = {c.name for c in self._calls.read(client.list_collections)}
        wanted = [f"{prefix}_{g.value}" for g in Granularity]
        missing = [n for n in wanted if n not in names]
        if missing:
            found = sorted(names) or "none"
            raise InvalidInputError(
                f"{self.where} holds no lamina store with the collection prefix {prefix!r}: "
                f"the collections {missing} are missing (collections found: {found})"
            )
        self._collections: dict[Granularity, Collection] = {
            g: self._open(client, f"{prefix}_{g.value}") for g in Granularity
        }
        self.embedding, self.index_policy = self._settings()
        self._profiles = self._open_optional(client, names, f"{prefix}_profile")
        self._audit = self._open_optional(client, names, f"{prefix}_audit")
        self._settings_docs = self._open_optional(client, names, f"{prefix}_settings")

    @classmethod
    def open(cls, path: str | Path, *, prefix: str = "lamina") -> ChromaSource:
        """The lamina store in the Chroma folder ``path``, read from a private copy.

        Close it (or use it as a context manager) to delete the copy. See
        :func:`chroma_folder` for what ``path`` may be.
        """
        folder = chroma_folder(path)
        work = Path(tempfile.mkdtemp(prefix="lamina-migrate-"))
        copy = work / "chroma"
        try:
            client = persistent_client(snapshot(folder, copy))
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise

        def release() -> None:
            close = getattr(client, "close", None)  # newer chromadb: frees the database
            if callable(close):
                close()
            shutil.rmtree(work, ignore_errors=True)

        try:
            source = cls(client, prefix=prefix, where=f"the Chroma folder {folder}")
        except BaseException:
            release()
            raise
        source._release, source.copy = release, copy
        return source

    def close(self) -> None:
        """Delete the private copy :meth:`open` read from (nothing for a given client)."""
        release, self._release = self._release, None
        if release is not None:
            release()

    def __enter__(self) -> ChromaSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _open(self, client: ClientAPI, name: str) -> Collection:
        with self._calls.guard():
            return client.get_collection(name, embedding_function=None)

    def _open_optional(self, client: ClientAPI, names: set[str], name: str) -> Collection | None:
        return self._open(client, name) if name in names else None

    def _settings(self) -> tuple[str, str]:
        """The embedder and index text policy (JSON) every record collection was written with."""
        seen = {}
        for gran, collection in self._collections.items():
            meta = collection.metadata or {}
            if meta.get("lamina_schema") != SCHEMA_VERSION:
                raise StoreConfigurationError(
                    f"collection {collection.name!r} in {self.where} has lamina schema "
                    f"{meta.get('lamina_schema')!r}, but this lamina reads {SCHEMA_VERSION}"
                )
            seen[gran] = (str(meta.get("embedding")), str(meta.get("index_policy")))
        if len(set(seen.values())) != 1:
            raise StoreConfigurationError(
                f"the collections of {self.where} were written with different embedders or "
                f"index policies: { {g.value: v for g, v in seen.items()} }"
            )
        return next(iter(seen.values()))

    # ------------------------------------------------------------------ reads
    def record_ids(self, gran: Granularity) -> dict[str, list[str]]:
        """``{namespace: record ids}`` of one granularity (ids only, one read)."""
        rows = self._calls.read(self._collections[gran].get, include=[])
        out: dict[str, list[str]] = {}
        for row in rows["ids"]:
            namespace, sep, record_id = row.partition("|")
            if sep:
                out.setdefault(namespace, []).append(record_id)
        return out

    def records(
        self, gran: Granularity, namespace: str, ids: Sequence[str]
    ) -> tuple[list[SourceRecord], list[AuditEntry]]:
        """The records among ``ids`` with their vectors, and the audit entries pending in them."""
        rows = rows_by_id(self._calls, self._collections[gran], namespace, list(ids), vectors=True)
        records, pending = [], []
        for row in rows:
            vector = None if row.vector is None else [float(x) for x in row.vector]
            records.append(SourceRecord(from_metadata(gran, row.metadata), vector))
            if row.metadata.get(PENDING) and row.metadata.get(PENDING_ENTRY):
                pending.append(AuditEntry.model_validate_json(str(row.metadata[PENDING_ENTRY])))
        return records, pending

    def profiles(self) -> dict[str, ProfileRecord]:
        """The profile of every namespace that has one."""
        if self._profiles is None:
            return {}
        return dict(every_document(self._calls, self._profiles, ProfileRecord))

    def namespace_settings(self) -> dict[str, NamespaceSettings]:
        """The settings (the default TTL) of every namespace that has them."""
        if self._settings_docs is None:
            return {}
        return dict(every_document(self._calls, self._settings_docs, NamespaceSettings))

    def audit(self) -> dict[str, list[AuditEntry]]:
        """Every namespace's audit log (forget tombstones included), oldest first."""
        out: dict[str, list[AuditEntry]] = {}
        if self._audit is None:
            return out
        for namespace, entry in every_document(self._calls, self._audit, AuditEntry):
            out.setdefault(namespace, []).append(entry)
        return out


__all__ = ["DATABASE_FILE", "MIRRORS", "ChromaSource", "SourceRecord", "chroma_folder", "snapshot"]
