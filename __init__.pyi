# Written by `python -m lamina.core.stubs` from the mapping in __init__.py: edit that, then run it.

from .config import MemoryConfig as MemoryConfig
from .core.context import MemoryContext as MemoryContext
from .errors import LaminaError as LaminaError
from .graphs.memory import build_memory_graph as build_memory_graph
from .memory.facade import Memory as Memory
from .memory.results import AnswerResult as AnswerResult
from .memory.results import MemoryHit as MemoryHit
from .stores.base import MemoryStore as MemoryStore
from .stores.chroma import ChromaMemoryStore as ChromaMemoryStore
from .stores.filters import TimeWindow as TimeWindow

__version__: str
