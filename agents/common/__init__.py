"""What the ingest and the recall nodes both use.

Node dependencies and step logs, formatting, names, time parsing, question analysis,
attribution, record ids and output caps. Nothing here imports :mod:`..ingest` or
:mod:`..recall`.
"""
