"""Offline chat models: GGUF files from PyPI packages, served in-process by llama.cpp."""

from .gguf import (
    QWEN_GGUF_SIZE,
    assemble_qwen_gguf,
    check_gguf,
    concat_parts,
    default_model_dir,
    local_model_path,
    qwen_part_paths,
    smollm2_gguf_path,
)
from .local import LocalLLMServer, ServerHandle, default_threads
from .tokens import EstimatedTokens, GGUFTokenizer, TokenCounter, token_counter_for

__all__ = [
    "EstimatedTokens",
    "GGUFTokenizer",
    "TokenCounter",
    "token_counter_for",
    "QWEN_GGUF_SIZE",
    "LocalLLMServer",
    "ServerHandle",
    "assemble_qwen_gguf",
    "check_gguf",
    "concat_parts",
    "default_model_dir",
    "default_threads",
    "local_model_path",
    "qwen_part_paths",
    "smollm2_gguf_path",
]
