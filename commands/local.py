"""``memstrata demo`` and ``memstrata serve-llm``: commands that need no saved memory."""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from pathlib import Path
from typing import Any


def register(sub: Any) -> None:
    """Add ``demo`` and ``serve-llm`` to the subparsers ``sub``."""
    demo = sub.add_parser(
        "demo", help="ingest the bundled sample conversation and run hybrid searches over it"
    )
    demo.add_argument("--namespace", default="demo:maya", help="namespace to ingest into")
    demo.add_argument(
        "--data-dir", help="persistent Chroma directory (default: a temporary directory)"
    )
    demo.add_argument("-k", type=int, default=3, help="results per query (default 3)")
    demo.add_argument("--query", action="append", help="a query to run (repeatable)")
    demo.set_defaults(func=run_demo)

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


def run_demo(args: argparse.Namespace) -> int:
    """Ingest the bundled sample into a store and print hybrid search results."""
    from ..samples import load_sample, sample_turns
    from ..stores import ChromaMemoryStore

    data = load_sample()
    namespace = args.namespace
    with tempfile.TemporaryDirectory(prefix="memstrata-demo-") as tmp:
        path = Path(args.data_dir) if args.data_dir else Path(tmp) / "chroma"
        started = time.perf_counter()
        store = ChromaMemoryStore.persistent(path)
        turns = sample_turns(namespace, data)
        store.add(namespace, turns)
        elapsed = time.perf_counter() - started
        print(
            f"Ingested {len(turns)} turns into {path} (namespace {namespace!r}) in {elapsed:.1f}s"
        )
        queries = args.query or data["queries"]
        for query in queries:
            print(f"\n? {query}")
            for hit in store.search(query, "raw", namespace, k=args.k):
                turn = hit.record
                ranks = " ".join(f"{ch}#{r}" for ch, r in sorted(hit.ranks.items()))
                when = turn.occurred_at.date().isoformat()
                speaker = getattr(turn, "speaker", "")
                print(f"  {hit.score:.4f} [{ranks}] {when} {speaker}: {turn.text}")
    return 0


def local_model_path(choice: str) -> Path:
    """The GGUF file for ``qwen``, ``smollm2`` or a path."""
    from ..llm import assemble_qwen_gguf, smollm2_gguf_path

    if choice == "qwen":
        return assemble_qwen_gguf()
    if choice == "smollm2":
        return smollm2_gguf_path()
    return Path(choice)


def run_serve_llm(args: argparse.Namespace) -> int:
    """Serve a local GGUF model until Ctrl-C."""
    from ..llm import LocalLLMServer

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
