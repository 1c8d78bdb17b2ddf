"""The peer systems (mem0, LangMem, Graphiti) in ``lamina eval``: turns in, a question out.

mem0 and Graphiti call their model over the OpenAI HTTP API, so their tests point them at a
tiny local stub that serves canned OpenAI-format replies (and refuses or garbles some on
purpose; Graphiti's structured requests get a valid instance of the schema they send); LangMem
takes a chat model object, so its tests use lamina's scripted tool-calling fake. Both
write real stores under a temporary folder. Each test is skipped when its peer's package
is not installed (``pip install 'lamina[peers]'``); the check looks for the package
without importing it, because mem0 reads its telemetry switch when first imported.
"""

from __future__ import annotations

import importlib.util
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage

from lamina.cli import build_parser
from lamina.commands import eval as eval_command
from lamina.errors import InvalidInputError
from lamina.evaluation import peers as peers_package
from lamina.evaluation.answering import Answerer
from lamina.evaluation.assembly import needed_stages
from lamina.evaluation.harness import EvalModels, EvalSettings, run_evaluation
from lamina.evaluation.peers import PeerIngestor, PeerSystem, peer_stage, require_peers
from lamina.evaluation.peers.costs import CallLog
from lamina.evaluation.records import IngestStep, Journal, ingests_of
from lamina.evaluation.subset import Subset, load_subset
from lamina.llm.structured import StructuredCaller
from lamina.prompts.eval import NOT_MENTIONED
from lamina.testing import FakeEmbeddings, SchemaChatModel, ToolCallingChatModel

