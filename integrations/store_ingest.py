"""Route conversations put into a :class:`LaminaStore` through lamina's ingest graph.

With ``LaminaStore(store, ingest=memory)``, a put whose value holds a ``messages``
list (``[{"role": "user", "content": "..."}, ...]``) is stored verbatim as usual, and
then added to ``memory`` in the same lamina namespace, one session per item key. The
memory's trigger policy decides when it is consolidated into facts, episodes and scenes.
Deleting the item removes the verbatim record only; use ``Memory.forget`` for what was
learned from it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from ..errors import InvalidInputError, InvalidTypeError
from .store_items import STORE_SESSION

logger = logging.getLogger(__name__)

MESSAGES = "messages"
"""The value field that holds a conversation."""

_SPEAKER_FIELDS = ("name", "speaker", "role")


@runtime_checkable
class Ingestor(Protocol):
    """What the store needs of a memory to ingest conversations: ``Memory.add``."""

    def add(self, messages: Any, *, namespace: str, session_id: str | None = None) -> Any:
        """Remember the messages in ``namespace`` under ``session_id``."""
        ...


def check_ingestor(ingest: object, store: object) -> Ingestor | None:
    """Validate the ``ingest`` option: a ``Memory`` over the same store, or None.

    Raises:
        InvalidTypeError: if ``ingest`` has no ``add`` method.
        InvalidInputError: if it writes to another store than the one items live in.
    """
    if ingest is None:
        return None
    if not isinstance(ingest, Ingestor):
        raise InvalidTypeError(
            f"ingest must be a lamina Memory (anything with add()), got {type(ingest).__name__}"
        )
    own = getattr(ingest, "store", store)
    if own is not store:
        raise InvalidInputError(
            "ingest must write to the store the items live in; build it as "
            "Memory(store=the_same_store, ...)"
        )
    return ingest


def conversation(value: Mapping[str, Any]) -> list[dict[str, str]] | None:
    """The conversation a value carries under ``messages``, checked, or None.

    Raises:
        InvalidInputError: if ``messages`` is there but is not a non-empty list of
            ``{"role": ..., "content": ...}`` dicts with non-blank text.
    """
    if MESSAGES not in value:
        return None
    messages = value[MESSAGES]
    if isinstance(messages, str) or not isinstance(messages, Sequence) or not messages:
        raise InvalidInputError(
            "value['messages'] must be a non-empty list of {'role': ..., 'content': ...} dicts "
            "to be ingested"
        )
    turns = []
    for n, message in enumerate(messages):
        content = message.get("content") if isinstance(message, Mapping) else None
        if not isinstance(content, str) or not content.strip():
            raise InvalidInputError(
                f"value['messages'][{n}] needs a non-blank 'content' string to be ingested"
            )
        turn = {"role": "user", "content": content}
        for field in _SPEAKER_FIELDS:
            if isinstance(message.get(field), str) and message[field].strip():
                turn["role"] = message[field]
                break
        turns.append(turn)
    return turns


def add_conversation(
    ingestor: Ingestor, namespace: str, key: str, turns: list[dict[str, str]]
) -> None:
    """Add one item's conversation (its own session); failures are logged, never raised."""
    result = ingestor.add(turns, namespace=namespace, session_id=f"{STORE_SESSION}:{key}")
    for failure in getattr(result, "failures", None) or []:
        logger.warning("lamina could not consolidate store item %r: %s", key, failure)
