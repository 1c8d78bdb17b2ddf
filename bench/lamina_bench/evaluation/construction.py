"""Built memory, kept between evaluation runs: one store per construction key.

Construction is the expensive part of an evaluation (LLM calls for every batch of turns),
and it does not depend on the questions, the systems or the recall settings. So every
ingest stage writes into a store under ``<construction_dir>/<key>/`` whose key names
everything that decides what gets built:

* all stages: the data file's content (sha256), the embedder, the store's schema version;
* ``lamina-<policy>``: the chat model, the construction prompts and reply schemas (their
  text and the declared prompt version), the batch size and every construction setting
  of :class:`~lamina.core.context.MemoryContext` for that policy;
* ``chunks``: the chunk size, overlap and session cut;
* ``peer-<name>``: the chat model, the batch size, the peer's package version and how
  lamina feeds it (:func:`lamina_bench.evaluation.peers.stage_fingerprint`). A peer keeps its
  own store under the key's folder; lamina's store there is opened only if asked for.

Each key keeps its own journal of finished batches (``ingest.jsonl``, with their costs),
so a later run with other questions, systems or recall settings reuses it batch by batch,
and a run cut short continues it. A store lives on the machine that built it: it holds the
dataset's turns, so it is never committed. What is committed is the journal and, for
lamina's stages, the model's replies (``replies.jsonl`` in the construction folder, shared
by its keys: :class:`~.reply_cache.ReplyFile`). On another machine, a batch the journal
lists but the local store lacks (``built.jsonl`` lists what the store holds) is built
again from the kept replies, without calling the model and without a second journal
line; its costs stay the first build's.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from langchain_core.prompts import ChatPromptTemplate
from pydantic import BaseModel

from lamina.core.context import SMALL_MODEL_PROFILE
from lamina.graphs import MemoryContext, ResearchArms
from lamina.stores import ChromaMemoryStore
from lamina.stores.chroma import SCHEMA_VERSION

from .ingest import CHUNK_STAGE, LAMINA_STAGE
from .peers import is_peer_stage, stage_fingerprint
from .records import IngestStep, Journal, ingests_of

INGEST_JOURNAL = "ingest.jsonl"
STORE_DIR = "chroma"
BUILT_FILE = "built.jsonl"
"""The batches this machine's store holds, one JSON ``[stage, conversation, batch]`` a line."""
COMMITTED = frozenset({INGEST_JOURNAL})
"""The files of a key's folder that travel between machines; the rest is the local store."""
BatchKey = tuple[str, str, int]
RECALL_FIELDS = frozenset({"namespace", "context_tokens"})
"""Context fields that only steer recall: changing them keeps the built memory."""


def file_sha256(path: Path) -> str:
    """The sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _template_text(template: ChatPromptTemplate) -> list[str]:
    return [str(getattr(getattr(m, "prompt", None), "template", m)) for m in template.messages]


def construction_prompts() -> dict[str, Any]:
    """The construction prompts and reply schemas as data (what their fingerprint covers)."""
    from lamina.agents.ingest import schemas
    from lamina.prompts import construction

    templates = {
        name: _template_text(value)
        for name, value in sorted(vars(construction).items())
        if isinstance(value, ChatPromptTemplate)
    }
    models = {
        name: value.model_json_schema()
        for name, value in sorted(vars(schemas).items())
        if isinstance(value, type) and issubclass(value, BaseModel) and value is not BaseModel
    }
    version = getattr(construction, "CONSTRUCTION_PROMPT_VERSION", None)
    return {"version": version, "templates": templates, "schemas": models}


CONSTANT_SETTINGS: dict[str, Any] = {
    "theta_sim": 0.7,
    "theta_count": 5,
    "neighbour_k": 10,
    "merge_threshold": 0.7,
    "boundary_gap_minutes": 240.0,
    "boundary_llm_check": False,
    "construction_max_items": 12,
    "construction_max_tokens": 480,
    "construction_tokens_per_item": 28,
    "construction_frequency_penalty": 0.6,
    "skip_trivial_turns": True,
    "duplicate_threshold": 0.95,
    "conflict_k": 4,
    "conflict_pairs_per_fact": 3,
    "conflict_max_pairs": 8,
    "scene_tau": 0.7,
    "scene_max_gap_days": 7.0,
    "profile_scenes": 8,
    "max_llm_attempts": 3,
    "attribution_check": True,
}
"""Former construction settings of the context, now constants of lamina's ingest agents
(or gone, at the value that was always used; ``attribution_check`` was recall-only but
keyed since the long run was built), under their old names: they stay in the key
so that memory built while they were settings keeps its key. tests/bench/test_eval_harness.py
checks each against lamina's constant."""

CONSTRUCTION_ARMS = ("boundary_max_tokens", "construction_format", "update_cues", "owner_rules")
"""The research arms that change what is built, keyed under their names (the small-model
profile's two, at the value they take: the arm's, else the profile's)."""
PROFILE_FIELDS = frozenset({"small_model"})
"""Context fields keyed only through the arms they decide (``update_cues``,
``owner_rules``): the key names what is built, not how it was asked for."""


def split_construction(values: dict[str, Any]) -> tuple[ResearchArms, dict[str, Any]]:
    """Construction settings as the graph's research arms and the context's fields."""
    arms = {k: v for k, v in values.items() if k in CONSTRUCTION_ARMS}
    return ResearchArms(**arms), {k: v for k, v in values.items() if k not in CONSTRUCTION_ARMS}


KEYED_UNLESS: dict[str, Any] = {
    "owner_rules": True,
    "instructions": None,
}
"""Construction settings added after memory was built with the key: each is left out of
the key while it holds the value that reproduces the behaviour from before it existed, so
adding a setting does not send every built store (an hour for the long run) to be built
again; set to anything else, it is in the key."""


