"""The construction call: an excerpt's turns in, the model's title, summary and notes out.

One call per excerpt with a capped output, in the compact line format
(``ResearchArms.construction_format="lines"``, the default, for small local models) or as a JSON
object (``"json"``, for API models with native structured output). A reply already in
the construction journal is reused without calling the model. What the draft becomes in
the store (owners, sources, dates) is :mod:`.construct`'s work.
"""

from __future__ import annotations

import time

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from ....core.calls import LLMCall
from ....core.context import MemoryContext
from ....llm.reachability import unreachable_reason
from ....prompts.construction import (
    CONSTRUCT_JSON,
    CONSTRUCT_LINES,
    CONSTRUCTION_FORMAT,
    CONSTRUCTION_PROMPT_VERSION,
    LINES_REPAIR,
    app_rules,
)
from ....records.model import EpisodeRecord, RawTurn
from ...common.deps import StepLog
from ...common.formatting import format_excerpt, format_record
from ...common.journal import journal_key
from ..schemas import ConstructionDraft
from .lines import complete, parse_lines, without_cut_line
from .withholding import withhold

_EXAMPLE_TEXT = "\n".join(
    str(getattr(getattr(m, "prompt", None), "template", ""))
    for template in (CONSTRUCT_LINES, CONSTRUCT_JSON)
    for m in template.messages
)
"""The prompts' own words: a note copied from the example is not memory."""
MAX_ITEMS = 12
"""At most this many facts, plans and preferences per construction call."""
EXTRA_ITEMS = 2
"""Notes asked for beyond one per turn of the excerpt (up to ``MAX_ITEMS``). A 1.5B model
reads "at most N notes" as N: it writes one note per turn label in order and, with N
above the excerpt's turns, goes on with labels the excerpt does not have."""
MAX_TOKENS = 480
"""The output cap of one construction call, in tokens."""
TOKENS_PER_ITEM = 28
"""Output tokens allowed per note (plus 70 for the title and summary), up to ``MAX_TOKENS``."""
FREQUENCY_PENALTY = 0.6
"""The OpenAI ``frequency_penalty`` of a construction call. Without it a 1.5B model at
temperature 0 writes three or four notes, then repeats one until the output cap; with 0.6
it ends the list itself, at about half the output tokens and with more distinct notes."""


def _copied(statement: str, example: str) -> bool:
    """A whole sentence of the prompt (not a short phrase that happens to occur in it)."""
    text = statement.strip().casefold()
    return len(text) >= 15 and text in example


def item_budget(n_turns: int, *, extra: int = EXTRA_ITEMS) -> tuple[int, int]:
    """(items, output tokens) allowed for an excerpt of ``n_turns`` turns.

    ``extra``: notes asked for beyond one per turn (a measurement may vary it).
    """
    items = max(1, min(MAX_ITEMS, n_turns + extra))
    return items, min(MAX_TOKENS, 70 + TOKENS_PER_ITEM * items)


def _messages(
    ctx: MemoryContext, turns: list[RawTurn], known: EpisodeRecord | None, items: int, as_json: bool
) -> tuple[list[BaseMessage], dict[str, str]]:
    text, labels = format_excerpt(turns, ctx.tz)
    known_text = (
        f"Known episode:\n<data>\n{format_record(known, ctx.tz)}\n</data>\n" if known else ""
    )
    template = CONSTRUCT_JSON if as_json else CONSTRUCT_LINES
    messages = template.format_messages(known=known_text, turns=text, max_items=items)
    if ctx.instructions:  # the application's rules follow lamina's own
        rules = str(messages[0].content) + app_rules(ctx.instructions)
        messages[0] = SystemMessage(content=rules)
    return messages, labels


def _record_call(
    log: StepLog,
    attempt: int,
    started: float,
    reply: object,
    error: str | None,
    *,
    unreachable: bool = False,
) -> None:
    log.calls.append(
        LLMCall(
            node=log.node,
            schema=CONSTRUCTION_FORMAT,
            attempt=attempt,
            method="lines",
            ok=error is None,
            latency_s=getattr(reply, "latency_s", time.perf_counter() - started),
            prompt_tokens=getattr(reply, "prompt_tokens", None),
            completion_tokens=getattr(reply, "completion_tokens", None),
            error=error,
            unreachable=unreachable,
        )
    )


def _ask_lines(
    log: StepLog, messages: list[BaseMessage], cap: int, step: str
) -> ConstructionDraft | None:
    deps = log.deps
    penalty = FREQUENCY_PENALTY
    version = f"{CONSTRUCTION_PROMPT_VERSION}/fp{penalty:g}"
    key = journal_key(deps.model_name, version, cap, messages)
    kept = deps.journal.get(key) if deps.journal is not None else None
    if kept is not None and not (parsed := parse_lines(kept)).empty:
        return parsed.draft
    convo = list(messages)
    for attempt in range(1, deps.caller.max_attempts + 1):
        started = time.perf_counter()
        try:
            reply = complete(deps.caller.model, convo, cap, frequency_penalty=penalty)
        except Exception as e:  # HTTP errors, timeouts: the turns stay unconsolidated
            down = unreachable_reason(e) is not None
            error = f"{type(e).__name__}: {e}"[:2000]
            _record_call(log, attempt, started, None, error, unreachable=down)
            if down:  # a model that cannot be reached is not asked again
                log.fail(step, error)
                return None
            continue
        parsed = parse_lines(reply.text, cut_off=reply.cut_off)
        if parsed.cut is not None:  # the note the token limit cut short is not memory
            log.count("cut_line_dropped")
        if parsed.empty:
            _record_call(log, attempt, started, reply, "no T|, S| or F| line in the reply")
            convo = [*messages, HumanMessage(LINES_REPAIR)]
            continue
        _record_call(log, attempt, started, reply, None)
        if parsed.dropped:
            log.fail(
                f"{step}_line",
                f"dropped {len(parsed.dropped)} malformed line(s), e.g. {parsed.dropped[0]!r}",
            )
        if deps.journal is not None:  # what was read: without a line cut short
            read = without_cut_line(reply.text)[0] if reply.cut_off else reply.text
            deps.journal.put(key, read)
        return parsed.draft
    log.fail(
        step, f"no usable {CONSTRUCTION_FORMAT} reply after {deps.caller.max_attempts} attempt(s)"
    )
    return None


def draft_excerpt(
    log: StepLog,
    ctx: MemoryContext,
    turns: list[RawTurn],
    *,
    known: EpisodeRecord | None = None,
    step: str = "construct",
) -> tuple[ConstructionDraft, dict[str, str]] | None:
    """Ask for the excerpt's title, summary and facts; None when the call failed."""
    items, cap = item_budget(len(turns))
    as_json = log.deps.arms.construction_format == "json"
    messages, labels = _messages(ctx, withhold(log, ctx, turns), known, items, as_json)
    if as_json:
        value = log.ask(ConstructionDraft, messages, step)
    else:
        value = _ask_lines(log, messages, cap, step)
    if value is None:
        return None
    example = _EXAMPLE_TEXT.casefold()
    kept = [f for f in value.facts if not _copied(f.statement, example)]
    if len(kept) < len(value.facts):
        log.fail(
            f"{step}_line",
            f"dropped {len(value.facts) - len(kept)} note(s) copied from the prompt's example",
        )
    return value.model_copy(update={"facts": kept[:items]}), labels


__all__ = ["draft_excerpt", "item_budget"]
