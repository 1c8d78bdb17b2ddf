"""``lamina-bench eval``: the LoCoMo evaluation harness (lamina against the baselines).

The run builds each chosen conversation's memory (lamina's ingest graph per trigger
policy, raw turns for flat retrieval, chunks for naive RAG) into construction stores that
later runs with the same data, model, prompts and policy reuse, answers every chosen
question with every system on the same model, scores it (LoCoMo F1, mem0 F1 / BLEU-1 /
LLM judge, category-5 refusal, evidence recall) and writes ``results.json``,
``report.md`` and two PNG plots. Every answered question is a line of
``<out>/journal.jsonl`` (no dataset text, so it can be committed): running the same
command again, here or on another machine, resumes a stopped run.
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lamina.core.context import DEFAULT_TRIGGER_POLICY, TRIGGER_POLICIES
from lamina.errors import InvalidInputError

from .choices import FLAT, FULL_CONTEXT, LAMINA, NAIVE_RAG, PICKS, SYSTEMS
from .eval_models import DEFAULT_WINDOW, DeferredServer, build_models, serving_counter

if TYPE_CHECKING:
    from ..evaluation.harness import EvalModels, EvalSettings

# ``lamina-bench --help`` builds this parser: the harness, its stores and models and the
# config are imported by the functions below (and by .eval_models), once the command runs.

DEFAULT_OUT = Path("eval-results")
EXAMPLE = (
    "lamina-bench eval --conversations conv-26 conv-30 --questions 65 --adversarial 10 "
    "--pick balanced --systems lamina lamina-retrieval flat naive-rag full-context "
    "full-context-long oracle --context-window 8192 --local-ctx 32768 "
    "--out eval-results/locomo-long"
)


def register(sub: Any) -> None:
    """Add ``eval`` to the subparsers ``sub``."""
    p = sub.add_parser(
        "eval",
        help="evaluate lamina and baselines on LoCoMo (resumable; JSON, markdown, plots)",
        description=__doc__,
        epilog=f"example:\n  {EXAMPLE}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    data = p.add_argument_group("data and subset")
    data.add_argument(
        "--data", type=Path, default=None, help="LoCoMo-format JSON (default: locomo10.json)"
    )
    data.add_argument("--conversations", nargs="+", metavar="SAMPLE_ID", help="default: all")
    data.add_argument(
        "--categories",
        nargs="+",
        type=int,
        choices=[1, 2, 3, 4, 5],
        default=[1, 2, 3, 4, 5],
        metavar="N",
        help="question categories 1-5 (default: all)",
    )
    data.add_argument(
        "--questions", type=int, metavar="N", help="category 1-4 questions per conversation"
    )
    data.add_argument(
        "--adversarial", type=int, metavar="N", help="category-5 questions per conversation"
    )
    data.add_argument(
        "--sessions",
        type=int,
        metavar="N",
        help="ingest only the first N sessions; keep questions whose evidence lies in them",
    )
    data.add_argument(
        "--pick",
        choices=PICKS,
        default="spread",
        help="which questions when limited: evenly spread (default), the first ones, or "
        "balanced (the categories share the number equally)",
    )
    data.add_argument(
        "--exclude-run",
        type=Path,
        metavar="OUT",
        help="never choose the questions of the run in OUT (its journal's subset), e.g. to "
        "compare designs on other questions than the long run's",
    )
    systems = p.add_argument_group("systems")
    systems.add_argument(
        "--systems",
        nargs="+",
        choices=SYSTEMS,
        default=[LAMINA, NAIVE_RAG, FULL_CONTEXT, FLAT],
        metavar="SYSTEM",
        help="default: lamina naive-rag full-context flat. lamina: full graph; "
        "lamina-retrieval: its pooled context + shared answer; "
        "full-context: truncated transcript; full-context-long: the transcript in the long "
        "window; naive-rag: chunks, dense top-k; flat: hybrid over raw turns, no Judge "
        "loop; oracle: the gold evidence turns; mem0, langmem: the peer libraries, each "
        "building its own memory from the same batches (pip install './bench[peers]')",
    )
    systems.add_argument(
        "--policy",
        nargs="+",
        choices=TRIGGER_POLICIES,
        default=[DEFAULT_TRIGGER_POLICY],
        dest="policies",
        metavar="POLICY",
        help="lamina's trigger policies: eager, recurrence, boundary, session "
        f"(default: the library's, {DEFAULT_TRIGGER_POLICY})",
    )
    systems.add_argument(
        "--recall-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a MemoryContext setting for lamina's systems, e.g. context_tokens=2000 "
        "(repeatable; values are read as JSON, else as text); recorded in the run's settings",
    )
    systems.add_argument("--batch-size", type=int, default=10, help="turns per ingest call")
    systems.add_argument("--top-k", type=int, default=20, help="flat: raw turns retrieved")
    systems.add_argument("--rag-k", type=int, default=8, help="naive RAG: chunks retrieved")
    systems.add_argument("--chunk-words", type=int, default=128, help="naive RAG: chunk size")
    systems.add_argument("--chunk-overlap", type=int, default=32, help="naive RAG: overlap")
    systems.add_argument(
        "--context-window",
        type=int,
        help=f"full-context: the model's window in tokens (default: the local model's "
        f"--local-ctx, else {DEFAULT_WINDOW})",
    )
    systems.add_argument(
        "--long-context-window",
        type=int,
        default=DEFAULT_WINDOW,
        help=f"full-context-long: its window in tokens (default {DEFAULT_WINDOW}; serve the "
        "model with at least this context, e.g. --local-ctx)",
    )
    systems.add_argument(
        "--answer-budget", type=int, default=256, help="tokens reserved for the reply"
    )
    models = p.add_argument_group("models (default: LAMINA_* variables, else the local model)")
    models.add_argument("--base-url", help="OpenAI-compatible endpoint of the answer model")
    models.add_argument("--api-key", help="its API key")
    models.add_argument("--model", help="model name at the endpoint")
    models.add_argument("--local-model", help="without an endpoint: qwen (default) or smollm2")
    models.add_argument("--local-ctx", type=int, help="llama.cpp context size of the local model")
    models.add_argument("--threads", type=int, help="llama.cpp threads of the local model")
    models.add_argument(
        "--structured-method", choices=["json_schema", "json_mode", "prompt"], default=None
    )
    models.add_argument("--judge-base-url", help="endpoint of the judge (default: answer model)")
    models.add_argument("--judge-api-key", help="its API key")
    models.add_argument("--judge-model", help="judge model name (e.g. gpt-4o-mini)")
    models.add_argument("--no-judge", action="store_true", help="skip the LLM judge")
    out = p.add_argument_group("output")
    out.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder")
    out.add_argument("--fresh", action="store_true", help="discard a previous run in --out")
    out.add_argument(
        "--redo",
        nargs="+",
        metavar="SYSTEM",
        default=[],
        help="answer these systems' questions again (e.g. after changing lamina); the "
        "other systems' answers in --out stay",
    )
    out.add_argument(
        "--merge-from",
        nargs="+",
        metavar="OUT",
        type=Path,
        default=[],
        help="output folders of runs with the same settings (another process or machine "
        "answering other systems): their answers that --out lacks join it",
    )
    out.add_argument(
        "--interim",
        action="store_true",
        help="answer nothing: write results.json and the report from the journal as it is, "
        "scoring only the questions every system has answered (a long run's interim report)",
    )
    out.add_argument(
        "--redo-failed",
        nargs="+",
        metavar="SYSTEM",
        default=[],
        help="ask again the questions where these systems' answer step failed (a timeout, "
        "an HTTP error); their other answers stay",
    )
    out.add_argument(
        "--construction-dir",
        type=Path,
        help="where built memory is kept and reused between runs (default: construction/ "
        "beside --out)",
    )
    out.add_argument("--notes", type=Path, help="markdown file appended to the report as notes")
    out.add_argument(
        "--report-only",
        action="store_true",
        help="only re-render report.md and plots from results.json (e.g. with --notes)",
    )
    out.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    out.add_argument(
        "--keep-text",
        action="store_true",
        help="keep questions and gold answers in results.json, joined in from the data file "
        "(left out by default: LoCoMo is CC BY-NC; journal.jsonl never has them)",
    )
    out.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    p.set_defaults(func=run_eval)


def settings_from_args(args: argparse.Namespace, *, context_window: int) -> EvalSettings:
    """The run's settings from the parsed options."""
    from ..datasets.locomo import default_locomo_path
    from ..evaluation.harness import EvalSettings
    from ..evaluation.settings import parse_recall_options, questions_of_run

    return EvalSettings(
        data=args.data or default_locomo_path(),
        out=args.out,
        conversations=args.conversations,
        categories=sorted(set(args.categories)),
        questions=args.questions,
        adversarial=args.adversarial,
        sessions=args.sessions,
        pick=args.pick,
        systems=list(dict.fromkeys(args.systems)),
        policies=list(dict.fromkeys(args.policies)),
        batch_size=args.batch_size,
        top_k=args.top_k,
        rag_k=args.rag_k,
        chunk_words=args.chunk_words,
        chunk_overlap=args.chunk_overlap,
        context_window=context_window,
        long_context_window=args.long_context_window,
        answer_budget=args.answer_budget,
        structured_method=args.structured_method or "json_schema",
        judge=not args.no_judge,
        construction_dir=args.construction_dir,
        recall=parse_recall_options(args.recall_option),
        exclude=questions_of_run(args.exclude_run, args.data or default_locomo_path()),
    )


