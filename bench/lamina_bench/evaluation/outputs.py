"""Write a run's ``results.json``, ``report.md`` and plots; or re-render them from the JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lamina.errors import InvalidInputError

from . import records
from .records import RunOutput
from .report import ACCURACY_PLOT, CONSTRUCTION_PLOT, render_report
from .summary import summarize
from .systems import LAMINA, LAMINA_RETRIEVAL

RESULTS = "results.json"
REPORT = "report.md"
DATASET_TEXT = records.DATASET_TEXT
"""Per-question fields that hold (or, for the judge's reason, often quote) the dataset's
own text. LoCoMo is CC BY-NC: ``results.json`` leaves them out unless asked, so it can be
committed or shared; ``journal.jsonl`` never holds them."""


def shareable(question: dict[str, Any]) -> dict[str, Any]:
    """One per-question result without the dataset's text (scores, ids and answers stay)."""
    return {k: v for k, v in question.items() if k not in DATASET_TEXT}


def _write_results(out: Path, payload: dict[str, Any], keep_text: bool) -> None:
    if not keep_text:
        payload["questions"] = [shareable(q) for q in payload["questions"]]
        payload["meta"]["dataset_text"] = "left out (see journal.jsonl)"
    else:  # a file whose text was already left out stays marked so
        payload["meta"].setdefault("dataset_text", "kept")
    (out / RESULTS).write_text(json.dumps(payload, indent=2), encoding="utf-8")


def write_outputs(run: RunOutput, *, plots: bool = True, keep_text: bool = False) -> dict[str, Any]:
    """Summarise the run and write the results file, the report and (optionally) the plots.

    Args:
        run: The finished run.
        plots: Also draw the PNG plots.
        keep_text: Keep the questions, gold answers and judge reasons in ``results.json``
            (see :data:`DATASET_TEXT`); by default they are left out.
    """
    systems = run.meta.get("systems", [])
    summary = summarize(run.results, run.ingests, systems, paired=[LAMINA, LAMINA_RETRIEVAL])
    payload = {
        "meta": run.meta,
        "summary": summary,
        "questions": [r.model_dump(mode="json") for r in run.results],
        "ingest": [i.model_dump(mode="json") for i in run.ingests],
    }
    _write_results(run.out, payload, keep_text)
    render(run.out, payload, plots=plots)
    return payload


def render(out: Path, payload: dict[str, Any], *, plots: bool = True) -> None:
    """Write the report (and plots) of a results payload into ``out``."""
    (out / REPORT).write_text(render_report(payload["summary"], payload["meta"]), encoding="utf-8")
    if plots:
        from .plots import accuracy_vs_tokens, construction_tokens

        accuracy_vs_tokens(payload["summary"], out / ACCURACY_PLOT)
        construction_tokens(payload["summary"], out / CONSTRUCTION_PLOT)


def rerender(
    out: Path, *, notes: str | None = None, plots: bool = True, keep_text: bool = False
) -> dict[str, Any]:
    """Re-render ``report.md`` and plots from ``results.json`` (e.g. with new notes).

    ``results.json`` is written back with the notes and, unless ``keep_text``, without
    the dataset's text (a file from a ``keep_text`` run becomes shareable).

    Raises:
        InvalidInputError: there is no readable results file in ``out``.
    """
    path = out / RESULTS
    try:
        payload: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise InvalidInputError(f"no results to report in {out} ({e}); run the evaluation") from e
    if notes is not None:
        payload["meta"]["notes"] = notes
    _write_results(out, payload, keep_text)
    render(out, payload, plots=plots)
    return payload
