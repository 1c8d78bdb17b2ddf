# Written by `python -m lamina.core.stubs` from the mapping in __init__.py: edit that, then run it.

from ..core.arms import ResearchArms as ResearchArms
from ..core.calls import LLMCall as LLMCall
from ..core.context import MemoryContext as MemoryContext
from ..core.state import Candidate as Candidate
from ..core.state import TurnInput as TurnInput
from .checkpoint import aopen_checkpointer as aopen_checkpointer
from .checkpoint import open_checkpointer as open_checkpointer
from .checkpoint import state_serializer as state_serializer
from .ingest import build_ingest_graph as build_ingest_graph
from .memory import build_memory_graph as build_memory_graph
from .options import GraphOptions as GraphOptions
from .recall import build_recall_graph as build_recall_graph
