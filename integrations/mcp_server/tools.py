"""The five MCP tools: their arguments (strict pydantic models) and what each one does.

Each tool's JSON schema is generated from its pydantic model, and every call is checked
against that model (unknown keys, loose types, ranges, exactly one forget selector)
before anything is read or written; the error names the argument and says what it takes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    field_validator,
    model_validator,
)

from ...errors import LaminaError, RecordNotFoundError
from ...memory.filters import require_metadata
from ...memory.results import ForgetResult
from ...prompts import mcp as text
from ...records.model import MemoryRecord
from ..formatting import format_add, format_forget, format_hit, format_hits

if TYPE_CHECKING:
    from ...memory import Memory
    from ...memory.results import MemoryHit

Scalar = StrictStr | StrictInt | StrictFloat | StrictBool
Granularity = Literal["raw", "fact", "episode", "scene"]
NAMESPACE_FIELD = "namespace"


class ToolArgs(BaseModel):
    """Fields every tool takes; unknown keys and loose types are refused."""

    model_config = ConfigDict(extra="forbid", strict=True)

    namespace: str | None = Field(
        default=None, description="The memory namespace, when this server lets a call choose."
    )


class AddMemoryArgs(ToolArgs):
    """Arguments of ``add_memory``."""

    text: str = Field(min_length=1, description="What to remember, understandable on its own.")
    metadata: dict[str, Scalar] | None = Field(
        default=None, description="Labels to filter on later: str, number or bool values."
    )
    infer: bool = Field(
        default=True, description="False: store the text verbatim, with no model call."
    )

    @field_validator("metadata", mode="before")
    @classmethod
    def _scalars(cls, value: object) -> object:
        try:
            require_metadata(value)
        except LaminaError as e:  # one clear sentence instead of a union's four
            raise ValueError(str(e)) from None
        return value


class SearchMemoryArgs(ToolArgs):
    """Arguments of ``search_memory``."""

    query: str = Field(min_length=1, description="A short standalone search query.")
    top_k: int = Field(default=10, ge=1, le=100, description="How many memories at most.")
    filters: dict[str, Any] | None = Field(
        default=None,
        description="Metadata key to value or list of values; occurred_at: {gte, lt} ISO times.",
    )
    threshold: float | None = Field(
        default=None, ge=0.0, le=1.0, description="Minimum similarity of query and memory."
    )


class AskMemoryArgs(ToolArgs):
    """Arguments of ``ask_memory``."""

    question: str = Field(min_length=1, description="The question to answer from memory.")


class ForgetArgs(ToolArgs):
    """Arguments of ``forget``: exactly one of ``memory_id`` and ``subject``."""

    memory_id: str | None = Field(default=None, min_length=1, description="One memory's id.")
    subject: str | None = Field(
        default=None, min_length=1, description="Forget every memory that mentions this."
    )

    @model_validator(mode="after")
    def _one_selector(self) -> ForgetArgs:
        if (self.memory_id is None) == (self.subject is None):
            raise ValueError("give exactly one of memory_id or subject")
        return self


class ListMemoriesArgs(ToolArgs):
    """Arguments of ``list_memories``."""

    limit: int = Field(default=20, ge=1, le=500, description="The most recent N memories.")
    granularity: Granularity | None = Field(default=None, description="Only this granularity.")
    filters: dict[str, Any] | None = Field(
        default=None, description="Metadata conditions, as in search_memory."
    )


Output = tuple[str, dict[str, Any]]
"""A tool's answer: text for the model, and the same as structured content."""


@dataclass(frozen=True)
class Call:
    """What a tool runs against: the memory, the namespace the policy chose, the speaker."""

    memory: Memory
    namespace: str
    speaker: str
    """Recorded as the speaker of text that add_memory stores."""


def _hit(hit: MemoryHit) -> dict[str, Any]:
    return hit.model_dump(
        mode="json",
        include={"id", "granularity", "text", "occurred_at", "speaker", "similarity", "metadata"},
    )


