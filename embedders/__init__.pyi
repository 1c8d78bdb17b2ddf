# Written by `python -m lamina.core.stubs` from the mapping in __init__.py: edit that, then run it.

from .choice import make_embeddings as make_embeddings
from .cross_encoder import OnnxCrossEncoder as OnnxCrossEncoder
from .minilm import MiniLMEmbeddingFunction as MiniLMEmbeddingFunction
from .minilm import MiniLMEmbeddings as MiniLMEmbeddings
from .minilm import OnnxMiniLM as OnnxMiniLM
from .static import StaticEmbeddings as StaticEmbeddings
