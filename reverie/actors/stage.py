"""What every review stage (L4–L7) shares. Each stage is a bus actor: the reviewer asks it
for its turn in a pass with a :class:`~reverie.bus.messages.StageDue` message, and the bus
gives it what every actor has — a mailbox per namespace, its kill switch (``enabled``), its
time budget (``budget_s``), its span (``reverie.<stage>``) and fail-silent handling. The
stage adds a cadence with a due-check (free in a pass: the reviewer reads every stage's
last run in the transaction that begins it and sends it along), and its jsonl log and
ledger row. It answers with a :class:`~reverie.bus.replies.StageOutcome`."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, ClassVar

import anyio
import anyio.to_thread

from reverie.actors.context import Clocked
from reverie.bus.actor import Actor
from reverie.bus.messages import Envelope, StageDue
from reverie.bus.replies import Pending, StageOutcome
from reverie.clock import Clock, iso
from reverie.config import Config
from reverie.frozen import quick_init
from reverie.reports import StageDetails, StageReport
from reverie.stores import ledger, review_state
from reverie.stores.db import Database
from reverie.stores.projection import Projector
from reverie.stores.records import LedgerRecord
from reverie.telemetry.logs import get_logger
from reverie.telemetry.tracing import trace_id_hex

_log = get_logger("reverie.review")


class Stage(Actor, Clocked):
    """One review stage of one namespace: a bus actor the reviewer asks in its order."""

    name: ClassVar[str] = "stage"
    section: ClassVar[str]
    """The config section holding the stage's switch, ``interval_h`` and ``timeout_s``."""
    switch: ClassVar[str] = "enabled"
    data_bound: ClassVar[bool] = False
    """Its outcome depends only on what is stored (see :class:`StageOutcome`)."""

    def __init__(
        self,
        namespace: str,
        *,
        db: Database,
        projector: Projector,
        clock: Clock,
        config: Config,
    ) -> None:
        super().__init__(namespace)
        self.db, self.projector, self.clock = db, projector, clock
        self.config = config
        self.cfg: Any = getattr(config, self.section)
        """The stage's own section of the settings."""
        self._stamp: tuple[str | None] | None = None  # (last run,) once known
        self._given: tuple[Any] | None = None  # (look,) when the pass read it
        self.pending: list[Pending] | None = None
        """Where deferred writes go when a review pass collects them (see :meth:`commit`)."""

    async def on_receive(self, envelope: Envelope) -> StageOutcome:
        """Its turn in a pass: run if due, else say when it is next due."""
        message = envelope.message
        assert isinstance(message, StageDue)
        if message.known:
            self.know(message.last_run)
        elif self._stamp is None:  # not sent by a pass: read it
            self.know(
                await self.db.read(
                    lambda conn: review_state.get(conn, self.namespace, self.last_key)
                )
            )
        settled = self.settled()
        if settled is not None:
            return settled
        self._given = (message.look,) if message.looked else None
        self.pending = [] if message.in_pass else None
        try:
            return self._answer(StageReport.ran(self.name, await self.run()))
        finally:
            self.pending = None

    def settled(self) -> StageOutcome | None:
        """The stage's answer when it has nothing to do now — switched off, or not due by
        its last run — decided without a read; None when it is due."""
        if not self.switched_on:
            return StageOutcome(self.name, StageReport(self.name, "disabled"))
        if self.due_now():
            return None
        next_due = self._next_due()
        when = iso(next_due) if next_due else None
        return self._answer(StageReport(self.name, "not_due", next_due=when))

    def _answer(self, report: StageReport) -> StageOutcome:
        return StageOutcome(
            stage=self.name,
            report=report,
            pending=tuple(self.pending or ()),
            stamped=lambda: self.last_run,
            interval_h=float(self.cfg.interval_h),
            data_bound=self.data_bound,
            retry_next_round=report.retry_next_round,
        )

    def know(self, last_run: str | None) -> None:
        """The stage's last run as the reviewer read it when the pass began (one read for
        every stage), so the due-check costs no read of its own."""
        self._stamp = (last_run,)

    @property
    def last_run(self) -> str | None:
        """The last run known to this stage (after :meth:`know`, and updated by :meth:`done`)."""
        return None if self._stamp is None else self._stamp[0]

    @property
    def switched_on(self) -> bool:
        """The stage's kill switch, for its turn in a pass."""
        return bool(getattr(self.cfg, self.switch))

    @property
    def enabled(self) -> bool:
        """The actor's switch on the bus: the stage's own, unless the actor has work beyond
        its turn in a pass that the switch must not stop (see the promoter, the curator)."""
        return self.switched_on

    @property
    def budget_s(self) -> float:
        return float(self.cfg.timeout_s)

    @property
    def interval(self) -> timedelta:
        return timedelta(hours=self.cfg.interval_h)

    @property
    def last_key(self) -> str:
        return f"{self.name}:last_run"

    def _next_due(self) -> datetime | None:
        """When the stage is next due by its last run; None when it never ran (due now)."""
        last = self.last_run
        return None if last is None else datetime.fromisoformat(last) + self.interval

    async def run(self) -> StageDetails:
        """The stage's round, when due: what it did."""
        raise NotImplementedError

    def look(self, conn: sqlite3.Connection) -> Any:
        """What the stage reads before it acts, in one read transaction."""
        raise NotImplementedError

    async def looked(self) -> Any:
        """What :meth:`look` reads: as the pass read it when it began (see
        :func:`due_looks`), else read now."""
        if self._given is not None:
            (look,), self._given = self._given, None
            return look
        return await self.db.read(self.look)

    def due_now(self) -> bool:
        """The due-check from the last run the pass read (no read of its own)."""
        when = self._next_due()
        return when is None or self.clock.now() >= when

    def done(self, conn: sqlite3.Connection, detail: dict[str, Any]) -> None:
        """Stamp the round as run and audit it (inside the caller's transaction)."""
        now = self.now()
        review_state.put(conn, self.namespace, self.last_key, now, now)
        self.audit(conn, "round", "DONE", None, detail)
        self.know(now)  # a failed commit fails the stage, and a failed stage is not trusted

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
            LedgerRecord(
                ts=self.now(),
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
            ),
        )

    async def commit(
        self,
        body: Callable[[sqlite3.Connection], None],
        log: str,
        records: list[dict[str, Any]],
        then: Callable[[sqlite3.Connection, None], None] | None = None,
        *,
        defer: bool = False,
        landed: Callable[[sqlite3.Connection], None] | None = None,
    ) -> None:
        """The stage's write, then its jsonl records appended outside the database's write
        lock: an fsync'd append (milliseconds for a new file) under the lock would stall
        every write of the process. A namespace has one pass at a time, so order holds.

        ``defer``: bookkeeping that nothing later in the pass reads (stamps, seen keys,
        ledger rows) joins the pass's closing transaction instead, when a pass collects it
        (:attr:`pending`): one commit for the pass instead of one per stage.

        ``landed``: what follows the commit on a read connection (a projection written
        from the state the commit left), whether the write was deferred or not."""
        if defer and then is None and self.pending is not None:
            self.pending.append(Pending(self.name, body, log, records, self.log, landed))
            return
        await self.db.write(body, then=then)
        with anyio.CancelScope(shield=True):  # committed: its log line follows it
            if records:
                await anyio.to_thread.run_sync(self.log, log, records)
            if landed is not None:
                await self.db.read(landed)

    def log(self, name: str, records: list[dict[str, Any]]) -> None:
        """Append to ``logs/wiki/<name>.jsonl`` (in a worker thread, after the
        commit: a full disk here is reported, and the database keeps the record)."""
        try:
            self.projector.append_log(self.namespace, name, records)
        except OSError as exc:
            _log.warning("jsonl_log_failed", namespace=self.namespace, log=name, error=repr(exc))

    def project(self, write: Callable[[], None]) -> None:
        """A projection after a commit; like the writer's, it never un-acknowledges it."""
        try:
            write()
        except OSError as exc:
            _log.warning("projection_failed", namespace=self.namespace, error=repr(exc))


