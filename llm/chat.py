"""``LocalChatOpenAI``: a ``ChatOpenAI`` for a local GGUF model that counts its own tokens.

LangChain's ``get_num_tokens`` would download a tokenizer; this client counts with the
served model's vocabulary, read from the GGUF file it serves (:mod:`.tokens`).
"""

from __future__ import annotations

from pathlib import Path

from langchain_openai import ChatOpenAI
from pydantic import PrivateAttr

from .tokens import EstimatedTokens, TokenCounter, gguf_counter


class LocalChatOpenAI(ChatOpenAI):
    """``ChatOpenAI`` bound to a local llama.cpp server; knows the served GGUF file."""

    gguf_path: Path | None = None
    """The GGUF file the server serves (its tokenizer counts tokens)."""
    _counter: TokenCounter | None = PrivateAttr(default=None)

    def token_counter(self) -> TokenCounter:
        """The served model's own tokenizer (an estimate if it cannot be reproduced)."""
        if self._counter is None:
            path = self.gguf_path
            self._counter = EstimatedTokens() if path is None else gguf_counter(path)
        return self._counter

    def get_num_tokens(self, text: str) -> int:
        """Tokens of ``text`` by the served model's tokenizer (no download)."""
        return self.token_counter()(text)
