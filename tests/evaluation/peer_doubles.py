"""The peer tests' doubles: a LoCoMo-shaped file, an OpenAI stub, LangMem's fake replies."""

from __future__ import annotations

import importlib.util
import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage

from lamina.llm.structured import StructuredCaller
from lamina.testing import FakeEmbeddings, SchemaChatModel, ToolCallingChatModel
from lamina_bench.evaluation.answering import Answerer
from lamina_bench.evaluation.harness import EvalModels, EvalSettings
from lamina_bench.evaluation.peers import PeerIngestor
from lamina_bench.evaluation.peers.endpoint import OpenAIEndpoint
from lamina_bench.evaluation.prompts import NOT_MENTIONED
from lamina_bench.evaluation.records import IngestStep
from lamina_bench.evaluation.subset import Subset

# mem0 and Graphiti call their model over the OpenAI HTTP API, so their tests point them at
# OpenAIStub; LangMem takes a chat model object, so its tests use lamina's scripted
# tool-calling fake. A test is skipped when its peer's package is not installed
# (``pip install './bench[peers]'``); the check looks for the package without importing it,
# because mem0 reads its telemetry switch when first imported.

needs_mem0 = pytest.mark.skipif(
    importlib.util.find_spec("mem0") is None, reason="mem0ai not installed (lamina-bench[peers])"
)
needs_langmem = pytest.mark.skipif(
    importlib.util.find_spec("langmem") is None,
    reason="langmem not installed (lamina-bench[peers])",
)
needs_graphiti = pytest.mark.skipif(
    importlib.util.find_spec("graphiti_core") is None or importlib.util.find_spec("kuzu") is None,
    reason="graphiti-core or kuzu not installed (lamina-bench[peers])",
)

DOG = "I adopted a greyhound called Biscuit last week, he is adorable."
MEMORY = "Caroline adopted a greyhound called Biscuit"
QUESTION = "What is the name of Caroline's dog?"
ANSWER = "EvalAnswer"  # the shared answer's schema

# ------------------------------------------------------------------ data


def locomo_file(path: Path) -> Path:
    """One conversation, two sessions of four turns (two batches of four), one question."""
    filler = [
        "How was your week?",
        "Busy but fine, thanks.",
        "We should meet for coffee.",
        "Yes, next month maybe.",
    ]
    session_1 = [
        {"speaker": "Melanie", "dia_id": "D1:1", "text": filler[0]},
        {"speaker": "Caroline", "dia_id": "D1:2", "text": filler[1]},
        {"speaker": "Caroline", "dia_id": "D1:3", "text": DOG},
        {"speaker": "Melanie", "dia_id": "D1:4", "text": "Lovely!"},
    ]
    session_2 = [
        {"speaker": "Melanie" if n % 2 else "Caroline", "dia_id": f"D2:{n + 1}", "text": t}
        for n, t in enumerate(filler)
    ]
    conversation = {
        "speaker_a": "Caroline",
        "speaker_b": "Melanie",
        "session_1": session_1,
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_2": session_2,
        "session_2_date_time": "10:37 am on 27 June, 2023",
    }
    qa = [{"question": QUESTION, "answer": "Biscuit", "category": 4, "evidence": ["D1:3"]}]
    path.write_text(json.dumps([{"sample_id": "conv-p", "conversation": conversation, "qa": qa}]))
    return path


# ------------------------------------------------------------------ an OpenAI stub


def _words(text: str) -> int:
    return len(text.split())


class OpenAIStub:
    """A tiny OpenAI-compatible chat endpoint on 127.0.0.1 serving canned replies.

    JSON-mode requests (mem0's extraction call) get :attr:`extract` of the request;
    ``json_schema`` requests other than the shared answer's (Graphiti's) get
    :attr:`structured` of the schema's name, the schema and the prompt; the shared
    answer's structured requests get the gold answer when it is in the prompt. The next
    :attr:`refuse` requests get HTTP 400 instead.
    """

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.refuse = 0
        self.extract: Callable[[str], str] = extraction
        self.structured: Callable[[str, dict[str, Any], str], str] = graphiti_reply
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                status, payload = stub.reply(body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}/v1"

    def extractions(self) -> list[dict[str, Any]]:
        return [
            r
            for r in self.requests
            if (r.get("response_format") or {}).get("type") == "json_object"
        ]

    def reply(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        self.requests.append(body)
        if self.refuse:
            self.refuse -= 1
            return 400, {"error": {"message": "refused by the stub", "type": "invalid_request"}}
        prompt = "\n".join(str(m.get("content", "")) for m in body["messages"])
        kind = (body.get("response_format") or {}).get("type")
        if kind == "json_object":
            content = self.extract(prompt)
        elif (
            kind == "json_schema" and body["response_format"]["json_schema"]["name"] != "EvalAnswer"
        ):
            spec = body["response_format"]["json_schema"]
            content = self.structured(spec["name"], spec["schema"], prompt)
        else:  # the shared answer (structured output)
            answer = "Biscuit" if "Biscuit" in prompt.split("Question:")[0] else NOT_MENTIONED
            content = json.dumps({"answer": answer})
        usage = {"prompt_tokens": _words(prompt), "completion_tokens": _words(content)}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        message = {"role": "assistant", "content": content}
        return 200, {
            "id": "stub",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "stub"),
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": usage,
        }

    def endpoint(self) -> OpenAIEndpoint:
        """The endpoint a peer is opened with to talk to this stub (no retries)."""
        return OpenAIEndpoint(self.url, "stub", "not-needed", 0.0, timeout=20, max_retries=0)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def extraction(prompt: str) -> str:
    """mem0's extraction reply: the dog when the new messages mention it, else nothing."""
    new = prompt.split("## New Messages")[-1].split("## Observation Date")[0]
    memories = [{"id": "0", "text": MEMORY}] if "Biscuit" in new else []
    return json.dumps({"memory": memories})


