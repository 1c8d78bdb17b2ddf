"""Plots of an evaluation run (matplotlib, Agg backend, PNG).

matplotlib is an optional dependency: ``pip install matplotlib``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lamina.errors import MissingDependencyError


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError as e:
        raise MissingDependencyError(
            "plots need matplotlib: pip install matplotlib (or pass --no-plots)"
        ) from e
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def accuracy_vs_tokens(summary: dict[str, Any], path: Path) -> Path:
    """J (categories 1-4) against answer tokens per question, one point per system."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    for name, data in summary["systems"].items():
        j = data["overall"]["j"]
        tokens = data["all"]["tokens_per_question"]
        if j is None or tokens is None:
            continue
        ax.scatter([tokens], [j], s=60)
        ax.annotate(name, (tokens, j), textcoords="offset points", xytext=(6, 4))
    ax.set_xlabel("answering tokens per question (prompt + completion)")
    ax.set_ylabel("LLM-judge accuracy J (categories 1-4)")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("Accuracy against answering cost")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def construction_tokens(summary: dict[str, Any], path: Path) -> Path:
    """Construction (ingest) tokens per stage: one bar per lamina policy and baseline."""
    plt = _pyplot()
    stages = list(summary["construction"])
    prompt = [summary["construction"][s]["prompt_tokens"] for s in stages]
    completion = [summary["construction"][s]["completion_tokens"] for s in stages]
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    ax.bar(stages, prompt, label="prompt")
    ax.bar(stages, completion, bottom=prompt, label="completion")
    ax.set_ylabel("LLM tokens to build memory")
    ax.set_title("Construction tokens per policy / stage")
    ax.legend()
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
