r"""Generalization benchmark (issue 61): is derived memory right on chats nobody tuned it on?

The items are hand-written for this benchmark, in ``tests/data/generalization/<lang>.json``
(informal English, Spanish, German, French, Portuguese; see ``tests/data/README.md``),
derived from no dataset. Five sections, each reported per language group:

* ``supersession``: an update pair (a move, a new job, a cancelled plan ... told
  indirectly, over two turns, by the other speaker) or a control that looks related but
  updates nothing (a second pet, a visit, a hypothetical, a denied rumour, someone else's
  change). Each is built through the real ingest graph exactly as
  ``construction_supersession.py`` builds its items (that module's ``run_item``).
  Figures: ``supersede_recall``, ``false_supersede_rate``, ``wallclock_validity``.
* ``owner``: a short chat in which one turn says something about a given person ("you",
  a vocative, a named third person, a relative, reported speech, a pet). The facts built
  from that turn that name one of the item's keywords must be filed under that person.
  Figures: ``owner_accuracy`` over the items where such a fact was built, and
  ``owner_built`` (the share of items where one was).
* ``date``: one turn with one relative date. Resolved without a model when the turn is
  stored (``agents.common.timeparse``); ``date_accuracy`` is the share resolved to the
  gold day range.
* ``answer``: a chat of a few sessions, then questions through ``Memory.answer``: some
  memory can answer (``answered_accuracy``: the share answered with a gold answer),
  some it must refuse (``refusal_accuracy``). ``ungrounded_answers`` counts answers that
  were not refused and whose content words are mostly absent from what they cite.

With ``--fake`` no LLM runs: construction writes each turn as a fact about its speaker
and the update check confirms every pair, so ``supersede_recall`` is the ceiling of the
candidate selection (the model is shown the pair at all): the library's default, the
embedding candidates, unless ``--profile small`` asks for the small-model profile's
English slot pairs and cues, which ``--base-url`` (the offline model) gets by default;
the owner and answer sections need a model and are skipped. A real model runs with
``--base-url`` (e.g. ``lamina serve-llm --model qwen``); ``--resume DIR`` journals each
finished item.

Usage:
    python benchmarks/generalization.py --fake --json /tmp/g.json
    lamina serve-llm --model qwen --threads 2 --port 8091 &
    python benchmarks/generalization.py --base-url http://127.0.0.1:8091/v1 \
        --resume /tmp/generalization-run --json benchmarks/generalization.json
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from construction_supersession import CLOCK, fake_model, run_item  # noqa: E402
from langchain_core.embeddings import Embeddings  # noqa: E402
from langchain_core.language_models import BaseChatModel  # noqa: E402

from lamina.agents.common.journal import SqliteReplyJournal  # noqa: E402
from lamina.agents.common.names import fold  # noqa: E402
from lamina.agents.common.timeparse import reference_day, resolve_times  # noqa: E402
from lamina.agents.ingest.supersession.updates import same_person  # noqa: E402
from lamina.core.context import SMALL_MODEL_PROFILE, MemoryContext  # noqa: E402
from lamina.graphs import ResearchArms  # noqa: E402
from lamina.graphs.ingest import build_ingest_graph  # noqa: E402
from lamina.records.model import FactRecord, RawTurn  # noqa: E402
from lamina.stores import ChromaMemoryStore  # noqa: E402
from lamina_bench.evaluation.resume_journal import ResumeJournal  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "generalization"
SECTIONS = ("supersession", "owner", "date", "answer")
TURN_SPACING = timedelta(minutes=1)


def load_items(folder: Path = DATA) -> list[dict[str, Any]]:
    """Every item of every language file, in file order."""
    items: list[dict[str, Any]] = []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for item in data["items"]:
            items.append({**item, "lang": data["lang"]})
    return items


def _namespace(item: dict[str, Any]) -> str:
    return "gen-" + re.sub(r"[^a-z0-9-]", "-", item["id"].lower())


# ---------------------------------------------------------------------------- sections
def run_owner(
    graph: Any,
    store: ChromaMemoryStore,
    item: dict[str, Any],
) -> dict[str, Any]:
    """Build the chat as one session; judge the owners of the target turn's facts.

    The context is the small-model profile; the graph's research arms may turn its update
    cues or owner rules off (``ResearchArms.update_cues``, ``owner_rules``).
    """
    ns = _namespace(item)
    ctx = MemoryContext(namespace=ns, trigger_policy="session", **SMALL_MODEL_PROFILE)
    start = datetime.fromisoformat(item["date"])
    session = f"{item['id']}-s"
    turns = [
        {
            "speaker": t["speaker"],
            "text": t["text"],
            "occurred_at": start + n * TURN_SPACING,
            "session_id": session,
            "turn_index": n,
        }
        for n, t in enumerate(item["turns"])
    ]
    started = time.perf_counter()
    out = graph.invoke({"turns": turns, "session_closed": True}, context=ctx)
    target = item["target"]
    target_id = RawTurn.turn_id(ns, session, int(target["turn"]))
    keywords = [fold(k) for k in target["about"]]
    facts = [f for f in store.get("fact", ns) if isinstance(f, FactRecord)]
    about = [
        f for f in facts if target_id in f.source_ids and any(k in fold(f.text) for k in keywords)
    ]
    right = [f for f in about if same_person(fold(f.subject or ""), fold(target["owner"]))]
    calls = out.get("llm_calls", [])
    return {
        "built": bool(about),
        "correct": bool(about) and len(right) == len(about),
        "facts": [{"text": f.text, "subject": f.subject} for f in about],
        "all_facts": len(facts),
        "checks": dict(Counter(out.get("checks", []))),
        "tokens": sum((c.prompt_tokens or 0) + (c.completion_tokens or 0) for c in calls),
        "seconds": round(time.perf_counter() - started, 2),
    }


def run_date(item: dict[str, Any]) -> dict[str, Any]:
    """Resolve the turn's relative dates as the raw writer does; compare with the gold."""
    said = datetime.fromisoformat(item["date"])
    refs = resolve_times(item["text"], reference_day(said, UTC))
    at = fold(item["text"]).find(fold(item["expression"]))
    span = (at, at + len(item["expression"])) if at >= 0 else (-1, -1)
    hits = [r for r in refs if r.offset < span[1] and span[0] < r.offset + len(r.expression)]
    got = [(r.start.isoformat(), r.end.isoformat()) for r in hits]
    return {
        "found": bool(hits),
        "correct": (item["start"], item["end"]) in got,
        "resolved": [
            {"expression": r.expression, "start": s, "end": e}
            for r, (s, e) in zip(hits, got, strict=True)
        ],
    }


