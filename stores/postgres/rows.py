"""Record rows of the Postgres store: encoded from a prepared batch, upserted, read back."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

from ...errors import StoreConfigurationError
from ...records.model import Granularity, MemoryRecord
from ..codec import RECORD_KEY
from ..writes import Batch
from .schema import Names
from .sql import pg_text

Row = tuple[str, str, str, Jsonb, str, str, str, Any]
"""namespace, id, record JSON, filterable metadata, index text, text-search config,
vector (pgvector's text form), occurred_at."""


def vector_literal(vector: Sequence[float]) -> str:
    """``vector`` in pgvector's text form, ``[0.1,0.2]``, exactly as pgvector stores it.

    pgvector keeps 32-bit floats: each value is rounded to one first, and 9 significant
    digits name a 32-bit float exactly, so the server reads back the very value. Sent as
    text and cast with ``::vector``: psycopg's dumper of a list as a ``float8[]`` inspects
    every element, too slow for batch writes.
    """
    values = np.asarray(vector, dtype=np.float32).tolist()
    return "[" + _floats(len(values)) % tuple(values) + "]"


@lru_cache(maxsize=8)
def _floats(n: int) -> str:
    """The format of ``n`` comma-separated floats of 9 significant digits."""
    return ",".join(["%.9g"] * n)


def encode(
    batch: Batch, language: Callable[[MemoryRecord], str], dimension: int, names: Names
) -> list[Row]:
    """The rows of ``batch``; a vector of the wrong size is refused with both sizes."""
    rows: list[Row] = []
    for record, text, vector, meta in zip(
        batch.records, batch.texts, batch.vectors, batch.metadatas, strict=True
    ):
        if len(vector) != dimension:
            raise StoreConfigurationError(
                f"the embedder returned a {len(vector)}-dimensional vector, but the "
                f"schema {names.schema!r} holds {dimension}-dimensional ones"
            )
        filterable = {k: pg_text(v) for k, v in meta.items() if k != RECORD_KEY}
        rows.append(
            (
                batch.namespace,
                record.id,
                str(meta[RECORD_KEY]),
                Jsonb(filterable),
                pg_text(text),
                language(record),
                vector_literal(vector),
                record.occurred_at,
            )
        )
    return rows


def upsert(conn: psycopg.Connection[Any], names: Names, gran: Granularity, rows: list[Row]) -> None:
    """Insert or replace ``rows`` (one pipelined batch); the ``tsvector`` is built here."""
    with conn.cursor() as cur:
        cur.executemany(upsert_statement(names, gran), upsert_params(rows))


def upsert_statement(names: Names, gran: Granularity) -> sql.Composed:
    """The insert-or-replace of one row of ``gran``'s table, building its ``tsvector``."""
    return sql.SQL(
        "INSERT INTO {t} AS t (namespace, id, record, meta, document, ts_config, tsv, "
        "embedding, occurred_at) VALUES (%s, %s, %s, %s, %s, %s, "
        "to_tsvector(%s::regconfig, %s), %s::vector, %s) "
        "ON CONFLICT (namespace, id) DO UPDATE SET record = EXCLUDED.record, "
        "meta = EXCLUDED.meta, document = EXCLUDED.document, "
        "ts_config = EXCLUDED.ts_config, tsv = EXCLUDED.tsv, "
        "embedding = EXCLUDED.embedding, occurred_at = EXCLUDED.occurred_at, "
        "written = nextval({seq})"
    ).format(t=names.records(gran), seq=sql.Literal(f"{names.schema}.write_seq"))


def upsert_params(rows: list[Row]) -> list[tuple[Any, ...]]:
    """The parameters of :func:`upsert_statement` for each row (config and text twice)."""
    return [(ns, i, rec, meta, doc, cfg, cfg, doc, vec, at)
            for ns, i, rec, meta, doc, cfg, vec, at in rows]  # fmt: skip


def stored_vectors(
    conn: psycopg.Connection[Any], names: Names, gran: Granularity, namespace: str, ids: list[str]
) -> dict[str, tuple[str, list[float]]]:
    """``{id: (index text, vector)}`` of the records among ``ids`` that are stored."""
    query = sql.SQL(
        "SELECT id, document, embedding::real[] FROM {} WHERE namespace = %s AND id = ANY(%s)"
    ).format(names.records(gran))
    rows = conn.execute(query, [namespace, ids]).fetchall()
    return {str(i): (str(d), [float(x) for x in v]) for i, d, v in rows}
