"""What every review stage (L4–L7) shares: a kill switch, a time budget, a cadence with a
due-check that costs one indexed read, and its jsonl log and ledger row."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, ClassVar

from reverie.actors.context import Services
from reverie.stores import ledger, review_state
from reverie.telemetry.logs import get_logger
from reverie.telemetry.tracing import trace_id_hex

_log = get_logger("reverie.review")


class Stage:
    """One review stage of one namespace, run by the reviewer in its order."""

    name: ClassVar[str] = "stage"
    section: ClassVar[str]
    """The config section holding the stage's switch, ``interval_h`` and ``timeout_s``."""
    switch: ClassVar[str] = "enabled"

    def __init__(self, namespace: str, services: Services) -> None:
        self.namespace = namespace
        self.s = services

    @property
    def cfg(self) -> Any:
        return getattr(self.s.config, self.section)

    @property
    def enabled(self) -> bool:
        """The kill switch."""
        return bool(getattr(self.cfg, self.switch))

    @property
    def budget_s(self) -> float:
        return float(self.cfg.timeout_s)

    @property
    def interval(self) -> timedelta:
        return timedelta(hours=self.cfg.interval_h)

    @property
    def last_key(self) -> str:
        return f"{self.name}:last_run"

    async def next_due(self) -> datetime | None:
        """When the stage is next due; ``None`` when it never ran (due now)."""
        last = await self.s.db.read(
            lambda conn: review_state.get(conn, self.namespace, self.last_key)
        )
        return None if last is None else datetime.fromisoformat(last) + self.interval

    async def due(self) -> bool:
        when = await self.next_due()
        return when is None or self.s.clock.now() >= when

    async def run(self) -> dict[str, Any]:
        raise NotImplementedError

    def done(self, conn: sqlite3.Connection, detail: dict[str, Any]) -> None:
        """Stamp the round as run and audit it (inside the caller's transaction)."""
        review_state.put(conn, self.namespace, self.last_key, self.s.now(), self.s.now())
        self.audit(conn, "round", "DONE", None, detail)

    def audit(
        self,
        conn: sqlite3.Connection,
        action: str,
        decision: str,
        entry_id: str | None,
        detail: dict[str, Any],
        *,
        target: str | None = None,
        before: Any = None,
        after: Any = None,
    ) -> None:
        ledger.append(
            conn,
            ts=self.s.now(),
            namespace=self.namespace,
            actor=self.name,
            action=action,
            decision=decision,
            entry_id=entry_id,
            target=target,
            trace_id=trace_id_hex(),
            before=before,
            after=after,
            detail=detail,
        )

    def log(self, name: str, records: list[dict[str, Any]]) -> None:
        """Append to ``logs/wiki/<name>.jsonl`` (in the write's worker thread, after the
        commit: a full disk here is reported, and the database keeps the record)."""
        try:
            self.s.projector.append_log(self.namespace, name, records)
        except OSError as exc:
            _log.warning("jsonl_log_failed", namespace=self.namespace, log=name, error=repr(exc))

    def project(self, write: Callable[[], None]) -> None:
        """A projection after a commit; like the writer's, it never un-acknowledges it."""
        try:
            write()
        except OSError as exc:
            _log.warning("projection_failed", namespace=self.namespace, error=repr(exc))