_WORD = re.compile(r"\w{3,}")


def grounded(answer: str, question: str, cited: Sequence[str]) -> bool:
    """Whether most of the answer's own words (those not in the question) are in what it cites.

    Words are compared by their first five letters, so "adopted" finds "adopt".
    """
    asked = {w[:5] for w in _WORD.findall(fold(question))}
    own = [w[:5] for w in _WORD.findall(fold(answer)) if w[:5] not in asked and not w.isdigit()]
    if not own:
        return True
    source = {w[:5] for text in cited for w in _WORD.findall(fold(text))}
    return sum(w in source for w in own) * 2 >= len(own)


def run_answer(memory: Any, item: dict[str, Any]) -> dict[str, Any]:
    """Add the sessions through ``Memory.add``, then ask every question."""
    ns = _namespace(item)
    started = time.perf_counter()
    for n, session in enumerate(item["sessions"]):
        at = datetime.fromisoformat(session["date"])
        messages = [{"speaker": t["speaker"], "text": t["text"]} for t in session["turns"]]
        memory.add(
            messages, namespace=ns, session_id=f"{item['id']}-s{n}", at=at, session_closed=True
        )
    questions = []
    for q in item["questions"]:
        result = memory.answer(q["q"], namespace=ns)
        by_id = {m.id: m.text for m in result.memories}
        cited = [by_id[c] for c in result.citations if c in by_id]
        refused = bool(result.refused)
        gold = [fold(a) for a in q.get("answers", [])]
        hit = not refused and any(g in fold(result.answer) for g in gold)
        questions.append(
            {
                "q": q["q"],
                "answerable": q["answerable"],
                "answer": result.answer,
                "refused": refused,
                "correct": hit if q["answerable"] else refused,
                "grounded": refused or grounded(result.answer, q["q"], cited),
                "cited": cited,
                "rounds": result.rounds,
                "drafts": [
                    {
                        k: v.get(k)
                        for k in ("answer", "sufficient", "refusal", "ungrounded", "recited")
                    }
                    for v in result.verdicts
                ],
                "calls": len(result.llm_calls),
            }
        )
    return {"questions": questions, "seconds": round(time.perf_counter() - started, 2)}


