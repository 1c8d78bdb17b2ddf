"""Node names, defined once and used by every graph and router."""

from typing import Final

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
