"""The markdown report of an evaluation run: header, overall and per-category tables, costs."""

from __future__ import annotations

from typing import Any

from lamina.graphs import MemoryContext

from .report_costs import cost_tables
from .report_tables import fmt as _fmt
from .report_tables import table as _table
from .settings import split_recall
from .summary import CATEGORY_NAMES
from .systems import BASELINES, FLAT, LAMINA

ACCURACY_PLOT = "accuracy_vs_tokens.png"
CONSTRUCTION_PLOT = "construction_tokens.png"

METHOD_NOTES = (
    "J is the LLM judge's share of CORRECT labels with mem0's semantics (generous about "
    "length and date formats; one label per answer); like mem0, category 5 is not judged "
    "and the overall J, F1 and BLEU-1 cover categories 1-4. An empty answer (a failed "
    "answer step) is WRONG without asking the judge; a judge that gives no valid label "
    "is counted as ERROR (scores 0).",
    "F1 is mem0's token F1 (token sets; only `. , ! ?` removed). BLEU-1 is mem0's "
    "(NLTK sentence BLEU, weights 1,0,0,0, method1 smoothing) over a regex approximation "
    "of NLTK's word_tokenize without the punkt sentence splitter, which is a download.",
    "LoCoMo F1 follows the LoCoMo paper's per-category rules (1: comma-split sub-answers; "
    "3: gold before ';'; 5: 1 if the answer says 'not mentioned' / 'no information "
    "available'), stemmed with Snowball's original Porter algorithm (NLTK defaults to its "
    "extended Porter, which differs on a few rare words).",
    "A refusal by lamina's answer node is scored as the text 'Not mentioned in the "
    "conversation'. Refusal accuracy is the share of category-5 questions refused.",
    "Turn and session recall: the share of the gold evidence turns (and their sessions) "
    "among the turns the answer was given: retrieved turns, the source turns of retrieved "
    "memories, the turns of retrieved chunks, or the transcript kept by full-context.",
    "Every system except `lamina` answers with the same prompt (prompts/eval.py, quoted "
    "under Prompts) on the same model; `lamina` answers with its own Judge + answer call "
    "(prompts/recall.py), the product's path. `lamina-retrieval` is lamina's pooled "
    "context through the shared prompt, so the two lamina rows separate the context from "
    "the answering.",
    "LLM tokens are the usage the model server reported; calls without it are counted "
    "with the token counter named above and marked estimated. Context tokens per question "
    "are counted with that counter too: the served model's own tokenizer for a local GGUF "
    "model, otherwise an estimate whose name says so.",
)


def _header(meta: dict[str, Any]) -> list[str]:
    settings = meta.get("settings", {})
    lines = ["# LoCoMo evaluation", ""]
    interim = meta.get("interim")
    if interim:
        answered = ", ".join(f"{k} {v}" for k, v in interim.get("answered", {}).items())
        lines += [
            f"**INTERIM REPORT** (`--interim`): the run is not finished. Only the "
            f"{interim.get('questions_scored')} of {interim.get('questions_planned')} "
            "questions that every system with answers has answered are scored, so the "
            f"systems are compared on the same questions. Answers so far: {answered}.",
            "",
        ]
    if meta.get("command"):
        lines += ["Produced by:", "", "```bash", str(meta["command"]), "```", ""]
    items = [
        ("commit", meta.get("commit", "unknown")),
        ("answer model", meta.get("model")),
        ("judge model", meta.get("judge") or "none (--no-judge)"),
        ("embeddings", meta.get("embeddings")),
        ("token counter (context tokens; calls without usage)", meta.get("token_counter")),
        ("data", settings.get("data")),
        ("trigger policies", ", ".join(settings.get("policies", []))),
        ("started / finished (UTC)", f"{meta.get('started')} / {meta.get('finished')}"),
    ]
    peers = meta.get("peers") or {}
    if peers:
        items.append(("peer packages", ", ".join(p.get("package", n) for n, p in peers.items())))
    lines += [f"- **{k}**: {v}" for k, v in items]
    lines += _code_versions(meta.get("code_versions") or {})
    lines += ["", "## Subset", ""]
    subset = meta.get("subset", {})
    rows = []
    for conv, info in subset.items():
        counts = info.get("questions", {})
        cats = ", ".join(f"c{c}: {n}" for c, n in counts.items())
        rows.append((conv, info.get("sessions"), info.get("turns"), sum(counts.values()), cats))
    lines += _table(("conversation", "sessions", "turns", "questions", "by category"), rows)
    pick = settings.get("pick", "spread")
    lines += [
        f"Questions: up to {settings.get('questions') or 'all'} of categories 1-4 and "
        f"{settings.get('adversarial') if settings.get('adversarial') is not None else 'all'} "
        f"of category 5 per conversation, picked `{pick}` (categories "
        f"{settings.get('categories')}"
        + (f"; first {settings['sessions']} sessions only" if settings.get("sessions") else "")
        + ").",
        "",
    ]
    return lines


