"""Who sends which message to whom, read off the code: the receivers from the actors'
subscriptions (``handles``), the senders from where each message type is built. It draws
the picture in docs/architecture.md (``python -m reverie.architecture``), and a test keeps
that picture from drifting from the code."""

from __future__ import annotations

import ast
from pathlib import Path

from reverie.bus import messages

PACKAGE = Path(__file__).resolve().parent
HOST = "host"
"""The sender of everything built in the facade (``Reverie``, ``Namespace``, ``Session``)."""

_WRITER_PARTS = {"write_base", "memory_writes", "topic_writes", "skill_writes"}


def message_types() -> dict[str, type[messages.Message]]:
    """Every message type on the bus, by name."""
    found = {}
    for name in dir(messages):
        value = getattr(messages, name)
        if isinstance(value, type) and issubclass(value, messages.Message):
            if value is not messages.Message and value is not messages.StageDue:
                found[name] = value
    return found


def receivers() -> dict[str, list[str]]:
    """Message type → the actors subscribed to it, as the runtime subscribes them."""
    from reverie.runtime import ACTORS  # the facade wires the actors; drawn from it

    table: dict[str, list[str]] = {}
    for actor in ACTORS:
        for message_type in actor.handles:
            table.setdefault(message_type.__name__, []).append(actor.name)
    return table


def _sender(path: Path) -> str | None:
    """The actor a module speaks for (the writer's parts are the writer's)."""
    if path.name == "runtime.py":
        return HOST
    if path.parent.name != "actors":
        return None
    stem = path.stem
    return "writer" if stem in _WRITER_PARTS else stem


def senders() -> dict[str, set[str]]:
    """Message type → the actors (or the host) whose code builds one."""
    known = message_types()
    stage_asks = {message_type.__name__ for _, message_type in messages.REVIEW_ORDER}
    table: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        who = _sender(path)
        if who is None:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            built: set[str] = set()
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                built = {node.func.id} & known.keys()
            elif isinstance(node, ast.Name) and node.id == "REVIEW_ORDER":
                built = stage_asks
            for name in built:
                table.setdefault(name, set()).add(who)
    return table


def mermaid() -> str:
    """The message flow as a Mermaid flowchart: one edge per (sender, message, receiver)."""
    sent, received = senders(), receivers()
    lines = ["flowchart LR"]
    for name in sorted(received):
        for source in sorted(sent.get(name, set())):
            for target in received[name]:
                if source != target:  # an actor never asks itself (its own mailbox)
                    lines.append(f"    {source} -- {name} --> {target}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # pragma: no cover - the doc's generator
    print(mermaid(), end="")
