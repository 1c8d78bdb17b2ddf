"""SQL of the Postgres store: filters, and one statement that answers a whole search request.

Every value a caller gives (namespace, filter keys and values, window bounds, query text,
vectors, ``k``) is a bound parameter; only identifiers the store itself chose (schema,
table, CTE names) are composed into the text, always quoted by :mod:`psycopg.sql`. So no
namespace prefix, ``%``, ``_`` or backslash can widen a match: the namespace is compared
with ``=``, never with ``LIKE``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from psycopg import sql
from psycopg.types.json import Jsonb

from ...records.model import RECORD_TYPES, Granularity
from ..base import ScoredRecord, Search, SearchAnswer, SearchMode, SearchRequest
from ..filters import SearchFilter
from ..fusion import FusionConfig
from ..search import checked_searches
from .schema import BIGINT_MAX, Names


def pg_text(value: Any) -> Any:
    """``value`` with NUL characters replaced: Postgres text and jsonb cannot hold them."""
    return value.replace("\x00", "\ufffd") if isinstance(value, str) else value


def filter_clause(
    flt: SearchFilter, granularity: Granularity, params: dict[str, Any], prefix: str
) -> sql.Composed:
    """``flt`` as a WHERE condition on the columns of ``granularity``'s table.

    Metadata conditions compare the stored ``meta`` jsonb value with ``=`` against the
    allowed values, as the Chroma store's ``$eq``/``$in``; keys are parameters too.
    """
    parts: list[sql.Composable] = [sql.SQL("t.namespace = %(ns)s")]
    params["ns"] = flt.namespace
    if flt.window is not None and flt.window.after is not None:
        params[f"{prefix}after"] = flt.window.after
        parts.append(sql.SQL("t.occurred_at >= {}").format(sql.Placeholder(f"{prefix}after")))
    if flt.window is not None and flt.window.before is not None:
        params[f"{prefix}before"] = flt.window.before
        parts.append(sql.SQL("t.occurred_at < {}").format(sql.Placeholder(f"{prefix}before")))
    for n, (key, values) in enumerate(flt.metadata_conditions(granularity)):
        k, v = f"{prefix}k{n}", f"{prefix}v{n}"
        params[k] = key
        params[v] = [Jsonb(pg_text(x)) for x in values]
        parts.append(
            sql.SQL("(t.meta -> {}) = ANY({}::jsonb[])").format(
                sql.Placeholder(k), sql.Placeholder(v)
            )
        )
    return sql.SQL(" AND ").join(parts)


LEXICAL_GATE = 300
"""Rows of a search's scope above which the lexical channel ranks only the rare terms' rows.

