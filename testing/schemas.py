"""Read what lamina's structured helper asked for, and answer it minimally.

The structured-output helper puts the JSON schema in the prompt (or, for the
Constructor's line format, an ``Example notes (<name>):`` block); these helpers find it
and build the shortest valid reply, so a fake model can answer any node.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage

_LINE_FORMAT = re.compile(r"Example notes \((\w+)\):")
MINIMAL_LINE_REPLIES = {"ConstructionLines": "T|x\nS|x"}
"""The shortest valid reply of each line format lamina asks for."""


def requested_schema(messages: Sequence[BaseMessage]) -> dict[str, Any] | None:
    """The JSON schema lamina's structured helper put in the prompt, if any."""
    for message in reversed(messages):
        text = str(message.content)
        start = text.find("{")
        if "JSON schema" in text and start >= 0:
            try:
                schema = json.loads(text[start:])
            except json.JSONDecodeError:
                continue
            if isinstance(schema, dict):
                return schema
    return None


def requested_line_format(messages: Sequence[BaseMessage]) -> str | None:
    """The name of the line format a prompt asks for (``Example notes (<name>):``), if any."""
    for message in messages:
        match = _LINE_FORMAT.search(str(message.content))
        if match:
            return match.group(1)
    return None


def minimal_instance(schema: dict[str, Any], root: dict[str, Any] | None = None) -> Any:
    """A minimal value valid for a JSON schema: required fields only, shortest values."""
    root = root or schema
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return minimal_instance(root["$defs"][name], root)
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    if "anyOf" in schema:
        options = [o for o in schema["anyOf"] if o.get("type") != "null"] or schema["anyOf"]
        return minimal_instance(options[0], root)
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        return {k: minimal_instance(props[k], root) for k in schema.get("required", [])}
    if kind == "array":
        item = schema.get("items", {})
        return [minimal_instance(item, root) for _ in range(schema.get("minItems", 0))]
    if kind == "string":
        return "x" * max(1, schema.get("minLength", 1))
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    return None


__all__ = ["MINIMAL_LINE_REPLIES", "minimal_instance", "requested_line_format", "requested_schema"]
