# Written by `python -m lamina.core.stubs` from the mapping in __init__.py: edit that, then run it.

from lamina.config import MemoryConfig as MemoryConfig
from lamina.core.context import MemoryContext as MemoryContext
from lamina.errors import LaminaError as LaminaError
from lamina.graphs.memory import build_memory_graph as build_memory_graph
from lamina.memory.facade import Memory as Memory
from lamina.memory.results import AnswerResult as AnswerResult
from lamina.memory.results import MemoryHit as MemoryHit
from lamina.stores.base import MemoryStore as MemoryStore
from lamina.stores.chroma import ChromaMemoryStore as ChromaMemoryStore
from lamina.stores.filters import TimeWindow as TimeWindow

__version__: str
