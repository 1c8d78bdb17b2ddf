r"""Does the local model tell an update from a control at all? A probe of its yes/no logits.

For each supersession item of the generalization set (updates and controls, five language
groups), the model is shown what was said earlier and the later conversation, and asked
one question: is the earlier statement still true after it? The probability it gives to
"no" (from the server's top log-probabilities of the first answer token, "yes" and "no"
renormalised) is the item's change score; an item with several earlier statements takes
the highest. If the model could decide updates, the scores of updates would sit above those
of controls: the figure is the ROC AUC of that split (0.5 = no signal), per language group,
and the recall and false rate at the neutral threshold 0.5.

``--old facts`` shows the facts the model itself wrote from the earlier turns (from a
generalization run's journal); ``--old turns`` shows the earlier turns as said, the
cleanest input the check could get, so a low AUC there is the model's limit and not the
construction's.

Usage::

    python benchmarks/update_signal.py --base-url http://127.0.0.1:8091/v1 \
        --run benchmarks/generalization-run/journal.jsonl --old turns \
        --json benchmarks/update_signal.json
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ITEMS = HERE.parent / "tests" / "data" / "generalization"

sys.path.insert(0, str(Path(__file__).resolve().parent))
from yes_no import auc, p_yes  # noqa: E402

QUESTION = (
    'Earlier, we noted: "{old}"\n\nLater, the conversation with {person} went:\n{new}\n\n'
    "After this later conversation, is the earlier note about {person} still true? "
    "Answer yes or no."
)


def p_no(base_url: str, old: str, person: str, new: str) -> float:
    """P("no") of the first answer token to "is the earlier note still true?"."""
    return 1.0 - p_yes(base_url, QUESTION.format(old=old, person=person, new=new))


def summarise(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """AUC, mean scores, recall and false rate at 0.5."""
    up = [r["score"] for r in rows if r["kind"] == "update"]
    ctl = [r["score"] for r in rows if r["kind"] == "control"]
    return {
        "updates": len(up),
        "controls": len(ctl),
        "auc": auc(up, ctl),
        "mean_update": round(sum(up) / len(up), 3) if up else None,
        "mean_control": round(sum(ctl) / len(ctl), 3) if ctl else None,
        "recall_at_0.5": round(sum(s > 0.5 for s in up) / len(up), 3) if up else None,
        "false_at_0.5": round(sum(s > 0.5 for s in ctl) / len(ctl), 3) if ctl else None,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Score every item, print and optionally write the figures."""
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--base-url", required=True, help="a llama.cpp server (OpenAI API, logprobs)")
    p.add_argument("--run", type=Path, required=True, help="a generalization run's journal")
    p.add_argument("--old", choices=("facts", "turns"), default="turns")
    p.add_argument("--json", type=Path, help="also write the figures and rows here")
    args = p.parse_args(argv)
    items = {
        i["id"]: i
        for f in sorted(ITEMS.glob("*.json"))
        for i in json.loads(f.read_text(encoding="utf-8"))["items"]
    }
    lines = args.run.read_text(encoding="utf-8").splitlines()[1:]
    built = {r["id"]: r for r in map(json.loads, lines) if "facts" in r}
    rows = []
    for item in items.values():
        if item.get("section") != "supersession":
            continue
        new = "\n".join(f"{t['speaker']}: {t['text']}" for t in item["later"]["turns"])
        if args.old == "turns":
            olds = ["\n".join(f"{t['speaker']}: {t['text']}" for t in item["earlier"]["turns"])]
        else:
            facts = built.get(item["id"], {}).get("facts", [])
            olds = [f["text"] for f in facts if f["side"] == "earlier"]
        if not olds:
            continue
        score = max(p_no(args.base_url, old, item["person"], new) for old in olds)
        rows.append({"id": item["id"], "kind": item["kind"], "score": round(score, 3)})
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    groups = sorted({r["id"].split("-")[0] for r in rows})
    result = {
        "command": "python benchmarks/update_signal.py " + " ".join(sys.argv[1:]),
        "old": args.old,
        "all": summarise(rows),
        "by_language": {
            g: summarise([r for r in rows if r["id"].startswith(g + "-")]) for g in groups
        },
    }
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps({**result, "per_item": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
