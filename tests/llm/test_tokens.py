"""Token counting: GGUF metadata, the tokenizer built from it, and the estimate's label.

A tiny GGUF file is written here (header and metadata only), so these tests need no
model. ``tests/integration/test_tokens_local_llm.py`` checks the counts against
llama.cpp's own tokenizer on the SmolLM2 model.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest
from langchain_openai import ChatOpenAI

from lamina.errors import LocalModelError
from lamina.llm import EstimatedTokens, GGUFTokenizer, LocalLLMServer, token_counter_for
from lamina.llm.gguf_meta import read_metadata
from lamina.llm.tokens import gguf_counter

# byte-level BPE: "Ġ" is the space byte, as in GPT-2 vocabularies
TOKENS = ["<|im_start|>", "a", "b", "c", "Ġ", "ab", "Ġab", "abc", "1", "2"]
MERGES = ["a b", "Ġ ab", "ab c"]
TYPES = [3] + [1] * (len(TOKENS) - 1)


def _string(text: str) -> bytes:
    data = text.encode("utf-8")
    return struct.pack("<Q", len(data)) + data


def _kv(key: str, kind: int, payload: bytes) -> bytes:
    return _string(key) + struct.pack("<I", kind) + payload


def _strings(values: list[str]) -> bytes:
    return struct.pack("<IQ", 8, len(values)) + b"".join(_string(v) for v in values)


def write_gguf(path: Path, *, model: str = "gpt2", pre: str = "smollm", cut: int = 0) -> Path:
    entries = [
        _kv("general.name", 8, _string("tiny")),
        _kv("general.alignment", 4, struct.pack("<I", 32)),
        _kv("some.floats", 9, struct.pack("<IQ", 6, 3) + struct.pack("<3f", 1, 2, 3)),
        _kv("tokenizer.ggml.model", 8, _string(model)),
        _kv("tokenizer.ggml.pre", 8, _string(pre)),
        _kv("tokenizer.ggml.tokens", 9, _strings(TOKENS)),
        _kv("tokenizer.ggml.merges", 9, _strings(MERGES)),
        _kv(
            "tokenizer.ggml.token_type",
            9,
            struct.pack("<IQ", 5, len(TYPES)) + struct.pack(f"<{len(TYPES)}i", *TYPES),
        ),
        _kv("tokenizer.ggml.add_bos_token", 7, struct.pack("<?", False)),
    ]
    data = b"GGUF" + struct.pack("<IQQ", 3, 0, len(entries)) + b"".join(entries)
    path.write_bytes(data[: len(data) - cut] if cut else data)
    return path


def test_metadata_is_read_and_unwanted_entries_are_skipped(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "tiny.gguf")
    found = read_metadata(path, ["tokenizer.ggml.tokens", "tokenizer.ggml.token_type", "nope"])
    assert found == {"tokenizer.ggml.tokens": TOKENS, "tokenizer.ggml.token_type": TYPES}
    assert read_metadata(path, ["tokenizer.ggml.add_bos_token"]) == {
        "tokenizer.ggml.add_bos_token": False
    }


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"NOPE" + b"\0" * 40, "not a GGUF"), (b"GG", "cut off")],
)
def test_a_file_that_is_not_gguf_is_refused(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.gguf"
    path.write_bytes(content)
    with pytest.raises(LocalModelError, match=message):
        read_metadata(path, ["tokenizer.ggml.tokens"])


def test_a_cut_off_header_is_refused(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "cut.gguf", cut=7)
    with pytest.raises(LocalModelError, match="cut off"):
        read_metadata(path, ["tokenizer.ggml.add_bos_token"])


def test_the_tokenizer_applies_merges_pre_tokenizer_and_special_tokens(tmp_path: Path) -> None:
    counter = GGUFTokenizer(write_gguf(tmp_path / "tiny.gguf"))
    assert counter.ids("abc") == [TOKENS.index("abc")]
    assert counter.ids("ab ab") == [TOKENS.index("ab"), TOKENS.index("Ġab")]
    assert counter.ids("12") == [TOKENS.index("1"), TOKENS.index("2")]  # digits split
    assert counter.ids("<|im_start|>abc") == [0, TOKENS.index("abc")]  # a special token
    assert counter("ab ab") == counter.count("ab ab") == 2
    assert counter.estimated is False and "tiny.gguf" in counter.name


def test_an_unsupported_tokenizer_falls_back_to_the_labelled_estimate(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "spm.gguf", model="llama")
    with pytest.raises(LocalModelError, match="not byte-level BPE"):
        GGUFTokenizer(path).load()
    counter = gguf_counter(path)
    assert isinstance(counter, EstimatedTokens) and counter.estimated
    assert "estimated" in counter.name
    assert counter("one two three") == 4  # 3 words x 1.3, rounded up


def test_an_unknown_pre_tokenizer_is_not_guessed(tmp_path: Path) -> None:
    assert gguf_counter(write_gguf(tmp_path / "x.gguf", pre="chatglm-bpe")).estimated


def test_a_remote_model_counts_are_estimated_a_local_one_counts_exactly(tmp_path: Path) -> None:
    remote = ChatOpenAI(base_url="http://127.0.0.1:1/v1", api_key="x", model="m")
    assert token_counter_for(remote).estimated
    path = write_gguf(tmp_path / "tiny.gguf")
    server = LocalLLMServer(path, port=1, server_factory=lambda params: _NoServer())
    local = server.chat_model()
    counter = token_counter_for(local)
    assert not counter.estimated and counter("abc") == 1
    assert local.get_num_tokens("ab ab") == 2  # LangChain's API, no download
    capped: Any = local.model_copy(update={"max_tokens": 5})
    assert token_counter_for(capped) is counter  # copies keep the loaded tokenizer


class _NoServer:
    listening_address = "http://127.0.0.1:1"


def test_the_boundary_budget_counts_with_the_model_and_labels_an_estimate(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from lamina.agents.ingest.nodes.episode_trigger import _heuristic_boundary
    from lamina.core.context import MemoryContext
    from lamina.records import RawTurn

    at = datetime(2024, 5, 8, tzinfo=UTC)
    turns = [
        RawTurn(namespace="n", speaker="A", session_id="s", turn_index=i, text=t, occurred_at=at)
        for i, t in enumerate(["abc abc abc", "ab ab ab ab"])
    ]
    ctx = MemoryContext(namespace="n")
    exact = GGUFTokenizer(write_gguf(tmp_path / "tiny.gguf"))  # "abc abc abc": 5 tokens
    saturated = _heuristic_boundary(ctx, turns[:1], turns[1], exact, max_tokens=6)
    assert saturated == "saturation: 9 tokens > 6"
    estimate = _heuristic_boundary(ctx, turns[:1], turns[1], EstimatedTokens(), max_tokens=6)
    assert estimate == "saturation: 10 tokens (estimated) > 6"
