r"""Construction quality with labels, no LLM judge (issue 31).

LoCoMo's annotators wrote observations about each speaker, each citing its evidence
turns. A constructed fact whose source turn is cited by observations about exactly one
person is *labelled* with that person. On memory built by the local model from LoCoMo
conversations the long evaluation does not use, this prints and saves:

* ``owner_accuracy``: labelled facts filed under their person;
* ``unsupported_rate``: facts whose source turns (with their captions and the turn
  before each, the evidence the threshold was calibrated on) hold under the support
  threshold of their content words (``lamina.agents.ingest.evidence.support``), checked on
  the stored text, after dates were written in and the owner restated; construction drops such
  facts or re-sources them to the excerpt's turn that supports them
  (``unsupported_dropped``, ``source_corrected``), so this counts what slips through;
* ``date_accuracy``: facts drawn from a turn with a hand-labelled relative date
  (``tests/data/locomo_relative_dates.json``) whose event time is the labelled date;
* ``observation_coverage``: observations whose evidence turn is the source of a fact
  about the same person;
* ``labelled_facts``, ``tokens_per_turn``, ``seconds_per_turn`` and the owner checks;
* ``llm_seconds_per_turn``: of those seconds, the ones spent waiting on each step's LLM
  calls (the rest is the graph's own work: search, embedding, checks, writes);
* ``host_speed``: the model's generation speed on this host just before and just after
  the build (``lamina_bench.evaluation.speed``), so seconds per turn can be read against
  it (a slower host is slower per turn at the same tokens). A resumed run's seconds include the
  earlier runs' turns; its probes are this run's;
* the supersession keys (``supersede_recall``, ``false_supersede_rate``,
  ``wallclock_validity``), copied from ``benchmarks/construction_supersession.json``
  when that benchmark has been run (null otherwise).

``--calibrate`` runs the no-LLM calibrations on the same eight conversations instead:
the support threshold (observations against their evidence turns and against a random
other turn) and the owner rule (the observation as the fact, with the model's owner set
to the right and to the wrong person).

Usage::

    python benchmarks/construction_quality.py --calibrate
    lamina serve-llm --model qwen --threads 2 --port 8090 &
    python benchmarks/construction_quality.py --base-url http://127.0.0.1:8090/v1 \
        --conversations conv-41 --resume construction-quality \
        --json benchmarks/construction_quality.json

The build streams each turn through the ingest graph with the default trigger policy
and journals each turn under ``--resume`` (``construction_cost.run_policy``), so a run
cut off goes on where it stopped.

``--replies FILE`` keeps every model reply in a sealed JSONL file
(``lamina_bench.evaluation.reply_cache``: it holds no prompt, and no reply anyone without the
data can read, so it may be committed). A build with the same code, fed the same turns,
then gets its replies from the file instead of the model: a calibration store is rebuilt
on a new machine in minutes, and whatever the file does not answer is asked and appended.
The seconds of such a rebuild are not the model's; ``replies`` in the output counts the
hits and misses, so a figure read from a rebuilt store says where it came from.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from construction_dates import date_accuracy
from construction_run import fixed_tokenizer, local_model, run_policy

from lamina.agents.common.names import match_speakers
from lamina.agents.ingest.evidence.support import SUPPORT_THRESHOLD, support_ratio
from lamina.agents.ingest.ownership.grammar import addressee, decide_owner
from lamina.agents.ingest.ownership.present import present_owner
from lamina.core.arms import ResearchArms
from lamina.core.context import MemoryContext
from lamina.embedders import MiniLMEmbeddings
from lamina.llm.gguf import QWEN_GGUF_NAME
from lamina.records.model import FactRecord, RawTurn
from lamina.stores import ChromaMemoryStore
from lamina_bench.datasets.locomo import Conversation, default_locomo_path, load_locomo
from lamina_bench.datasets.locomo_annotations import Annotations, load_annotations
from lamina_bench.evaluation.construction import CONSTRUCTION_ARMS, split_construction
from lamina_bench.evaluation.reply_cache import ReplyFile, replaying
from lamina_bench.evaluation.speed import probe_speed

CALIBRATION = (
    "conv-41",
    "conv-42",
    "conv-43",
    "conv-44",
    "conv-47",
    "conv-48",
    "conv-49",
    "conv-50",
)
"""The LoCoMo conversations the long evaluation (conv-26, conv-30) does not use."""
SUPERSESSION = Path(__file__).with_name("construction_supersession.json")
SUPERSESSION_KEYS = ("supersede_recall", "false_supersede_rate", "wallclock_validity")


def owners_by_turn(notes: Annotations) -> dict[str, set[str]]:
    """Dialogue id -> the people the observations citing it are about."""
    out: dict[str, set[str]] = {}
    for o in notes.observations:
        for dia in o.evidence:
            out.setdefault(dia, set()).add(o.person)
    return out


def dia_ids(conv: Conversation) -> dict[str, str]:
    """Raw turn id -> the LoCoMo dialogue id of that turn."""
    return {
        RawTurn.turn_id(conv.namespace, t.session_id, t.turn_index): t.dia_id for t in conv.turns
    }


def people_by_turn(conv: Conversation, facts: Sequence[FactRecord]) -> dict[str, set[str]]:
    """Dialogue id -> the speakers the facts built from that turn are filed under.

    Every turn some fact came from is a key, even when no fact names a speaker.
    """
    dia_of = dia_ids(conv)
    out: dict[str, set[str]] = {}
    for fact in facts:
        for d in (dia_of[s] for s in fact.source_ids if s in dia_of):
            out.setdefault(d, set()).update(match_speakers(fact.subject or "", list(conv.speakers)))
    return out


def label_facts(
    store: ChromaMemoryStore, conv: Conversation, notes: Annotations, sessions: set[str]
) -> dict[str, Any]:
    """Owner, support and coverage figures of one conversation's built facts."""
    raw_to_dia = dia_ids(conv)
    turns = {t.dia_id: t for t in conv.turns}
    owners = owners_by_turn(notes)
    facts = [f for f in store.get("fact", conv.namespace) if isinstance(f, FactRecord)]
    people = list(conv.speakers)
    labelled = owner_ok = unsupported = 0
    wrong: list[str] = []
    order = [t.dia_id for t in conv.turns]
    for fact in facts:
        dias = [raw_to_dia[s] for s in fact.source_ids if s in raw_to_dia]
        # the evidence the threshold was calibrated on: the turns, captions, turn before
        sources = with_context(dias, order, turns)
        if support_ratio(fact.text, sources, people) < SUPPORT_THRESHOLD:
            unsupported += 1
        cited = [owners[d] for d in dias if len(owners.get(d, ())) == 1]
        persons = set().union(*cited) if cited else set()
        if len(persons) != 1:
            continue  # no single person cites these turns: not labelled
        person = persons.pop()
        labelled += 1
        if match_speakers(fact.subject or "", [person]):
            owner_ok += 1
        elif len(wrong) < 15:
            wrong.append(f"{fact.subject}: {fact.text} (label {person}, {dias})")
    shown = [o for o in notes.observations if o.evidence and o.session_id in sessions]
    about = people_by_turn(conv, facts)
    covered = sum(any(o.person in about.get(d, set()) for d in o.evidence) for o in shown)
    return {
        "facts": len(facts),
        "labelled": labelled,
        "owner_ok": owner_ok,
        "unsupported": unsupported,
        "observations": len(shown),
        "covered": covered,
        "owner_checks": dict(Counter(str(f.metadata.get("owner_check", "none")) for f in facts)),
        "wrong_owner_examples": wrong,
    }


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


