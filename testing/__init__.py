"""Test doubles for code that uses lamina: scripted chat models, fakes, a store pool.

* :mod:`~lamina.testing.doubles`: the one fake chat model (a reply queue) and the
  scripted models built on it: :class:`ScriptedChatModel`, :class:`SchemaChatModel`
  (answers whatever schema a node asks for) and :class:`ToolCallingChatModel`.
* :mod:`~lamina.testing.schemas`: read the schema a prompt asks for, build a minimal
  valid reply.
* :mod:`~lamina.testing.stores`: :class:`FakeEmbeddings` (deterministic bag of words),
  :class:`StorePool` (one in-memory store shared by many property-based examples),
  :class:`CountingStore` (counts the records a store's ``get`` returns) and
  :func:`store_snapshot` (all a store holds in some namespaces, to check that a call
  changed nothing).
* :mod:`~lamina.testing.faults`: fault injection for reliability tests.

They need no model and no network, so unit tests stay fast and exact.
"""

from .doubles import (
    AgentReply,
    FakeChatModel,
    FakeLocalServer,
    Reply,
    Responder,
    SchemaChatModel,
    ScriptedChatModel,
    ToolCallingChatModel,
    tool_call,
)
from .schemas import (
    MINIMAL_LINE_REPLIES,
    minimal_instance,
    requested_line_format,
    requested_schema,
)
from .stores import CountingStore, FakeEmbeddings, StorePool, alternating_turn, store_snapshot

__all__ = [
    "MINIMAL_LINE_REPLIES",
    "AgentReply",
    "CountingStore",
    "FakeChatModel",
    "FakeEmbeddings",
    "FakeLocalServer",
    "Reply",
    "Responder",
    "SchemaChatModel",
    "ScriptedChatModel",
    "StorePool",
    "alternating_turn",
    "ToolCallingChatModel",
    "minimal_instance",
    "requested_line_format",
    "requested_schema",
    "store_snapshot",
    "tool_call",
]
