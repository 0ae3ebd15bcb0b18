"""Items merged into a namespace through the writer's rules, one at a time.

Each item becomes what a host's call would be — a ``memory`` add, a ``topic`` save, a
``skill_manage`` create, or a learning said by hand — so caps, near-duplicates (NOOP
naming the twin), supersedes and the secret scan decide it exactly as they decide an
agent's write. The writer's answer is the item's decision.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final

from reverie.bus.messages import Learn, Message, ToolCall
from reverie.config import WriterConfig
from reverie.errors import InputError, ReverieError, quoted
from reverie.results import ToolResult
from reverie.rules.query import PRIORITIES
from reverie.rules.secrets import refusal, secret_kind
from reverie.tools import parse_call
from reverie.transfer.report import ERROR, LineDecision

ACTOR: Final = "import"
Ask = Callable[[Message], Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class Item:
    """One thing to import: an entry (``place`` its target), a fact (its topic), a skill
    (its name) or a log record (its kind, no place). ``was`` is the id it had in an export,
    ``dated`` the day a daily note was written, ``skip`` why it is not written at all."""

    line: int
    kind: str
    place: str | None
    content: str
    priority: str = "medium"
    source: str | None = None
    was: str | None = None
    dated: str | None = None
    skip: str | None = None


def message(item: Item, namespace: str, writer: WriterConfig) -> Message:
    """The write an item asks for; :class:`ReverieError` when the tools refuse its shape."""
    if item.kind == "entry":
        args = {"action": "add", "target": item.place, "content": item.content}
        return ToolCall(namespace, None, parse_call("memory", args, writer), actor=ACTOR)
    if item.kind == "fact":
        args = {"action": "save", "topic": item.place, "content": item.content}
        return ToolCall(namespace, None, parse_call("topic", args, writer), actor=ACTOR)
    if item.kind == "skill":
        args = {"action": "create", "name": item.place, "content": item.content}
        return ToolCall(namespace, None, parse_call("skill_manage", args, writer), actor=ACTOR)
    if len(item.content) > writer.max_content_chars or item.priority not in PRIORITIES:
        raise InputError(
            f"a {item.kind} record is at most {writer.max_content_chars} chars with a "
            f"priority of {', '.join(PRIORITIES)}"
        )
    found = secret_kind(item.content)
    if found is not None:  # the learner keeps what it is told: the scan is here
        raise InputError(refusal(found, "content", item.content))
    return Learn(namespace, item.kind, item.content.strip(), item.priority)


async def merge(
    items: Iterable[Item], namespace: str, ask: Ask, writer: WriterConfig
) -> list[LineDecision]:
    """Each item through the writer (or the learner), in order; a refusal is that item's
    ERROR and the rest still go in. A runtime that is closing or cannot answer raises (the
    items before are written, as the ledger shows)."""
    decisions = []
    for item in items:
        if item.skip is not None:
            decisions.append(LineDecision(item.line, "NOOP", item.was, item.skip, item.source))
            continue
        try:
            answer = await ask(message(item, namespace, writer))
        except InputError as exc:  # this item's shape; a closed or stuck runtime raises
            decisions.append(LineDecision(item.line, ERROR, item.was, str(exc), item.source))
            continue
        if isinstance(answer, ReverieError):  # an archived namespace: the learner's answer
            raise answer
        assert isinstance(answer, ToolResult)
        decisions.append(_decided(item, answer))
    return decisions


def _decided(item: Item, answer: ToolResult) -> LineDecision:
    reason = answer.error if answer.error is not None else (answer.message or "")
    notes = []
    if item.was is not None and item.was != answer.entry_id:
        notes.append(f"was {quoted(item.was)}")
    if item.dated is not None:
        notes.append(f"written on {item.dated} (kept here: created_at is the import's time)")
    if notes:
        reason = f"{reason} ({'; '.join(notes)})" if reason else "; ".join(notes)
    return LineDecision(item.line, answer.decision.value, answer.entry_id, reason, item.source)
