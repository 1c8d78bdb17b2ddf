"""Each word list is defined once, in the lexicon, and the rules read every language's words."""

from __future__ import annotations

import ast
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

import lamina
from lamina.agents.common.lexicon import (
    LEXICONS,
    MONTHS_EN,
    PARTNER_WORDS,
    PET_WORDS,
    RELATION_WORDS,
    SEASONS_EN,
    WEEKDAYS_EN,
)
from lamina.agents.ingest.ownership.grammar import decide_owner
from lamina.agents.ingest.ownership.relations import named_relations
from lamina.agents.ingest.supersession.slots import slots_of
from lamina.records.model import RawTurn

PACKAGE = Path(lamina.__file__).parent
NOT_PACKAGE = {"tests", "benchmarks", "build", "examples", ".venv", "eval-results", "docs"}
PROSE = {"prompts"}
"""Prompt templates: example chats a model reads, whose sentences name months as prose."""
LEXICON = PACKAGE / "agents" / "common" / "lexicon"
MONTHS_HOME = PACKAGE / "records" / "timerefs.py"
"""The English month and season names resolved dates are written with; the lexicon takes
its English months and seasons from there (the record layer sits below the agents and
cannot import them)."""

FAMILIES = {
    "months": frozenset(MONTHS_EN),
    "weekdays": frozenset(WEEKDAYS_EN),
    "seasons": frozenset(SEASONS_EN),
    "relations": frozenset(RELATION_WORDS) - {"partner", "kid", "child"},
    "pets": frozenset(PET_WORDS) - {"pet", "fish", "bird"},
}
"""The word lists that must live in the lexicon. A word that is also common prose ("partner"
at work, "fish" to eat, "as a kid") is left out so a phrase holding it is no list."""


def _sources() -> list[Path]:
    return sorted(
        path
        for path in PACKAGE.rglob("*.py")
        if not (NOT_PACKAGE | PROSE) & set(path.relative_to(PACKAGE).parts)
    )


def _literals(tree: ast.AST) -> list[tuple[int, str]]:
    """The string literals of a module that are not docstrings, one per collection literal."""
    prose = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            words = [e.value for e in node.elts if isinstance(e, ast.Constant)]
            out.append((node.lineno, " ".join(w for w in words if isinstance(w, str))))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in prose:
                out.append((node.lineno, node.value))
    return out


def defined_lists(path: Path, root: Path = PACKAGE) -> list[str]:
    """Where a module spells out two or more words of one family in one literal."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for line, text in _literals(tree):
        words = set(re.findall(r"[^\W\d_]+", text.casefold()))
        for family, members in FAMILIES.items():
            if len(words & members) >= 2:
                found.append(f"{path.relative_to(root)}:{line}: {family}")
    return found


def test_the_check_finds_a_word_list_outside_the_lexicon(tmp_path: Path) -> None:
    module = tmp_path / "rule.py"
    module.write_text(
        '"""Docstrings may say mother and sister."""\n'
        'PETS = frozenset({"dog", "cat"})\n'
        '_RX = r"(?:january|february)"\n'
        'NOTE = "my mother called"\n',
        encoding="utf-8",
    )
    assert sorted(defined_lists(module, tmp_path)) == ["rule.py:2: pets", "rule.py:3: months"]


def test_each_word_list_is_defined_once_in_the_lexicon() -> None:
    outside = [
        hit
        for path in _sources()
        if LEXICON not in path.parents
        for hit in defined_lists(path)
        if not (path == MONTHS_HOME and hit.endswith(("months", "seasons")))
    ]
    assert outside == []


@pytest.mark.parametrize("lexicon", LEXICONS, ids=lambda lx: lx.code)
def test_each_language_has_relations_pets_and_possessives(lexicon: object) -> None:
    assert lexicon.relations and lexicon.pets and lexicon.possessives  # type: ignore[attr-defined]
    english = {*RELATION_WORDS.values(), *PET_WORDS.values()}
    meanings = {*lexicon.relations.values(), *lexicon.pets.values()}  # type: ignore[attr-defined]
    assert meanings <= english


def _turn(text: str) -> RawTurn:
    return RawTurn(
        id="r1",
        namespace="user:jen",
        speaker="Jen",
        text=text,
        occurred_at=datetime(2024, 3, 1, tzinfo=UTC),
        session_id="s1",
        turn_index=0,
    )


@pytest.mark.parametrize(
    ("text", "statement"),
    [
        ("My ferret Bean is settling in.", "Jen's ferret is Bean."),
        ("Mi hermana Lucía se mudó a Valencia.", "Jen's sister is Lucía."),
        ("Meine Oma Gisela ist ausgerutscht.", "Jen's grandma is Gisela."),
        ("Mein Hund heißt Bello.", "Jen's dog is Bello."),
        ("Ma sœur Claire arrive demain.", "Jen's sister is Claire."),
        ("A minha irmã Ana chegou.", "Jen's sister is Ana."),
        ("Mi perro se llama Toby.", "Jen's dog is Toby."),
    ],
)
def test_a_relation_or_pet_is_read_in_every_language(text: str, statement: str) -> None:
    assert [r.statement() for r in named_relations([_turn(text)])] == [statement]


def test_the_slots_read_the_same_pet_and_partner_words() -> None:
    """The words the relations rule reads are the slots' too: a ferret is a pet in both."""
    assert "pet" in slots_of("Jen's ferret Bean is settling in.")
    assert "pet" in slots_of("Ana adoptó un hurón.")
    assert "partner" in slots_of("Lena lebt jetzt mit ihrem Ehemann.")
    assert {"novia", "girlfriend", "ehemann"} <= PARTNER_WORDS


@pytest.mark.parametrize(
    ("turn", "note"),
    [
        ("My ferret Bean is settling in.", "Bean is settling in."),
        ("Mi hurón Bean se está adaptando.", "Bean se está adaptando."),
        ("Unser Kater Mogli wird nächsten Monat 15.", "Mogli wird nächsten Monat 15."),
    ],
)
def test_a_pets_news_is_its_keepers_in_any_language(turn: str, note: str) -> None:
    """A ferret was a pet to the slots but not to the owner rule: its news went to Bean."""
    verdict = decide_owner(note.split()[0], note, turn, "Jen", "Theo", ["Jen", "Theo"])
    assert verdict.owner == "Jen"