def _code_versions(versions: dict[str, dict[str, int]]) -> list[str]:
    """One line: the code versions that made the answers, flagged when a system mixes them."""
    if not versions:
        return []
    every = {code for counts in versions.values() for code in counts}
    parts = []
    for system, counts in versions.items():
        mixed = " (MIXED: answers from more than one version)" if len(counts) > 1 else ""
        made = ", ".join(f"{code or 'unrecorded'} x{n}" for code, n in sorted(counts.items()))
        parts.append(f"{system}: {made}{mixed}")
    if len(every) == 1:
        return [f"- **code version of every answer**: {next(iter(every)) or 'unrecorded'}"]
    return ["- **code versions of the answers** (`evaluation.code_version`): " + "; ".join(parts)]


def _systems_table(summary: dict[str, Any]) -> list[str]:
    rows = []
    for name, data in summary["systems"].items():
        o, a = data["overall"], data["all"]
        c5 = data["by_category"].get("5", {})
        rows.append(
            (
                name,
                o["questions"],
                o["locomo_f1"],
                o["j"],
                o["mem0_f1"],
                o["bleu1"],
                a["locomo_f1"],
                c5.get("refusal_accuracy"),
                a["turn_recall"],
                a["session_recall"],
                a.get("context_tokens_per_question"),
                a["tokens_per_question"],
                a["calls_per_question"],
                a["latency_s_per_question"],
                a.get("fallbacks", 0),
            )
        )
    header = (
        "system",
        "questions (c1-4)",
        "LoCoMo F1 (c1-4)",
        "J (secondary)",
        "F1",
        "BLEU-1",
        "LoCoMo F1 (c1-5)",
        "refusal acc. (c5)",
        "turn recall",
        "session recall",
        "context tokens / q",
        "LLM tokens / q",
        "LLM calls / q",
        "latency s / q",
        "fallbacks",
    )
    return _table(header, rows)


def _score(summary: dict[str, Any], system: str, key: str, group: str = "overall") -> Any:
    data = summary["systems"].get(system)
    if data is None:
        return None
    if group in ("overall", "all"):
        return data[group].get(key)
    return data["by_category"].get(group, {}).get(key)


def _check(ok: bool | None, text: str) -> str:
    mark = {True: "met", False: "MISSED", None: "not measured"}[ok]
    return f"- **{mark}**: {text}"


