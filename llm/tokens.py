"""Count tokens the way the serving model does, or say that a count is an estimate.

:class:`GGUFTokenizer` builds the serving model's own byte-level BPE tokenizer (with the
``tokenizers`` library) from the vocabulary, merges and special tokens stored in its GGUF
file, and splits text the way llama.cpp does for that model's pre-tokenizer. Nothing is
downloaded. :class:`EstimatedTokens` (words x 1.3) stands in when the tokenizer is not
known (a remote endpoint); its ``estimated`` flag lets results and reports say so.

Every counter is a callable ``text -> int`` with a ``name`` and an ``estimated`` flag.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ..errors import LocalModelError
from .gguf_meta import read_metadata

QWEN2_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
"""Qwen2's pre-tokenizer: words with their leading mark, single digits, punctuation runs."""
LLAMA3_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
"""Llama 3's pre-tokenizer: as Qwen2's, but numbers in groups of up to three digits."""
_KEYS = (
    "tokenizer.ggml.model",
    "tokenizer.ggml.pre",
    "tokenizer.ggml.tokens",
    "tokenizer.ggml.merges",
    "tokenizer.ggml.token_type",
)
_SPECIAL_TYPES = frozenset({3, 4})  # llama.cpp token types CONTROL and USER_DEFINED


@runtime_checkable
class TokenCounter(Protocol):
    """Counts the tokens of a text."""

    name: str
    """What counts: the tokenizer, or the estimate."""
    estimated: bool
    """True when the count is an estimate, not the serving model's own tokenizer."""

    def __call__(self, text: str) -> int:
        """Tokens of ``text`` (no BOS/EOS or chat template added)."""
        ...


class EstimatedTokens:
    """An estimate, words x 1.3, for models whose tokenizer lamina cannot run."""

    name = "estimated (words x 1.3)"
    estimated = True

    def __call__(self, text: str) -> int:
        """Approximate tokens of ``text``."""
        return int(len(text.split()) * 1.3 + 0.999)

    count = __call__

    def __repr__(self) -> str:
        return "EstimatedTokens()"


def _pre_tokenizer(pre: str) -> Any:
    from tokenizers import Regex, pre_tokenizers

    def split(pattern: str) -> Any:
        return pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )

    if pre in ("qwen2", "deepseek-r1-qwen"):
        return split(QWEN2_SPLIT)
    if pre in ("llama3", "llama-bpe", "llama-v3"):
        return split(LLAMA3_SPLIT)
    if pre == "smollm":
        return pre_tokenizers.Sequence(
            [
                pre_tokenizers.Digits(individual_digits=True),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
            ]
        )
    if pre in ("default", "gpt2", "gpt-2", ""):
        return pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    raise LocalModelError(
        f"lamina cannot reproduce the {pre!r} pre-tokenizer; token counts for this "
        "model are estimated"
    )


def build_tokenizer(metadata: dict[str, Any]) -> Any:
    """A ``tokenizers.Tokenizer`` from a GGUF file's tokenizer metadata.

    Raises:
        LocalModelError: The model's tokenizer is not byte-level BPE (``gpt2``) or its
            pre-tokenizer is one lamina does not reproduce.
    """
    from tokenizers import AddedToken, Tokenizer, models

    kind = metadata.get("tokenizer.ggml.model")
    if kind != "gpt2":
        raise LocalModelError(
            f"the model's tokenizer is {kind!r}, not byte-level BPE; token counts for this "
            "model are estimated"
        )
    tokens: list[str] = metadata["tokenizer.ggml.tokens"]
    merges = [tuple(m.split(" ", 1)) for m in metadata.get("tokenizer.ggml.merges", [])]
    vocab = {token: n for n, token in enumerate(tokens)}
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tokenizer.pre_tokenizer = _pre_tokenizer(str(metadata.get("tokenizer.ggml.pre", "default")))
    types: Sequence[int] = metadata.get("tokenizer.ggml.token_type") or []
    specials = [
        AddedToken(tokens[n], special=True, normalized=False)
        for n, kind in enumerate(types)
        if kind in _SPECIAL_TYPES
    ]
    if specials:
        tokenizer.add_special_tokens(specials)
    return tokenizer


class GGUFTokenizer:
    """The serving model's own tokenizer, read from its GGUF file on first use.

    Checked against llama.cpp's own ``/tokenize`` by ``benchmarks/tokenizer_parity.py``.

    Args:
        path: The model's ``.gguf`` file (the one llama.cpp serves).
    """

    estimated = False

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.name = f"{self.path.name} tokenizer (from its GGUF vocabulary)"
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    def _loaded(self) -> Any:
        with self._lock:
            if self._tokenizer is None:
                self._tokenizer = build_tokenizer(read_metadata(self.path, _KEYS))
            return self._tokenizer

    def load(self) -> GGUFTokenizer:
        """Read the vocabulary now (it is read on the first count otherwise)."""
        self._loaded()
        return self

    def __call__(self, text: str) -> int:
        """Tokens of ``text``, special tokens included, no BOS/EOS or template."""
        return len(self._loaded().encode(text, add_special_tokens=False).ids)

    count = __call__

    def ids(self, text: str) -> list[int]:
        """The token ids of ``text``."""
        return list(self._loaded().encode(text, add_special_tokens=False).ids)

    def __repr__(self) -> str:
        return f"GGUFTokenizer({str(self.path)!r})"


def gguf_counter(path: Path | str) -> TokenCounter:
    """The GGUF file's own tokenizer, or the estimate when it cannot be reproduced."""
    counter = GGUFTokenizer(path)
    try:
        return counter.load()
    except LocalModelError:
        return EstimatedTokens()


class DeferredTokens:
    """:func:`token_counter_for` a model, looked up at the first count, not before.

    Building a graph must not wait for a tokenizer: a served GGUF model's vocabulary is
    read when the first text is counted (about 0.8 s for Qwen's). ``name`` and
    ``estimated`` look the counter up too.
    """

    def __init__(self, model: object) -> None:
        self._model = model
        self._counter: TokenCounter | None = None
        self._lock = threading.Lock()

    def counter(self) -> TokenCounter:
        """The model's counter, looked up once."""
        with self._lock:
            if self._counter is None:
                self._counter = token_counter_for(self._model)
            return self._counter

    @property
    def name(self) -> str:
        """What counts: the tokenizer, or the estimate."""
        return self.counter().name

    @property
    def estimated(self) -> bool:
        """True when the count is an estimate."""
        return self.counter().estimated

    def __call__(self, text: str) -> int:
        """Tokens of ``text``."""
        return self.counter()(text)

    def __repr__(self) -> str:
        return f"DeferredTokens({type(self._model).__name__})"


def token_counter_for(model: object) -> TokenCounter:
    """The token counter of a chat model: its own tokenizer when it offers one.

    A model served from a GGUF file by :class:`~lamina.llm.LocalLLMServer` offers it
    (``model.token_counter()``); any other model gets :class:`EstimatedTokens`.
    """
    offer = getattr(model, "token_counter", None)
    if callable(offer):
        counter = offer()
        if isinstance(counter, TokenCounter):
            return counter
    return EstimatedTokens()
