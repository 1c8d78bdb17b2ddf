"""One namespace's memory as a file: export it, import it on another store (``lamina export``).

The file is JSON Lines, UTF-8, one object a line:

1. A header, ``{"format": "lamina-export", "version": 2, "namespace": ..., "exported_at":
   ..., "embedder": ..., "counts": {"raw": n, "fact": n, "episode": n, "scene": n,
   "profile": 0 or 1, "audit": n, "settings": 0 or 1}}``.
2. Every record, raw turns first, then facts, episodes and scenes: ``{"type": "record",
   "granularity": "fact", "record": {...}}``. A record holds all its fields: ids, times,
   sources, metadata, validity and supersession links, so superseded facts (the history)
   travel too.
3. The profile, if there is one: ``{"type": "profile", "profile": {...}}``.
4. The audit log, oldest first, forget tombstones included: ``{"type": "audit",
   "entry": {...}}``.
5. The namespace's settings, if it has any (its default TTL, ``set_default_ttl``):
   ``{"type": "settings", "settings": {"namespace": ..., "default_ttl_seconds": ...,
   "recorded_at": ...}}``.

Version 2 added the settings line (and its count). A version 1 file, which has neither,
is still read; a lamina that reads only version 1 refuses a version 2 file by its version.

Vectors are not written: the importing store embeds every record again with its own
embedder, so a file moves between stores with different embedders. A file is read and
checked whole before anything is written (an unknown version, a line that does not parse
or a count the header does not match is an error naming the line, and nothing is
imported). Importing into a namespace that already holds memory merges by id: a record,
audit entry or profile the store already has is kept as the store holds it, so an import
never duplicates and never rolls back a newer change. Settings follow the same rule: a
namespace that already has settings keeps them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..core.namespace import validate_namespace
from ..embedders.identity import embedding_name
from ..errors import InvalidInputError, InvalidTypeError
from ..records.audit import AuditEntry
from ..records.model import RECORD_TYPES, Granularity, MemoryRecord, ProfileRecord, utc_now
from ..records.settings import NamespaceSettings
from ..stores.atomic import all_or_nothing
from ..stores.base import MemoryStore
from ..stores.chroma import ChromaMemoryStore
from .expiry import namespace_settings
from .inputs import first_problem
from .twins import in_thread

FORMAT: Literal["lamina-export"] = "lamina-export"
"""The header's ``format``: what makes a JSON Lines file a lamina export."""
VERSION = 2
"""The file version this code writes (2: the namespace's settings travel)."""
READS = (1, 2)
"""The file versions this code reads (a version 1 file holds no settings line)."""
KINDS = (*(g.value for g in Granularity), "profile", "audit", "settings")
"""What the header counts: the four granularities, the profile, the audit log and the
namespace's settings (absent from a version 1 header: counted as 0)."""

__all__ = [
    "FORMAT",
    "KINDS",
    "READS",
    "VERSION",
    "ExportHeader",
    "ImportResult",
    "Portable",
    "PortableMethods",
    "export_lines",
    "import_portable",
    "read_portable",
    "write_export",
]


class ExportHeader(BaseModel):
    """The first line of an export file."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["lamina-export"]
    version: int
    namespace: str
    exported_at: datetime
    embedder: str = Field(description="The exporting store's embedder (the vectors stay behind).")
    counts: dict[str, int]


class ImportResult(BaseModel):
    """What an import wrote and what the store already held, per kind."""

    model_config = ConfigDict(extra="forbid")

    namespace: str
    imported: dict[str, int] = Field(description="Written by this import, per kind.")
    kept: dict[str, int] = Field(
        description="Already held by the store (same id): kept as the store holds them."
    )

    @property
    def count(self) -> int:
        """How many records, audit entries and profiles this import wrote."""
        return sum(self.imported.values())


@dataclass
class Portable:
    """An export file, read and checked: its header and what it holds."""

    header: ExportHeader
    records: dict[Granularity, list[MemoryRecord]] = field(default_factory=dict)
    profile: ProfileRecord | None = None
    audit: list[AuditEntry] = field(default_factory=list)
    settings: NamespaceSettings | None = None
    first_lines: dict[tuple[str, str], int] = field(default_factory=dict, repr=False)
    """The line each ``(kind, id)`` was read from: an id read twice is refused."""

    def once(self, kind: str, id_: str, n: int) -> None:
        """Note that line ``n`` holds ``kind``'s ``id_``; ValueError if an earlier line did."""
        first = self.first_lines.setdefault((kind, id_), n)
        if first != n:
            raise ValueError(f"the {kind} id {id_!r} again (first on line {first})")

    def counts(self) -> dict[str, int]:
        """How many of each kind the file holds."""
        found = {g.value: len(self.records.get(g, [])) for g in Granularity}
        found |= {"profile": int(self.profile is not None), "audit": len(self.audit)}
        return {**found, "settings": int(self.settings is not None)}


