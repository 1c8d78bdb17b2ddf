"""``Memory.add_facts``: facts an application already knows, stored with no LLM call.

A CRM row, a form answer or a profile field is a fact nobody needs a model to extract.
It is stored as a fact record of its person, then goes through the same update check as
a constructed fact (:func:`~lamina.agents.ingest.nodes.conflicts.judge_facts`): a stored fact
it replaces is superseded, with its audit entry, exactly as after ``add``. Only that
check may call the model, and only for a pair it cannot settle without one, so the
model is not even started when no pair needs it. A given fact is stored flagged as
unjudged, and the flag is cleared with its supersessions (in one transaction on
Postgres): a failed check, a failed supersede or a kill in between leaves both facts
current and the new one flagged, and the next write's check judges it again.

A given fact's id is derived from its namespace, person, text and validity start, so
giving the same fact again stores nothing twice. It cites no raw turn; ``forget``
(by id or by subject) removes it like any fact.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..agents.common.deps import NodeDeps, StepLog
from ..agents.ingest.nodes.conflicts import flagged, judge_facts
from ..agents.ingest.nodes.refresher import settle
from ..config import MemoryConfig
from ..core.nodes import JUDGE
from ..core.state import Failure, Written
from ..errors import InvalidInputError, InvalidTypeError
from ..graphs.options import DEFAULT_MAX_ATTEMPTS
from ..llm.structured import StructuredCaller
from ..records.model import FactRecord, MetadataValue, require_encodable, stable_id, utc_now
from ..stores.chroma import ChromaMemoryStore
from .expiry import default_expiry
from .filters import require_metadata
from .inputs import first_problem, require_aware, require_expiry, require_namespace, type_name
from .models import ChatModelProvider
from .results import _LLMResult
from .twins import in_thread

GIVEN_KEY = "origin"
"""Fact metadata: ``"given"`` on a fact stored by ``add_facts`` (no model wrote it)."""

__all__ = ["GIVEN_KEY", "AddFactsResult", "FactInput", "GivenFactsMethods", "given_records"]


class FactInput(BaseModel):
    """One fact to store as it is: its text, whose it is and since when it holds."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, description="The fact, e.g. 'Alice works at Acme as CTO'.")
    subject: str | None = Field(default=None, description="The person it is about.")
    valid_from: datetime | None = Field(default=None, description="Since when it holds (aware).")
    kind: Literal["fact", "foresight", "preference"] = "fact"
    metadata: dict[str, MetadataValue] = Field(default_factory=dict)


class AddFactsResult(_LLMResult):
    """What ``Memory.add_facts`` stored and what it superseded."""

    new_fact_ids: list[str] = Field(default_factory=list)
    duplicate_fact_ids: list[str] = Field(
        default_factory=list, description="Facts already stored (the same fact given again)."
    )
    written: list[Written] = Field(
        default_factory=list, description="Stored facts the new ones superseded."
    )
    failures: list[Failure] = Field(default_factory=list)


def given_records(
    facts: Sequence[str | Mapping[str, Any] | FactInput],
    *,
    namespace: str,
    subject: str | None,
    valid_from: datetime | None,
    metadata: Mapping[str, MetadataValue] | None,
    now: datetime,
    expires_at: datetime | None = None,
) -> list[FactRecord]:
    """The fact records of ``facts``; every one is checked before any is returned.

    Raises:
        InvalidTypeError: ``facts`` is not a list, or an item is no str, mapping or
            FactInput.
        InvalidInputError: An empty text, no person (neither the item's ``subject`` nor
            the call's), a naive ``valid_from`` or a bad metadata value; the message
            names the item.
    """
    if isinstance(facts, str | bytes) or not isinstance(facts, Sequence):
        raise InvalidTypeError(
            f"facts must be a list of str, dict or FactInput, not {type(facts).__name__}"
        )
    if not facts:
        raise InvalidInputError("facts is empty: give at least one fact")
    records = []
    for n, item in enumerate(facts):
        fact = _fact_input(item, n)
        person = (fact.subject or subject or "").strip()
        if not person:
            raise InvalidInputError(
                f"facts[{n}] names no person: give subject= to add_facts or in the fact"
            )
        require_encodable(f"facts[{n}] subject", person)
        since = require_aware(f"facts[{n}].valid_from", fact.valid_from or valid_from)
        meta = {**(metadata or {}), **fact.metadata, GIVEN_KEY: "given"}
        text = " ".join(fact.text.split())
        key = since.isoformat() if since else ""
        try:
            records.append(
                FactRecord(
                    id=stable_id(namespace, "given", person, text, key),
                    namespace=namespace,
                    text=text,
                    subject=person,
                    kind=fact.kind,
                    occurred_at=since or now,
                    recorded_at=now,
                    valid_from=since,
                    metadata=meta,
                    expires_at=expires_at,
                )
            )
        except ValidationError as e:
            raise InvalidInputError(f"facts[{n}]: {e.errors()[0]['msg']}") from e
    return records


