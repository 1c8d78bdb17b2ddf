"""lamina on Postgres: pgvector, full text and RRF in SQL, one transaction per change.

:class:`PostgresMemoryStore` is the store (:meth:`PostgresMemoryStore.connect` opens it
on a DSN); :func:`configure_connection` sets up the connections of a pool you build
yourself; :data:`SCHEMA_VERSION` is the schema this code writes.
"""

from .connections import configure_connection
from .schema import SCHEMA_VERSION
from .store import PostgresMemoryStore

__all__ = ["SCHEMA_VERSION", "PostgresMemoryStore", "configure_connection"]
