"""The peer libraries in ``lamina-bench eval``: mem0, LangMem and Graphiti beside lamina, alike.

Each peer builds its own memory from the same conversations in the same batches as
lamina (its own ingest stage, ``peer-<name>``, journaled batch by batch in its own
construction store), then answers every question through the shared answer prompt from
what its own search returns (:class:`~.system.PeerSystem`). Their packages are optional
(``pip install './bench[peers]'``): this module imports neither, and a run that names a
peer whose package is missing is refused by :func:`require_peers` before any model loads.

* ``mem0`` (:mod:`.mem0_peer`): ``mem0ai``'s ``Memory.from_config`` with its default
  prompts, Chroma under the stage's folder, the run's embeddings through its LangChain
  embedder, the run's chat endpoint through its OpenAI provider;
* ``langmem`` (:mod:`.langmem_peer`): ``create_memory_store_manager`` with the run's chat
  model over LangGraph's ``InMemoryStore`` (the run's embeddings), saved under the stage's
  folder after every batch;
* ``graphiti`` (:mod:`.graphiti_peer`): ``graphiti-core``'s ``Graphiti`` with its
  ``OpenAIGenericClient`` on the run's chat endpoint, the run's embeddings, and its
  embedded Kuzu driver, one graph database per conversation under the stage's folder.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lamina.errors import InvalidInputError

from ..kept_replies import KeptReplies
from ..systems import GRAPHITI, LANGMEM, MEM0, PEERS
from .base import PeerMemory, Recalled
from .costs import CallLog
from .graphiti_peer import open_graphiti
from .ingest import PeerIngestor
from .langmem_peer import open_langmem
from .mem0_peer import open_mem0
from .system import PeerSystem

PEER_STAGE = "peer-"
INSTALL_HINT = "pip install './bench[peers]'"
ADAPTER_VERSION = 1
"""How lamina feeds a peer (message format, batch metadata); part of the construction key."""


@dataclass(frozen=True)
class PeerPackage:
    """The package a peer needs."""

    distribution: str
    """Its name on the package index."""
    module: str
    """The module it installs."""
    top_k: int
    """Memories its search returns per question."""
    settings: str
    """How it is set up, for the report."""


PACKAGES: dict[str, PeerPackage] = {
    MEM0: PeerPackage(
        "mem0ai",
        "mem0",
        20,
        "Memory.from_config with its default extraction prompt (JSON mode, which it asks "
        "for itself), Chroma under the stage's folder, the run's embeddings through its "
        "LangChain embedder, the run's chat endpoint through its OpenAI provider "
        "(temperature as the run's chat model); one user id per conversation; search "
        "top-20 with threshold 0.1 (Memory.search's defaults); telemetry off",
    ),
    LANGMEM: PeerPackage(
        "langmem",
        "langmem",
        10,
        "create_memory_store_manager with its default instructions and Memory schema, the "
        "run's chat model object, over LangGraph's InMemoryStore indexed with the run's "
        "embeddings (saved under the stage's folder after every batch; LangGraph's "
        "SqliteStore needs SQLite extension loading, which not every Python has); "
        "namespace per conversation; manager.search top-10 (its default limit)",
    ),
    GRAPHITI: PeerPackage(
        "graphiti-core",
        "graphiti_core",
        10,
        "Graphiti with OpenAIGenericClient (json_schema structured output, its default "
        "16,384-token output cap, its default temperature 1.0) on the run's chat endpoint as "
        "model and small model, the run's embeddings behind its EmbedderClient, "
        "OpenAIRerankerClient on the same OpenAI client; its embedded Kuzu driver (which "
        "Graphiti marks deprecated), one database per conversation (0.31.2's Kuzu driver "
        "takes no group_id, and the driver's graph_ops makes its full-text indexes); one "
        "message episode per batch dated by its first turn; Graphiti.search top-10 (its "
        "default); telemetry off",
    ),
}
"""Every peer's package and settings (keys: :data:`~lamina_bench.evaluation.systems.PEERS`)."""


def peer_stage(name: str) -> str:
    """The ingest stage of peer ``name``: ``peer-<name>``."""
    return f"{PEER_STAGE}{name}"


def is_peer_stage(stage: str) -> bool:
    """Whether ``stage`` is a peer's ingest stage."""
    return stage.startswith(PEER_STAGE)


def peers_in(systems: Iterable[str]) -> list[str]:
    """The peers among ``systems``, in order."""
    return [s for s in systems if s in PEERS]


def require_peers(systems: Iterable[str]) -> None:
    """Refuse peers whose package is not installed.

    Raises:
        InvalidInputError: naming the missing packages and how to install them.
    """
    missing = [
        f"{name} needs {PACKAGES[name].distribution}"
        for name in peers_in(systems)
        if importlib.util.find_spec(PACKAGES[name].module) is None
    ]
    if missing:
        raise InvalidInputError(
            f"{'; '.join(missing)}, which is not installed: {INSTALL_HINT}, "
            "or leave these systems out"
        )


def package_version(name: str) -> str:
    """``<distribution> <version>`` of peer ``name`` (``not installed`` when absent)."""
    distribution = PACKAGES[name].distribution
    try:
        return f"{distribution} {importlib.metadata.version(distribution)}"
    except importlib.metadata.PackageNotFoundError:
        return f"{distribution} not installed"


def peer_versions(systems: Iterable[str]) -> dict[str, dict[str, Any]]:
    """For the report: each peer's installed package, search k and settings."""
    return {
        name: {
            "package": package_version(name),
            "top_k": PACKAGES[name].top_k,
            "settings": PACKAGES[name].settings,
        }
        for name in peers_in(systems)
    }


def stage_fingerprint(stage: str) -> dict[str, Any]:
    """What a peer stage's built memory depends on besides the data, model and batches."""
    name = stage.removeprefix(PEER_STAGE)
    return {"package": package_version(name), "adapter": ADAPTER_VERSION}


def open_peer(
    name: str,
    folder: Path,
    *,
    chat_model: Any,
    embeddings: Any,
    replies: KeptReplies | None = None,
    scope: str = "",
) -> PeerMemory:
    """Open peer ``name``'s memory, stored under ``folder`` (its package imported now).

    ``replies``: the construction folder's kept OpenAI replies (mem0 calls the model
    through its own OpenAI client; LangMem calls the run's chat model, and its prompts
    carry fresh uuid4 keys, so its replies could not be replayed).
    """
    if name == MEM0:
        return open_mem0(
            folder, chat_model=chat_model, embeddings=embeddings, replies=replies, scope=scope
        )
    if name == LANGMEM:
        return open_langmem(folder, chat_model=chat_model, embeddings=embeddings)
    if name == GRAPHITI:
        return open_graphiti(folder, chat_model=chat_model, embeddings=embeddings)
    raise ValueError(f"unknown peer {name!r}; choose from {', '.join(PEERS)}")


__all__ = [
    "INSTALL_HINT",
    "PACKAGES",
    "PEER_STAGE",
    "CallLog",
    "PeerIngestor",
    "PeerMemory",
    "PeerPackage",
    "PeerSystem",
    "Recalled",
    "is_peer_stage",
    "open_peer",
    "peer_stage",
    "peer_versions",
    "peers_in",
    "require_peers",
    "stage_fingerprint",
]