def _fact_input(item: object, n: int) -> FactInput:
    if isinstance(item, FactInput):
        return item
    if isinstance(item, str):
        item = {"text": item}
    if not isinstance(item, Mapping):
        raise InvalidTypeError(
            f"facts[{n}] is a {type(item).__name__}; give a str, a dict or a FactInput"
        )
    try:
        return FactInput.model_validate(dict(item))
    except ValidationError as e:
        raise InvalidInputError(f"facts[{n}].{first_problem(e)}") from e


class _OnFirstCall(StructuredCaller):
    """A structured caller that gets its chat model only when a call needs it."""

    def __init__(self, get_model: Callable[[], BaseChatModel]) -> None:
        self._get: Callable[[], BaseChatModel] = get_model
        self._model: BaseChatModel | None = None
        self.method = "json_schema"
        self.max_attempts = DEFAULT_MAX_ATTEMPTS

    @property
    def model(self) -> BaseChatModel:
        """The chat model, got (a local model started) at the first call that needs it."""
        if self._model is None:
            self._model = self._get()
        return self._model

    @model.setter
    def model(self, value: BaseChatModel) -> None:
        self._model = value


class GivenFactsMethods:
    """``add_facts``, mixed into :class:`~lamina.Memory`."""

    store: ChromaMemoryStore
    config: MemoryConfig
    _models: ChatModelProvider

    def add_facts(
        self,
        facts: Sequence[str | Mapping[str, Any] | FactInput],
        *,
        namespace: str,
        subject: str | None = None,
        valid_from: datetime | None = None,
        metadata: Mapping[str, MetadataValue] | None = None,
        expires_at: datetime | None = None,
        ttl: timedelta | float | None = None,
    ) -> AddFactsResult:
        """Store facts the application already knows, with no LLM call to write them.

        Each fact is a str, a dict with :class:`FactInput`'s fields, or a FactInput.
        Every fact is checked before the first is stored. The new facts then go through
        the update check of constructed facts: a stored fact they replace is superseded
        and audited. Only that check may call the chat model, and only for a pair it
        cannot settle without one.

        Args:
            facts: The facts.
            namespace: The scope written to.
            subject: The person of the facts that name none.
            valid_from: Since when the facts that give no ``valid_from`` hold (aware;
                default: now, and the validity start is left open).
            metadata: JSON scalars kept on every fact (a fact's own metadata wins).
            expires_at: When the facts expire (aware, in the future); they leave every
                read then and the sweeper forgets them. Default: the namespace's default
                TTL (``set_default_ttl``), else never.
            ttl: ``expires_at`` as a time from now (a timedelta, or seconds).

        Raises:
            InvalidTypeError: ``facts`` or an item, ``subject`` or ``metadata`` (or one of
                its values) has a type add_facts does not take, as in :meth:`add`.
            InvalidInputError: An empty text, no person, a naive datetime, a bad
                metadata key or value, or an ``expires_at``/``ttl`` not in the future;
                nothing is stored.
            NamespaceError: A missing or malformed namespace.
        """
        namespace = require_namespace(namespace)
        if subject is not None and not isinstance(subject, str):
            raise InvalidTypeError(f"subject must be a str or None, got {type_name(subject)}")
        metadata = require_metadata(metadata)
        ctx = self.config.memory_context(
            namespace, small_model=self._models.small_model
        )  # a bad setting fails before any write
        now = utc_now()
        expires = require_expiry(expires_at, ttl, now)
        records = given_records(
            facts,
            namespace=namespace,
            subject=subject,
            valid_from=valid_from,
            metadata=metadata,
            now=now,
            expires_at=expires,
        )
        if expires is None and (expires := default_expiry(self.store, namespace, now)):
            records = [r.model_copy(update={"expires_at": expires}) for r in records]
        held = {f.id for f in self.store.get("fact", namespace, [r.id for r in records])}
        new = list({r.id: r for r in records if r.id not in held}.values())
        if new:  # flagged until their supersessions commit, as constructed facts are
            self.store.add(namespace, [flagged(r) for r in new])
        deps = NodeDeps(store=self.store, caller=_OnFirstCall(self._models.get))
        log = StepLog(JUDGE, deps)
        written: list[Written] = []
        if new:
            settled: set[str] = set()
            conflicts = judge_facts(log, ctx, [r.id for r in new], settled=settled)
            written = settle(log, ctx, conflicts, sorted(settled))
        return AddFactsResult(
            new_fact_ids=[r.id for r in new],
            duplicate_fact_ids=sorted(held),
            written=written,
            failures=log.failures,
            llm_calls=list(log.calls),
        )

    aadd_facts = in_thread(add_facts)
    """Async :meth:`add_facts`, with the same arguments (run in a worker thread)."""
