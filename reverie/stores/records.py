"""Frozen records read from the stores; each also answers ``record["field"]``."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from reverie.frozen import quick_init

ENTRY_SEPARATOR = "\n§\n"


class _Mapping:
    """Lets hosts read a record as ``r.ts`` or ``r["ts"]`` and dump it with ``to_dict``."""

    def __getitem__(self, key: str) -> Any:
        try:
            return getattr(self, key)
        except AttributeError:
            raise KeyError(key) from None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload, no-any-return]


@quick_init
@dataclass(frozen=True, slots=True)
class Entry(_Mapping):
    """One entry of MEMORY.md, USER.md, SOUL.md, user_settings or agent_profile."""

    id: str
    namespace: str
    target: str
    content: str
    key: str | None
    reinforce: int
    status: str
    replaced_by: str | None
    created_by: str
    session_id: str | None
    created_at: str
    updated_at: str
    ended_at: str | None

    @property
    def rendered(self) -> str:
        """The entry as it appears in its file and in the snapshot."""
        return self.content if self.reinforce <= 1 else f"{self.content} ⟦×{self.reinforce}⟧"


@quick_init
@dataclass(frozen=True, slots=True)
class Fact(_Mapping):
    """One topic fact; ``invalid_at`` and ``superseded_by`` are set when it is superseded."""

    id: str
    namespace: str
    topic: str
    content: str
    chain_id: str
    depth: int
    supersedes: str | None
    superseded_by: str | None
    created_by: str
    session_id: str | None
    created_at: str
    invalid_at: str | None

    @property
    def live(self) -> bool:
        return self.invalid_at is None


@quick_init
@dataclass(frozen=True, slots=True)
class Skill(_Mapping):
    """A registered skill; its SKILL.md is a projection of ``body`` plus front matter."""

    namespace: str
    name: str
    body: str
    created_by: str
    pinned: bool
    created_at: str
    updated_at: str
    last_used_at: str | None
    archived_at: str | None


@quick_init
@dataclass(frozen=True, slots=True)
class Episode(_Mapping):
    """One recorded turn of a session."""

    id: int
    namespace: str
    session_id: str
    turn: int
    user: str | None
    assistant: str | None
    ts: str

    @property
    def text(self) -> str:
        parts = []
        if self.user:
            parts.append(f"user: {self.user}")
        if self.assistant:
            parts.append(f"assistant: {self.assistant}")
        return "\n".join(parts)


@quick_init
@dataclass(frozen=True, slots=True)
class LedgerRecord(_Mapping):
    """One audited write (or NOOP) — who, what, the decision, and the before/after."""

    ts: str
    namespace: str
    actor: str
    action: str
    decision: str
    entry_id: str | None
    target: str | None = None
    session_id: str | None = None
    trace_id: str | None = None
    before: Any = None
    after: Any = None
    detail: dict[str, Any] = field(default_factory=dict)
    seq: int = 0
    """Its place in the ledger, given when it is appended (0 before)."""


@quick_init
@dataclass(frozen=True, slots=True)
class SearchHit(_Mapping):
    """A ranked search hit; ``session_id`` and ``turn`` are set for episodes."""

    kind: str
    id: str
    text: str
    score: float
    topic: str | None = None
    target: str | None = None
    session_id: str | None = None
    turn: int | None = None
    written_at: str | None = None
    """When the row was last written (fact created, entry updated, turn recorded)."""
    path: tuple[str, ...] = ()
    """Bundle search only: the graph path that justified the hit, tip first (node labels
    and edge descriptions)."""


class SearchResults(list[SearchHit]):
    """Hits, best first, plus how many superseded facts matched but were hidden."""

    def __init__(self, hits: list[SearchHit], hidden_superseded: int) -> None:
        super().__init__(hits)
        self.hidden_superseded = hidden_superseded


def dumps(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False, sort_keys=True)


def loads(value: str | None) -> Any:
    return None if value is None else json.loads(value)
