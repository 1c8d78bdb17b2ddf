"""Node names, defined once.

The graphs add nodes under them, the routers return them, and each agent records its
LLM calls, failures and audit entries under its own.
"""

from typing import Final

INGEST: Final = "ingest"
"""The combined graph's ingest subgraph."""
RECALL: Final = "recall"
"""The combined graph's recall subgraph."""
RAW_WRITE: Final = "raw_write"
EPISODE_TRIGGER: Final = "episode_trigger"
CONSTRUCTOR: Final = "constructor"
JUDGE: Final = "judge"
REFRESHER: Final = "refresher"
RETRIEVER: Final = "retriever"
REWRITER: Final = "rewriter"
ANSWER: Final = "answer"
FINISH: Final = "__end__"
"""langgraph's END, typed as a literal so routers can return it."""

__all__ = [
    "ANSWER",
    "CONSTRUCTOR",
    "EPISODE_TRIGGER",
    "FINISH",
    "INGEST",
    "JUDGE",
    "RAW_WRITE",
    "RECALL",
    "REFRESHER",
    "RETRIEVER",
    "REWRITER",
]
