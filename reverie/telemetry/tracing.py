"""Spans on the host's tracer provider (or the global one), with GenAI memory attributes.

Where the OpenTelemetry GenAI conventions define a name (``gen_ai.operation.name``,
``gen_ai.tool.name``, ``gen_ai.memory.store.id``) it is used; everything else is
``reverie.*``.
"""

from __future__ import annotations

from typing import Any

from opentelemetry import trace

import reverie
from reverie.errors import bounded

NAME_CHARS = 64  # a tool or action name on a span, at most

TOOL_OPERATION = {
    ("memory", "add"): "create_memory",
    ("memory", "replace"): "update_memory",
    ("memory", "reinforce"): "update_memory",
    ("memory", "remove"): "delete_memory",
    ("topic", "save"): "upsert_memory",
    ("topic", "read"): "search_memory",
    ("topic", "list"): "search_memory",
}


def tracer(provider: trace.TracerProvider | None) -> trace.Tracer:
    """The reverie tracer from the given provider, or from the global one."""
    source = provider if provider is not None else trace.get_tracer_provider()
    return source.get_tracer("reverie", reverie.__version__)


def tool_attributes(namespace: str, tool: str, action: str | None) -> dict[str, Any]:
    """A tool call's span attributes; the agent's tool and action names are cut to
    :data:`NAME_CHARS`, so a hostile argument never becomes a megabyte attribute."""
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": bounded(tool, NAME_CHARS),
        "gen_ai.memory.store.id": namespace,
        "reverie.namespace": namespace,
    }
    if action:
        attributes["reverie.tool.action"] = bounded(action, NAME_CHARS)
        memory_op = TOOL_OPERATION.get((tool, action))
        if memory_op:
            attributes["reverie.memory.operation"] = memory_op
    return attributes


def trace_id_hex() -> str | None:
    """The current span's trace id, for the ledger, or None outside a recording span."""
    context = trace.get_current_span().get_span_context()
    return format(context.trace_id, "032x") if context.is_valid else None