# ----------------------------------------------------------------------------- figures
def _share(hits: int, n: int) -> float | None:
    return round(hits / n, 4) if n else None


def summarise(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The figures of one group of rows (one language, or all)."""
    sup = [r for r in rows if r["section"] == "supersession"]
    updates = [r for r in sup if r["kind"] == "update"]
    controls = [r for r in sup if r["kind"] == "control"]
    owners = [r for r in rows if r["section"] == "owner"]
    built = [r for r in owners if r["built"]]
    dates = [r for r in rows if r["section"] == "date"]
    questions = [q for r in rows if r["section"] == "answer" for q in r["questions"]]
    answerable = [q for q in questions if q["answerable"]]
    unanswerable = [q for q in questions if not q["answerable"]]
    return {
        "items": len(rows) - len([r for r in rows if r["section"] == "answer"]) + len(questions),
        "supersede_recall": _share(sum(r["old_superseded"] for r in updates), len(updates)),
        "old_fact_built": _share(sum(r["old_fact_built"] for r in updates), len(updates)),
        "false_supersede_rate": _share(sum(r["any_superseded"] for r in controls), len(controls)),
        "wallclock_validity": sum(r["wallclock"] for r in sup),
        "update_checks_per_item": round(sum(r["update_checks"] for r in sup) / len(sup), 2)
        if sup
        else None,
        "owner_accuracy": _share(sum(r["correct"] for r in built), len(built)),
        "owner_built": _share(len(built), len(owners)),
        "date_accuracy": _share(sum(r["correct"] for r in dates), len(dates)),
        "answered_accuracy": _share(sum(q["correct"] for q in answerable), len(answerable)),
        "refusal_accuracy": _share(sum(q["correct"] for q in unanswerable), len(unanswerable)),
        "ungrounded_answers": sum(not q["grounded"] for q in questions),
        "counts": {
            "updates": len(updates),
            "controls": len(controls),
            "owner": len(owners),
            "date": len(dates),
            "answerable": len(answerable),
            "unanswerable": len(unanswerable),
        },
    }


def report(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """All figures, then per language group."""
    langs = sorted({r["lang"] for r in rows})
    return {
        "all": summarise(rows),
        "by_language": {lang: summarise([r for r in rows if r["lang"] == lang]) for lang in langs},
    }


# --------------------------------------------------------------------------------- run
def run_generalization(
    chat_model: BaseChatModel,
    embeddings: Embeddings,
    *,
    items: Sequence[dict[str, Any]],
    sections: Sequence[str] = SECTIONS,
    journal: ResumeJournal | None = None,
    progress: Callable[[str], None] | None = None,
    update_cues: bool = True,
    owner_rules: bool = True,
    replies: Any = None,
    answer_dir: Path | None = None,
) -> dict[str, Any]:
    """Run the chosen sections over ``items``; per-item rows and the figures.

    ``update_cues``: the small-model profile (English slot pairs and cues); False checks
    each new fact against its person's nearest facts, with no word list. ``owner_rules``:
    the small-model profile's owner repairs; False keeps the model's owner when present.
    ``replies``: a construction reply journal, so a second arm reuses the first's replies;
    ``answer_dir``: the answer section's memory folder, emptied first but for its own
    construction journal, so a second run answers again without building again.
    """
    from lamina import Memory, MemoryConfig

    store = ChromaMemoryStore.ephemeral(embeddings=embeddings)
    graph = build_ingest_graph(
        chat_model=chat_model,
        store=store,
        clock=lambda: CLOCK,
        journal=replies,
        arms=ResearchArms(update_cues=update_cues, owner_rules=owner_rules),
    ).compile()
    memory = None
    if "answer" in sections and answer_dir is not None:  # a persistent memory keeps replies
        kept = answer_dir / "construction_journal.sqlite"
        for path in answer_dir.glob("*") if answer_dir.exists() else []:
            if path != kept and not path.name.startswith(kept.name):
                shutil.rmtree(path) if path.is_dir() else path.unlink()
        config = MemoryConfig(data_dir=answer_dir)
        memory = Memory(config=config, chat_model=chat_model)
    elif "answer" in sections:
        config = MemoryConfig(store="memory")
        memory = Memory(config=config, store=store, chat_model=chat_model)
    rows: list[dict[str, Any]] = []
    chosen = sorted(
        (i for i in items if i["section"] in sections), key=lambda i: SECTIONS.index(i["section"])
    )
    for n, item in enumerate(chosen, start=1):
        row = journal.done.get(item["id"]) if journal is not None else None
        if row is None:
            base = {"id": item["id"], "lang": item["lang"], "section": item["section"]}
            if item["section"] == "supersession":
                built = run_item(graph, store, item, lambda: CLOCK, "session")
                row = {**base, **built}
            elif item["section"] == "owner":
                row = {**base, **run_owner(graph, store, item)}
            elif item["section"] == "date":
                row = {**base, **run_date(item)}
            else:
                row = {**base, **run_answer(memory, item)}
            if journal is not None:
                journal.append(row)
            if progress is not None:
                progress(f"{n}/{len(chosen)} {item['id']}")
        rows.append(row)
    return {**report(rows), "per_item": rows}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options."""
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--data", type=Path, default=DATA, help="folder of <lang>.json item files")
    p.add_argument("--base-url", help="an OpenAI-compatible server, e.g. http://127.0.0.1:8091/v1")
    p.add_argument("--fake", action="store_true", help="no LLM: echo facts, confirm every pair")
    p.add_argument("--sections", nargs="*", choices=SECTIONS, default=None)
    p.add_argument("--langs", nargs="*", default=None, help="only these language groups")
    p.add_argument("--json", type=Path, help="also write the figures here")
    p.add_argument("--resume", type=Path, metavar="DIR", help="journal finished items in DIR")
    p.add_argument("--no-prompt-cache", action="store_true", help="llama.cpp: no prompt cache")
    p.add_argument(
        "--profile",
        choices=("small", "default"),
        help="small: the small-model profile (English update cues and owner rules), which the "
        "facade gives the offline model; default: the library's defaults, which any other "
        "model gets (default: small with --base-url, default with --fake)",
    )
    p.add_argument("--no-cues", action="store_true", help="update_cues=False in any profile")
    p.add_argument("--no-owner-rules", action="store_true", help="owner_rules=False in any profile")
    p.add_argument(
        "--replies",
        type=Path,
        help="a construction reply journal (SQLite file); the answer section's memory and its "
        "journal go to the same path with the suffix .answers",
    )
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; print and optionally save the figures."""
    args = parse_args(argv)
    if args.fake == bool(args.base_url):
        print("give exactly one of --fake and --base-url", file=sys.stderr)
        return 2
    items = [i for i in load_items(args.data) if not args.langs or i["lang"] in args.langs]
    small = (args.profile or ("default" if args.fake else "small")) == "small"
    cues, owner_rules = small and not args.no_cues, small and not args.no_owner_rules
    sections = args.sections or (("supersession", "date") if args.fake else SECTIONS)
    if args.fake and {"owner", "answer"} & set(sections):
        print("the owner and answer sections need a model (--base-url)", file=sys.stderr)
        return 2
    if args.fake:
        from lamina.testing import FakeEmbeddings

        model = fake_model(len(items))
        embeddings: Embeddings = FakeEmbeddings()
        name = "fake (confirm every pair)"
    else:
        from construction_run import local_model

        from lamina.embedders import MiniLMEmbeddings

        model = local_model(args.base_url, prompt_cache=not args.no_prompt_cache)
        embeddings, name = MiniLMEmbeddings(), args.base_url
    journal = None
    if args.resume is not None:
        from lamina_bench.evaluation.code_version import code_version

        settings = {
            "model": name,
            "code": code_version(),
            "cache": not args.no_prompt_cache,
            "update_cues": cues,
            "owner_rules": owner_rules,
        }
        journal = ResumeJournal(args.resume / "journal.jsonl", settings, key="id")
    result = run_generalization(
        model,
        embeddings,
        items=items,
        sections=sections,
        journal=journal,
        progress=lambda line: print(line, file=sys.stderr, flush=True),
        update_cues=cues,
        owner_rules=owner_rules,
        replies=SqliteReplyJournal(args.replies) if args.replies else None,
        answer_dir=args.replies.with_suffix(".answers") if args.replies else None,
    )
    result = {
        "model": name,
        "sections": list(sections),
        "update_cues": cues,
        "owner_rules": owner_rules,
        **result,
    }
    figures = {k: v for k, v in result.items() if k != "per_item"}
    print(json.dumps(figures, indent=2, ensure_ascii=False))
    if args.json:
        args.json.write_text(
            json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
