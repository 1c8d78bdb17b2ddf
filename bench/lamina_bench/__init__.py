"""lamina-bench: the lab that measures lamina, outside the product.

:mod:`lamina_bench.evaluation` is the evaluation harness (lamina against the baselines and
the peer libraries mem0, LangMem and Graphiti, in :mod:`lamina_bench.evaluation.peers`),
:mod:`lamina_bench.datasets` reads the benchmark data sets, and ``lamina-bench eval`` is
the harness's command line. It uses lamina through its public API; the few hooks it needs
beyond that are listed in the ``bench-public-api`` contract of lamina's pyproject.toml.
"""

__version__ = "0.1.0"