needs_mem0 = pytest.mark.skipif(
    importlib.util.find_spec("mem0") is None, reason="mem0ai not installed (lamina[peers])"
)
needs_langmem = pytest.mark.skipif(
    importlib.util.find_spec("langmem") is None, reason="langmem not installed (lamina[peers])"
)
needs_graphiti = pytest.mark.skipif(
    importlib.util.find_spec("graphiti_core") is None or importlib.util.find_spec("kuzu") is None,
    reason="graphiti-core or kuzu not installed (lamina[peers])",
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


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return locomo_file(tmp_path / "locomo.json")


@pytest.fixture
def subset(data: Path) -> Subset:
    return load_subset(data, conversations=None)


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


@pytest.fixture
def stub() -> Iterator[OpenAIStub]:
    server = OpenAIStub()
    yield server
    server.close()


@pytest.fixture
def mem0_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """mem0's telemetry off and its home folder under the test's folder."""
    monkeypatch.setenv("MEM0_TELEMETRY", "False")
    monkeypatch.setenv("MEM0_DIR", str(tmp_path / "mem0-home"))


def open_stub_mem0(folder: Path, stub: OpenAIStub) -> Any:
    from lamina.evaluation.peers.mem0_peer import OpenAIEndpoint, open_mem0

    endpoint = OpenAIEndpoint(stub.url, "stub", "not-needed", 0.0, timeout=20, max_retries=0)
    return open_mem0(folder, chat_model=None, embeddings=FakeEmbeddings(), endpoint=endpoint)


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


# ------------------------------------------------------------------ mem0


@needs_mem0
@pytest.mark.usefixtures("mem0_env")
def test_mem0_writes_searches_answers_and_counts(
    tmp_path: Path, stub: OpenAIStub, subset: Subset
) -> None:
    memory = open_stub_mem0(tmp_path / "stage", stub)
    steps = ingest(memory, "peer-mem0", subset)

    assert [(s.batch, s.batches, s.turns) for s in steps] == [(0, 2, 4), (1, 2, 4)]
    assert [s.written for s in steps] == [1, 0]
    assert [s.failures for s in steps] == [0, 0] and all(s.error is None for s in steps)
    for step, request in zip(steps, stub.extractions(), strict=True):
        cost = step.construction["mem0"]
        assert cost.calls == 1 and cost.unknown_calls == 0
        assert cost.prompt_tokens > 50 and cost.completion_tokens > 0
        assert request["response_format"] == {"type": "json_object"}  # mem0's own JSON mode
        assert request["temperature"] == 0.0  # the run's temperature
    first = stub.extractions()[0]["messages"][1]["content"]
    assert f"(8 May 2023, 13:56) Caroline: {DOG}" in first  # dated, named turns
    assert (tmp_path / "stage" / "mem0" / "chroma").is_dir()
    assert (tmp_path / "stage" / "mem0" / "history.db").is_file()

    (hit, *_) = memory.search("conv-p", QUESTION, 20)
    assert hit.text == MEMORY and hit.dia_ids == ["D1:1", "D1:2", "D1:3", "D1:4"]
    assert hit.on is not None and hit.on.date().isoformat() == "2023-05-08"
    assert memory.search("conv-other", QUESTION, 20) == []  # one user id per conversation

    answerer, model = oracle_answerer()
    system = PeerSystem("mem0", "peer-mem0", memory, answerer, FakeEmbeddingsCounter(), 20)
    conv = subset.conversations[0]
    (question,) = subset.questions["conv-p"]
    answer = system.answer(conv, question)
    assert answer.answer == "Biscuit" and "D1:3" in answer.used
    assert answer.context_tokens > 0 and answer.costs["eval_answer"].calls == 1
    assert answer.failures == 0 and not answer.notes
    (_, prompt) = model.calls[0]
    assert f"(8 May 2023) {MEMORY}" in "\n".join(str(m.content) for m in prompt)


@needs_mem0
@pytest.mark.usefixtures("mem0_env")
def test_a_mem0_batch_that_raises_is_retried_once_then_recorded_failed(
    tmp_path: Path, stub: OpenAIStub, subset: Subset
) -> None:
    memory = open_stub_mem0(tmp_path / "stage", stub)
    stub.refuse = 2  # both tries of the first batch get HTTP 400
    steps = ingest(memory, "peer-mem0", subset)

    failed, after = steps
    assert failed.batch == 0 and failed.failures == 2 and failed.written == 0
    assert failed.error is not None and "BadRequestError (HTTP 400)" in failed.error
    assert failed.construction["mem0"].calls == 2  # both tries are counted
    assert after.batch == 1 and after.error is None and after.failures == 0  # the run goes on
    assert len(stub.requests) == 3


@needs_mem0
@pytest.mark.usefixtures("mem0_env")
def test_a_mem0_batch_that_fails_once_is_kept_from_the_retry(
    tmp_path: Path, stub: OpenAIStub, subset: Subset
) -> None:
    memory = open_stub_mem0(tmp_path / "stage", stub)
    stub.refuse = 1
    first, _ = ingest(memory, "peer-mem0", subset)
    assert first.error is None and first.failures == 1 and first.written == 1
    assert first.construction["mem0"].calls == 2


@needs_mem0
@pytest.mark.usefixtures("mem0_env")
def test_mem0_output_it_cannot_parse_is_counted_as_a_failure(
    tmp_path: Path, stub: OpenAIStub, subset: Subset
) -> None:
    memory = open_stub_mem0(tmp_path / "stage", stub)
    stub.extract = lambda prompt: "Sure! Here are the memories you asked for."
    steps = ingest(memory, "peer-mem0", subset)
    assert [s.failures for s in steps] == [1, 1]  # mem0 logged it and went on
    assert [s.written for s in steps] == [0, 0] and all(s.error is None for s in steps)


@needs_mem0
@pytest.mark.usefixtures("mem0_env")
def test_a_model_server_that_refuses_connections_stops_the_run(
    tmp_path: Path, stub: OpenAIStub, subset: Subset
) -> None:
    memory = open_stub_mem0(tmp_path / "stage", stub)
    stub.close()  # nothing listens any more: a retry cannot help, every batch would fail
    with pytest.raises(Exception, match="Connection|connect"):
        ingest(memory, "peer-mem0", subset)


# ------------------------------------------------------------------ LangMem


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


def open_fake_langmem(folder: Path, model: ToolCallingChatModel) -> Any:
    from lamina.evaluation.peers.langmem_peer import open_langmem

    return open_langmem(folder, chat_model=model, embeddings=FakeEmbeddings())


@needs_langmem
def test_langmem_writes_searches_answers_counts_and_reopens(tmp_path: Path, subset: Subset) -> None:
    model = langmem_model()
    memory = open_fake_langmem(tmp_path / "stage", model)
    steps = ingest(memory, "peer-langmem", subset)

    assert [(s.batch, s.turns) for s in steps] == [(0, 4), (1, 4)]
    assert steps[0].written == 1 and steps[1].written == 0
    for step in steps:
        cost = step.construction["langmem"]
        assert cost.calls >= 1 and cost.unknown_calls == 0
        assert cost.prompt_tokens > 50 and cost.completion_tokens == 12 * cost.calls
    assert sum(s.construction["langmem"].calls for s in steps) == len(model.calls)
    assert f"(8 May 2023, 13:56) Caroline: {DOG}" in "\n".join(
        str(m.content) for m in model.calls[0]
    )
    assert (tmp_path / "stage" / "langmem" / "store.json").is_file()

    reopened = open_fake_langmem(tmp_path / "stage", langmem_model())  # a resumed run
    for peer in (memory, reopened):
        (hit,) = peer.search("conv-p", QUESTION, 10)
        assert hit.text == f"{MEMORY} (8 May 2023)" and "D1:3" in hit.dia_ids
        assert hit.on is not None and hit.on.date().isoformat() == "2023-05-08"
        assert peer.search("conv-other", QUESTION, 10) == []  # a namespace per conversation

    answerer, _ = oracle_answerer()
    system = PeerSystem("langmem", "peer-langmem", reopened, answerer, FakeEmbeddingsCounter(), 10)
    (question,) = subset.questions["conv-p"]
    answer = system.answer(subset.conversations[0], question)
    assert answer.answer == "Biscuit" and "D1:3" in answer.used and answer.context_tokens > 0


@needs_langmem
def test_a_langmem_batch_that_raises_is_retried_once_then_recorded_failed(
    tmp_path: Path, subset: Subset
) -> None:
    model = langmem_model(RuntimeError("model down"), RuntimeError("model down"))
    failed, after = ingest(open_fake_langmem(tmp_path / "stage", model), "peer-langmem", subset)
    assert failed.failures == 2 and failed.written == 0 and failed.error == "RuntimeError"
    assert failed.construction["langmem"].calls == 2  # the failed calls are counted too
    assert after.error is None and after.failures == 0


def langmem_reply_in_text(messages: list[BaseMessage]) -> AIMessage:
    """What Qwen2.5-Coder 1.5B does: the Memory call printed as a JSON block, no tool call."""
    usage = {"input_tokens": 100, "output_tokens": 30, "total_tokens": 130}
    text = '```json\n{"name": "Memory", "arguments": {"content": "Caroline has a dog"}}\n```'
    return AIMessage(text, usage_metadata=usage)  # type: ignore[arg-type]


@needs_langmem
def test_a_langmem_reply_in_text_instead_of_a_tool_call_is_counted_unusable(
    tmp_path: Path, subset: Subset
) -> None:
    model = ToolCallingChatModel().enqueue(*([langmem_reply_in_text] * 10))
    steps = ingest(open_fake_langmem(tmp_path / "stage", model), "peer-langmem", subset)
    assert [s.written for s in steps] == [0, 0]
    assert all(s.error is None for s in steps)  # not a raise: the batch is not retried
    assert [s.failures for s in steps] == [s.construction["langmem"].calls for s in steps]
    assert sum(s.failures for s in steps) == len(model.calls) >= 2

    tool_calls = langmem_model()  # a model that answers with tool calls is not counted
    fine = ingest(open_fake_langmem(tmp_path / "other", tool_calls), "peer-langmem", subset)
    assert [s.failures for s in fine] == [0, 0]


def test_a_peer_search_that_raises_still_answers_and_says_so(subset: Subset) -> None:
    class Broken:
        log = CallLog("broken", "test")

        def add(self, conversation: str, turns: Any) -> int:
            return 0

        def search(self, conversation: str, query: str, k: int) -> list[Any]:
            raise ValueError("index gone")

    answerer, _ = oracle_answerer()
    system = PeerSystem("broken", "peer-broken", Broken(), answerer, FakeEmbeddingsCounter(), 5)
    (question,) = subset.questions["conv-p"]
    answer = system.answer(subset.conversations[0], question)
    assert answer.answer == NOT_MENTIONED and answer.used == [] and answer.context_tokens == 0
    assert answer.failures == 1 and answer.notes == ["broken search failed: ValueError"]


# ------------------------------------------------------------------ Graphiti


def open_stub_graphiti(folder: Path, stub: OpenAIStub) -> Any:
    from lamina.evaluation.peers.graphiti_peer import OpenAIEndpoint, open_graphiti

    endpoint = OpenAIEndpoint(stub.url, "stub", "not-needed", 0.0, timeout=20, max_retries=0)
    return open_graphiti(folder, chat_model=None, embeddings=FakeEmbeddings(), endpoint=endpoint)


def schema_names(stub: OpenAIStub) -> list[str]:
    formats = [r.get("response_format") or {} for r in stub.requests]
    return [f["json_schema"]["name"] for f in formats if f.get("type") == "json_schema"]


@needs_graphiti
def test_graphiti_writes_searches_answers_counts_and_reopens(
    tmp_path: Path, stub: OpenAIStub, subset: Subset
) -> None:
    memory = open_stub_graphiti(tmp_path / "stage", stub)
    steps = ingest(memory, "peer-graphiti", subset)

    assert [(s.batch, s.batches, s.turns) for s in steps] == [(0, 2, 4), (1, 2, 4)]
    assert [s.written for s in steps] == [1, 0]  # the dog fact, then nothing
    assert [s.failures for s in steps] == [0, 0] and all(s.error is None for s in steps)
    calls = [s.construction["graphiti"].calls for s in steps]
    assert sum(calls) == len(stub.requests) and all(c >= 1 for c in calls)
    assert all(s.construction["graphiti"].prompt_tokens > 50 for s in steps)
    assert {"ExtractedEntities", "ExtractedEdges"} <= set(schema_names(stub))
    assert all(r["temperature"] == 1.0 for r in stub.requests)  # Graphiti's own default
    prompts = ["\n".join(str(m["content"]) for m in r["messages"]) for r in stub.requests]
    assert any(f"(8 May 2023, 13:56) Caroline: {DOG}" in p for p in prompts)
    folder = tmp_path / "stage" / "graphiti"
    assert (folder / "conv-p.kuzu").exists() and (folder / "sources.jsonl").is_file()

    (hit, *_) = memory.search("conv-p", QUESTION, 10)
    assert hit.text == MEMORY and hit.dia_ids == ["D1:1", "D1:2", "D1:3", "D1:4"]
    assert hit.on is not None and hit.on.date().isoformat() == "2023-05-08"
    assert memory.search("conv-other", QUESTION, 10) == []  # a graph per conversation
    assert not (folder / "conv-other.kuzu").exists()  # a search creates no graph
    memory.close()

    reopened = open_stub_graphiti(tmp_path / "stage", stub)  # a resumed run
    assert reopened.search("conv-p", QUESTION, 10)[0] == hit

    answerer, model = oracle_answerer()
    counter = FakeEmbeddingsCounter()
    system = PeerSystem("graphiti", "peer-graphiti", reopened, answerer, counter, 10)
    (question,) = subset.questions["conv-p"]
    answer = system.answer(subset.conversations[0], question)
    assert answer.answer == "Biscuit" and "D1:3" in answer.used and answer.context_tokens > 0
    (_, prompt) = model.calls[0]
    assert f"(8 May 2023) {MEMORY}" in "\n".join(str(m.content) for m in prompt)


@needs_graphiti
def test_a_graphiti_batch_the_model_refuses_is_retried_once_then_recorded_failed(
    tmp_path: Path, stub: OpenAIStub, subset: Subset
) -> None:
    memory = open_stub_graphiti(tmp_path / "stage", stub)
    stub.refuse = 2  # the first call of the batch and the first call of its retry
    failed, after = ingest(memory, "peer-graphiti", subset)
    assert failed.failures == 2 and failed.written == 0 and failed.error
    assert failed.construction["graphiti"].calls >= 2  # the refused calls are counted too
    assert after.error is None and after.failures == 0


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


@needs_mem0
@pytest.mark.usefixtures("mem0_env")
def test_lamina_eval_runs_mem0_as_its_own_resumable_stage(
    data: Path, tmp_path: Path, stub: OpenAIStub
) -> None:
    models = stub_models(stub)
    run = run_evaluation(settings(data, tmp_path / "run", ["mem0"]), models, progress=False)

    (result,) = run.results
    assert result.system == "mem0" and result.answer == "Biscuit" and result.turn_recall == 1.0
    assert [(i.stage, i.batch) for i in run.ingests] == [("peer-mem0", 0), ("peer-mem0", 1)]
    (folder,) = (p for p in (tmp_path / "construction").iterdir() if p.is_dir())
    assert folder.name.startswith("peer-mem0-") and (folder / "mem0" / "chroma").is_dir()
    assert not (folder / "chroma").exists()  # lamina's own store is never opened there
    summary = json.loads((run.out / "results.json").read_text())
    assert summary["summary"]["construction"]["peer-mem0"]["llm_calls"] == 2
    assert summary["meta"]["peers"]["mem0"]["package"].startswith("mem0ai 2.")
    report = (run.out / "report.md").read_text()
    assert "- **peer packages**: mem0ai 2." in report
    assert "`mem0` (mem0ai 2." in report and "top-20 memories" in report
    assert "tokens / turn" in report

    calls = len(stub.extractions())
    again = run_evaluation(settings(data, tmp_path / "run2", ["mem0"]), models, progress=False)
    assert len(stub.extractions()) == calls  # the built memory is reused batch by batch
    assert [r.answer for r in again.results] == ["Biscuit"]
    assert len(ingests_of(Journal(run.out / "journal.jsonl").read())) == 2


def _committed(root: Path, there: Path, names: tuple[str, ...]) -> None:
    """Copy the named files of a construction folder, and LangMem's snapshot, to ``there``."""
    for path in root.rglob("*"):
        relative = path.relative_to(root)
        if path.is_file() and (relative.name in names or "langmem" in relative.parts[1:2]):
            (there / relative).parent.mkdir(parents=True, exist_ok=True)
            (there / relative).write_bytes(path.read_bytes())


@needs_mem0
@pytest.mark.usefixtures("mem0_env")
def test_mem0_memory_is_rebuilt_elsewhere_from_its_kept_replies(
    data: Path, tmp_path: Path, stub: OpenAIStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    models = stub_models(stub)
    first = settings(data, tmp_path / "run", ["mem0"])
    run_evaluation(first, models, progress=False)
    calls = len(stub.extractions())
    assert calls == 2 and (tmp_path / "construction" / "openai-replies.jsonl").is_file()
    # another machine: only the journal and the kept replies came over, not mem0's store
    there = tmp_path / "elsewhere"
    _committed(tmp_path / "construction", there, ("ingest.jsonl", "openai-replies.jsonl"))
    again = replace(settings(data, tmp_path / "run2", ["mem0"]), construction_dir=there)
    rebuilt = run_evaluation(again, models, progress=False)
    assert len(stub.extractions()) == calls  # mem0 was answered from the kept replies
    # under a new key (a new adapter version, say) the same requests are answered from the
    # file again, and its batches say their seconds are not the model's
    monkeypatch.setattr(peers_package, "ADAPTER_VERSION", "next")
    newer = run_evaluation(replace(again, out=tmp_path / "run3"), models, progress=False)
    assert len(stub.extractions()) == calls
    assert [i.kept_replies for i in newer.ingests] == [1, 1]
    assert [r.answer for r in rebuilt.results] == ["Biscuit"]  # from the rebuilt store
    assert (next(there.glob("peer-mem0-*")) / "mem0" / "chroma").is_dir()


def test_a_kept_openai_reply_is_found_on_another_day_but_not_for_another_request() -> None:
    from lamina.evaluation.peers.kept_openai import completion_key

    def asked(on: str, said: str = "moved on 2023-05-08") -> dict[str, Any]:
        return {"model": "qwen", "messages": [{"content": f"Today is {on}. {said}"}]}

    monday = completion_key(asked("2026-11-23"), "q", days=lambda: {"2026-11-23"})
    tuesday = completion_key(asked("2026-11-24"), "q", days=lambda: {"2026-11-24"})
    assert monday == tuesday  # mem0 writes the build day into its prompt
    other = asked("2026-11-24", said="moved on 2023-05-09")
    assert completion_key(other, "q", days=lambda: {"2026-11-24"}) != tuesday
    assert completion_key(asked("2026-11-24"), "other model", days=lambda: {"2026-11-24"}) != (
        tuesday
    )


@needs_langmem
def test_a_langmem_snapshot_copied_with_its_built_list_is_not_built_again(
    data: Path, tmp_path: Path
) -> None:
    models = EvalModels(chat_model=langmem_model(), embeddings=FakeEmbeddings(), model_name="f")
    run_evaluation(settings(data, tmp_path / "run", ["langmem"]), models, progress=False)
    there = tmp_path / "elsewhere"
    _committed(tmp_path / "construction", there, ("ingest.jsonl", "built.jsonl"))
    model = langmem_model()
    again = replace(settings(data, tmp_path / "run2", ["langmem"]), construction_dir=there)
    moved = EvalModels(chat_model=model, embeddings=FakeEmbeddings(), model_name="f")
    (result,) = run_evaluation(again, moved, progress=False).results
    assert len(model.calls) == 1 and result.answer == "Biscuit"  # the answer; nothing built


@needs_langmem
def test_lamina_eval_runs_langmem_as_its_own_stage(data: Path, tmp_path: Path) -> None:
    model = langmem_model()
    models = EvalModels(chat_model=model, embeddings=FakeEmbeddings(), model_name="fake")
    run = run_evaluation(settings(data, tmp_path / "run", ["langmem"]), models, progress=False)
    (result,) = run.results
    assert result.system == "langmem" and result.answer == "Biscuit"
    assert result.turn_recall == 1.0 and result.answering["eval_answer"].calls == 1
    assert {i.stage for i in run.ingests} == {"peer-langmem"}
    report = (run.out / "report.md").read_text()
    assert "- **peer packages**: langmem 0." in report and "top-10 memories" in report


def test_peers_have_their_own_stages() -> None:
    base = settings(Path("x.json"), Path("out"), ["mem0", "langmem", "flat", "graphiti", "mem0"])
    assert needed_stages(base) == ["peer-mem0", "peer-langmem", "raw", "peer-graphiti"]
    assert peer_stage("mem0") == "peer-mem0"


def test_a_missing_peer_package_is_refused_before_any_model(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        return None if name in ("mem0", "langmem") else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)

    def no_models(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("models were built before the peers were checked")

    monkeypatch.setattr(eval_command, "build_models", no_models)
    argv = ["eval", "--data", str(data), "--systems", "flat", "mem0", "--out", str(tmp_path)]
    args = build_parser().parse_args(argv)
    with pytest.raises(
        InvalidInputError, match=r"mem0 needs mem0ai.*pip install 'lamina\[peers\]'"
    ):
        eval_command.run_eval(args)
    with pytest.raises(InvalidInputError, match="langmem needs langmem"):
        require_peers(["langmem"])
    with pytest.raises(InvalidInputError, match="pip install 'lamina"):
        settings(data, tmp_path / "out", ["mem0"]).validate()
    require_peers(["flat", "lamina"])  # no peer: nothing to check
