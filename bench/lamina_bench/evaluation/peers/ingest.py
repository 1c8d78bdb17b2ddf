"""A peer's ingest stage: the same batches as lamina's, each journaled, each retried once.

A batch the peer raises on is sent once more; if that raises too, the batch is recorded as
failed (its ``failures`` count both tries) and the run goes on with the next one, since a
peer that fails is a result. One fault stops the run instead: a model server that refuses
connections, which no retry of a peer can help and which would otherwise mark every
remaining batch failed; the run resumes from that batch once the server is back.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from lamina.graphs import LLMCall, TurnInput
from lamina.llm.reachability import unreachable_reason

from ...datasets.locomo import Conversation
from ..ingest import session_batches
from ..records import IngestStep, costs_of
from .base import PeerMemory

TRIES = 2
"""A batch is sent at most twice."""


def _chain(error: BaseException) -> list[BaseException]:
    """The error and the errors it was raised from (or while handling), outermost first."""
    out: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and all(current is not e for e in out):
        out.append(current)
        current = current.__cause__ or current.__context__
    return out


def _connection_refused(error: BaseException) -> bool:
    return any(unreachable_reason(e) == "connection failed" for e in _chain(error))


def describe(error: BaseException) -> str:
    """The error's class chain and HTTP status, e.g. ``LLMError <- BadRequestError (HTTP 400)``.

    Messages are left out: a peer's may quote the prompt, and the journal holds no text of
    the dataset.
    """
    parts = []
    for e in _chain(error):
        status = getattr(e, "status_code", None)
        parts.append(type(e).__name__ + (f" (HTTP {status})" if isinstance(status, int) else ""))
    return " <- ".join(parts)


@dataclass(kw_only=True)
class PeerIngestor:
    """Feeds a conversation to a peer batch by batch, skipping finished batches."""

    memory: PeerMemory
    batch_size: int
    done: set[tuple[str, str, int]]
    """(stage, sample_id, batch) already in the journal."""
    record: Callable[[IngestStep], None]
    """Called with each finished (or failed) batch."""
    advance: Callable[[int], None] = lambda turns: None
    """Progress callback: turns just ingested."""

    def planned_turns(self, stage: str, conv: Conversation) -> int:
        """Turns still to ingest for this stage and conversation."""
        return sum(
            len(batch)
            for n, (batch, _) in enumerate(session_batches(conv, self.batch_size))
            if (stage, conv.sample_id, n) not in self.done
        )

    def run(self, stage: str, conv: Conversation) -> None:
        """Ingest ``conv``'s unfinished batches into the peer."""
        batches = [batch for batch, _ in session_batches(conv, self.batch_size)]
        for n, batch in enumerate(batches):
            if (stage, conv.sample_id, n) in self.done:
                continue
            step = self.batch(stage, conv.sample_id, batch)
            self.record(step.model_copy(update={"batch": n, "batches": len(batches)}))
            self.advance(len(batch))

    def batch(self, stage: str, conversation: str, turns: Sequence[TurnInput]) -> IngestStep:
        """Send one batch (twice if it raises); what it wrote, cost and how often it failed.

        Raises:
            Exception: the model server refused the connection on both tries.
        """
        started = time.perf_counter()
        calls: list[LLMCall] = []
        failures, written, error, kept = 0, 0, None, 0
        for attempt in range(1, TRIES + 1):
            try:
                written = self.memory.add(conversation, turns)
            except Exception as e:
                taken = self.memory.log.take()
                calls, kept = calls + taken.calls, kept + taken.kept
                failures += 1
                if attempt == TRIES and _connection_refused(e):
                    raise
                error = describe(e)
                continue
            taken = self.memory.log.take()
            calls, kept = calls + taken.calls, kept + taken.kept
            failures += taken.invalid
            error = None
            break
        return IngestStep(
            stage=stage,
            conversation=conversation,
            batch=0,
            batches=1,
            turns=len(turns),
            written=written,
            failures=failures,
            construction=costs_of(calls),
            seconds=time.perf_counter() - started,
            error=error,
            kept_replies=kept,
        )


__all__ = ["TRIES", "PeerIngestor", "describe"]
