"""Forget: delete memories and everything derived only from them, leaving a tombstone.

Three selectors, exactly one per call:

* ``memory_ids``: those records (in whatever granularity each id exists);
* ``subject``: every record of the namespace whose content mentions the subject
  (case-insensitive, after NFKC normalisation): text, title, fact subject, image
  caption and string metadata; superseded facts included. The speaker name is not
  content and is not matched;
* ``everything``: the whole namespace.

The cascade runs until nothing changes: a fact or episode whose source turns are all
forgotten is forgotten; a scene whose member episodes (or source turns) are all
forgotten is forgotten. A record that keeps other sources stays, minus the forgotten ids
(a scene's centroid is recomputed from the members left). A kept raw turn whose
retrieval context quoted a forgotten turn loses that context. The profile loses the
lines that mention the subject, or is deleted when it was distilled from a forgotten
scene. Audit entries that refer to forgotten records are redacted (content fields
emptied). Deletes go through the store: its mirrors drop them, its files are erased.

The tombstone is one audit entry with action ``forget``: selector kind, counts and ids,
never the forgotten text or the subject.

On a store with transactions (Postgres) the whole forget, from the snapshot it starts
from to the tombstone, is one transaction: a failure anywhere leaves nothing deleted,
cleaned, redacted or recorded. Chroma has no transaction across calls, so there each
step lands on its own (see :mod:`lamina.stores.atomic`).
"""

from __future__ import annotations

import json
import unicodedata
import uuid
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime

import numpy as np

from ..errors import InvalidInputError, InvalidTypeError
from ..records.audit import AuditEntry
from ..records.model import (
    EpisodeRecord,
    FactRecord,
    Granularity,
    MemoryRecord,
    ProfileRecord,
    RawTurn,
    SceneRecord,
    utc_now,
    validate_namespace,
)
from ..stores.arguments import as_ids
from ..stores.atomic import all_or_nothing
from ..stores.chroma import ChromaMemoryStore
from ..stores.erasure import PARTS, erase_after
from .results import ForgetResult

__all__ = ["content_of", "forget", "normalise"]

ACTOR = "forget"
REDACTED = "redacted: the memory this entry refers to was forgotten"
PROFILE = "profile"
CONTEXT_CHARS = 300
"""Mirrors the raw writer: a turn's context quotes at most this much of its neighbour."""


def normalise(text: str) -> str:
    """NFKC-normalised, case-folded text, so matching ignores case and width forms."""
    return unicodedata.normalize("NFKC", text).casefold()


def content_of(record: MemoryRecord) -> list[str]:
    """Every piece of a record's content a subject is matched against."""
    parts = [record.text]
    parts += [v for v in record.metadata.values() if isinstance(v, str)]
    if isinstance(record, EpisodeRecord | SceneRecord):
        parts.append(record.title)
    if isinstance(record, FactRecord) and record.subject:
        parts.append(record.subject)
    if isinstance(record, RawTurn) and record.media_caption:
        parts.append(record.media_caption)
    return parts


def _selector(memory_ids: Sequence[str], subject: str | None, everything: bool) -> str:
    if not isinstance(everything, bool):
        raise InvalidTypeError(f"all must be a bool, got {type(everything).__name__}")
    chosen = [
        name
        for name, on in (
            ("memory_ids", bool(memory_ids)),
            ("subject", subject is not None),
            ("all", everything),
        )
        if on
    ]
    if len(chosen) != 1:
        raise InvalidInputError(
            "forget() takes exactly one of memory_ids=[...], subject='...' or all=True; "
            f"got {chosen or 'none'}"
        )
    if subject is not None:
        if not isinstance(subject, str):
            raise InvalidTypeError(f"subject must be a str, got {type(subject).__name__}")
        if not subject.strip():
            raise InvalidInputError("subject must not be empty: it would match every memory")
    return chosen[0]


