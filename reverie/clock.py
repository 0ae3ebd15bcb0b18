"""Clocks: the system's, and a manual one that simulations and tests move by hand."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    """Anything that tells the current time as an aware UTC datetime."""

    def now(self) -> datetime: ...


class SystemClock:
    """Wall-clock time in UTC."""

    def now(self) -> datetime:
        return datetime.now(UTC)


class ManualClock:
    """A clock that only moves when told to, so cadences can be driven deterministically."""

    def __init__(self, start: datetime | None = None) -> None:
        start = start or datetime(2026, 1, 1, tzinfo=UTC)
        if start.tzinfo is None:
            raise ValueError("ManualClock needs an aware datetime (tzinfo=UTC)")
        self._now = start.astimezone(UTC)

    def now(self) -> datetime:
        return self._now

    def advance(self, delta: timedelta) -> datetime:
        if delta < timedelta(0):
            raise ValueError("a clock does not go backwards")
        self._now += delta
        return self._now

    def set(self, when: datetime) -> None:
        if when.tzinfo is None:
            raise ValueError("ManualClock needs an aware datetime (tzinfo=UTC)")
        if when < self._now:
            raise ValueError("a clock does not go backwards")
        self._now = when.astimezone(UTC)


def iso(moment: datetime) -> str:
    """The one timestamp format stored and projected: ISO 8601, UTC, microseconds."""
    return moment.astimezone(UTC).isoformat(timespec="microseconds")
