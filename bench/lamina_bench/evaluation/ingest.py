"""Ingest stages of an evaluation run, resumable batch by batch.

* ``lamina-<policy>``: every session, in batches, through lamina's ingest graph
  with that trigger policy (the last batch of a session closes it);
* ``raw``: the turns as raw records only (no LLM), for the flat-retrieval baseline;
* ``chunks``: fixed-size word windows of the transcript, for the naive-RAG baseline;
* ``derived-oracle``: lamina's raw layer (no LLM) plus LoCoMo's hand-written annotations
  as the derived layers: each observation a fact about its person, sourced from its
  evidence turns; each event summary a fact; each session summary an episode.

Each stage writes into its own namespace (``<stage>/<sample_id>``) of the run's
persistent store. A finished batch is a journal line; a resumed run skips it. A batch that
was cut short is sent again: raw turns have stable ids, so the stored ones are skipped,
and the turns it left unconsolidated are still pending for the trigger.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, cast

from lamina.agents.common.deps import NodeDeps
from lamina.agents.ingest.nodes.raw_writer import build_raw_turns
from lamina.core.context import SMALL_MODEL_PROFILE, TriggerPolicy
from lamina.errors import InvalidInputError
from lamina.graphs import MemoryContext, TurnInput
from lamina.records import EpisodeRecord, FactRecord, MemoryRecord, RawTurn
from lamina.stores import ChromaMemoryStore

from ..datasets.locomo import Conversation
from ..datasets.locomo_annotations import Annotations
from .records import IngestStep, costs_of
from .transcripts import chunks, turn_line

RAW_STAGE = "raw"
CHUNK_STAGE = "chunks"
LAMINA_STAGE = "lamina-"
DERIVED_ORACLE_STAGE = "derived-oracle"
_NO_MODEL = cast(Any, None)
"""The caller slot of NodeDeps: build_raw_turns reads only its store and clock."""
CHUNK_SPEAKER = "chunk"
CHUNK_SESSION = "chunks"


def stable_id(*parts: str) -> str:
    """A deterministic record id from ``parts``: the sha256 scheme of lamina's own ids."""
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:32]


def lamina_stage(policy: str) -> str:
    """The ingest stage of lamina under ``policy``."""
    return f"{LAMINA_STAGE}{policy}"


def stage_namespace(stage: str, sample_id: str) -> str:
    """The namespace a stage writes one conversation into."""
    return f"{stage}/{sample_id}"


def turn_inputs(conv: Conversation) -> list[TurnInput]:
    """The conversation's turns as ingest inputs (dia_id kept in the metadata)."""
    return [t.as_turn_input() for t in conv.turns]


def session_batches(conv: Conversation, size: int) -> Iterator[tuple[list[TurnInput], bool]]:
    """Batches of at most ``size`` turns within one session; True on a session's last."""
    by_session: dict[str, list[TurnInput]] = {}
    for turn in turn_inputs(conv):
        by_session.setdefault(turn.session_id, []).append(turn)
    for turns in by_session.values():
        for start in range(0, len(turns), size):
            yield turns[start : start + size], start + size >= len(turns)


def raw_id_to_dia(namespace: str, conv: Conversation) -> dict[str, str]:
    """Raw record id (in ``namespace``) -> dialogue id."""
    return {RawTurn.turn_id(namespace, t.session_id, t.turn_index): t.dia_id for t in conv.turns}