A smaller scope (namespace and filters) ranks every row that shares a term with the
query. In a larger one, where ranking them all was too slow, the channel ranks, by
``ts_rank`` of the whole query, only the rows holding a query lexeme found in 1 to this
many rows of the scope (a lexeme in no row narrows nothing); the rows left out hold only
common terms, which BM25 weighs least (measured: ``benchmarks/postgres_large_namespace.json``).
A query of common terms only ranks every matching row, as in a small scope.
"""

LEXEME_QUERY = sql.SQL(r"""('''' || replace(replace(w.lexeme, '\', '\\'), '''', '''''') || '''')""")
"""The ``tsquery`` of one lexeme ``w.lexeme``, quoted (quotes and backslashes doubled)."""


@dataclass(frozen=True)
class Ranking:
    """One ranking of a request, ready for SQL: its table, filter, query and sizes."""

    granularity: Granularity
    flt: SearchFilter
    query_key: str
    """The parameter holding the query text (and ``<key>_vec`` its vector)."""
    k: int
    depth: int


def search_statement(
    names: Names,
    rankings: Sequence[Ranking],
    *,
    mode: SearchMode,
    fusion: FusionConfig,
    languages: Sequence[str],
    params: dict[str, Any],
) -> sql.Composed:
    """One statement ranking every search: dense, lexical and their RRF, in SQL.

    Each ranking is a chain of CTEs: the dense candidates (pgvector's cosine distance,
    served by the HNSW index), the lexical candidates (``ts_rank`` over the GIN-indexed
    ``tsvector``, any query term matching under the record's own text-search
    configuration; in a scope of :data:`LEXICAL_GATE` rows or more, only the rows of the
    query's rare terms), their 1-based ranks (ties broken by id, as the Chroma store does), and
    the fused top ``k``: ``sum(weight / (rrf_k + rank))``. The rows of all rankings come
    back together, tagged with the ranking's position.
    """
    params["rrf_k"] = float(fusion.k)
    params["w_dense"] = float(fusion.weights.get("dense", 1.0))
    params["w_bm25"] = float(fusion.weights.get("bm25", 1.0))
    params["languages"] = list(languages)
    params["gate"] = LEXICAL_GATE
    ctes: list[sql.Composable] = []
    selects: list[sql.Composable] = []
    any_terms, any_terms_of = names("any_terms"), names("any_terms_of")
    for i, r in enumerate(rankings):
        table = names.records(r.granularity)
        where = filter_clause(r.flt, r.granularity, params, f"r{i}_")
        depth, k = f"r{i}_depth", f"r{i}_k"
        params[depth], params[k] = min(r.depth, BIGINT_MAX), min(r.k, BIGINT_MAX)
        q, vec = sql.Placeholder(r.query_key), sql.Placeholder(f"{r.query_key}_vec")
        d, dr, lx, lr, f = (sql.Identifier(f"{c}{i}") for c in ("d", "dr", "l", "lr", "f"))
        channels: list[sql.Composable] = []
        if mode in ("hybrid", "dense"):
            ctes.append(
                sql.SQL(
                    "{d} AS MATERIALIZED (SELECT t.id, t.embedding <=> {vec}::vector AS dist "
                    "FROM {table} t WHERE {where} ORDER BY dist LIMIT {depth}), "
                    "{dr} AS (SELECT id, 1 - dist AS score, row_number() OVER "
                    "(ORDER BY dist, id) AS rank FROM {d})"
                ).format(
                    d=d, dr=dr, vec=vec, table=table, where=where, depth=sql.Placeholder(depth)
                )
            )
            channels.append(sql.SQL("SELECT id, rank, %(w_dense)s AS w FROM {}").format(dr))
        if mode in ("hybrid", "bm25"):
            # the query's tsquery under each of the store's configurations, parsed once:
            # parsing it per row (any_terms(t.ts_config, q)) cost most of a search of a
            # large namespace; a row of another configuration (written before the store's
            # languages changed) still gets its own
            qc = sql.Identifier(f"qc{i}")
            tq = sql.SQL("coalesce(qc.tq, {}(t.ts_config::regconfig, {}))").format(any_terms, q)
            nx, gx = sql.Identifier(f"n{i}"), sql.Identifier(f"g{i}")
            any_of = sql.SQL("{}(%(languages)s::regconfig[], {})").format(any_terms_of, q)
            # one branch per scope size, only one of which runs (the scope test is evaluated
            # once). A small scope's rows are read through the namespace's index and tested
            # one by one, never intersected with the GIN index's rows of the whole table; a
            # row of the store's configurations matches any term of all of them when it
            # matches its own, so only others test the union
            branch = sql.SQL(
                "(SELECT t.id, ts_rank(t.tsv, {tq}, 0)::float8 AS score FROM {table} t "
                "LEFT JOIN {qc} qc ON qc.cfg = t.ts_config WHERE {where} AND {scope} "
                "AND {match} AND t.tsv @@ {tq} "
                "ORDER BY score DESC, t.id LIMIT {depth})"
            )
            parts = {"tq": tq, "table": table, "qc": qc, "where": where}
            parts["depth"] = sql.Placeholder(depth)
            ctes.append(
                sql.SQL(
                    "{qc} AS MATERIALIZED (SELECT c AS cfg, {any_terms}(c::regconfig, {q}) "
                    "AS tq FROM unnest(%(languages)s::text[]) c), "
                    "{nx} AS MATERIALIZED (SELECT count(*) AS n FROM (SELECT 1 FROM {table} t "
                    "WHERE {where} LIMIT %(gate)s) s), "
                    "{dfx} AS MATERIALIZED (SELECT l.tq, (SELECT count(*) FROM (SELECT 1 "
                    "FROM {table} t WHERE {where} AND t.tsv @@ l.tq LIMIT %(gate)s) s) AS df "
                    "FROM (SELECT DISTINCT {lexeme_query}::tsquery AS tq "
                    "FROM unnest(%(languages)s::regconfig[]) c, unnest(to_tsvector(c, {q})) w) l "
                    "WHERE (SELECT n FROM {nx}) >= %(gate)s), "
                    "{gx} AS MATERIALIZED (SELECT string_agg(tq::text, ' | ')::tsquery AS tq "
                    "FROM {dfx} WHERE df > 0 AND df < %(gate)s), "
                    "{lx} AS MATERIALIZED (SELECT * FROM ({small} UNION ALL {large}) u), "
                    "{lr} AS (SELECT id, score, row_number() OVER (ORDER BY score DESC, id) "
                    "AS rank FROM {lx})"
                ).format(
                    qc=qc,
                    tq=tq,
                    nx=nx,
                    dfx=sql.Identifier(f"df{i}"),
                    gx=gx,
                    lexeme_query=LEXEME_QUERY,
                    small=branch.format(
                        **parts,
                        scope=sql.SQL("(SELECT n FROM {}) < %(gate)s").format(nx),
                        match=sql.SQL("(qc.tq IS NOT NULL OR t.tsv @@ {})").format(any_of),
                    ),
                    large=branch.format(
                        **parts,
                        scope=sql.SQL("(SELECT n FROM {}) >= %(gate)s").format(nx),
                        match=sql.SQL("t.tsv @@ coalesce((SELECT tq FROM {}), {})").format(
                            gx, any_of
                        ),
                    ),
                    lx=lx,
                    lr=lr,
                    q=q,
                    any_terms=any_terms,
                    any_terms_of=any_terms_of,
                    table=table,
                    where=where,
                    depth=sql.Placeholder(depth),
                )
            )
            channels.append(sql.SQL("SELECT id, rank, %(w_bm25)s AS w FROM {}").format(lr))
        ctes.append(
            sql.SQL(
                "{f} AS (SELECT id, sum(w / (%(rrf_k)s + rank)) AS score FROM ({union}) c "
                "GROUP BY id ORDER BY score DESC, id LIMIT {k})"
            ).format(f=f, union=sql.SQL(" UNION ALL ").join(channels), k=sql.Placeholder(k))
        )
        cols, joins = [], []
        for channel, alias, cte in (("dense", "dr", dr), ("bm25", "lr", lr)):
            if mode in ("hybrid", channel):
                cols.append(sql.SQL(f"{alias}.rank, {alias}.score"))
                joins.append(sql.SQL(f"LEFT JOIN {{}} {alias} ON {alias}.id = f.id").format(cte))
            else:
                cols.append(sql.SQL("NULL::bigint, NULL::float8"))
        selects.append(
            sql.SQL(
                "SELECT {i} AS ranking, f.id, f.score, {cols}, t.record FROM {f} f "
                "JOIN {table} t ON t.namespace = %(ns)s AND t.id = f.id {joins}"
            ).format(
                i=sql.Literal(i),
                cols=sql.SQL(", ").join(cols),
                f=f,
                table=table,
                joins=sql.SQL(" ").join(joins),
            )
        )
    return sql.SQL("WITH {} {} ORDER BY 1, 3 DESC, 2").format(
        sql.SQL(", ").join(ctes), sql.SQL(" UNION ALL ").join(selects)
    )


def plan_request(
    request: SearchRequest, *, embed: Callable[[str], list[float]], fusion: FusionConfig
) -> tuple[list[Search], list[Ranking], dict[str, Any]]:
    """The rankings of ``request`` and their parameters, checked before any work.

    Each distinct query text is one parameter, embedded once (not in ``bm25`` mode).
    """
    searches, filters = checked_searches(request)
    params: dict[str, Any] = {}
    keys: dict[str, str] = {}
    for text in dict.fromkeys(s.query for s in searches):
        key = keys[text] = f"q{len(keys)}"
        params[key] = pg_text(text)
        if request.mode != "bm25":
            params[f"{key}_vec"] = [float(x) for x in embed(text)]
    rankings = [
        Ranking(
            s.granularity,
            flt,
            keys[s.query],
            s.k,
            max(s.k, fusion.candidates) if request.mode == "hybrid" else s.k,
        )
        for s, flt in zip(searches, filters, strict=True)
    ]
    return searches, rankings, params


def decode_hits(
    searches: Sequence[Search], rankings: Sequence[Ranking], rows: Sequence[tuple[Any, ...]]
) -> SearchAnswer:
    """The rows of :func:`search_statement` as ``{granularity: {channel: hits}}``."""
    hits: list[list[ScoredRecord]] = [[] for _ in searches]
    for i, _rid, score, d_rank, d_score, l_rank, l_score, body in rows:
        ranks, channel_scores = {}, {}
        if d_rank is not None:
            ranks["dense"], channel_scores["dense"] = int(d_rank), float(d_score)
        if l_rank is not None:
            ranks["bm25"], channel_scores["bm25"] = int(l_rank), float(l_score)
        record = RECORD_TYPES[rankings[i].granularity].model_validate_json(body)
        hits[i].append(ScoredRecord(record, float(score), ranks, channel_scores))
    answer: SearchAnswer = {}
    for s, found in zip(searches, hits, strict=True):
        answer.setdefault(s.granularity.value, {})[s.channel] = found
    return answer
