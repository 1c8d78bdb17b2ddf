"""What a run is built from: the construction store of each stage and the systems.

Every lamina system gets its own compiled recall graph over its policy's store; the
baselines and the peers share one answer step (the same prompt and model for all of them).
A peer's memory is opened here, under its stage's folder; the ingest step writes into the
same object (:func:`peer_memories`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from lamina.graphs import build_recall_graph
from lamina.llm.structured import StructuredCaller
from lamina.stores import ChromaMemoryStore

from .answering import Answerer
from .construction import ConstructionCache, KeyInputs, construction_key, file_sha256
from .ingest import CHUNK_STAGE, DERIVED_ORACLE_STAGE, RAW_STAGE, lamina_stage
from .peers import PACKAGES, PeerMemory, PeerSystem, open_peer, peer_stage, peers_in
from .peers.kept_openai import open_replies
from .reply_cache import REPLY_FILE, ReplyFile
from .settings import EvalModels, EvalSettings, split_recall
from .systems import (
    DERIVED_ORACLE,
    FLAT,
    FULL_CONTEXT,
    FULL_CONTEXT_LONG,
    LAMINA,
    LAMINA_RETRIEVAL,
    NAIVE_RAG,
    ORACLE,
    PEERS,
    EvalSystem,
    FullContextSystem,
    LaminaSystem,
    OracleSystem,
    flat,
    naive_rag,
)


def system_id(name: str, policy: str, policies: Sequence[str]) -> str:
    """``lamina`` or, with several policies, ``lamina@<policy>``."""
    if name in (LAMINA, LAMINA_RETRIEVAL) and len(policies) > 1:
        return f"{name}@{policy}"
    return name


def needed_stages(settings: EvalSettings) -> list[str]:
    """The ingest stages the settings' systems read, in order."""
    stages: list[str] = []
    for name in settings.systems:
        if name in (LAMINA, LAMINA_RETRIEVAL):
            stages += [lamina_stage(p) for p in settings.policies]
        elif name == NAIVE_RAG:
            stages.append(CHUNK_STAGE)
        elif name == FLAT:
            stages.append(RAW_STAGE)
        elif name == DERIVED_ORACLE:
            stages.append(DERIVED_ORACLE_STAGE)
        elif name in PEERS:
            stages.append(peer_stage(name))
    return list(dict.fromkeys(stages))


def built_by(models: EvalModels) -> str:
    """The chat model as construction keys name it (its serving window builds nothing)."""
    return re.sub(r",? n_ctx \d+", "", models.model_name)


def reply_file(settings: EvalSettings, models: EvalModels) -> ReplyFile:
    """The model's construction replies, shared by the construction folder's keys."""
    return ReplyFile(settings.construction_root / REPLY_FILE, scope=built_by(models))


def open_caches(settings: EvalSettings, models: EvalModels) -> dict[str, ConstructionCache]:
    """The construction store of every needed stage (created when missing)."""
    inputs = KeyInputs(
        data_sha256=file_sha256(settings.data),
        embeddings=type(models.embeddings).__name__,
        model=built_by(models),
        batch_size=settings.batch_size,
        chunk_words=settings.chunk_words,
        chunk_overlap=settings.chunk_overlap,
        sessions=settings.sessions,
    )
    root = settings.construction_root
    return {
        stage: ConstructionCache.open(root, construction_key(stage, inputs), models.embeddings)
        for stage in needed_stages(settings)
    }


def recall_graph(settings: EvalSettings, models: EvalModels, store: ChromaMemoryStore) -> Any:
    """A compiled recall graph over ``store``, its budget counted as the report counts."""
    return build_recall_graph(
        chat_model=models.chat_model,
        store=store,
        structured_method=settings.structured_method,
        max_attempts=settings.max_attempts,
        count_tokens=models.counter.count,
        arms=split_recall(settings.recall)[0],
    ).compile()


def build_systems(
    settings: EvalSettings, models: EvalModels, caches: dict[str, ConstructionCache]
) -> list[EvalSystem]:
    """The systems the settings name, in order (lamina ones once per policy)."""
    caller = StructuredCaller(
        models.chat_model, method=settings.structured_method, max_attempts=settings.max_attempts
    )
    answerer = Answerer(caller, models.counter)
    # read once, shared by the peers that call the model through an OpenAI client (mem0)
    peer_replies = open_replies(settings.construction_root) if peers_in(settings.systems) else None
    out: list[EvalSystem] = []
    for name in settings.systems:
        if name in (LAMINA, LAMINA_RETRIEVAL):
            for policy in settings.policies:
                graph = recall_graph(settings, models, caches[lamina_stage(policy)].store)
                out.append(
                    LaminaSystem(
                        name=system_id(name, policy, settings.policies),
                        graph=graph,
                        policy=policy,
                        counter=models.counter,
                        answerer=answerer if name == LAMINA_RETRIEVAL else None,
                        recall=split_recall(settings.recall)[1],
                    )
                )
        elif name in (FULL_CONTEXT, FULL_CONTEXT_LONG):
            long = name == FULL_CONTEXT_LONG
            out.append(
                FullContextSystem(
                    answerer=answerer,
                    counter=models.counter,
                    context_window=settings.long_context_window
                    if long
                    else settings.context_window,
                    answer_budget=settings.answer_budget,
                    name=name,
                )
            )
        elif name == NAIVE_RAG:
            out.append(
                naive_rag(caches[CHUNK_STAGE].store, answerer, models.counter, settings.rag_k)
            )
        elif name == FLAT:
            out.append(flat(caches[RAW_STAGE].store, answerer, models.counter, settings.top_k))
        elif name == ORACLE:
            out.append(OracleSystem(answerer=answerer, counter=models.counter))
        elif name == DERIVED_ORACLE:
            out.append(
                LaminaSystem(
                    name=DERIVED_ORACLE,
                    graph=recall_graph(settings, models, caches[DERIVED_ORACLE_STAGE].store),
                    policy=settings.policies[0],
                    counter=models.counter,
                    answerer=answerer,
                    recall=dict(settings.recall),
                    built_by=DERIVED_ORACLE_STAGE,
                )
            )
        elif name in PEERS:
            stage = peer_stage(name)
            memory = open_peer(
                name,
                caches[stage].folder,
                chat_model=models.chat_model,
                embeddings=models.embeddings,
                replies=peer_replies,
                scope=built_by(models),
            )
            out.append(
                PeerSystem(name, stage, memory, answerer, models.counter, PACKAGES[name].top_k)
            )
    return out


def peer_memories(systems: Sequence[EvalSystem]) -> dict[str, PeerMemory]:
    """The memory each peer system reads, by its ingest stage (the ingest writes into it)."""
    return {s.stage: s.memory for s in systems if isinstance(s, PeerSystem)}