def construction_settings(policy: str, **overrides: Any) -> dict[str, Any]:
    """The construction settings of a policy's context, as they enter the key.

    Recall fields are left out, and so is a setting of :data:`KEYED_UNLESS` at its old value.
    The evaluation builds with the offline model, so with its profile
    (:data:`~lamina.core.context.SMALL_MODEL_PROFILE`), as the facade does.
    """
    arms, values = split_construction({**SMALL_MODEL_PROFILE, **overrides})
    ctx = MemoryContext(namespace="eval", trigger_policy=policy, **values)  # type: ignore[arg-type]
    settings = {
        **CONSTANT_SETTINGS,
        **dataclasses.asdict(ctx),
        **{name: getattr(arms, name) for name in CONSTRUCTION_ARMS},
        "update_cues": arms.cues_on(ctx),
        "owner_rules": arms.owner_rules_on(ctx),
    }
    return {
        k: v
        for k, v in settings.items()
        if k not in RECALL_FIELDS | PROFILE_FIELDS
        and not (k in KEYED_UNLESS and KEYED_UNLESS[k] == v)
    }


@dataclass(frozen=True)
class KeyInputs:
    """What every construction key of a run depends on."""

    data_sha256: str
    embeddings: str
    model: str
    batch_size: int
    chunk_words: int
    chunk_overlap: int
    sessions: int | None


def construction_key(stage: str, inputs: KeyInputs) -> str:
    """``<stage>-<12 hex digits>``: the store a stage's memory is built into."""
    parts: dict[str, Any] = {
        "stage": stage,
        "data": inputs.data_sha256,
        "embeddings": inputs.embeddings,
        "store_schema": SCHEMA_VERSION,
    }
    if stage.startswith(LAMINA_STAGE):
        settings = construction_settings(stage.removeprefix(LAMINA_STAGE))
        parts |= {
            "model": inputs.model,
            "batch_size": inputs.batch_size,
            "prompts": construction_prompts(),
            "settings": settings,
        }
    elif is_peer_stage(stage):
        parts |= {
            "model": inputs.model,
            "batch_size": inputs.batch_size,
            "peer": stage_fingerprint(stage),
        }
    elif stage == CHUNK_STAGE:
        parts |= {
            "chunk_words": inputs.chunk_words,
            "chunk_overlap": inputs.chunk_overlap,
            "sessions": inputs.sessions,
        }
    blob = json.dumps(parts, sort_keys=True, default=str).encode("utf-8")
    return f"{stage}-{hashlib.sha256(blob).hexdigest()[:12]}"


class ConstructionCache:
    """The store and the batch journal of one construction key."""

    def __init__(
        self, root: Path, key: str, store: ChromaMemoryStore | Callable[[], ChromaMemoryStore]
    ) -> None:
        self.key = key
        self.folder = root / key
        """The key's folder (a peer keeps its own store here)."""
        self._store: ChromaMemoryStore | None = None
        self._open_store = store
        self.journal = Journal(self.folder / INGEST_JOURNAL)

    @property
    def store(self) -> ChromaMemoryStore:
        """Lamina's store of this key (opened on first use: a peer's stage never opens it)."""
        if self._store is None:
            opened = self._open_store
            self._store = opened if isinstance(opened, ChromaMemoryStore) else opened()
        return self._store

    @classmethod
    def open(cls, root: Path, key: str, embeddings: Any) -> ConstructionCache:
        """Open (or create) the folder of ``key`` under ``root``; its store when first used."""
        folder = root / key
        folder.mkdir(parents=True, exist_ok=True)
        built = folder / BUILT_FILE
        if not built.exists():  # kept from now on, before the store is first opened
            steps: list[IngestStep] = []
            if any(p.name not in COMMITTED for p in folder.iterdir()):
                # a store built before the list was kept holds every batch of its journal
                steps = ingests_of(Journal(folder / INGEST_JOURNAL).read())
            built.write_text("".join(json.dumps(list(s.key)) + "\n" for s in steps))
        store = partial(
            ChromaMemoryStore.persistent,
            folder / STORE_DIR,
            embeddings=embeddings,
            collection_prefix="eval",
        )
        return cls(root, key, store)

    def steps(self) -> list[IngestStep]:
        """The finished batches, in order."""
        return ingests_of(self.journal.read())

    def built(self) -> set[BatchKey]:
        """The batches this machine's store holds (the rest of the journal is rebuilt).

        :meth:`open` starts the list: empty for a folder with only the committed files,
        every journaled batch for a store from before the list was kept. A store opened
        and left before its first batch was built is then still known to hold none.
        """
        path = self.folder / BUILT_FILE
        if not path.exists():
            return set()
        out: set[BatchKey] = set()
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                try:
                    stage, conversation, batch = json.loads(line)
                    out.add((str(stage), str(conversation), int(batch)))
                except (ValueError, TypeError):
                    continue  # a line cut short by a crash: that batch is built again
        return out

    def _mark(self, key: BatchKey) -> None:
        with (self.folder / BUILT_FILE).open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(list(key)) + "\n")

    def record(self, step: IngestStep) -> None:
        """A batch is built: journal it (unless a first build did) and mark it built here."""
        if step.key not in {s.key for s in self.steps()}:
            self.journal.append(step.model_copy(update={"cache_key": self.key}))
        self._mark(step.key)


__all__ = [
    "BUILT_FILE",
    "ConstructionCache",
    "KeyInputs",
    "construction_key",
    "construction_prompts",
    "CONSTANT_SETTINGS",
    "KEYED_UNLESS",
    "construction_settings",
    "file_sha256",
]