def _targets(summary: dict[str, Any]) -> list[str]:
    """Issue 16's targets, each checked against this run's numbers."""
    systems = summary["systems"]
    if LAMINA not in systems:
        return []
    rivals = [b for b in BASELINES if b in systems]
    lines = ["## lamina against the targets (same run, same model)", ""]
    f1 = _score(summary, LAMINA, "locomo_f1")
    best = max(rivals, key=lambda b: _score(summary, b, "locomo_f1") or -1.0, default=None)
    if best is not None and f1 is not None:
        theirs = _score(summary, best, "locomo_f1") or 0.0
        lines.append(
            _check(
                f1 >= theirs + 0.05,
                f"LoCoMo F1 (c1-4) {f1:.3f} >= best baseline `{best}` {theirs:.3f} + 0.05",
            )
        )
    j = _score(summary, LAMINA, "j")
    best_j = max((_score(summary, b, "j") or 0.0 for b in rivals), default=None)
    if j is not None and best_j is not None:
        lines.append(_check(j >= best_j, f"J (secondary) {j:.3f} >= best baseline {best_j:.3f}"))
    for category, label in (("1", "multi-hop (c1)"), ("2", "temporal (c2)")):
        ours, flat_f1 = (_score(summary, s, "locomo_f1", category) for s in (LAMINA, FLAT))
        ok = None if ours is None or flat_f1 is None else ours > flat_f1
        lines.append(_check(ok, f"{label} LoCoMo F1 ahead of flat: {_pair(ours, flat_f1)}"))
    calls = _score(summary, LAMINA, "calls_per_question", "all")
    tokens = _score(summary, LAMINA, "context_tokens_per_question", "all")
    lines.append(_check(None if calls is None else calls <= 1.5, f"LLM calls / q {calls} <= 1.5"))
    lines.append(
        _check(None if tokens is None else tokens <= 1500, f"context tokens / q {tokens} <= 1,500")
    )
    ours_s = _score(summary, LAMINA, "latency_s_per_question", "all")
    flat_s = _score(summary, FLAT, "latency_s_per_question", "all")
    ok = None if ours_s is None or not flat_s else ours_s <= 1.3 * flat_s
    lines.append(_check(ok, f"answer latency s / q {_pair(ours_s, flat_s)} (flat) within 1.3x"))
    refusal = _score(summary, LAMINA, "refusal_accuracy", "5")
    ok = None if refusal is None else refusal >= 0.5
    lines.append(_check(ok, f"category-5 refusal accuracy {refusal} >= 0.5"))
    return lines + [""]


def _pair(ours: Any, theirs: Any) -> str:
    return f"{_fmt(ours)} vs {_fmt(theirs)}"


def _verdict(summary: dict[str, Any]) -> list[str]:
    systems = summary["systems"]
    if LAMINA not in systems:
        return []
    lines = [
        "## lamina against each baseline (categories 1-4, same questions)",
        "",
        "LoCoMo F1 is the primary score (deterministic); J comes from the LLM judge and is "
        "secondary.",
        "",
    ]
    ours_f1, ours_j = (_score(summary, LAMINA, k) for k in ("locomo_f1", "j"))
    for rival in BASELINES:
        if rival not in systems:
            continue
        f1, j = (_score(summary, rival, k) for k in ("locomo_f1", "j"))
        if ours_f1 is None or f1 is None:
            lines.append(f"- vs `{rival}`: no scores to compare.")
            continue
        word = "ahead of" if ours_f1 > f1 else "not ahead of"
        lines.append(
            f"- **{word}** `{rival}`: LoCoMo F1 {ours_f1:.3f} vs {f1:.3f}; J {_pair(ours_j, j)}."
            + _paired_note(summary, LAMINA, rival)
        )
    return lines + [""]


def _paired_note(summary: dict[str, Any], ours: str, theirs: str) -> str:
    """`` Paired F1 difference +0.052 [-0.010, +0.110] over 130 questions.`` or nothing."""
    diff = summary.get("paired_f1", {}).get(ours, {}).get(theirs)
    if not diff:
        return ""
    return (
        f" Paired F1 difference {diff['mean']:+.3f} [{diff['ci95_low']:+.3f}, "
        f"{diff['ci95_high']:+.3f}] (95% bootstrap over {diff['n']} questions)."
    )


def _category_tables(summary: dict[str, Any]) -> list[str]:
    lines = ["## Per category", ""]
    categories = sorted(
        {int(c) for data in summary["systems"].values() for c in data["by_category"]}
    )
    for category in categories:
        locomo, mem0 = CATEGORY_NAMES.get(category, ("?", "?"))
        lines += [f"### Category {category}: {locomo} (LoCoMo code) / {mem0} (mem0 paper)", ""]
        rows = []
        for name, data in summary["systems"].items():
            m = data["by_category"].get(str(category))
            if m is None:
                continue
            rows.append(
                (
                    name,
                    m["questions"],
                    m["j"],
                    m["mem0_f1"],
                    m["bleu1"],
                    m["locomo_f1"],
                    m["refusal_accuracy"],
                    m["turn_recall"],
                    m["session_recall"],
                    m["tokens_per_question"],
                )
            )
        header = (
            "system",
            "questions",
            "J",
            "F1",
            "BLEU-1",
            "LoCoMo F1",
            "refusal acc.",
            "turn recall",
            "session recall",
            "answer tokens / q",
        )
        lines += _table(header, rows)
    return lines