def context_overrides(pairs: Sequence[str]) -> dict[str, Any]:
    """``KEY=VALUE`` strings as MemoryContext settings or construction research arms.

    The arms are :data:`~lamina_bench.evaluation.construction.CONSTRUCTION_ARMS`. Each value
    is parsed as its default's type (an arm whose default None follows the small-model
    profile takes a bool).
    """
    arms = ResearchArms()
    defaults = {
        **dataclasses.asdict(MemoryContext()),
        **{name: getattr(arms, name) for name in CONSTRUCTION_ARMS},
    }
    out: dict[str, Any] = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        if key not in defaults:
            raise SystemExit(f"--set {pair}: MemoryContext has no setting {key!r}")
        kind = bool if defaults[key] is None else type(defaults[key])
        if kind is bool:
            out[key] = value.casefold() in ("1", "true", "yes", "on")
        else:
            out[key] = kind(value)
    _, values = split_construction(out)  # checks the values
    MemoryContext(**values)
    return out


def _probe(served: Any) -> dict[str, Any]:
    """The server's generation speed, or the error: a rebuild from kept replies needs none."""
    try:
        return probe_speed(served).as_dict()
    except Exception as e:
        return {"error": f"{type(e).__name__}: {e}"[:300]}


def build_and_label(args: argparse.Namespace) -> dict[str, Any]:
    """Build with the local model, then label every conversation's facts."""
    convs = load_locomo(args.data, sample_ids=args.conversations)
    notes = load_annotations(args.data, [c.sample_id for c in convs])
    policy = args.policy or MemoryContext().trigger_policy
    settings = {
        "benchmark": "construction_quality",
        "conversations": [c.sample_id for c in convs],
        "sessions": args.sessions,
        "policy": policy,
        "base_url": args.base_url,
    }
    overrides = context_overrides(args.set)
    if overrides:
        settings["context"] = overrides
    served = local_model(args.base_url)
    speed_before = _probe(served)  # the server itself, never a kept reply
    model, replies = served, None
    if args.replies:
        replies = ReplyFile(args.replies, scope=args.model_label)
        settings["replies"] = {"file": str(args.replies), "model": args.model_label}
        model = replaying(served, replies)
    cost, store = run_policy(
        policy,
        convs,
        MiniLMEmbeddings(),
        fixed_tokenizer(),
        model=model,
        sessions=args.sessions,
        context=overrides,
        resume=args.resume,
        settings=settings,
    )
    totals: Counter[str] = Counter()
    per_conv = {}
    for conv in convs:
        sessions = set(conv.sessions()[: args.sessions] if args.sessions else conv.sessions())
        row = label_facts(store, conv, notes[conv.sample_id], sessions)
        per_conv[conv.sample_id] = row
        totals.update({k: v for k, v in row.items() if isinstance(v, int)})
    speed_after = _probe(served)  # the build is journaled: a failed probe loses nothing
    dates = date_accuracy(store, convs)
    turns = max(1, cost.turns)
    out: dict[str, Any] = {
        "owner_accuracy": _ratio(totals["owner_ok"], totals["labelled"]),
        "unsupported_rate": _ratio(totals["unsupported"], totals["facts"]),
        "date_accuracy": dates["fact_accuracy"],
        "observation_coverage": _ratio(totals["covered"], totals["observations"]),
        "labelled_facts": totals["labelled"],
        "tokens_per_turn": round(cost.tokens / turns, 1),
        "seconds_per_turn": round(cost.seconds / turns, 2),
        "llm_seconds_per_turn": {
            step: round(seconds / turns, 2) for step, seconds in cost.llm_seconds_by_step.items()
        },
        "host_speed": {"before": speed_before, "after": speed_after},
        "replies": None
        if replies is None
        else {"kept_hits": replies.hits, "model_calls": replies.misses},
        "turns": cost.turns,
        "facts": totals["facts"],
        "unsupported_dropped": cost.checks.get("unsupported_dropped", 0),
        "source_corrected": cost.checks.get("source_corrected", 0),
        "owner_corrected": cost.checks.get("owner_corrected", 0),
        "owner_undecided": cost.checks.get("owner_undecided", 0),
        "dates": dates,
        "policy": policy,
        "settings": settings,
        "per_conversation": per_conv,
    }
    kept = json.loads(SUPERSESSION.read_text()) if SUPERSESSION.exists() else {}
    for key in SUPERSESSION_KEYS:
        out[key] = kept.get(key)
    out["supersession_source"] = SUPERSESSION.name if kept else None
    return out


