"""What a tool call, a restore or a skill command answers: a frozen :class:`ToolResult`.

Actors build and pass these typed; the host-facing calls (``Session.call_tool``,
``Namespace.restore``, ``pin_skill``, ``curate``, ``restore_skill``, ``used_skill``,
``call_result``) hand out :meth:`ToolResult.to_dict` — the JSON-able dict the agent sees —
so the dict contract holds while nothing inside reads a result by string key. A named
call's answer is stored as that dict and read back with :meth:`ToolResult.from_dict`.

Low in the layering: it imports nothing of reverie's but the secret redactor (an error
message that quotes its input never quotes a credential in it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from enum import StrEnum
from typing import Any

from reverie.frozen import quick_init
from reverie.rules.secrets import redact


class Decision(StrEnum):
    """What a write did; a tool result always names one."""

    ADD = "ADD"
    SUPERSEDE = "SUPERSEDE"
    NOOP = "NOOP"
    REPLACED = "REPLACED"
    REMOVED = "REMOVED"
    REINFORCED = "REINFORCED"
    CREATED = "CREATED"
    PATCHED = "PATCHED"
    RESTORED = "RESTORED"
    ARCHIVED = "ARCHIVED"
    ERROR = "ERROR"


@quick_init
@dataclass(frozen=True, slots=True)
class Usage:
    """How full a MEMORY.md / USER.md block is after the write."""

    target: str
    used: int
    cap: int


@quick_init
@dataclass(frozen=True, slots=True)
class FactView:
    """One live fact as ``topic read`` shows it."""

    entry_id: str
    content: str
    since: str


@quick_init
@dataclass(frozen=True, slots=True)
class TopicListing:
    """One topic as ``topic list`` shows it."""

    topic: str
    facts: int
    superseded: int


@quick_init
@dataclass(frozen=True, slots=True)
class Archived:
    """A skill the curator archived (reversibly)."""

    name: str
    archive_dir: str
    idle_since: str | None


@quick_init
@dataclass(frozen=True, slots=True)
class ToolResult:
    """One answer. ``error`` set means refused (``decision`` is ERROR, nothing written);
    every other field beyond the first four is said only where it applies."""

    decision: Decision
    entry_id: str | None = None
    message: str = ""
    error: str | None = None
    transient: bool = False
    """Refused for a passing cause (busy, closing): the same call may land later."""
    replayed: bool = False
    """The stored answer of a call made before with the same call id."""
    call_id: str | None = None
    """The host's id of the call, when it named one (the answer is stored under it)."""
    usage: Usage | None = None
    reinforce: int | None = None
    replaced: str | None = None
    duplicate_of: str | None = None
    tier: str | None = None
    similarity: float | None = None
    topic: str | None = None
    chain_id: str | None = None
    depth: int | None = None
    superseded: str | None = None
    name: str | None = None
    archive_dir: str | None = None
    dry_run: bool | None = None
    candidates: tuple[Mapping[str, Any], ...] | None = None
    archived: tuple[Archived, ...] | None = None
    topics: tuple[TopicListing, ...] | None = None
    facts: tuple[FactView, ...] | None = None
    more: int | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def replay(self) -> ToolResult:
        return replace(self, replayed=True)

    def to_dict(self) -> dict[str, Any]:
        """The JSON-able answer: ``ok``, ``decision``, ``entry_id``, then ``message`` (or
        ``error``), then each field that applies."""
        out: dict[str, Any] = {
            "ok": self.ok,
            "decision": self.decision.value,
            "entry_id": self.entry_id,
        }
        if self.error is None:
            out["message"] = self.message
        else:
            out["error"] = self.error
        for f in fields(self)[4:]:
            value = getattr(self, f.name)
            if value is None or value is False and f.name in _FLAGS:
                continue
            out[f.name] = _plain(value)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ToolResult:
        """A stored answer read back (keys it does not know are ignored)."""
        known = {f.name for f in fields(cls)} - {"decision"}
        values: dict[str, Any] = {k: v for k, v in data.items() if k in known}
        for key, kind in _NESTED.items():
            if values.get(key) is not None:
                raw = values[key]
                values[key] = kind(**raw) if key == "usage" else tuple(kind(**x) for x in raw)
        if values.get("candidates") is not None:
            values["candidates"] = tuple(dict(c) for c in values["candidates"])
        return cls(Decision(data["decision"]), **values)


_FLAGS = frozenset({"transient", "replayed"})
_NESTED: dict[str, Any] = {
    "usage": Usage,
    "archived": Archived,
    "topics": TopicListing,
    "facts": FactView,
}


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if hasattr(value, "__dataclass_fields__"):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    return value


def refused(message: str, *, transient: bool = False) -> ToolResult:
    """An ERROR answer; a message quoting the input never quotes a secret in it."""
    return ToolResult(Decision.ERROR, None, error=redact(message), transient=transient)
