"""Speculative (n-gram, draftless) decoding on construction prompts: same output, time?"""

import json
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import xllamacpp

from lamina.agents.common.formatting import long_date
from lamina.llm.local import LocalLLMServer
from lamina.prompts.construction import CONSTRUCT_LINES
from lamina_bench.datasets.locomo import load_locomo

cfg = sys.argv[1]
n_prompts = int(sys.argv[2])
conv_id = sys.argv[3] if len(sys.argv) > 3 else "conv-41"
conv = load_locomo(Path("/work/shared/data/locomo/locomo10.json"), sample_ids=[conv_id])[0]
tz = ZoneInfo("UTC")
turns = conv.turns
prompts = []
for start in range(0, 9 * n_prompts, 9):
    chunk = turns[start : start + 9]
    lines, day = [], None
    for n, t in enumerate(chunk, 1):
        if t.occurred_at.date() != day:
            day = t.occurred_at.date()
            lines.append(f"({t.occurred_at:%A} {long_date(t.occurred_at, tz)})")
        line = f"[t{n}] {t.speaker}: {t.text}"
        if t.caption:
            line += f" [shared image: {t.caption}]"
        lines.append(line)
    items = min(12, len(chunk) + 2)
    cap = min(480, 70 + 28 * items)
    msgs = CONSTRUCT_LINES.format_messages(known="", turns="\n".join(lines), max_items=items)
    prompts.append(
        (
            [
                {"role": {"system": "system", "human": "user"}[m.type], "content": m.content}
                for m in msgs
            ],
            cap,
        )
    )


class Spec(LocalLLMServer):
    """The library's server with the speculative settings of ``cfg`` added."""

    def params(self) -> Any:
        """The library's parameters, plus speculative decoding unless ``cfg`` is none."""
        p = super().params()
        if cfg != "none":
            kind, n, m = cfg.split(":")
            T = xllamacpp.common_speculative_type
            p.speculative.types = [getattr(T, "COMMON_SPECULATIVE_TYPE_" + kind.upper())]
            for g in (p.speculative.ngram_simple, p.speculative.ngram_map_k):
                g.size_n = int(n)
                g.size_m = int(m)
            p.speculative.draft.n_max = int(m)
        return p


model = next(Path.home().joinpath(".cache/lamina/models").glob("*.gguf"))
srv = Spec(model, threads=2, n_ctx=8192, port=8091).start()
out: list[dict[str, Any]] = []
for wire, cap in prompts:
    body = {
        "model": "x",
        "messages": wire,
        "max_tokens": cap,
        "temperature": 0,
        "frequency_penalty": 0.6,
    }
    t0 = time.perf_counter()
    req = urllib.request.Request(
        srv.base_url + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    r = json.load(urllib.request.urlopen(req, timeout=900))
    dt = time.perf_counter() - t0
    tim = r.get("timings", {})
    out.append(
        {
            "s": dt,
            "ct": r["usage"]["completion_tokens"],
            "pt": r["usage"]["prompt_tokens"],
            "text": r["choices"][0]["message"]["content"],
            "draft_n": tim.get("draft_n"),
            "draft_acc": tim.get("draft_n_accepted"),
            "pps": tim.get("predicted_per_second"),
        }
    )
    print(
        cfg,
        round(dt, 1),
        out[-1]["ct"],
        tim.get("draft_n"),
        tim.get("draft_n_accepted"),
        round(tim.get("predicted_per_second", 0), 2),
        flush=True,
    )
srv.stop()
Path(f"/tmp/spec/{cfg.replace(':', '_')}.json").write_text(json.dumps(out, indent=1))
