"""Loaders for conversation datasets used by benchmarks, evaluation and the CLI."""
