"""Prompt text used by the structured-output helper (as data, not inline f-strings)."""

from __future__ import annotations

from langchain_core.prompts import PromptTemplate

JSON_INSTRUCTIONS = PromptTemplate.from_template(
    "Reply with one JSON object and nothing else: no prose, no code fences. "
    "It must validate against this JSON schema:\n{schema}"
)
"""Appended as a system message when the model has no native structured output."""

REPAIR_REQUEST = PromptTemplate.from_template(
    "Your previous reply could not be used: {error}\n"
    "Reply again with only a JSON object that validates against the schema."
)
"""Sent after an invalid reply, so the model sees what was wrong."""

SHORTER_REQUEST = PromptTemplate.from_template(
    "Your previous reply could not be used: {error}\n"
    "Reply again with only a JSON object that validates against the schema, and keep "
    "every value much shorter: a few words each, no long lists."
)
"""Sent after a reply that stopped at the token limit before its JSON closed."""
