"""``python -m lamina_bench``: the ``lamina-bench`` command."""

from .cli import main

raise SystemExit(main())
