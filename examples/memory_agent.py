"""A chat agent with long-term memory: create_agent + MemoryMiddleware + memory tools.

Start a model server in one terminal and chat in another (each line is one user turn)::

    .venv/bin/lamina serve-llm            # local Qwen at http://127.0.0.1:8080/v1
    .venv/bin/python examples/memory_agent.py --user alice

or use any OpenAI-compatible endpoint instead of the local server::

    export OPENAI_BASE_URL=https://api.openai.com/v1 OPENAI_API_KEY=sk-... OPENAI_MODEL=gpt-4o-mini
    .venv/bin/python examples/memory_agent.py --user alice

Every run is a new conversation, but memories persist (in ``LAMINA_DATA_DIR``, default
``~/.local/share/lamina``): run it again with the same ``--user`` and ask about what you
said before. The middleware recalls memories before each model call and stores every
exchange; the tools let the model search, remember and forget on its own. Type ``/quit``
or press Ctrl-D to stop.
"""

from __future__ import annotations

import argparse
import sys
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import SecretStr

from lamina import Memory, MemoryConfig
from lamina.integrations import MemoryMiddleware, memory_tools

LOCAL_SERVER_URL = "http://127.0.0.1:8080/v1"
"""Where ``lamina serve-llm`` listens by default."""

SYSTEM_PROMPT = (
    "You are a friendly assistant with long-term memory of this user. Use the recalled "
    "memories when they help, call search_memory when you need more, call remember for "
    "lasting facts or preferences the user shares, and call forget when the user asks you "
    "to forget something. Keep answers short."
)


@dataclass
class UserContext:
    """The agent's runtime context: who is talking. The memory namespace comes from here."""

    user_id: str


def chat_model_from_config(config: MemoryConfig) -> BaseChatModel:
    """A ChatOpenAI for the configured endpoint, or for the local ``serve-llm`` server."""
    options: dict[str, Any] = {
        "base_url": config.openai_base_url or LOCAL_SERVER_URL,
        "api_key": config.openai_api_key or SecretStr("not-needed"),
        "model": config.model or "local",
        "temperature": 0.0,
        "timeout": config.timeout,
    }
    return ChatOpenAI(**options)


def build_agent(
    model: BaseChatModel,
    memory: Memory,
    *,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
) -> Any:
    """The memory agent: recall and storage by middleware, search/remember/forget as tools."""
    return create_agent(
        model,
        tools=memory_tools(memory),
        system_prompt=SYSTEM_PROMPT,
        middleware=[MemoryMiddleware(memory)],
        context_schema=UserContext,
        checkpointer=checkpointer or InMemorySaver(),
    )


def reply(agent: Any, text: str, *, user_id: str, thread_id: str) -> tuple[str, list[str]]:
    """One user turn: the agent's final answer and any memory errors of the turn."""
    out = agent.invoke(
        {"messages": [{"role": "user", "content": text}]},
        {"configurable": {"thread_id": thread_id}},
        context=UserContext(user_id=user_id),
    )
    return str(out["messages"][-1].text), list(out.get("memory_errors", []))


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Chat with an agent that remembers you.")
    parser.add_argument("--user", default="me", help="your user name (memory namespace user:NAME)")
    parser.add_argument("--thread", help="conversation id (default: a new one per run)")
    return parser.parse_args(argv)


def chat(agent: Any, *, user_id: str, thread_id: str, stdin: TextIO, stdout: TextIO) -> None:
    """Read user turns line by line until ``/quit`` or end of input; print the replies."""
    interactive = stdin.isatty()
    while True:
        if interactive:
            print("you> ", end="", file=stdout, flush=True)
        line = stdin.readline()
        if not line or line.strip() == "/quit":
            return
        if not line.strip():
            continue
        answer, errors = reply(agent, line.strip(), user_id=user_id, thread_id=thread_id)
        print(f"assistant> {answer}", file=stdout, flush=True)
        for error in errors:
            print(f"(memory: {error})", file=sys.stderr)


def main(
    argv: Sequence[str] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    model: BaseChatModel | None = None,
    memory: Memory | None = None,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
) -> int:
    """Run the chat; the keyword arguments let a test inject every dependency."""
    args = _parse(argv)
    owned = memory is None
    if memory is None:
        config = MemoryConfig.from_env(env)  # the only place the environment is read
        model = model or chat_model_from_config(config)
        memory = Memory(config=config, chat_model=model)
    if model is None:
        raise ValueError("pass model= together with memory=")
    try:
        chat(
            build_agent(model, memory),
            user_id=f"user:{args.user}",
            thread_id=args.thread or uuid.uuid4().hex,
            stdin=stdin or sys.stdin,
            stdout=stdout or sys.stdout,
        )
    finally:
        if owned:
            memory.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
