"""Typed answers that travel back on the bus: what a review stage did in a pass."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from reverie.frozen import quick_init
from reverie.reports import StageReport, StageStatus


@quick_init
@dataclass(frozen=True, slots=True)
class Pending:
    """A stage's deferred write: run in the pass's closing transaction, its records
    appended to ``logs/wiki/<log>.jsonl`` after that commit (by ``append_log``), and
    ``landed`` (projections, events) run on a read connection once it committed."""

    stage: str
    body: Callable[[sqlite3.Connection], None]
    log: str
    records: list[dict[str, Any]]
    append_log: Callable[[str, list[dict[str, Any]]], None]
    landed: Callable[[sqlite3.Connection], None] | None = None


@quick_init
@dataclass(frozen=True, slots=True)
class StageOutcome:
    """One stage's turn in a pass: its report (``status`` ran / not_due and what it did),
    its deferred writes, and what the reviewer needs to tell when it is next due."""

    stage: str
    report: StageReport
    pending: tuple[Pending, ...] = ()
    stamped: Callable[[], str | None] = lambda: None
    """The stage's last run as of now: a deferred write stamps it when the pass closes."""
    interval_h: float = 0.0
    data_bound: bool = False
    """Its outcome depends only on what is stored (linter, distiller): once it ran with
    nothing left for later, only a new write can make it act again."""
    retry_next_round: bool = field(default=False)

    @property
    def status(self) -> StageStatus:
        return self.report.status

    @property
    def last_run(self) -> str | None:
        return self.stamped()
