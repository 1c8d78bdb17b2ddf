"""Joining journals: another run's answers merged in, and the paired questions of a report.

A long run can be split over processes or machines (``--merge-from``), and its interim
report compares the systems on the questions they have all answered (``--interim``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lamina.errors import InvalidInputError

from .records import Journal, QuestionResult, RunHeader, answers_of
from .settings import UNFINGERPRINTED
from .subset import Subset


def changed_settings(recorded: dict[str, Any], fingerprint: dict[str, Any]) -> list[str]:
    """The settings keys whose recorded value differs (systems are not settings)."""
    keys = (set(recorded) | set(fingerprint)) - set(UNFINGERPRINTED)
    return sorted(k for k in keys if recorded.get(k) != fingerprint.get(k))


def merge_answers(journal: Journal, other: Journal, fingerprint: dict[str, Any]) -> int:
    """Append the answers ``other`` counts and ``journal`` lacks; return how many.

    A long run can be split: a second process or machine answers some systems into its
    own output folder (seeded with a copy of the journal, or not), and this brings its
    answers home. Both runs must have the same settings; an answer this journal already
    counts for the same system and question is kept, not replaced.

    Raises:
        InvalidInputError: ``other`` has no journal, or it holds a run with other settings.
    """
    entries = other.read()
    headers = [e for e in entries if isinstance(e, RunHeader)]
    if not headers:
        raise InvalidInputError(f"{other.path} holds no evaluation run to merge")
    changed = changed_settings(headers[0].fingerprint, fingerprint)
    if changed:
        raise InvalidInputError(
            f"{other.path} holds a run with other settings ({', '.join(changed)} differ); "
            "only runs of the same settings merge"
        )
    have = {r.key for r in answers_of(journal.read())}
    added = 0
    for result in answers_of(entries):
        if result.key not in have:
            journal.append(result)
            have.add(result.key)
            added += 1
    return added


def paired_results(
    results: list[QuestionResult], systems: Sequence[str], subset: Subset
) -> tuple[list[QuestionResult], dict[str, Any]]:
    """The results of the questions every system has answered, and what was left out.

    A system with no answer yet does not empty the comparison: it is left out (the
    report's banner shows its count of 0).
    """
    wanted = {q.qid for qs in subset.questions.values() for q in qs}
    done: dict[str, set[str]] = {name: set() for name in systems}
    for r in results:
        if r.system in done and r.qid in wanted:
            done[r.system].add(r.qid)
    started = [qids for qids in done.values() if qids]
    common = set.intersection(*started) if started else set()
    kept = [r for r in results if r.system in done and r.qid in common]
    return kept, {
        "questions_scored": len(common),
        "questions_planned": len(wanted),
        "answered": {name: len(qids) for name, qids in done.items()},
    }


__all__ = ["changed_settings", "merge_answers", "paired_results"]