class _Cascade:
    """One forget over a snapshot of the namespace."""

    def __init__(self, store: ChromaMemoryStore, namespace: str) -> None:
        self.store, self.ns = store, namespace
        self.records: dict[Granularity, dict[str, MemoryRecord]] = {
            g: {r.id: r for r in store.get(g, namespace)} for g in Granularity
        }
        self.doomed: dict[Granularity, set[str]] = {g: set() for g in Granularity}
        self.updated: dict[str, list[str]] = {}

    def select_ids(self, ids: Iterable[str]) -> list[str]:
        """Doom each id in every granularity that has it; return the ids found nowhere."""
        missing = []
        for rid in ids:
            hits = [g for g in Granularity if rid in self.records[g]]
            for g in hits:
                self.doomed[g].add(rid)
            if not hits:
                missing.append(rid)
        return missing

    def select_subject(self, needle: str) -> None:
        """Doom every record whose content mentions ``needle`` (already normalised)."""
        for g, records in self.records.items():
            for rid, record in records.items():
                if any(needle in normalise(part) for part in content_of(record)):
                    self.doomed[g].add(rid)

    def cascade(self) -> None:
        """Doom derived records left without any source, until nothing changes."""
        raw, episodes = self.doomed[Granularity.RAW], self.doomed[Granularity.EPISODE]
        changed = True
        while changed:
            changed = False
            for g in (Granularity.FACT, Granularity.EPISODE, Granularity.SCENE):
                for rid, record in self.records[g].items():
                    if rid in self.doomed[g]:
                        continue
                    orphan = bool(record.source_ids) and set(record.source_ids) <= raw
                    if isinstance(record, SceneRecord) and record.members:
                        orphan = orphan or set(record.members) <= episodes
                    if orphan:
                        self.doomed[g].add(rid)
                        changed = True

    def texts(self) -> list[str]:
        """Normalised content of every doomed record (for redacting quotes of it)."""
        out = []
        for g, ids in self.doomed.items():
            for rid in ids:
                record = self.records[g][rid]
                out += [normalise(p) for p in content_of(record) if len(p) >= 8]
                if isinstance(record, RawTurn):  # how a neighbour quotes it as context
                    out.append(normalise(f"{record.speaker}: {record.text}"[:CONTEXT_CHARS]))
        return out

    def delete(self) -> dict[str, list[str]]:
        """Delete the doomed records, derived ones first; return the ids per granularity."""
        deleted: dict[str, list[str]] = {}
        order = (Granularity.SCENE, Granularity.FACT, Granularity.EPISODE, Granularity.RAW)
        for g in order:
            ids = sorted(self.doomed[g])
            if ids:
                self.store.delete(g, self.ns, ids)
                deleted[g.value] = ids
        return deleted

    def clean_survivors(self, mentions: Callable[[str], bool]) -> None:
        """Remove forgotten ids, members and quoted context from the records that stay."""
        raw, episodes = self.doomed[Granularity.RAW], self.doomed[Granularity.EPISODE]
        for g, records in self.records.items():
            for rid, record in records.items():
                if rid in self.doomed[g]:
                    continue
                update: dict[str, object] = {}
                if set(record.source_ids) & raw:
                    update["source_ids"] = [s for s in record.source_ids if s not in raw]
                if isinstance(record, SceneRecord) and set(record.members) & episodes:
                    members = [m for m in record.members if m not in episodes]
                    update["members"] = members
                    update["centroid"] = self._centroid(members) or record.centroid
                if isinstance(record, RawTurn):
                    if set(record.consolidated_into) & episodes:
                        kept = [e for e in record.consolidated_into if e not in episodes]
                        update["consolidated_into"] = kept
                    if record.context and mentions(record.context):
                        update["context"] = None
                if update:
                    fresh = type(record).model_validate({**record.model_dump(), **update})
                    self.store.update(self.ns, fresh)
                    self.updated.setdefault(g.value, []).append(rid)

    def _centroid(self, members: list[str]) -> list[float] | None:
        vectors = self.store.vectors(Granularity.EPISODE, self.ns, members)
        if not vectors:
            return None
        units = [np.asarray(v) / (np.linalg.norm(v) or 1.0) for v in vectors.values()]
        mean = np.mean(units, axis=0)
        return [float(x) for x in mean / (np.linalg.norm(mean) or 1.0)]

    def clean_profile(self, subject: str | None, mentions: Callable[[str], bool]) -> str | None:
        """Delete or trim the profile; return ``deleted``, ``updated`` or None."""
        profile = self.store.get_profile(self.ns)
        if profile is None:
            return None
        scenes = self.doomed[Granularity.SCENE]
        if subject is None and set(profile.source_ids) & scenes:
            self.store.delete_profile(self.ns)
            return "deleted"
        facts = [f for f in profile.explicit_facts if not mentions(f)]
        traits = [t for t in profile.implicit_traits if not mentions(t)]
        sources = [s for s in profile.source_ids if s not in scenes]
        if not facts and not traits:
            self.store.delete_profile(self.ns)
            return "deleted"
        if (facts, traits, sources) == (
            profile.explicit_facts,
            profile.implicit_traits,
            profile.source_ids,
        ):
            return None
        trimmed = ProfileRecord.model_validate(
            {
                **profile.model_dump(),
                "explicit_facts": facts,
                "implicit_traits": traits,
                "source_ids": sources,
            }
        )
        self.store.put_profile(trimmed)
        return "updated"

    def redact_audit(self, mentions: Callable[[str], bool]) -> list[str]:
        """Empty the content fields of audit entries about forgotten records."""
        gone = set().union(*self.doomed.values())
        redacted = []
        for entry in self.store.list_audit(self.ns):
            if entry.action == "forget":
                continue
            texts = [t for t in (entry.before, entry.after, entry.reason) if t]
            if entry.target_id in gone or set(entry.source_ids) & gone or any(map(mentions, texts)):
                clean = entry.model_copy(update={"before": None, "after": None, "reason": REDACTED})
                self.store.replace_audit(clean)
                redacted.append(entry.id)
        return redacted


