"""The ``lamina-bench`` command groups."""