def minimal(node: dict[str, Any], root: dict[str, Any]) -> Any:
    """The smallest instance of a JSON schema: required fields only, empty lists, nulls."""
    if "$ref" in node:
        return minimal(root["$defs"][node["$ref"].rsplit("/", 1)[-1]], root)
    if "default" in node:
        return node["default"]
    if "anyOf" in node:
        options = node["anyOf"]
        return None if {"type": "null"} in options else minimal(options[0], root)
    if node.get("type") == "object":
        required = node.get("required", [])
        return {k: minimal(v, root) for k, v in node.get("properties", {}).items() if k in required}
    empty = {"array": [], "string": "", "integer": 0, "number": 0, "boolean": False}
    return empty.get(node.get("type", "null"))


def graphiti_reply(name: str, schema: dict[str, Any], prompt: str) -> str:
    """Graphiti's replies: Caroline, Biscuit and the dog fact when the current message
    mentions the dog; the smallest valid instance of every other schema."""
    tag = next((t for t in ("CURRENT MESSAGE", "CURRENT_MESSAGE") if f"<{t}>" in prompt), None)
    dog = tag is not None and "Biscuit" in prompt.split(f"<{tag}>")[-1].split(f"</{tag}>")[0]
    if name == "ExtractedEntities" and dog:
        item = minimal(schema["$defs"]["ExtractedEntity"], schema)
        found = [{**item, "name": n} for n in ("Caroline", "Biscuit")]
        return json.dumps({"extracted_entities": found})
    if name == "ExtractedEdges" and dog:
        edge = minimal(schema["$defs"]["Edge"], schema) | {
            "source_entity_name": "Caroline",
            "target_entity_name": "Biscuit",
            "relation_type": "HAS_DOG",
            "fact": MEMORY,
        }
        return json.dumps({"edges": [edge]})
    return json.dumps(minimal(schema, schema))


# ------------------------------------------------------------------ helpers


def oracle_answerer() -> tuple[Answerer, SchemaChatModel]:
    """The shared answer step on a model that answers Biscuit when it is in the context."""

    def answer(messages: list[BaseMessage]) -> str:
        context = "\n".join(str(m.content) for m in messages).split("Question:")[0]
        return json.dumps({"answer": "Biscuit" if "Biscuit" in context else NOT_MENTIONED})

    model = SchemaChatModel().script("EvalAnswer", *([answer] * 10))
    return Answerer(StructuredCaller(model), FakeEmbeddingsCounter()), model


class FakeEmbeddingsCounter:
    """Counts whitespace words (the tests need a counter, not a tokenizer)."""

    name = "words"

    def count(self, text: str) -> int:
        return _words(text)


def ingest(memory: Any, stage: str, subset: Subset) -> list[IngestStep]:
    steps: list[IngestStep] = []
    ingestor = PeerIngestor(memory=memory, batch_size=4, done=set(), record=steps.append)
    for conv in subset.conversations:
        ingestor.run(stage, conv)
    return steps


# ------------------------------------------------------------------ LangMem's replies


def langmem_reply(messages: list[BaseMessage]) -> AIMessage | str:
    """LangMem's extraction call: a Memory tool call when the dog is in the new turns."""
    text = "\n".join(str(m.content) for m in messages)
    if "Question:\n<data>" in text:  # the shared answer step
        context = text.split("Question:")[0]
        return json.dumps({"answer": "Biscuit" if "Biscuit" in context else NOT_MENTIONED})
    usage = {"input_tokens": _words(text), "output_tokens": 12, "total_tokens": _words(text) + 12}
    calls = []
    if DOG in text:  # the turn itself, not a memory of it shown back
        args = {"content": f"{MEMORY} (8 May 2023)"}
        calls = [{"name": "Memory", "args": args, "id": f"call_{len(text)}"}]
    return AIMessage("", tool_calls=calls, usage_metadata=usage)  # type: ignore[arg-type]


def langmem_model(*failures: BaseException) -> ToolCallingChatModel:
    return ToolCallingChatModel().enqueue(*failures, *([langmem_reply] * 40))


# ------------------------------------------------------------------ the harness


def settings(data: Path, out: Path, systems: list[str]) -> EvalSettings:
    return EvalSettings(data=data, out=out, systems=systems, batch_size=4, judge=False)


def stub_models(stub: OpenAIStub) -> EvalModels:
    """The run's models: a ``ChatOpenAI`` client of the stub endpoint, fake embeddings."""
    from langchain_openai import ChatOpenAI

    chat = ChatOpenAI(
        base_url=stub.url, api_key="not-needed", model="stub", max_retries=0, timeout=20
    )  # type: ignore[call-arg]
    return EvalModels(chat_model=chat, embeddings=FakeEmbeddings(), model_name="stub")