def export_lines(store: MemoryStore, namespace: str) -> Iterator[str]:
    """The export file of ``namespace``, line by line (each without its newline)."""
    validate_namespace(namespace)
    records = {g: store.get(g, namespace) for g in Granularity}
    profile = store.get_profile(namespace)
    audit = store.list_audit(namespace)
    settings = namespace_settings(store, namespace)
    counts = {g.value: len(found) for g, found in records.items()}
    counts |= {"profile": int(profile is not None), "audit": len(audit)}
    counts["settings"] = int(settings is not None)
    header = ExportHeader(
        format=FORMAT,
        version=VERSION,
        namespace=namespace,
        exported_at=utc_now(),
        embedder=_embedder(store),
        counts=counts,
    )
    yield header.model_dump_json()
    for gran, found in records.items():
        for record in sorted(found, key=lambda r: (r.occurred_at, r.recorded_at, r.id)):
            yield _line({"type": "record", "granularity": gran.value, "record": record})
    if profile is not None:
        yield _line({"type": "profile", "profile": profile})
    for entry in audit:
        yield _line({"type": "audit", "entry": entry})
    if settings is not None:
        yield _line({"type": "settings", "settings": settings})


def write_export(store: MemoryStore, namespace: str, out: IO[str]) -> dict[str, int]:
    """Write ``namespace``'s export file to ``out``; return the header's counts."""
    lines = export_lines(store, namespace)
    header = next(lines)
    out.write(header + "\n")
    out.writelines(f"{line}\n" for line in lines)
    counts: dict[str, int] = json.loads(header)["counts"]
    return counts


def read_portable(lines: Iterable[str], where: str = "the export file") -> Portable:
    """Parse and check an export file whole; nothing is written.

    Raises:
        InvalidInputError: No header, another format or version, a line that does not
            parse, holds another namespace's record or repeats an id, or counts the
            header does not match. The message names the line.
    """
    numbered = ((n, line) for n, line in enumerate(lines, start=1) if line.strip())
    first = next(numbered, None)
    if first is None:
        raise InvalidInputError(f"{where} is empty: it holds no lamina export header")
    portable = Portable(header=_header(first[1], where, first[0]))
    ns = portable.header.namespace
    for n, line in numbered:
        _take(portable, _object(line, where, n), where, n, ns)
    counts = portable.counts()
    if counts != {k: portable.header.counts.get(k, 0) for k in KINDS}:
        raise InvalidInputError(
            f"{where} holds {counts} but its header says {portable.header.counts}: the file "
            "is cut short or was edited; nothing was imported"
        )
    return portable