@dataclass(kw_only=True)
class Ingestor:
    """Runs the ingest stages of a conversation, skipping finished batches."""

    store: ChromaMemoryStore
    graph: Any
    """The compiled memory graph (only the lamina stages use it)."""
    batch_size: int
    chunk_words: int
    chunk_overlap: int
    done: set[tuple[str, str, int]]
    """(stage, sample_id, batch) already in the journal."""
    record: Callable[[IngestStep], None]
    """Called with each finished batch (appends it to the journal)."""
    advance: Callable[[int], None] = lambda turns: None
    """Progress callback: turns just ingested."""
    annotations: Mapping[str, Annotations] = field(default_factory=dict)
    """LoCoMo's annotations by sample id (only the ``derived-oracle`` stage reads them)."""
    kept: Callable[[], int] = lambda: 0
    """How many model calls were answered from kept replies so far (a running count)."""

    def planned_turns(self, stage: str, conv: Conversation) -> int:
        """Turns still to ingest for this stage and conversation (for the progress bar)."""
        if not stage.startswith(LAMINA_STAGE):
            return 0 if (stage, conv.sample_id, 0) in self.done else len(conv.turns)
        return sum(
            len(batch)
            for n, (batch, _) in enumerate(session_batches(conv, self.batch_size))
            if (stage, conv.sample_id, n) not in self.done
        )

    def run(self, stage: str, conv: Conversation) -> None:
        """Ingest ``conv`` for ``stage``."""
        if stage.startswith(LAMINA_STAGE):
            self._graph_stage(stage, stage.removeprefix(LAMINA_STAGE), conv)
        elif stage == RAW_STAGE:
            self._raw_stage(conv)
        elif stage == CHUNK_STAGE:
            self._chunk_stage(conv)
        elif stage == DERIVED_ORACLE_STAGE:
            self._derived_oracle_stage(conv)
        else:
            raise ValueError(f"unknown ingest stage {stage!r}")

    def _graph_stage(self, stage: str, policy: str, conv: Conversation) -> None:
        namespace = stage_namespace(stage, conv.sample_id)
        policy_name: TriggerPolicy = policy  # type: ignore[assignment]  # checked by MemoryContext
        ctx = MemoryContext(  # the offline model's build, as construction_settings keys it
            namespace=namespace, trigger_policy=policy_name, **SMALL_MODEL_PROFILE
        )
        batches = list(session_batches(conv, self.batch_size))
        for n, (batch, closes) in enumerate(batches):
            if (stage, conv.sample_id, n) in self.done:
                continue
            started, kept = time.perf_counter(), self.kept()
            out = self.graph.invoke({"turns": batch, "session_closed": closes}, context=ctx)
            self.record(
                IngestStep(
                    stage=stage,
                    conversation=conv.sample_id,
                    batch=n,
                    batches=len(batches),
                    turns=len(batch),
                    new_raw=len(out.get("new_raw_ids", [])),
                    written=len(out.get("written", [])),
                    failures=len(out.get("failures", [])),
                    construction=costs_of(out.get("llm_calls", [])),
                    seconds=time.perf_counter() - started,
                    kept_replies=self.kept() - kept,
                )
            )
            self.advance(len(batch))

    def _single(self, stage: str, conv: Conversation, records: Sequence[MemoryRecord]) -> None:
        if (stage, conv.sample_id, 0) in self.done:
            return
        started = time.perf_counter()
        namespace = stage_namespace(stage, conv.sample_id)
        fresh: list[MemoryRecord] = []
        for granularity in ("raw", "fact", "episode"):
            mine = [r for r in records if r.granularity.value == granularity]
            if not mine:
                continue
            stored = self.store.get(granularity, namespace, [r.id for r in mine])
            existing = {r.id for r in stored}
            fresh += [r for r in mine if r.id not in existing]
        if fresh:
            self.store.add(namespace, fresh)
        self.record(
            IngestStep(
                stage=stage,
                conversation=conv.sample_id,
                batch=0,
                batches=1,
                turns=len(conv.turns),
                new_raw=sum(isinstance(r, RawTurn) for r in fresh),
                written=sum(not isinstance(r, RawTurn) for r in fresh),
                seconds=time.perf_counter() - started,
            )
        )
        self.advance(len(conv.turns))

    def _raw_stage(self, conv: Conversation) -> None:
        namespace = stage_namespace(RAW_STAGE, conv.sample_id)
        records: list[RawTurn] = []
        previous: str | None = None
        for n, t in enumerate(conv.turns):
            if n and conv.turns[n - 1].session_id != t.session_id:
                previous = None  # the context is the previous turn of the same session
            records.append(
                RawTurn(
                    namespace=namespace,
                    speaker=t.speaker,
                    text=t.text,
                    session_id=t.session_id,
                    turn_index=t.turn_index,
                    occurred_at=t.occurred_at,
                    media_caption=t.caption,
                    metadata={"dia_id": t.dia_id},
                    context=previous,
                )
            )
            previous = turn_line(t)[:300]
        self._single(RAW_STAGE, conv, records)

    def _derived_oracle_stage(self, conv: Conversation) -> None:
        notes = self.annotations.get(conv.sample_id)
        if notes is None:
            raise InvalidInputError(
                f"derived-oracle needs LoCoMo's annotations of {conv.sample_id}; none were loaded"
            )
        namespace = stage_namespace(DERIVED_ORACLE_STAGE, conv.sample_id)
        records = derived_oracle_records(self.store, namespace, conv, notes)
        self._single(DERIVED_ORACLE_STAGE, conv, records)

    def _chunk_stage(self, conv: Conversation) -> None:
        namespace = stage_namespace(CHUNK_STAGE, conv.sample_id)
        records = [
            RawTurn(
                namespace=namespace,
                speaker=CHUNK_SPEAKER,
                text=c.text,
                session_id=CHUNK_SESSION,
                turn_index=c.index,
                occurred_at=c.occurred_at,
                metadata={"dia_ids": " ".join(c.dia_ids)},
            )
            for c in chunks(conv, self.chunk_words, self.chunk_overlap)
        ]
        self._single(CHUNK_STAGE, conv, records)


