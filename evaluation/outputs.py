"""Write a run's ``results.json``, ``report.md`` and plots; or re-render them from the JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInputError
from .report import ACCURACY_PLOT, CONSTRUCTION_PLOT, render_report
from .summary import summarize

if TYPE_CHECKING:
    from .harness import RunOutput

RESULTS = "results.json"
REPORT = "report.md"


def write_outputs(run: RunOutput, *, plots: bool = True) -> dict[str, Any]:
    """Summarise the run and write the results file, the report and (optionally) the plots."""
    summary = summarize(run.results, run.ingests, run.meta.get("systems", []))
    payload = {
        "meta": run.meta,
        "summary": summary,
        "questions": [r.model_dump(mode="json") for r in run.results],
        "ingest": [i.model_dump(mode="json") for i in run.ingests],
    }
    (run.out / RESULTS).write_text(json.dumps(payload, indent=2), encoding="utf-8")
    render(run.out, payload, plots=plots)
    return payload


def render(out: Path, payload: dict[str, Any], *, plots: bool = True) -> None:
    """Write the report (and plots) of a results payload into ``out``."""
    (out / REPORT).write_text(render_report(payload["summary"], payload["meta"]), encoding="utf-8")
    if plots:
        from .plots import accuracy_vs_tokens, construction_tokens

        accuracy_vs_tokens(payload["summary"], out / ACCURACY_PLOT)
        construction_tokens(payload["summary"], out / CONSTRUCTION_PLOT)


def rerender(out: Path, *, notes: str | None = None, plots: bool = True) -> dict[str, Any]:
    """Re-render ``report.md`` and plots from ``results.json`` (e.g. with new notes).

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
        path.write_text(json.dumps(payload, indent=2), encoding="utf-8")
    render(out, payload, plots=plots)
    return payload
