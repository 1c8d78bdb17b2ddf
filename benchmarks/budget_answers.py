r"""lamina's end-to-end answers under several recall settings, question by question (issue 31).

``benchmarks/context_answer_recall.py`` says, with no model, how much of each gold answer
the context holds. This script asks the model: the full recall graph (Judge, answer,
retries) answers the questions of a construction benchmark store, once per arm (a set of
``MemoryContext`` options), the arms one after another on each question (in turn first, as
a served model reuses the prompt prefix of the call before) so that a busy host slows
them alike. It prints LoCoMo F1 per arm and category, the paired 95% bootstrap
interval of each arm against the first, and cost per question (LLM calls, prompt tokens,
seconds). Every answer is journaled (``--journal``; no question text: LoCoMo stays out
of the repository), so a run that stops resumes. ``--categories 5`` asks the adversarial
questions instead of categories 1-4; a refusal is scored as the evaluation harness scores
it, in LoCoMo's wording (1 on category 5), and the summary counts refusals and those the
premise search decided (``premise_searched``).

The served model is not deterministic at temperature 0 while it reuses cached prompt
prefixes: the same settings answered twice in one run differed on 1 of 12 answers
(``eval-results/budget-answers-rerun``) and on 3 of 54 on conv-43
(``eval-results/budget-answers-sessions``). A prompt computed with part of it taken from
the cache comes out with slightly different logits than the same prompt computed whole.
``--no-prompt-cache`` has the server compute every prompt whole (llama.cpp's
``cache_prompt: false``), so the same settings give the same answers and a paired
difference comes from the arms alone (two arms of the defaults gave the same 6 answers,
``eval-results/budget-answers-rerun/journal-nocache.jsonl``); it costs the time the cache
saved (about 29 s an answer there, against 15-25 s with the cache). Journal rows
say which way they were answered (``prompt_cache``), and one journal holds one way only.
Without it, give the defaults twice (``--arm base: --arm base2:``) beside the arm under
test to see how far a rerun moves, rather than reusing another run's base answers.

Usage (the model served by ``lamina serve-llm --model qwen --threads 2 --ctx 8192``)::

    python benchmarks/budget_answers.py \
        --store eval-results/cq-default-80486e9/boundary/chroma --conversations conv-41 conv-42 \
        --sessions 10 --base-url http://127.0.0.1:8090/v1 \
        --arm base: --arm small:context_tokens=1100 \
        --journal eval-results/budget-answers/journal.jsonl --json benchmarks/budget_answers.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from construction_run import local_model
from context_answer_recall import _questions, option

from lamina.core.context import MemoryContext
from lamina.embedders import MiniLMEmbeddings
from lamina.graphs.recall import build_recall_graph
from lamina.llm.gguf import installed_qwen_gguf
from lamina.llm.tokens import gguf_counter
from lamina.stores import ChromaMemoryStore
from lamina_bench.datasets.locomo import default_locomo_path
from lamina_bench.evaluation.bootstrap import bootstrap_mean
from lamina_bench.evaluation.prompts import NOT_MENTIONED
from lamina_bench.evaluation.records import costs_of
from lamina_bench.evaluation.scoring import locomo_f1
from lamina_bench.evaluation.settings import split_recall


def arm(text: str) -> tuple[str, dict[str, Any]]:
    """``name:opt=value,opt=value`` (``name:`` for the defaults).

    The option ``store=PATH`` answers the arm from another construction store's chroma/
    (the same conversations built another way) instead of ``--store``.
    """
    name, _, rest = text.partition(":")
    if not name:
        raise argparse.ArgumentTypeError(f"an arm needs a name before ':', got {text!r}")
    return name, dict(option(part) for part in rest.split(",") if part)


def _summary(rows: list[dict[str, Any]], arms: list[str]) -> dict[str, Any]:
    """F1 per arm and category, paired intervals against the first arm, costs."""
    by_q: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for r in rows:
        by_q[r["qid"]][r["arm"]] = r
    done = [q for q, got in by_q.items() if all(a in got for a in arms)]
    out: dict[str, Any] = {"questions": len(done), "arms": {}}
    for name in arms:
        mine = [by_q[q][name] for q in done]
        cats: dict[str, list[float]] = defaultdict(list)
        for r in mine:
            cats[f"c{r['category']}"].append(r["f1"])
        entry: dict[str, Any] = {
            "f1": round(statistics.fmean(r["f1"] for r in mine), 4) if mine else None,
            "f1_by_category": {c: round(statistics.fmean(v), 4) for c, v in sorted(cats.items())},
            "calls_per_q": round(statistics.fmean(r["calls"] for r in mine), 3) if mine else None,
            "prompt_tokens_per_q": round(statistics.fmean(r["prompt_tokens"] for r in mine))
            if mine
            else None,
            "seconds_per_q": round(statistics.fmean(r["seconds"] for r in mine), 1)
            if mine
            else None,
            "refused": sum(bool(r.get("refused")) for r in mine),
            "premise_searched": sum(bool(r.get("premise_searched")) for r in mine),
        }
        if name != arms[0] and mine:
            diff = [by_q[q][name]["f1"] - by_q[q][arms[0]]["f1"] for q in done]
            entry["paired_vs_" + arms[0]] = bootstrap_mean(diff).as_dict()
        out["arms"][name] = entry
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Answer every chosen question once per arm; print and save the summary."""
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--data", type=Path, default=default_locomo_path())
    p.add_argument("--store", type=Path, required=True, help="a construction store's chroma/")
    p.add_argument("--conversations", nargs="+", required=True)
    p.add_argument("--sessions", type=int, help="only questions whose evidence lies in these")
    p.add_argument("--namespace", default="locomo:{sample}", help="the store's namespaces")
    p.add_argument("--base-url", required=True, help="an OpenAI-compatible local server")
    p.add_argument("--arm", action="append", type=arm, required=True)
    p.add_argument("--limit", type=int, help="at most this many questions")
    p.add_argument(
        "--categories",
        type=int,
        nargs="+",
        choices=(1, 2, 3, 4, 5),
        help="LoCoMo categories asked (default 1-4; 5 scores 1 for a refusal)",
    )
    p.add_argument(
        "--no-prompt-cache",
        dest="prompt_cache",
        action="store_false",
        help="the server computes every prompt whole: the same settings, the same answers",
    )
    p.add_argument("--journal", type=Path, required=True)
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    arms = dict(args.arm)
    if len(arms) != len(args.arm):
        p.error("arm names must differ")
    args.stage = "boundary"  # read by _questions only for the long run's own questions
    if not (args.store / "chroma.sqlite3").is_file():
        p.error(f"no Chroma store at {args.store}")
    gguf = installed_qwen_gguf()
    if gguf is None:
        p.error("the local model is not installed: lamina install-model qwen")
    questions = list(_questions(args))[: args.limit]
    args.journal.parent.mkdir(parents=True, exist_ok=True)
    rows = (
        [json.loads(line) for line in args.journal.read_text(encoding="utf-8").splitlines()]
        if args.journal.exists()
        else []
    )
    chosen = {f"{sample_id}:{n}": (c, gold) for n, (sample_id, c, _, gold) in enumerate(questions)}
    for r in rows:
        if r["qid"] not in chosen:
            continue
        category, gold = chosen[r["qid"]]
        if r["category"] != category:  # ids number the chosen questions: other categories
            p.error(f"{args.journal} holds other questions under these ids; use another journal")
        if r.get("refused"):  # scored as the harness scores a refusal: in LoCoMo's wording
            r["f1"] = locomo_f1(NOT_MENTIONED, gold, category)
    if any(r.get("prompt_cache", True) != args.prompt_cache for r in rows):
        way = "with" if args.prompt_cache else "without"
        p.error(f"{args.journal} holds answers not given {way} the prompt cache; use another")
    done = {(r["qid"], r["arm"]) for r in rows}
    stores = {name: Path(opts.pop("store", args.store)) for name, opts in arms.items()}
    for path in stores.values():
        if not (path / "chroma.sqlite3").is_file():
            p.error(f"no Chroma store at {path}")
    for r in rows:  # an arm's journaled answers came from the store it names now
        if r["arm"] in stores and r.get("store", str(stores[r["arm"]])) != str(stores[r["arm"]]):
            p.error(f"{args.journal} answered arm {r['arm']!r} from {r['store']}; use another")
    counter = gguf_counter(gguf)
    model = local_model(args.base_url, prompt_cache=args.prompt_cache)
    embeddings = MiniLMEmbeddings()
    split = {name: split_recall(opts) for name, opts in arms.items()}
    graphs = {
        name: build_recall_graph(
            chat_model=model,
            store=ChromaMemoryStore.persistent(stores[name], embeddings=embeddings),
            count_tokens=counter.count,
            arms=split[name][0],
        ).compile()
        for name in arms
    }
    for n, (sample_id, category, text, gold) in enumerate(questions):
        qid = f"{sample_id}:{n}"
        order = list(arms.items())
        # each arm goes first in turn: no arm always reuses the other's cached prompt prefix
        for name, _ in order if n % 2 == 0 else order[::-1]:
            if (qid, name) in done:
                continue
            namespace = args.namespace.format(sample=sample_id)
            ctx = MemoryContext(namespace=namespace, **split[name][1])
            started = time.perf_counter()
            out = graphs[name].invoke({"question": text, "mode": "answer"}, context=ctx)
            seconds = time.perf_counter() - started
            costs = list(costs_of(out.get("llm_calls", [])).values())
            answer = str(out.get("answer", ""))
            refused = bool(out.get("refused"))
            row = {
                "qid": qid,
                "arm": name,
                "category": category,
                "answer": answer,
                "f1": locomo_f1(NOT_MENTIONED if refused else answer, gold, category),
                "calls": sum(c.calls for c in costs),
                "prompt_tokens": sum(c.prompt_tokens for c in costs),
                "seconds": round(seconds, 2),
                "refused": refused,
                "premise_searched": any(v.get("premise_searched") for v in out.get("verdicts", [])),
                "store": str(stores[name]),
                "prompt_cache": args.prompt_cache,
            }
            rows.append(row)
            with args.journal.open("a", encoding="utf-8") as f:
                f.write(json.dumps(row) + "\n")
    kept = [r for r in rows if r["qid"] in chosen]  # a journal may hold more questions
    result = {
        "arms_options": arms,
        "store": str(args.store),
        "arm_stores": {name: str(path) for name, path in stores.items() if path != args.store},
        "prompt_cache": args.prompt_cache,
        **_summary(kept, list(arms)),
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
