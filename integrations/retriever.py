"""``LaminaRetriever``: lamina's search as a LangChain ``BaseRetriever``.

It runs ``Memory.search`` (hybrid dense + BM25 search, no LLM) in one namespace and
returns LangChain ``Document`` objects, so it drops into any LCEL chain::

    retriever = LaminaRetriever(memory=memory, namespace="user:alice", k=6)
    chain = {"context": retriever | format_docs, "question": RunnablePassthrough()} | prompt | llm

The granularity mix is either a list (pooled, ranked together, ``k`` in all) or a dict
of quotas (``{"raw": 4, "fact": 2}``: at most that many of each).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field, field_validator, model_validator

from ..errors import InvalidInputError, InvalidTypeError
from ..memory.hits import ALL_GRANULARITIES
from ..memory.results import MemoryHit
from ..records.model import parse_granularity, validate_namespace
from ..stores.filters import TimeWindow

_DEFAULT_K = 5
_OVERRIDES = frozenset({"k", "window", "as_of", "filters", "threshold"})


@runtime_checkable
class MemorySearch(Protocol):
    """What the retriever needs of a memory: ``Memory.search`` and ``Memory.asearch``."""

    def search(self, query: str, *, namespace: str, **options: Any) -> list[MemoryHit]:
        """Rank memories of one namespace for ``query``."""
        ...

    async def asearch(self, query: str, *, namespace: str, **options: Any) -> list[MemoryHit]:
        """Async :meth:`search`."""
        ...


class LaminaRetriever(BaseRetriever):
    """Retrieve lamina memories of one namespace as LangChain documents.

    Each document's ``page_content`` is the memory's text; its ``metadata`` holds
    ``id``, ``granularity``, ``score``, ``occurred_at`` (ISO 8601), ``speaker``,
    ``ranks`` and ``namespace``. ``k``, ``window``, ``as_of``, ``filters`` and
    ``threshold`` can be overridden per call: ``retriever.invoke(query, k=3)``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: MemorySearch
    """The memory searched, usually a :class:`lamina.Memory`."""
    namespace: str
    """The one namespace searched; nothing outside it is ever returned."""
    k: int | None = None
    """Documents in all (default 5 for a list, the sum of the quotas for a dict)."""
    granularities: Sequence[str] | Mapping[str, int] = Field(default=ALL_GRANULARITIES)
    """The mix: a list of raw/fact/episode/scene, or a dict of per-granularity quotas."""
    window: TimeWindow | None = None
    """Only memories that happened inside this window (``TimeWindow.between(...)``)."""
    as_of: datetime | None = None
    """What memory held at that time (superseded facts included)."""
    filters: Mapping[str, Any] | None = None
    """Metadata filters passed to ``Memory.search`` (when it supports them)."""
    threshold: float | None = None
    """Minimum similarity passed to ``Memory.search`` (when it supports it)."""

    @field_validator("namespace", mode="before")
    @classmethod
    def _namespace(cls, value: object) -> str:
        return validate_namespace(value)

    @field_validator("granularities", mode="before")
    @classmethod
    def _mix(cls, value: object) -> Sequence[str] | Mapping[str, int]:
        if isinstance(value, str):
            value = [value]
        if isinstance(value, Mapping):
            quotas: dict[str, int] = {}
            for name, quota in value.items():
                if not isinstance(quota, int) or isinstance(quota, bool) or quota < 0:
                    raise InvalidInputError(
                        f"the quota of {name!r} must be an int >= 0, got {quota!r}"
                    )
                quotas[parse_granularity(name).value] = quota
            if not any(quotas.values()):
                raise InvalidInputError("the granularity mix must ask for at least one memory")
            return quotas
        if not isinstance(value, Sequence):
            raise InvalidTypeError(
                "granularities must be a list such as ['raw', 'fact'] or quotas such as "
                f"{{'raw': 4, 'fact': 2}}, got {type(value).__name__}"
            )
        names = tuple(dict.fromkeys(parse_granularity(g).value for g in value))
        if not names:
            raise InvalidInputError("granularities must name at least one granularity")
        return names

    @model_validator(mode="after")
    def _checked(self) -> LaminaRetriever:
        if self.k is not None:
            _check_k(self.k)
        return self

    # ----------------------------------------------------------------- plan
    def _options(self, overrides: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
        unknown = set(overrides) - _OVERRIDES
        if unknown:
            raise InvalidInputError(
                f"unknown retriever options {sorted(unknown)}; use {sorted(_OVERRIDES)}"
            )
        k = overrides.get("k", self.k)
        if k is None:
            mix = self.granularities
            k = sum(mix.values()) if isinstance(mix, Mapping) else _DEFAULT_K
        _check_k(k)
        options: dict[str, Any] = {
            "window": overrides.get("window", self.window),
            "as_of": overrides.get("as_of", self.as_of),
        }
        for name in ("filters", "threshold"):  # only when set: older facades lack them
            value = overrides.get(name, getattr(self, name))
            if value is not None:
                options[name] = value
        return k, options

    def _calls(self, k: int) -> list[tuple[int, list[str]]]:
        """``(k, granularities)`` of each search: one pooled, or one per quota."""
        mix = self.granularities
        if isinstance(mix, Mapping):
            return [(min(quota, k), [name]) for name, quota in mix.items() if quota > 0]
        return [(k, list(mix))]

    def _documents(self, found: list[list[MemoryHit]], k: int) -> list[Document]:
        hits = [hit for hits in found for hit in hits]
        if len(found) > 1:  # quotas: rank the pooled hits, best first
            hits.sort(key=lambda h: -h.score)
        return [self._document(hit) for hit in hits[:k]]

    def _document(self, hit: MemoryHit) -> Document:
        metadata = {
            "id": hit.id,
            "granularity": hit.granularity,
            "score": hit.score,
            "occurred_at": hit.occurred_at.isoformat(),
            "speaker": hit.speaker,
            "ranks": dict(hit.ranks),
            "namespace": self.namespace,
        }
        return Document(page_content=hit.text, metadata=metadata, id=hit.id)

    # ------------------------------------------------------------- retrieve
    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **overrides: Any
    ) -> list[Document]:
        k, options = self._options(overrides)
        found = [
            self.memory.search(query, namespace=self.namespace, k=n, granularities=grans, **options)
            for n, grans in self._calls(k)
        ]
        return self._documents(found, k)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **overrides: Any
    ) -> list[Document]:
        k, options = self._options(overrides)
        found = [
            await self.memory.asearch(
                query, namespace=self.namespace, k=n, granularities=grans, **options
            )
            for n, grans in self._calls(k)
        ]
        return self._documents(found, k)


def _check_k(k: object) -> None:
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise InvalidInputError(f"k must be a positive int, got {k!r}")