@quick_init
@dataclass(frozen=True, slots=True)
class Preview:
    """A pass's view of its stages before it asks any: the answers of those with nothing to
    do now (switched off or not due, from their own checks), and one read of what every
    due one looks at."""

    settled: dict[str, StageOutcome]
    read: Callable[[sqlite3.Connection], dict[str, Any]] | None


def preview(stages: Sequence[Stage], stamps: Mapping[str, Any]) -> Preview:
    """Each stage's own due-check (from the last runs the pass read) and, for the due ones,
    its own :meth:`Stage.look`, as one read. No stage writes before the pass's closing
    transaction (the promoter drops its look when a refresh wrote), so each sees what it
    would have read on its own, and the pass costs one hop for all of them instead of one
    each; a stage with nothing to do costs no ask at all."""
    settled: dict[str, StageOutcome] = {}
    due = []
    for stage in stages:
        stage.know(stamps.get(stage.last_key))
        outcome = stage.settled()
        if outcome is None:
            due.append(stage)
        else:
            settled[stage.name] = outcome
    if not due:
        return Preview(settled, None)

    def read(conn: sqlite3.Connection) -> dict[str, Any]:
        looks = {}
        for stage in due:
            try:
                looks[stage.name] = stage.look(conn)
            except Exception:  # the stage reads it again in its turn, and fails alone
                continue
        return looks

    return Preview(settled, read)
