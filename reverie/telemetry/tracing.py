"""Spans on the host's tracer provider (or the global one), with GenAI memory attributes.

Where the OpenTelemetry GenAI conventions define a name (``gen_ai.operation.name``,
``gen_ai.tool.name``, ``gen_ai.memory.store.id``) it is used; everything else is
``reverie.*``.
"""

from __future__ import annotations

from typing import Any, Final

from opentelemetry import trace

from reverie.version import __version__

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
    return source.get_tracer("reverie", __version__)


KNOWN_TOOLS: Final = {
    "memory": frozenset({"add", "replace", "remove", "reinforce"}),
    "topic": frozenset({"save", "read", "list"}),
    "skill_manage": frozenset({"create", "patch"}),
}
UNKNOWN_TOOL: Final = "unknown"
_SCANNED_CHARS: Final = 2_000  # of an agent's name, scanned for secrets before it is cut


def agent_name(value: object) -> str:
    """An agent-supplied tool or action name as telemetry records it: any secret in it
    replaced by its marker, then cut to :data:`NAME_CHARS` (an agent may put anything
    there, a pasted token included)."""
    from reverie.rules.secrets import redact  # the scanner loads its plugins on first use

    text = str(value)
    clean = redact(text[:_SCANNED_CHARS])
    if len(text) <= _SCANNED_CHARS and len(clean) <= NAME_CHARS:
        return clean
    return f"{clean[:NAME_CHARS]}… ({len(text):,} chars)"


def span_tool(tool: object) -> str:
    """The tool as a span name carries it: a known tool's name, else ``unknown`` (the
    agent's text goes, redacted, into ``gen_ai.tool.name`` only)."""
    return tool if isinstance(tool, str) and tool in KNOWN_TOOLS else UNKNOWN_TOOL


def tool_attributes(namespace: str, tool: object, action: object) -> dict[str, Any]:
    """A tool call's span attributes; an unknown tool or action name is recorded
    redacted and bounded (:func:`agent_name`), so it never carries a secret or a
    megabyte."""
    known = span_tool(tool) != UNKNOWN_TOOL
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool if known else agent_name(tool),
        "gen_ai.memory.store.id": namespace,
        "reverie.namespace": namespace,
    }
    if isinstance(action, str) and action:
        known_action = known and action in KNOWN_TOOLS[str(tool)]
        attributes["reverie.tool.action"] = action if known_action else agent_name(action)
        memory_op = TOOL_OPERATION.get((str(tool), action))
        if memory_op:
            attributes["reverie.memory.operation"] = memory_op
    return attributes


def trace_id_hex() -> str | None:
    """The current span's trace id, for the ledger, or None outside a recording span."""
    context = trace.get_current_span().get_span_context()
    return format(context.trace_id, "032x") if context.is_valid else None
