"""Copy every record, profile, audit entry and namespace setting of Chroma into Postgres.

Namespace by namespace, each granularity is read in pages of ids with its stored vectors
and written with :meth:`~lamina.stores.postgres.PostgresMemoryStore.add_embedded`, so ids,
times, metadata, validity and supersession links (all in the record) arrive unchanged
and nothing is embedded again. When the target's embedder or index text policy is not
the one that wrote the source, the vectors would not fit its space: each record is then
embedded again by the target, and the report says so.

A namespace's settings (its default TTL, ``Memory.set_default_ttl``) are copied with its
profile. A record, profile, audit entry or settings the target already holds unchanged is
skipped, so a second run writes nothing and an interrupted run can simply be run again.
Each page, and each namespace's profile, settings and audit log, is one transaction.
After the copy, the ids the target holds are compared with the source's, per namespace
and kind.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import TypeVar

from pydantic import BaseModel

from ...embedders.identity import embedding_name
from ...records.audit import AuditEntry
from ...records.model import Granularity, ProfileRecord
from ...records.settings import NamespaceSettings
from ..postgres.store import PostgresMemoryStore
from ..rows import PAGE
from .report import Count, MigrationReport
from .source import ChromaSource

M = TypeVar("M", bound=BaseModel)
Progress = Callable[[str], None]
"""Told one line per namespace copied."""


def migrate(
    source: ChromaSource,
    target: PostgresMemoryStore,
    *,
    page: int = PAGE,
    progress: Progress | None = None,
) -> MigrationReport:
    """Copy everything ``source`` holds into ``target``; return what each side holds.

    The source is only read. Check :attr:`MigrationReport.ok` (or
    :meth:`MigrationReport.mismatches`): the target may hold records of its own in a
    namespace of the source, which the report counts as a mismatch.
    """
    policy = json.dumps(asdict(target.index_policy), sort_keys=True)
    own = embedding_name(target.embeddings)
    same_space = source.embedding == own and source.index_policy == policy
    report = MigrationReport(
        source=source.where,
        target=f"{target.where} (schema {target.names.schema!r})",
        vectors="copied" if same_space else "re-embedded",
    )
    if not same_space:
        what = "embedder" if source.embedding != own else "index text policy"
        report.notes.append(
            f"the source was written with another {what} ({source.embedding!r}, "
            f"{source.index_policy}) than the target's ({own!r}, {policy}): its vectors "
            "do not fit, so every record copied was embedded again by the target"
        )
    ids = {g: source.record_ids(g) for g in Granularity}
    profiles = source.profiles()
    audit = source.audit()
    settings = source.namespace_settings()
    namespaces = sorted(
        {ns for found in ids.values() for ns in found} | set(profiles) | set(audit) | set(settings)
    )
    for ns in namespaces:
        pending: list[AuditEntry] = []
        rows = [
            _copy_records(source, target, gran, ns, ids[gran].get(ns, []), pending, report, page)
            for gran in Granularity
        ]
        rows += _copy_documents(
            target, ns, profiles.get(ns), audit.get(ns, []), pending, report, settings.get(ns)
        )
        report.counts += [c for c in rows if c.source or c.target]
        if progress is not None:
            written = sum(c.copied for c in rows)
            progress(f"{json.dumps(ns, ensure_ascii=False)}: {written} written")
    return report


def _copy_records(
    source: ChromaSource,
    target: PostgresMemoryStore,
    gran: Granularity,
    ns: str,
    ids: list[str],
    pending: list[AuditEntry],
    report: MigrationReport,
    page: int,
) -> Count:
    """Copy one granularity of one namespace, page by page; count both sides after."""
    existing = {r.id: r.model_dump_json() for r in target.get(gran, ns)} if ids else {}
    copied = 0
    for start in range(0, len(ids), page):
        found, held = source.records(gran, ns, ids[start : start + page])
        pending += held
        todo = [r for r in found if existing.get(r.record.id) != r.record.model_dump_json()]
        if not todo:
            continue
        records = [r.record for r in todo]
        if report.vectors == "copied":
            target.add_embedded(ns, records, [r.vector for r in todo])
            report.embedded += sum(r.vector is None for r in todo)
        else:
            target.add(ns, records)
            report.embedded += len(todo)
        copied += len(todo)
    return Count.of(ns, gran.value, set(ids), target.lexical_index(gran, ns).ids(), copied)


def _copy_documents(
    target: PostgresMemoryStore,
    ns: str,
    profile: ProfileRecord | None,
    log: Sequence[AuditEntry],
    pending: list[AuditEntry],
    report: MigrationReport,
    settings: NamespaceSettings | None = None,
) -> list[Count]:
    """Copy a namespace's profile, settings and audit log in one transaction; count after."""
    logged = {e.id for e in log}
    landing = [e for e in pending if e.id not in logged]
    if landing:
        report.notes.append(
            f"{len(landing)} audit entr{'y' if len(landing) == 1 else 'ies'} of "
            f"{json.dumps(ns, ensure_ascii=False)} still pending in fact rows of the source "
            "(a supersede interrupted before its entry was moved) were copied to the audit log"
        )
    entries = [*log, *landing]
    copied_audit = 0
    with target.atomic():
        held = target.get_namespace_settings(ns)
        copied_settings = _put_changed(held, settings, target.put_namespace_settings)
        copied_profile = _put_changed(target.get_profile(ns), profile, target.put_profile)
        existing = {e.id: e.model_dump_json() for e in target.list_audit(ns)}
        for entry in entries:
            if existing.get(entry.id) != entry.model_dump_json():
                target.append_audit(entry)
                copied_audit += 1
    has_profile, has_settings = target.get_profile(ns), target.get_namespace_settings(ns)
    held_audit = {e.id for e in target.list_audit(ns)}
    return [
        Count.of(ns, "profile", _one(profile), _one(has_profile), copied_profile),
        Count.of(ns, "settings", _one(settings), _one(has_settings), copied_settings),
        Count.of(ns, "audit", {e.id for e in entries}, held_audit, copied_audit),
    ]


def _put_changed(held: M | None, given: M | None, put: Callable[[M], object]) -> int:
    """Put ``given`` unless there is none or the target holds it unchanged; 1 if put."""
    if given is None or (held is not None and held.model_dump_json() == given.model_dump_json()):
        return 0
    put(given)
    return 1


def _one(document: object) -> set[str]:
    """A profile or settings as the ids of a count: one, or none."""
    return set() if document is None else {"1"}


__all__ = ["Progress", "migrate"]
