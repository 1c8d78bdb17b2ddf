"""lamina's GGUF tokenizer against llama.cpp's own, text by text.

Serves a GGUF model with llama.cpp (default: the SmolLM2 test model), tokenizes every
text of a corpus with both lamina's :class:`~lamina.llm.GGUFTokenizer` and the
server's ``/tokenize``, and prints how many texts get identical token ids and how far
the counts differ. The corpus is the bundled sample conversation plus, when the LoCoMo
file is present, every LoCoMo turn as ``Speaker: text`` and every session as one text.

    .venv/bin/python benchmarks/tokenizer_parity.py --json bench-results/tokenizer_parity.json
"""

from __future__ import annotations

import argparse
import json
import time
import urllib.request
from pathlib import Path
from typing import Any

from lamina.llm import GGUFTokenizer, LocalLLMServer, smollm2_gguf_path
from lamina.samples import load_sample
from lamina_bench.datasets.locomo import default_locomo_path, load_locomo


def corpus(locomo: Path | None) -> list[str]:
    sessions = load_sample()["sessions"]
    texts = [f"{who}: {text}" for s in sessions for who, text in s["turns"]]
    if locomo is not None and locomo.is_file():
        for conv in load_locomo(locomo):
            by_session: dict[str, list[str]] = {}
            for turn in conv.turns:
                line = f"{turn.speaker}: {turn.text}"
                texts.append(line)
                by_session.setdefault(turn.session_id, []).append(line)
            texts.extend("\n".join(lines) for lines in by_session.values())
    return texts


def served_ids(opener: Any, root: str, text: str) -> list[int]:
    request = urllib.request.Request(
        root + "/tokenize",
        data=json.dumps({"content": text}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with opener.open(request, timeout=120) as response:
        return list(json.load(response)["tokens"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gguf", type=Path, help="model file (default: SmolLM2 test model)")
    parser.add_argument("--locomo", type=Path, default=default_locomo_path())
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    path = args.gguf or smollm2_gguf_path()
    texts = corpus(args.locomo)
    ours = GGUFTokenizer(path)
    started = time.perf_counter()
    ours.load()
    load_s = time.perf_counter() - started
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    same = 0
    ours_total = served_total = 0
    worst = 0.0
    examples: list[dict[str, Any]] = []
    with LocalLLMServer(path, n_ctx=2048, warmup=False) as server:
        root = server.base_url.removesuffix("/v1")
        for text in texts:
            mine, theirs = ours.ids(text), served_ids(opener, root, text)
            ours_total += len(mine)
            served_total += len(theirs)
            if mine == theirs:
                same += 1
                continue
            diff = abs(len(mine) - len(theirs)) / max(1, len(theirs))
            worst = max(worst, diff)
            if len(examples) < 5:
                examples.append({"text": text[:120], "ours": len(mine), "server": len(theirs)})
    figures = {
        "model": path.name,
        "texts": len(texts),
        "identical_ids": same,
        "tokens_ours": ours_total,
        "tokens_server": served_total,
        "total_diff_pct": round(100 * (ours_total - served_total) / max(1, served_total), 4),
        "worst_text_diff_pct": round(100 * worst, 3),
        "tokenizer_load_s": round(load_s, 3),
        "mismatches": examples,
    }
    print(f"{path.name}: {same}/{len(texts)} texts get llama.cpp's exact token ids")
    print(
        f"tokens: ours {ours_total:,}, llama.cpp {served_total:,} "
        f"({figures['total_diff_pct']:+}%); worst single text {figures['worst_text_diff_pct']}%"
    )
    print(f"vocabulary read from the GGUF in {load_s:.2f} s")
    for example in examples:
        print(f"  differs: {example}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