def with_context(dias: Sequence[str], order: list[str], turns: dict[str, Any]) -> list[str]:
    """The texts of turns ``dias``, their captions and the turn before each."""
    out = []
    for d in dias:
        i = order.index(d)
        out += [turns[d].text, turns[d].caption or ""]
        out += [turns[order[i - 1]].text] if i else []
    return out


def calibrate(data: Path, seed: int = 0) -> dict[str, Any]:
    """The no-LLM calibrations of the support threshold and of the owner rule."""
    convs = {c.sample_id: c for c in load_locomo(data, sample_ids=CALIBRATION)}
    notes = load_annotations(data, list(convs))
    rng = random.Random(seed)
    own, other = [], []
    owner: Counter[str] = Counter()
    plain: Counter[str] = Counter()
    for sid, conv in convs.items():
        order = [t.dia_id for t in conv.turns]
        turns = {t.dia_id: t for t in conv.turns}
        people = list(conv.speakers)

        for o in notes[sid].observations:
            if not o.evidence:
                continue
            own.append(support_ratio(o.text, with_context(o.evidence, order, turns), people))
            stray = rng.choice([d for d in order if d not in o.evidence])
            other.append(support_ratio(o.text, with_context([stray], order, turns), people))
            if len(o.evidence) != 1 or o.person not in people:
                continue
            turn = turns[o.evidence[0]]
            i = order.index(turn.dia_id)
            near = [turns[order[j]].speaker for j in (i - 1, i + 1) if 0 <= j < len(order)]
            spoken_to = addressee(turn.speaker, near, people)
            wrong = next(p for p in people if p != o.person)
            for model, tag in ((o.person, "model_right"), (wrong, "model_wrong")):
                v = decide_owner(model, o.text, turn.text, turn.speaker, spoken_to, people)
                owner[f"{tag}:{v.check}:{'ok' if v.owner == o.person else 'wrong'}"] += 1
                # owner_rules=False: the model's owner stands when present
                # (agents.ingest.ownership.present)
                kept = present_owner(model, people, [turn.text], vouched=model)
                plain[f"{tag}:{'ok' if kept == o.person else 'wrong'}"] += 1
    table = {
        str(th): {
            "own_evidence_pass": round(sum(r >= th for r in own) / len(own), 4),
            "random_turn_pass": round(sum(r >= th for r in other) / len(other), 4),
        }
        for th in (0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5)
    }

    def share(tag: str, counts: Counter[str] = owner) -> float:
        mine = {k: v for k, v in counts.items() if k.startswith(tag)}
        return round(sum(v for k, v in mine.items() if k.endswith(":ok")) / sum(mine.values()), 4)

    return {
        "conversations": list(CALIBRATION),
        "observations": len(own),
        "support_threshold": SUPPORT_THRESHOLD,
        "support": table,
        "owner_rule": dict(sorted(owner.items())),
        "owner_kept_when_model_right": share("model_right"),
        "owner_fixed_when_model_wrong": share("model_wrong"),
        "owner_kept_without_rules": share("model_right", plain),
    }


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options."""
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--data", type=Path, default=default_locomo_path())
    p.add_argument("--calibrate", action="store_true", help="the no-LLM calibrations only")
    p.add_argument("--conversations", nargs="*", default=["conv-41"])
    p.add_argument("--sessions", type=int, default=None, help="only the first N sessions")
    p.add_argument("--policy", default=None, help="trigger policy (default: the library's)")
    p.add_argument(
        "--set",
        nargs="*",
        default=[],
        metavar="KEY=VALUE",
        help="MemoryContext settings other than the defaults, e.g. boundary_max_tokens=320",
    )
    p.add_argument("--base-url", help="an OpenAI-compatible server, e.g. the local Qwen")
    p.add_argument("--resume", type=Path, help="build on disk here, journaled per turn")
    p.add_argument("--replies", type=Path, help="keep the model's replies here (sealed JSONL)")
    p.add_argument(
        "--model-label",
        default=QWEN_GGUF_NAME,
        help="the served model, as the kept replies' keys name it (the client says 'local')",
    )
    p.add_argument("--json", type=Path, help="write the figures here")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run; print the figures and optionally save them."""
    args = parse_args(argv)
    bad = sorted(set(args.conversations) - set(CALIBRATION))
    if bad and not args.calibrate:
        print(f"{bad} belong to the long evaluation; use {CALIBRATION}", file=sys.stderr)
        return 2
    if args.calibrate:
        result = calibrate(args.data)
    elif not args.base_url or not args.resume:
        print("building needs --base-url and --resume", file=sys.stderr)
        return 2
    else:
        result = build_and_label(args)
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
