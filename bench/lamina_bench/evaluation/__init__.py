"""Evaluation helpers: answer metrics and retrieval recall."""