def import_portable(
    store: MemoryStore, portable: Portable, namespace: str | None = None
) -> ImportResult:
    """Write what ``portable`` holds into ``namespace`` (default: the exported one).

    Every record is embedded again by ``store``. What the namespace already holds by id
    is kept. On a store with transactions (Postgres) the import is one transaction.
    """
    target = validate_namespace(namespace or portable.header.namespace)
    imported: dict[str, int] = dict.fromkeys(KINDS, 0)
    kept: dict[str, int] = dict.fromkeys(KINDS, 0)
    moved = {
        g: [r.model_copy(update={"namespace": target}) for r in found]
        for g, found in portable.records.items()
    }
    audit = [e.model_copy(update={"namespace": target}) for e in portable.audit]
    put_settings = getattr(store, "put_namespace_settings", None)
    if portable.settings is not None and not callable(put_settings):
        raise InvalidTypeError(
            f"the file holds the namespace's settings (its default TTL), but "
            f"{type(store).__name__} keeps no namespace settings: import into "
            "ChromaMemoryStore or PostgresMemoryStore; nothing was imported"
        )
    with all_or_nothing(store):
        for gran, found in moved.items():
            held = (
                {r.id for r in store.get(gran, target, [r.id for r in found])} if found else set()
            )
            new = [r for r in found if r.id not in held]
            if new:
                store.add(target, new)
            imported[gran.value], kept[gran.value] = len(new), len(held)
        held_audit = {e.id for e in store.list_audit(target)} if audit else set()
        for entry in audit:
            if entry.id not in held_audit:
                store.append_audit(entry)
            (kept if entry.id in held_audit else imported)["audit"] += 1
        if portable.profile is not None:
            absent = store.get_profile(target) is None
            if absent:
                store.put_profile(portable.profile.model_copy(update={"namespace": target}))
            (imported if absent else kept)["profile"] = 1
        if portable.settings is not None:
            absent = namespace_settings(store, target) is None
            if absent:
                assert callable(put_settings)  # a store that keeps none was refused above
                put_settings(portable.settings.model_copy(update={"namespace": target}))
            (imported if absent else kept)["settings"] = 1
    return ImportResult(namespace=target, imported=imported, kept=kept)


def _embedder(store: MemoryStore) -> str:
    """The store's embedder's name, when it has one (said in the header, for the reader)."""
    embeddings = getattr(store, "embeddings", None)
    return embedding_name(embeddings) if embeddings is not None else "unknown"


def _line(item: dict[str, Any]) -> str:
    """One JSON line; pydantic models as their JSON form."""
    return json.dumps(
        {k: v.model_dump(mode="json") if isinstance(v, BaseModel) else v for k, v in item.items()},
        ensure_ascii=False,
        separators=(",", ":"),
    )


def _object(line: str, where: str, n: int) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except json.JSONDecodeError as e:
        raise InvalidInputError(
            f"{where}, line {n}: not valid JSON ({e.msg}); nothing was imported"
        ) from e
    if not isinstance(value, dict):
        raise InvalidInputError(f"{where}, line {n}: expected a JSON object; nothing was imported")
    return value


def _header(line: str, where: str, n: int) -> ExportHeader:
    value = _object(line, where, n)
    if value.get("format") != FORMAT:
        raise InvalidInputError(
            f"{where}, line {n}: not a lamina export (its first line has no "
            f'"format": "{FORMAT}"); write one with `lamina export`'
        )
    if value.get("version") not in READS:
        raise InvalidInputError(
            f"{where}, line {n}: export version {value.get('version')!r} is not one this "
            f"lamina reads (it reads versions {', '.join(map(str, READS))}); nothing was "
            "imported"
        )
    try:
        header = ExportHeader.model_validate(value)
    except ValidationError as e:
        raise InvalidInputError(f"{where}, line {n}: a broken header ({first_problem(e)})") from e
    validate_namespace(header.namespace)
    return header