def _settings_notes(meta: dict[str, Any]) -> list[str]:
    s = meta.get("settings", {})
    arms, recall = split_recall(s.get("recall") or {})  # the run's --recall-option settings
    ctx = MemoryContext(**recall)
    notes = [
        f"- `full-context`: the dated sessions, truncated to a {s.get('context_window')}-token "
        f"window minus the prompt and a {s.get('answer_budget')}-token reply budget, with a "
        "10% margin for tokenizer differences; the oldest turns are dropped first. The "
        "context is put before the question so a serving model can reuse it.",
        f"- `full-context-long`: the same with a {s.get('long_context_window')}-token window "
        "(the whole of a LoCoMo conversation); the transcript is the same for every question "
        "of a conversation, so a serving model's prompt cache makes later questions cheap.",
        f"- `naive-rag`: {s.get('chunk_words')}-word chunks with {s.get('chunk_overlap')} "
        f"words of overlap over the transcript, dense top-{s.get('rag_k')}.",
        f"- `flat`: hybrid (dense + BM25, RRF) top-{s.get('top_k')} over raw turns, no Judge loop.",
        "- `oracle`: the question's gold evidence turns, verbatim, through the shared prompt "
        "(an upper bound for retrieval; not counted as a baseline).",
        f"- lamina: deterministic query analysis, one pooled search over raw turns, facts, "
        f"episodes and scenes cut to {ctx.context_tokens} context tokens (raw turns are "
        f"kept first, derived memory takes at most {arms.derived_share:.0%}), shown in "
        + "relevance order (derived notes, then raw turns from the least to the most "
        "relevant, next to the question), then one capped Judge + answer call; an "
        "insufficient verdict gets a query rewrite and a retry (two rounds). A malformed "
        "combined reply falls back to a plain answer call, counted under fallbacks.",
        f"- lamina ingest: batches of {s.get('batch_size')} turns per session (the last "
        "batch closes the session), library defaults otherwise; built once per construction "
        "key and reused by later runs: "
        + ", ".join(f"`{k}`" for k in meta.get("construction", {}).values())
        + ".",
    ]
    for name, peer in (meta.get("peers") or {}).items():
        notes.append(
            f"- `{name}` ({peer.get('package')}): {peer.get('settings')}. It ingests the same "
            "batches as lamina (a batch it raises on is sent once more, then counted as "
            "failed) and answers through the shared prompt from its top-"
            f"{peer.get('top_k')} memories; its turn recall counts the turns of the batches "
            "its retrieved memories were written from."
        )
    return notes


def _prompts(meta: dict[str, Any]) -> list[str]:
    prompts = meta.get("prompts") or {}
    if not prompts:
        return []
    lines = ["## Prompts", ""]
    for name, text in prompts.items():
        lines += [f"{name}:", "", "```text", str(text), "```", ""]
    return lines


def render_report(summary: dict[str, Any], meta: dict[str, Any]) -> str:
    """The whole markdown report."""
    lines = _header(meta)
    lines += ["## Overall", ""]
    lines += _systems_table(summary)
    lines += _verdict(summary)
    lines += _targets(summary)
    lines += [
        f"![J against answer tokens per question]({ACCURACY_PLOT})",
        "",
        f"![Construction tokens per stage]({CONSTRUCTION_PLOT})",
        "",
    ]
    lines += _category_tables(summary)
    lines += cost_tables(summary, meta)
    lines += ["## Method", ""]
    lines += _settings_notes(meta)
    lines += [f"- {note}" for note in METHOD_NOTES]
    lines.append("")
    lines += _prompts(meta)
    if meta.get("notes"):
        lines += ["## Notes", "", str(meta["notes"]).strip(), ""]
    return "\n".join(lines)