def git_commit(where: Path | None = None) -> str:
    """The checkout's commit, marked when the tree has uncommitted changes."""
    cwd = where or Path(__file__).resolve().parents[1]
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=cwd,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return f"{head} (with uncommitted changes)" if dirty else head


def command_line(args: argparse.Namespace) -> str:
    """The options of this run that differ from the defaults, as one command (no secrets)."""
    skip = {"func", "memory_factory", "command", "api_key", "judge_api_key", "fresh", "redo"}
    skip |= {"redo_failed", "merge_from", "interim", "report_only", "no_progress", "notes"}
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command"))
    defaults = vars(parser.parse_args(["eval"]))
    parts = ["lamina-bench", "eval"]
    for key, value in sorted(vars(args).items()):
        if key in skip or value is None or value is False or value == defaults.get(key):
            continue
        flag = "--" + ("policy" if key == "policies" else key.replace("_", "-"))
        if value is True:
            parts.append(flag)
        elif key == "recall_option":  # action="append": one flag per value
            parts += [x for pair in value for x in (flag, str(pair))]
        elif isinstance(value, list):
            parts += [flag, *map(str, value)]
        else:
            parts += [flag, str(value)]
    return shlex.join(parts)


def check_paths(args: argparse.Namespace) -> None:
    """Refuse a missing input file, a folder given for a file, or an unusable output folder."""
    from lamina.commands.checks import input_file, writable_folder

    if args.data is not None:
        input_file(args.data, "a LoCoMo-format JSON file to --data")
    if args.notes is not None:
        input_file(args.notes, "a markdown file to --notes")
    if args.exclude_run is not None and not args.exclude_run.is_dir():
        raise InvalidInputError(
            f"--exclude-run {args.exclude_run} is not a folder; give the --out folder of a run"
        )
    if not args.report_only:
        writable_folder(args.out, f"--out {args.out}", "the output folder")
    if args.construction_dir is not None:
        writable_folder(
            args.construction_dir, f"--construction-dir {args.construction_dir}", "the folder"
        )