def _take(portable: Portable, value: dict[str, Any], where: str, n: int, ns: str) -> None:
    """Add the line's record, profile or audit entry to ``portable``."""
    kind = value.get("type")
    try:
        if kind == "record":
            gran = Granularity(str(value.get("granularity")))
            record = RECORD_TYPES[gran].model_validate(value.get("record"))
            if record.namespace != ns:
                raise ValueError(
                    f"a record of namespace {record.namespace!r} in an export of {ns!r}"
                )
            portable.once(gran.value, record.id, n)
            portable.records.setdefault(gran, []).append(record)
        elif kind == "profile":
            if portable.profile is not None:
                raise ValueError("a second profile")
            portable.profile = ProfileRecord.model_validate(value.get("profile"))
        elif kind == "audit":
            entry = AuditEntry.model_validate(value.get("entry"))
            portable.once("audit", entry.id, n)
            portable.audit.append(entry)
        elif kind == "settings" and portable.header.version >= 2:
            if portable.settings is not None:
                raise ValueError("a second settings line")
            settings = NamespaceSettings.model_validate(value.get("settings"))
            if settings.namespace != ns:
                raise ValueError(
                    f"the settings of namespace {settings.namespace!r} in an export of {ns!r}"
                )
            portable.settings = settings
        else:
            known = "record, profile, audit or settings"
            if portable.header.version < 2:
                known = "record, profile or audit, in a version 1 file"
            raise ValueError(f"unknown line type {kind!r} ({known})")
    except ValidationError as e:
        raise InvalidInputError(
            f"{where}, line {n}: {first_problem(e)}; nothing was imported"
        ) from e
    except ValueError as e:
        raise InvalidInputError(f"{where}, line {n}: {e}; nothing was imported") from e


class PortableMethods:
    """Export and import, mixed into :class:`~lamina.Memory`."""

    store: ChromaMemoryStore  # as the other mixins declare it; any MemoryStore works

    def export(self, file: str | Path | IO[str], *, namespace: str) -> dict[str, int]:
        """Write one namespace's memory (history, tombstones, default TTL) to ``file``.

        ``file`` is a path (written as UTF-8, replaced if it exists) or an open text
        stream. The format is described in :mod:`lamina.memory.portable`; vectors are
        left out. Returns how many records of each kind were written. No LLM is used.
        A path is opened once the store has been read: an export that cannot read it
        (the store unreachable) leaves a file already there as it was.

        Raises:
            InvalidTypeError: ``file`` is neither a path nor a text stream.
        """
        namespace = validate_namespace(namespace)
        if isinstance(file, str | Path):
            lines = export_lines(self.store, namespace)
            header = next(lines)  # every read of the store is made here, before the file
            with Path(file).expanduser().open("w", encoding="utf-8") as out:
                out.write(header + "\n")
                out.writelines(f"{line}\n" for line in lines)
            counts: dict[str, int] = json.loads(header)["counts"]
            return counts
        if not callable(getattr(file, "write", None)):
            raise InvalidTypeError(
                f"file must be a path or an open text stream, got {type(file).__name__}"
            )
        return write_export(self.store, namespace, file)

    aexport = in_thread(export)
    """Async :meth:`export`, with the same arguments (run in a worker thread)."""

    def import_(self, file: str | Path | IO[str], *, namespace: str | None = None) -> ImportResult:
        """Read an export file and store what it holds in ``namespace`` (default: its own).

        The file is checked whole first: an unknown version, a broken line or a count
        its header does not match raises, and nothing is imported. Records are embedded
        again by this store. Ids the namespace already holds are kept as they are. The
        file's default TTL (``set_default_ttl``) is restored unless the namespace already
        has settings of its own. No LLM is used.

        Raises:
            InvalidInputError: The file is not a readable lamina export (the message
                names the line).
        """
        target = validate_namespace(namespace) if namespace is not None else None
        if isinstance(file, str | Path):
            path = Path(file).expanduser()
            if not path.is_file():
                raise InvalidInputError(f"no export file at {str(path)!r}")
            try:
                with path.open(encoding="utf-8") as lines:
                    portable = read_portable(lines, where=str(path))
            except UnicodeDecodeError as e:
                raise InvalidInputError(
                    f"{str(path)!r} is not a lamina export: it is not UTF-8 text ({e.reason} "
                    f"at byte {e.start}); nothing was imported"
                ) from e
        else:
            given: object = file  # what a caller passed, whatever the annotation says
            if isinstance(given, bytes | bytearray) or not isinstance(given, Iterable):
                raise InvalidTypeError(
                    f"file must be a path or an open text stream, got {type(given).__name__}"
                )
            portable = read_portable(file)
        return import_portable(self.store, portable, target)

    aimport_ = in_thread(import_)
    """Async :meth:`import_`, with the same arguments (run in a worker thread)."""