def derived_oracle_records(
    store: ChromaMemoryStore, namespace: str, conv: Conversation, notes: Annotations
) -> list[MemoryRecord]:
    """Lamina's raw layer of ``conv`` plus its annotations as facts and episodes.

    An observation's facts are sourced from its evidence turns and dated by the session
    that holds them; event summaries (no evidence ids) and session summaries are dated
    by their session. Nothing here calls a model.
    """
    ctx = MemoryContext(namespace=namespace)
    raw = build_raw_turns(NodeDeps(store=store, caller=_NO_MODEL), ctx, turn_inputs(conv))
    by_dia = {str(r.metadata["dia_id"]): r for r in raw}
    when: dict[str, datetime] = {}
    for r in raw:
        when.setdefault(r.session_id, r.occurred_at)
    out: list[MemoryRecord] = list(raw)

    def fact(origin: str, n: int, text: str, person: str, session: str, **fields: Any) -> None:
        out.append(
            FactRecord(
                id=stable_id(f"oracle-{origin}", namespace, str(n)),
                namespace=namespace,
                text=text,
                subject=person,
                metadata={"origin": origin, "session_id": session},
                **fields,
            )
        )

    for n, o in enumerate(notes.observations):
        if o.session_id in when:
            turns = [by_dia[d] for d in o.evidence if d in by_dia]
            day = turns[0].occurred_at if turns else when[o.session_id]
            sources = [t.id for t in turns]
            fact("observation", n, o.text, o.person, o.session_id, source_ids=sources,
                 occurred_at=day, valid_from=day)  # fmt: skip
    for n, e in enumerate(notes.events):
        if e.session_id in when:
            day = when[e.session_id]
            fact("event", n, e.text, e.person, e.session_id, occurred_at=day, valid_from=day,
                 point_in_time=day)  # fmt: skip
    for summary in notes.summaries:
        if summary.session_id in when:
            day = when[summary.session_id]
            out.append(
                EpisodeRecord(
                    id=stable_id("oracle-summary", namespace, summary.session_id),
                    namespace=namespace,
                    title="Session summary",
                    text=summary.text,
                    source_ids=[r.id for r in raw if r.session_id == summary.session_id],
                    occurred_at=day,
                    start_at=day,
                    end_at=day,
                    metadata={"origin": "session_summary", "session_id": summary.session_id},
                )
            )
    return out
