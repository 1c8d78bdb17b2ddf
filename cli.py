"""The ``memstrata`` command line. For now: ``demo`` ingests a sample and searches it."""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from .errors import MemstrataError


def _demo(args: argparse.Namespace) -> int:
    from .samples import load_sample, sample_turns
    from .stores import ChromaMemoryStore

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


def _serve_llm(args: argparse.Namespace) -> int:
    import threading

    from .llm import LocalLLMServer, assemble_qwen_gguf, smollm2_gguf_path

    if args.model == "qwen":
        path = assemble_qwen_gguf()
    elif args.model == "smollm2":
        path = smollm2_gguf_path()
    else:
        path = Path(args.model)
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


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of the ``memstrata`` command."""
    parser = argparse.ArgumentParser(
        prog="memstrata", description="Long-term memory for LLM agents."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser(
        "demo", help="ingest the bundled sample conversation and run hybrid searches over it"
    )
    demo.add_argument("--namespace", default="demo:maya", help="namespace to ingest into")
    demo.add_argument(
        "--data-dir", help="persistent Chroma directory (default: a temporary directory)"
    )
    demo.add_argument("-k", type=int, default=3, help="results per query (default 3)")
    demo.add_argument("--query", action="append", help="a query to run (repeatable)")
    demo.set_defaults(func=_demo)
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
    serve.set_defaults(func=_serve_llm)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except MemstrataError as e:
        print(f"memstrata: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