def run_eval(args: argparse.Namespace, *, models: EvalModels | None = None) -> int:
    """Run or resume the evaluation; print where the results are.

    Args:
        args: The parsed options.
        models: Models to use instead of the ones the options describe (tests).
    """
    from ..evaluation.harness import run_evaluation
    from ..evaluation.outputs import rerender
    from ..evaluation.peers import require_peers

    check_paths(args)
    notes = args.notes.read_text(encoding="utf-8") if args.notes else None
    if args.report_only:
        rerender(args.out, notes=notes, plots=not args.no_plots, keep_text=args.keep_text)
        print(f"report: {args.out / 'report.md'}")
        return 0
    require_peers(args.systems)  # a missing peer package is refused before any model
    with ExitStack() as stack:
        window = args.context_window or DEFAULT_WINDOW
        if models is None:
            models, window = build_models(args, stack)
        settings = settings_from_args(args, context_window=window)
        meta = {"command": command_line(args), "commit": git_commit(), "notes": notes}
        output = run_evaluation(
            settings,
            models,
            fresh=args.fresh,
            redo=args.redo,
            redo_failed=args.redo_failed,
            merge_from=args.merge_from,
            interim=args.interim,
            progress=not args.no_progress,
            plots=not args.no_plots,
            keep_text=args.keep_text,
            meta=meta,
        )
    print(f"{len(output.results)} answers scored; results in {output.out}/")
    print(f"  report:  {output.out / 'report.md'}")
    print(f"  results: {output.out / 'results.json'}")
    return 0


# The model building lives in .eval_models; its names stay importable from here.
__all__ = [
    "DEFAULT_OUT",
    "DEFAULT_WINDOW",
    "DeferredServer",
    "build_models",
    "check_paths",
    "command_line",
    "git_commit",
    "register",
    "run_eval",
    "serving_counter",
    "settings_from_args",
]
