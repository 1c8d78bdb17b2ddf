"""``benchmarks/postgres_tenancy.py`` on a few tenants of the session's embedded Postgres:
adversarial names, no cross-tenant row on any read, filter or forget."""

from __future__ import annotations

import pytest

from tests.bench_scripts import load_benchmark


def test_the_tenant_names_are_adversarial_and_distinct() -> None:
    bench = load_benchmark("postgres_tenancy")
    names = bench.tenant_names(1000)
    assert len(names) == len(set(names)) == 1000
    assert any(a != b and b.startswith(a) for a in names[:60] for b in names)  # prefixes
    for needle in ("%", "_", "'", '"', "\\", "DROP TABLE", "\u0308", "\u202e"):
        assert any(needle in n for n in names), needle
    assert any(not n.isascii() for n in names)
    assert sum(1 for n in names if bench.memory_namespace(n) == n) > 100  # admitted as is
    escaped = {bench.memory_namespace(n) for n in names if bench.memory_namespace(n) != n}
    assert len(escaped) == sum(1 for n in names if bench.memory_namespace(n) != n)


def test_a_small_run_finds_no_cross_tenant_row(postgres_dsn: str) -> None:
    bench = load_benchmark("postgres_tenancy")
    result = bench.run(12, postgres_dsn)
    assert result["tenants"] == 12
    assert result["cross_tenant_rows"] == 0
    assert result["count_mismatches"] == 0
    assert result["invalid_namespace_calls_admitted"] == 0
    assert result["invalid_namespace_calls_refused"] > 0
    forgot = result["forget"]
    assert forgot["own_rows_not_as_forgotten"] == 0
    assert forgot["basestore_tenants_wrong_after_delete"] == 0
    assert sum(forgot["ways"].values()) == 12
    checks = result["checks"]
    assert checks["memory.search"]["rows"] == 12 * 3  # every tenant found its own turns
    assert checks["filter.neighbour"]["reads"] > 12 and checks["filter.neighbour"]["rows"] == 0


def test_the_tally_counts_a_leak() -> None:
    bench = load_benchmark("postgres_tenancy")
    tally = bench.Tally()
    tally.add("memory.search", 3, 0)
    tally.add("memory.search", 4, 1, expected_ok=False)
    assert tally.as_json() == {
        "memory.search": {"reads": 2, "rows": 7, "cross_tenant_rows": 1, "count_mismatches": 1}
    }


@pytest.mark.parametrize("index", [0, 5, 30])
def test_a_tenant_is_never_its_own_neighbour(index: int) -> None:
    bench = load_benchmark("postgres_tenancy")
    names = bench.tenant_names(60)
    assert names[index] not in bench.neighbours(names, index)
    assert "%" in bench.neighbours(names, index) or names[index] == "%"
