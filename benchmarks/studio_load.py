r"""How long LangGraph Studio (``langgraph dev``) takes to load the memory graph.

The script does what the LangGraph API server does with ``langgraph.json``: it imports
the module the graph spec names (``lamina.integrations.studio``) and calls the graph
factory (``make_graph``, awaited, as the server awaits a coroutine factory), timing
each; the server's "Slow graph load" warning measures the factory call. The server calls
the factory again for every run, so a second call is timed too, then the compilation
the server does on the returned builder. Nothing is loaded into a model: with no API
model configured the offline model loads at its first request, and the script checks
that it did not load here.

The store is a persistent Chroma in a temporary folder unless ``LAMINA_DATA_DIR`` is
set; the chat model is whatever the environment configures (``OPENAI_*``, else the
offline model, whose file must be installed: ``lamina install-model qwen``).

Usage:
    python benchmarks/studio_load.py [--json FILE] [--limit 5]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import inspect
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def graph_spec(config: Path) -> tuple[str, str]:
    """The module and factory of the ``memory`` graph in ``langgraph.json``."""
    spec = json.loads(config.read_text())["graphs"]["memory"]
    module, _, variable = spec.partition(":")
    return module, variable


async def call_factory(factory: Any) -> Any:
    """Call the factory as the server does: await it when it is a coroutine function."""
    value = factory()
    return await value if inspect.isawaitable(value) else value


def measure(config: Path) -> dict[str, Any]:
    """Seconds to import the graph module, call its factory twice and compile the graph."""
    module_name, variable = graph_spec(config)
    started = time.perf_counter()
    module = importlib.import_module(module_name)
    imported = time.perf_counter()
    factory = getattr(module, variable)
    graph = asyncio.run(call_factory(factory))
    first = time.perf_counter()
    asyncio.run(call_factory(factory))
    second = time.perf_counter()
    graph.compile()
    compiled = time.perf_counter()
    models = module.STUDIO_MODELS
    provider = models._provider
    loaded = bool(provider is not None and provider._started)
    return {
        "graph": f"{module_name}:{variable}",
        "chat_model": models.source,
        "import_s": round(imported - started, 3),
        "factory_first_s": round(first - imported, 3),
        "graph_load_s": round(first - started, 3),
        "factory_again_s": round(second - first, 3),
        "compile_s": round(compiled - second, 3),
        "model_loaded_during_load": loaded,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", type=Path, default=REPO / "langgraph.json")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument(
        "--limit", type=float, default=5.0, help="exit 1 when the graph load takes longer"
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="lamina-studio-load-") as tmp:
        os.environ.setdefault("LAMINA_DATA_DIR", tmp)
        result = measure(args.config)
        result["data_dir"] = os.environ["LAMINA_DATA_DIR"]
        module = sys.modules[result["graph"].split(":")[0]]
        module.STUDIO_MODELS.close()
    print(f"graph {result['graph']} (chat model: {result['chat_model']})")
    print(f"  import of the module        {result['import_s']:7.3f} s")
    print(f"  first factory call          {result['factory_first_s']:7.3f} s")
    print(f"  graph load (import + call)  {result['graph_load_s']:7.3f} s")
    print(f"  factory call again (a run)  {result['factory_again_s']:7.3f} s")
    print(f"  compile                     {result['compile_s']:7.3f} s")
    print(f"  model loaded while loading  {'yes' if result['model_loaded_during_load'] else 'no'}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    too_slow = result["graph_load_s"] > args.limit or result["model_loaded_during_load"]
    if too_slow:
        print(f"graph load over {args.limit:g} s, or a model was loaded", file=sys.stderr)
    return 1 if too_slow else 0


if __name__ == "__main__":
    raise SystemExit(main())
