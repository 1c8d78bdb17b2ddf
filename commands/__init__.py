"""Subcommands of the ``lamina`` command line, one module per command group."""
