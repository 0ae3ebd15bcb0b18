"""The order a flush reads a batch in: a session's statements about one subject collapse
to the latest, and the writes go HIGH weight first, newest first, so a budget spent on one
flush is spent on what matters and on the current value."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

from reverie.rules.supersede import supersedes


class Statement(Protocol):
    @property
    def id(self) -> int: ...
    @property
    def session_id(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def weight(self) -> str: ...


S = TypeVar("S", bound=Statement)


def latest_only(batch: Sequence[S]) -> tuple[list[S], dict[int, list[S]]]:
    """(current, formerly): a statement is replaced when a later one of the same session
    corrects it ("30s" … "no wait, 45s" keeps only "45s"); ``formerly`` gives each current
    statement the ones it replaced, oldest first (through a replacement that was replaced
    in turn), so their words can stay with it."""
    ordered = sorted(batch, key=lambda s: s.id)
    current: list[S] = []
    successor: dict[int, S] = {}
    for i, statement in enumerate(ordered):
        later = [s for s in ordered[i + 1 :] if s.session_id == statement.session_id]
        by = next((s for s in later if supersedes(s.text, statement.text)), None)
        if by is None:
            current.append(statement)
        else:
            successor[statement.id] = by
    formerly: dict[int, list[S]] = {}
    for statement in ordered:
        head = statement
        while head.id in successor:
            head = successor[head.id]
        if head is not statement:
            formerly.setdefault(head.id, []).append(statement)
    return current, formerly


def by_priority(batch: Sequence[S], waited_through: int = -1) -> list[S]:
    """What waited for an earlier flush's budget first (ids up to ``waited_through``: read
    before this flush), then HIGH weight first, then in the order they were said: a
    statement is written after the earlier ones it may correct or restate, of two facts
    one flush writes the later saying is the newer row, and a NORMAL statement is not
    passed over for ever by the HIGH ones said after it."""
    return sorted(batch, key=lambda s: (s.id > waited_through, s.weight != "high", s.id))
