"""The cost sections of the evaluation report: construction per stage, answering per node."""

from __future__ import annotations

from typing import Any

from .report_tables import table


def cost_tables(summary: dict[str, Any], meta: dict[str, Any]) -> list[str]:
    """The construction and answering cost sections (the judge's calls listed apart)."""
    users: dict[str, list[str]] = {}
    for system, stage in meta.get("stages", {}).items():
        if stage:
            users.setdefault(stage, []).append(system)
    lines = ["## Construction (ingest) cost", ""]
    rows = []
    for stage, c in summary["construction"].items():
        rows.append(
            (
                stage,
                ", ".join(users.get(stage, [])),
                c["turns"],
                c["llm_calls"],
                c["prompt_tokens"],
                c["completion_tokens"],
                round(c["tokens"] / c["turns"], 1) if c["turns"] else 0,
                c["written"],
                c["failures"],
                c["seconds"],
            )
        )
    lines += table(
        (
            "stage",
            "used by",
            "turns",
            "LLM calls",
            "prompt tokens",
            "completion tokens",
            "tokens / turn",
            "records written",
            "failed steps",
            "seconds",
        ),
        rows,
    )
    for stage, c in summary["construction"].items():
        if c.get("kept_replies"):
            lines += [
                f"{stage}: {c['kept_replies']} of its {c['llm_calls']} LLM calls were answered "
                "from kept replies (built again from another build's replies), so its "
                "seconds are not the model's.",
                "",
            ]
    node_rows = [
        (stage, node, n["calls"], n["prompt_tokens"], n["completion_tokens"], n["latency_s"])
        for stage, c in summary["construction"].items()
        for node, n in c["by_node"].items()
    ]
    if node_rows:
        lines += ["Per node:", ""]
        lines += table(
            ("stage", "node", "calls", "prompt tokens", "completion tokens", "latency s"),
            node_rows,
        )
    lines += ["## Answering cost per node", ""]
    answer_rows = [
        (
            system,
            node,
            n["calls"],
            n["prompt_tokens"],
            n["completion_tokens"],
            n["latency_s"],
            n["estimated_calls"],
        )
        for system, data in summary["systems"].items()
        for node, n in data["answering_by_node"].items()
    ]
    lines += table(
        (
            "system",
            "node",
            "calls",
            "prompt tokens",
            "completion tokens",
            "latency s",
            "estimated-token calls",
        ),
        answer_rows,
    )
    judge_rows = [
        (system, n["calls"], n["prompt_tokens"], n["completion_tokens"], n["latency_s"])
        for system, data in summary["systems"].items()
        for n in data["judging"].values()
    ]
    if judge_rows:
        lines += ["Judge calls (not counted as answering cost):", ""]
        lines += table(
            ("system", "calls", "prompt tokens", "completion tokens", "latency s"), judge_rows
        )
    return lines