def _tombstone(
    namespace: str,
    selector: str,
    deleted: dict[str, list[str]],
    updated: dict[str, list[str]],
    at: datetime,
) -> AuditEntry:
    summary = {
        "selector": selector,
        "counts": {g: len(ids) for g, ids in deleted.items()},
        "deleted": deleted,
        "updated": updated,
    }
    return AuditEntry(
        id=f"forget-{uuid.uuid4().hex}",
        namespace=namespace,
        at=at,
        actor=ACTOR,
        action="forget",
        granularity=",".join(sorted(deleted)) or "none",
        target_id=f"forget:{selector}",
        reason=f"forget by {selector}",
        before=None,
        after=json.dumps(summary, sort_keys=True),
        source_ids=sorted({i for g, ids in deleted.items() if g != PROFILE for i in ids}),
    )


def forget(
    store: ChromaMemoryStore,
    namespace: str,
    *,
    memory_ids: Sequence[str] = (),
    subject: str | None = None,
    everything: bool = False,
    clock: Callable[[], datetime] = utc_now,
) -> ForgetResult:
    """Forget by ids, by subject or everything in ``namespace``; see the module docs.

    Raises:
        InvalidInputError: Not exactly one selector, or an empty subject.
        InvalidTypeError: ``memory_ids`` is a bare string or holds non-strings.
    """
    ns = validate_namespace(namespace)
    ids = as_ids(memory_ids) if memory_ids else []
    selector = _selector(ids, subject, everything)
    with all_or_nothing(store):
        if everything:
            result = _forget_all(store, ns, selector, clock)
        else:
            result = _forget_some(store, ns, selector, ids, subject, clock)
    erase_after(store, ns, PARTS if everything else {*result.deleted, *result.updated})
    return result


def _forget_all(
    store: ChromaMemoryStore, ns: str, selector: str, clock: Callable[[], datetime]
) -> ForgetResult:
    """Delete the whole namespace (records, profile, audit log) and leave a tombstone."""
    deleted = {
        g.value: sorted(r.id for r in store.get(g, ns)) for g in Granularity if store.count(g, ns)
    }
    if store.get_profile(ns) is not None:
        deleted[PROFILE] = [ns]
    store.delete_namespace(ns)  # records, BM25 mirrors, profile and audit log
    tomb = store.append_audit(_tombstone(ns, selector, deleted, {}, clock()))
    return ForgetResult(deleted=deleted, tombstone_ids=[tomb.id])


def _forget_some(
    store: ChromaMemoryStore,
    ns: str,
    selector: str,
    ids: list[str],
    subject: str | None,
    clock: Callable[[], datetime],
) -> ForgetResult:
    """Forget by ids or by subject: select, cascade, delete, clean, redact, tombstone."""
    run = _Cascade(store, ns)
    missing: list[str] = []
    needle = normalise(subject) if subject is not None else None
    if needle is not None:
        run.select_subject(needle)
    else:
        missing = run.select_ids(ids)
    run.cascade()
    quoted = run.texts()

    def mentions(text: str) -> bool:
        folded = normalise(text)
        if needle is not None and needle in folded:
            return True
        return any(q in folded or folded in q for q in quoted if q)

    deleted = run.delete()
    run.clean_survivors(mentions)
    profile = run.clean_profile(subject, mentions)
    if profile == "deleted":
        deleted[PROFILE] = [ns]
    elif profile == "updated":
        run.updated[PROFILE] = [ns]
    redacted = run.redact_audit(mentions)
    if redacted:
        run.updated["audit"] = redacted
    tomb = store.append_audit(_tombstone(ns, selector, deleted, run.updated, clock()))
    return ForgetResult(
        deleted=deleted, updated=run.updated, not_found=missing, tombstone_ids=[tomb.id]
    )