def _record(record: MemoryRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "granularity": record.granularity.value,
        "text": record.text,
        "occurred_at": record.occurred_at.isoformat(),
        "metadata": dict(record.metadata),
    }


async def add_memory(call: Call, args: AddMemoryArgs) -> Output:
    """Store ``args.text`` as one turn of the server's speaker."""
    namespace = call.namespace
    result = await call.memory.aadd(
        args.text,
        namespace=namespace,
        speaker=call.speaker,
        metadata=args.metadata,
        infer=args.infer,
    )
    line = format_add(result)
    if result.model_error:
        line += " Consolidation was skipped: the chat model could not be reached."
    data = {
        "namespace": namespace,
        "new_ids": result.new_raw_ids,
        "duplicate_ids": result.duplicate_raw_ids,
        "derived": [w.model_dump(mode="json") for w in result.written],
        "model_error": result.model_error,
    }
    return line, data


async def search_memory(call: Call, args: SearchMemoryArgs) -> Output:
    """Hybrid search, no model call."""
    namespace = call.namespace
    hits = await call.memory.asearch(
        args.query,
        namespace=namespace,
        top_k=args.top_k,
        filters=args.filters,
        threshold=args.threshold,
    )
    return format_hits(hits), {"namespace": namespace, "memories": [_hit(h) for h in hits]}


async def ask_memory(call: Call, args: AskMemoryArgs) -> Output:
    """The recall graph's cited answer, or its refusal."""
    namespace = call.namespace
    result = await call.memory.aanswer(args.question, namespace=namespace)
    citations = set(result.citations)
    cited = [m for m in result.memories if m.id in citations]
    lines = [("Memory does not say: " if result.refused else "") + result.answer]
    lines += [format_hit(m) for m in cited]
    data = {
        "namespace": namespace,
        "answer": result.answer,
        "refused": result.refused,
        "citations": result.citations,
        "memories": [_hit(m) for m in cited],
    }
    return "\n".join(lines), data


async def forget(call: Call, args: ForgetArgs) -> Output:
    """Forget one memory (and its earlier versions) or everything about a subject."""
    namespace = call.namespace
    if args.memory_id is not None:
        try:
            result = await call.memory.adelete(args.memory_id, namespace=namespace)
        except RecordNotFoundError:  # another namespace's id is unknown here too
            result = ForgetResult(not_found=[args.memory_id])
    else:
        result = await call.memory.aforget(namespace=namespace, subject=args.subject)
    data = result.model_dump(mode="json", include={"deleted", "not_found", "tombstone_ids"})
    return format_forget(result), {"namespace": namespace, **data}


async def list_memories(call: Call, args: ListMemoriesArgs) -> Output:
    """The most recent memories, oldest first, no model call."""
    namespace = call.namespace
    records = await call.memory.aget_all(
        namespace=namespace,
        filters=args.filters,
        granularities=[args.granularity] if args.granularity else None,
        limit=args.limit,
    )
    lines = [
        f"[{r.granularity.value} {r.id}] ({r.occurred_at:%Y-%m-%d}) {' '.join(r.text.split())}"
        for r in records
    ]
    text_out = "\n".join(lines) if lines else "No memories stored."
    return text_out, {"namespace": namespace, "memories": [_record(r) for r in records]}


Runner = Callable[[Call, Any], Awaitable[Output]]


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its name, description, argument model, runner and hints."""

    name: str
    description: str
    args: type[ToolArgs]
    run: Runner
    read_only: bool
    destructive: bool = False


TOOLS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in (
        ToolSpec("add_memory", text.ADD_MEMORY, AddMemoryArgs, add_memory, read_only=False),
        ToolSpec("search_memory", text.SEARCH_MEMORY, SearchMemoryArgs, search_memory, True),
        ToolSpec("ask_memory", text.ASK_MEMORY, AskMemoryArgs, ask_memory, read_only=True),
        ToolSpec("forget", text.FORGET, ForgetArgs, forget, read_only=False, destructive=True),
        ToolSpec("list_memories", text.LIST_MEMORIES, ListMemoriesArgs, list_memories, True),
    )
}
