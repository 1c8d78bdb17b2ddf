"""memstrata.testing.StorePool: one store shared by many examples, renewed on schedule."""

from __future__ import annotations

import pytest

from memstrata.stores import ChromaMemoryStore
from memstrata.testing import StorePool


def test_the_pool_reuses_its_store_and_renews_it_every_n_uses() -> None:
    pool = StorePool(renew_every=3)
    first, second = pool.next(), pool.next()
    assert isinstance(first, ChromaMemoryStore) and first is second
    third = pool.next()
    assert third is not first
    assert pool.next() is third


def test_the_pool_rejects_a_renewal_period_below_one() -> None:
    with pytest.raises(ValueError, match="renew_every"):
        StorePool(renew_every=0)
