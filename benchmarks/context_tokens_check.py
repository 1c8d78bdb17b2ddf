"""Do an evaluation report's context tokens per question match the served model's count?

Runs the LoCoMo harness (``lamina-bench eval``'s engine) on a small subset with the SmolLM2
test model served by llama.cpp, one system at a time, with the token counter
``lamina-bench eval`` picks for a local model (the GGUF's own tokenizer). The shared answer
step is wrapped here, outside the package, to keep the context text of each question.
Then, per question:

* the report's ``context_tokens`` is compared with llama.cpp's ``/tokenize`` count of
  the same context text;
* the prompt tokens the server reported as usage for the answer request are compared
  with lamina's count of that request's prompt as the server templated it
  (``/apply-template``).

Prints per-system means and the worst question; ``--json`` writes them.

    .venv/bin/python benchmarks/context_tokens_check.py --json bench-results/context_tokens.json
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage

from lamina.embedders.minilm import MiniLMEmbeddings
from lamina.llm import LocalLLMServer, smollm2_gguf_path
from lamina_bench.commands.eval import serving_counter
from lamina_bench.datasets.locomo import default_locomo_path
from lamina_bench.evaluation import answering
from lamina_bench.evaluation.harness import EvalModels, EvalSettings, run_evaluation

SYSTEMS = ("full-context", "naive-rag", "flat", "lamina-retrieval")
ROLES = {"system": "system", "human": "user", "ai": "assistant"}


@dataclass
class Seen:
    """The answer requests of one run, in order."""

    contexts: list[str] = field(default_factory=list)
    prompts: list[list[BaseMessage]] = field(default_factory=list)
    usage: list[int | None] = field(default_factory=list)


def record_answers(seen: Seen) -> Any:
    """Wrap ``Answerer.answer`` so each call's context, prompt and usage are kept."""
    original = answering.Answerer.answer

    def answer(self: answering.Answerer, **kwargs: Any) -> Any:
        result = original(self, **kwargs)
        seen.contexts.append(kwargs["context"])
        seen.prompts.append(self.messages(**kwargs))
        first = result.calls[0] if result.calls else None
        seen.usage.append(first.prompt_tokens if first is not None else None)
        return result

    answering.Answerer.answer = answer  # type: ignore[method-assign]
    return original


class Server:
    """llama.cpp's own endpoints: tokenize a text, template a chat."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def post(self, path: str, body: dict[str, Any]) -> Any:
        """POST JSON, return the JSON reply."""
        request = urllib.request.Request(
            self.root + path,
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        with self.opener.open(request, timeout=300) as response:
            return json.load(response)

    def count(self, text: str) -> int:
        """The server's token count of ``text``."""
        return len(self.post("/tokenize", {"content": text})["tokens"]) if text else 0

    def template(self, messages: list[BaseMessage]) -> str:
        """The prompt text the server builds from ``messages``."""
        body = [{"role": ROLES[m.type], "content": str(m.content)} for m in messages]
        return str(self.post("/apply-template", {"messages": body})["prompt"])


def pct(ours: float, theirs: float) -> float:
    return 100.0 * (ours - theirs) / theirs if theirs else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=default_locomo_path())
    parser.add_argument("--conversation", default="conv-26")
    parser.add_argument("--sessions", type=int, default=2)
    parser.add_argument("--questions", type=int, default=8)
    parser.add_argument("--adversarial", type=int, default=2)
    parser.add_argument("--systems", nargs="+", default=list(SYSTEMS))
    parser.add_argument("--ctx", type=int, default=8192)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    logging.getLogger("lamina").setLevel(logging.ERROR)  # SmolLM2's bad replies are noise
    path = smollm2_gguf_path()
    out_root = Path(tempfile.mkdtemp(prefix="lamina-ctx-check-"))
    report: dict[str, Any] = {"model": path.name, "systems": {}}
    started = time.perf_counter()
    with LocalLLMServer(path, n_ctx=args.ctx, warmup=False, request_timeout=600) as llm:
        server = Server(llm.base_url.removesuffix("/v1"))
        chat_model = llm.chat_model(max_tokens=256)
        counter = serving_counter(chat_model)
        report["token_counter"] = counter.name  # type: ignore[attr-defined]
        embeddings = MiniLMEmbeddings()
        for system in args.systems:
            seen = Seen()
            original = record_answers(seen)
            try:
                settings = EvalSettings(
                    data=args.data,
                    out=out_root / system,
                    conversations=[args.conversation],
                    sessions=args.sessions,
                    questions=args.questions,
                    adversarial=args.adversarial,
                    systems=[system],
                    context_window=args.ctx,
                    judge=False,
                )
                models = EvalModels(
                    chat_model=chat_model,
                    embeddings=embeddings,
                    model_name=f"local {path.name}",
                    counter=counter,
                )
                output = run_evaluation(settings, models, progress=False, plots=False)
            finally:
                answering.Answerer.answer = original  # type: ignore[method-assign]
            results = [r for r in output.results if r.system == system]
            assert len(results) == len(seen.contexts), (system, len(results), len(seen.contexts))
            rows = []
            for result, context, prompt, usage in zip(
                results, seen.contexts, seen.prompts, seen.usage, strict=True
            ):
                templated = server.template(prompt)
                rows.append(
                    {
                        "qid": result.qid,
                        "context_report": result.context_tokens,
                        "context_server": server.count(context) if result.context_tokens else 0,
                        "prompt_ours": counter(templated),  # type: ignore[operator]
                        "prompt_usage": usage,
                    }
                )
            n = len(rows)
            ours = sum(r["context_report"] for r in rows) / n
            theirs = sum(r["context_server"] for r in rows) / n
            worst = max(rows, key=lambda r: abs(pct(r["context_report"], r["context_server"])))
            usage_rows = [r for r in rows if r["prompt_usage"] is not None]
            prompt_equal = sum(1 for r in usage_rows if r["prompt_ours"] == r["prompt_usage"])
            report["systems"][system] = {
                "questions": n,
                "context_tokens_per_question_report": round(ours, 1),
                "context_tokens_per_question_server": round(theirs, 1),
                "mean_diff_pct": round(pct(ours, theirs), 3),
                "worst_question_diff_pct": round(
                    pct(worst["context_report"], worst["context_server"]), 3
                ),
                "answer_requests_with_usage": len(usage_rows),
                "prompt_count_equals_usage": prompt_equal,
                "rows": rows,
            }
            print(
                f"{system}: {n} questions; context tokens/question: report {ours:.1f}, "
                f"llama.cpp {theirs:.1f} ({pct(ours, theirs):+.2f}%); worst question "
                f"{report['systems'][system]['worst_question_diff_pct']:+.2f}%; "
                f"prompt count = server usage on {prompt_equal}/{len(usage_rows)} requests"
            )
    report["wall_s"] = round(time.perf_counter() - started, 1)
    print(f"token counter: {report['token_counter']}; {report['wall_s']} s")
    shutil.rmtree(out_root, ignore_errors=True)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
