"""Subcommands of the ``memstrata`` command line, one module per command group."""
