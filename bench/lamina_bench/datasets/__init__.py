"""Loaders for the conversation data sets the benchmarks and the evaluation read."""
