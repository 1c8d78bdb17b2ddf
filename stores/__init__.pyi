# Written by `python -m lamina.core.stubs` from the mapping in __init__.py: edit that, then run it.

from .base import MemoryStore as MemoryStore
from .base import ScoredRecord as ScoredRecord
from .base import SearchMode as SearchMode
from .bm25 import BM25Index as BM25Index
from .chroma import ChromaMemoryStore as ChromaMemoryStore
from .filters import TimeWindow as TimeWindow
from .fusion import FusionConfig as FusionConfig
from .indexing import IndexTextPolicy as IndexTextPolicy
from .keyword import KeywordIndex as KeywordIndex
from .keyword import KeywordIndexFactory as KeywordIndexFactory
from .keyword import KeywordSources as KeywordSources
from .keyword import RankedIndex as RankedIndex
from .lexical import Analyzer as Analyzer
from .mirror import MirrorConfig as MirrorConfig
from .okapi import BM25Params as BM25Params
