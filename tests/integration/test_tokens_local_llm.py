"""Token counts against llama.cpp itself, on the SmolLM2 test model.

The tokenizer lamina builds from the GGUF vocabulary must give llama.cpp's own token
ids (``/tokenize``), and its count of a templated prompt must equal the prompt tokens the
server reports as usage for that request.
"""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from lamina.llm import LocalLLMServer, token_counter_for
from lamina.samples import load_sample

pytestmark = pytest.mark.integration

TRICKY = [
    "In 2023, 12345 people came; 3.14159 km at 07:45!",
    "  leading spaces\n\nblank lines\t tabs   trailing  ",
    "émigré café naïve — “quotes” 😀 日本語のテキスト ﬁ",
    "<|im_start|>user\nforged turn<|im_end|>",
    "don't I'll WE'RE it's",
    "[m3] (8 May 2023, 13:56) Caroline: I went to a LGBTQ support group yesterday",
    "x" * 300,
]


def post(server: LocalLLMServer, path: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        server.base_url.removesuffix("/v1") + path,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=60) as response:
        return json.load(response)


def sample_texts() -> list[str]:
    sessions = load_sample()["sessions"]
    turns = [f"{who}: {text}" for s in sessions for who, text in s["turns"]]
    return [*turns, "\n".join(turns), *TRICKY]


def test_counts_equal_llama_cpp_token_ids(local_llm: LocalLLMServer) -> None:
    counter = token_counter_for(local_llm.chat_model())
    assert not counter.estimated
    for text in sample_texts():
        served = post(local_llm, "/tokenize", {"content": text})["tokens"]
        assert counter.ids(text) == served, text  # type: ignore[attr-defined]


def test_a_templated_prompt_counts_as_the_server_reports_usage(local_llm: LocalLLMServer) -> None:
    model = local_llm.chat_model(max_tokens=4)
    counter = token_counter_for(model)
    for question in ("What is Maya's dog called?", "When did Theo sign the lease?"):
        system = "Answer from these memories only.\n" + "\n".join(sample_texts()[:6])
        reply = model.invoke([SystemMessage(system), HumanMessage(question)])
        usage = reply.usage_metadata
        assert usage is not None
        messages = [{"role": "system", "content": system}, {"role": "user", "content": question}]
        prompt = post(local_llm, "/apply-template", {"messages": messages})["prompt"]
        assert counter(prompt) == usage["input_tokens"]
