"""``history()`` of a memory an answer cites: its version, not ``[]`` (issue 64).

The answer's citations are ids of stored memories, and the docs call ``history`` their
audit trail; a cited memory that never changed still has the version it was stored with.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from lamina import Memory
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings, SchemaChatModel

NS = "user:maya"
T0 = datetime(2024, 2, 3, 18, 20, tzinfo=UTC)


def test_each_cited_memory_has_its_stored_version_as_history() -> None:
    model = SchemaChatModel()
    model.script(
        "DraftFirst", json.dumps({"sufficient": True, "answer": "Biscuit", "cited": ["m1"]})
    )
    memory = Memory(
        store=ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings()), chat_model=model
    )
    memory.add("Her name is Biscuit", namespace=NS, speaker="Maya", at=T0, infer=False)
    result = memory.answer("What is the dog called?", namespace=NS)
    assert result.answer == "Biscuit" and result.citations
    for cited in result.citations:
        hit = next(m for m in result.memories if m.id == cited)
        history = memory.history(cited, namespace=NS)
        assert history, f"history of the cited {hit.granularity} {cited} is empty"
        assert (history[0].action, history[0].target_id) == ("add", cited)
        assert history[0].after == hit.text
