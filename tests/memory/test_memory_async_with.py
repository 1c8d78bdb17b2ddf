"""``async with Memory(...)``: the memory is usable inside and closed (``aclose``) after."""

from __future__ import annotations

import asyncio

import pytest

from lamina import Memory
from lamina.errors import InvalidInputError
from lamina.records import Granularity
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings

NS = "user:alice"


def test_async_with_closes_the_memory_on_exit() -> None:
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())

    async def use() -> Memory:
        async with Memory(store=store) as memory:
            await memory.aadd("I adopted a greyhound", namespace=NS, infer=False)
            assert [h.text for h in await memory.asearch("greyhound", namespace=NS)]
        return memory

    memory = asyncio.run(use())
    assert store.count(Granularity.RAW, NS) == 1
    with pytest.raises(InvalidInputError, match="closed"):
        memory.add("and a cat", namespace=NS, infer=False)
