"""L8, the review bus (bg_review): the only scheduler there is, and it is not resident.

A pass runs when a session goes idle (after its flush) and the 6 h cooldown on the clock
has passed, or when the host forces one. The cooldown check and a lease row are taken in
one transaction, so of several processes sharing a home only one runs a pass. A pass is a
conversation on the bus: the reviewer asks each stage actor for its turn in the seed's
order — lint (L5), distill (L4), promote (L6), curate (L7) — and waits for each reply. The
bus gives every stage its kill switch, time budget, span and fail-silent handling; a stage
that is disabled, fails or overruns is reported so, never stamped, and the pass goes on.

A pass that left nothing for later marks the namespace quiet; until a new write lands (a
ledger row) or a clock-bound stage falls due, a quiet namespace is skipped with one
indexed read instead of a pass.

A pass costs few round trips, so a round over thousands of namespaces stays short: the
transaction that begins it also reads every stage's last run and sends it with the ask
(the due-checks read nothing more), one read then takes what every due stage looks at
(``look_ahead``: the stages' own due-checks and looks) and each ask carries its stage's
share, and the stages' writes that nothing later in the pass reads (summaries, stamps,
seen keys, ledger rows) come back in their replies and join the transaction that ends it,
each stage in its own savepoint.
"""

from __future__ import annotations

import os
import sqlite3
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any

import anyio

from reverie.actors.context import Clocked
from reverie.actors.stage import Preview
from reverie.bus.actor import Actor
from reverie.bus.bus import ActorDisabled, Bus, OverBudget
from reverie.bus.messages import REVIEW_ORDER, Envelope, PromoteDue, ReviewDue, StageDue
from reverie.bus.replies import Pending, StageOutcome
from reverie.clock import Clock, iso
from reverie.config import ReviewerConfig
from reverie.errors import ReverieError, map_store_errors
from reverie.frozen import quick_init
from reverie.reports import NamespaceReport, StageReport
from reverie.stores import ledger, namespaces, review_state
from reverie.stores.db import Database
from reverie.stores.records import LedgerRecord
from reverie.telemetry.logs import get_logger
from reverie.telemetry.tracing import trace_id_hex

log = get_logger("reverie.reviewer")

LAST_PASS = "review:last_pass"
REVIEWERS = frozenset({"reviewer", *(name for name, _ in REVIEW_ORDER)})
"""Whose ledger rows a pass writes itself (the promoter's writes included)."""
UNREAD = frozenset({"learner"})
"""Whose ledger rows no stage reads (seed 003's tiers, log records, patterns): one landing
while a pass runs leaves the namespace quiet."""
NOTHING_NEW = "nothing new since the last pass"
ARCHIVED = "the namespace is archived (restore it to review it again)"


@quick_init
@dataclass(frozen=True, slots=True)
class _Start:
    """What the transaction that began a pass read: every stage's last run, whether asks
    to refresh promoted rules wait (the promoter runs them in its turn), and the ledger's
    position (a write past it by anyone but the pass keeps the namespace unquiet)."""

    stamps: dict[str, Any]
    refreshes: bool = False
    began_at: int = 0


_NOT_BEGUN = _Start({})


@dataclass(slots=True)
class _Closing:
    """What the closing transaction of a pass records: the stages' reports (a stage whose
    deferred write fails there is marked failed in place), and the pass's own facts."""

    stages: list[StageReport]
    force: bool
    duration_ms: float
    began_at: int


LookAhead = Callable[[str, Mapping[str, Any]], Preview]
"""(namespace, the stages' last runs) → the stages' preview: who has nothing to do, and one
read of what the due ones look at (see ``reverie.actors.stage.preview``)."""


def _ask(
    namespace: str,
    name: str,
    message_type: type[StageDue],
    start: _Start,
    looks: dict[str, Any],
) -> StageDue:
    """The stage's ask: its last run and its look as the pass read them."""
    given: dict[str, Any] = {"look": looks.get(name), "looked": name in looks}
    last = start.stamps.get(_last_key(name))
    if message_type is PromoteDue:
        return PromoteDue(namespace, last, known=True, refresh=start.refreshes, **given)
    return message_type(namespace, last, known=True, **given)


class Reviewer(Actor, Clocked):
    name = "reviewer"
    handles = (ReviewDue,)

    def __init__(
        self,
        namespace: str,
        *,
        db: Database,
        bus: Bus,
        clock: Clock,
        settings: ReviewerConfig,
        look_ahead: LookAhead,
    ) -> None:
        super().__init__(namespace)
        self.db, self.bus, self.clock, self.cfg = db, bus, clock, settings
        self.look_ahead = look_ahead
        """What the due stages will look at, for the pass's one read of it (the stages'
        own due-checks and looks, wired by the runtime; see ``stage.due_looks``)."""
        self.holder = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"

    @property
    def enabled(self) -> bool:
        return self.cfg.enabled

    @property
    def budget_s(self) -> float:
        # the lease outlives the pass; the stages have budgets of their own inside it
        return self.cfg.lease_s

    async def on_receive(self, envelope: Envelope) -> Any:
        message = envelope.message
        assert isinstance(message, ReviewDue)
        return await self.review(force=message.force)

    async def review(self, force: bool = False) -> NamespaceReport:
        now = self.clock.now()
        began, reason, start = await self.db.write(lambda conn: self._begin(conn, now, force))
        if not began:
            return NamespaceReport(self.namespace, ran=False, force=force, reason=reason)
        stages: list[StageReport] = []
        outcomes: list[StageOutcome | None] = []
        started = anyio.current_time()
        complete = False
        try:
            ahead = self.look_ahead(self.namespace, start.stamps)
            looks = {} if ahead.read is None else await self.db.read(ahead.read)
            for name, message_type in REVIEW_ORDER:
                settled = ahead.settled.get(name)
                if settled is not None and not (message_type is PromoteDue and start.refreshes):
                    stages.append(settled.report)  # nothing to do: no ask (its own check)
                    outcomes.append(settled)
                    continue
                ask = _ask(self.namespace, name, message_type, start, looks)
                outcomes.append(await self._turn(name, ask, stages))
            complete = True
        finally:
            duration_ms = round((anyio.current_time() - started) * 1000, 3)
            closing = _Closing(stages, force, duration_ms, start.began_at)
            with anyio.CancelScope(shield=True):
                await self._close(closing, outcomes if complete else None)
        return NamespaceReport(
            self.namespace,
            ran=True,
            force=force,
            stages=tuple(stages),
            duration_ms=duration_ms,
        )

    async def _turn(self, name: str, ask: StageDue, reports: list[StageReport]) -> Any:
        """One stage's turn: its outcome, or None (disabled, failed, over budget), reported
        either way; the pass goes on whatever the stage did."""
        try:
            outcome: StageOutcome = await self.bus.ask(ask, here=True)
        except ActorDisabled:
            reports.append(StageReport(name, "disabled"))
            return None
        except OverBudget:
            reports.append(StageReport(name, "over_budget"))
            log.warning("stage_over_budget", stage=name, namespace=self.namespace)
            return None
        except ReverieError as exc:
            cause = exc.__cause__ if exc.__cause__ is not None else exc
            reports.append(StageReport(name, "failed", error=repr(cause)))
            return None
        reports.append(outcome.report)
        return outcome

    async def _close(self, closing: _Closing, outcomes: list[StageOutcome | None] | None) -> None:
        """The closing transaction, then the jsonl records and what follows the landing."""
        pending = [item for out in outcomes or () if out is not None for item in out.pending]
        landed = await self.db.write(lambda conn: self._end(conn, closing, outcomes, pending))
        if any(item.records for item in landed):
            await anyio.to_thread.run_sync(_append_logs, landed)
        if any(item.landed for item in landed):
            await self.db.read(partial(_after_landing, landed))

    def _quiet_until(
        self, stages: list[StageReport], outcomes: list[StageOutcome | None]
    ) -> str | None:
        """Until when this namespace stays quiet without a new write: the earliest due time
        of a stage that could act by the clock alone; "" when one may act now (it left work
        for later, failed, or never ran); None when only a new write can change anything."""
        now = self.clock.now()
        soonest: datetime | None = None
        for out, outcome in zip(stages, outcomes, strict=True):
            status = out.status
            if status == "disabled" or (
                outcome is not None
                and outcome.data_bound
                and status == "ran"
                and not outcome.retry_next_round
            ):
                continue
            if status in {"failed", "over_budget"} or outcome is None:
                return ""
            if outcome.last_run is None:
                return ""
            when = datetime.fromisoformat(outcome.last_run) + timedelta(hours=outcome.interval_h)
            if when <= now:
                return ""
            soonest = when if soonest is None else min(soonest, when)
        return None if soonest is None else iso(soonest)

    def _begin(
        self, conn: sqlite3.Connection, now: datetime, force: bool
    ) -> tuple[bool, str, _Start]:
        """Quiet mark, cooldown and lease in one transaction, which also reads every stage's
        last run for its due-check (one read for the pass, not one per stage)."""
        if namespaces.is_archived(conn, self.namespace):
            return False, ARCHIVED, _NOT_BEGUN
        if review_state.quiet(conn, iso(now), self.namespace):
            return False, NOTHING_NEW, _NOT_BEGUN
        keys = [LAST_PASS, *(_last_key(name) for name, _ in REVIEW_ORDER)]
        stamps = review_state.values(conn, self.namespace, keys)
        if not force:
            last = stamps.get(LAST_PASS)
            if last is not None:
                due = datetime.fromisoformat(last) + timedelta(hours=self.cfg.cooldown_h)
                if now < due:
                    return False, f"cooling down until {iso(due)}", _NOT_BEGUN
        expires = iso(now + timedelta(seconds=self.cfg.lease_s))
        if not review_state.acquire_lease(conn, self._lease, self.holder, iso(now), expires):
            return False, "another process is running a review pass", _NOT_BEGUN
        review_state.put(conn, self.namespace, LAST_PASS, iso(now), iso(now))
        refreshes = bool(review_state.refreshes(conn, self.namespace))
        return True, "", _Start(stamps, refreshes, review_state.last_seq(conn, self.namespace))

    @property
    def _lease(self) -> str:
        return f"review:{self.namespace}"

    def _end(
        self,
        conn: sqlite3.Connection,
        closing: _Closing,
        outcomes: list[StageOutcome | None] | None,
        pending: list[Pending],
    ) -> list[Pending]:
        """The pass's one closing transaction: the stages' deferred writes, the lease back,
        the pass in the ledger, and the quiet mark when nothing is left for later (only
        after a complete pass: ``outcomes`` None means it was cut short — and when no one
        but the pass wrote since ledger row ``began_at``). Returns the deferred writes that
        landed."""
        landed = _settle(conn, closing.stages, pending)
        until = self._quiet_until(closing.stages, outcomes) if outcomes is not None else ""
        review_state.release_lease(conn, self._lease, self.holder)
        ledger.append(
            conn,
            LedgerRecord(
                ts=self.now(),
                namespace=self.namespace,
                actor=self.name,
                action="review_pass",
                decision="DONE",
                entry_id=None,
                trace_id=trace_id_hex(),
                detail={
                    "force": closing.force,
                    "duration_ms": closing.duration_ms,
                    "stages": {s.stage: s.status for s in closing.stages},
                },
            ),
        )
        if until != "":
            # a write that landed while the pass ran may be one its stages never saw
            seq = review_state.quiet_since(
                conn, self.namespace, closing.began_at, REVIEWERS | UNREAD
            )
            if seq is not None:
                review_state.mark_quiet(conn, self.namespace, seq, until, self.now())
        return landed


def _settle(
    conn: sqlite3.Connection, stages: list[StageReport], pending: list[Pending]
) -> list[Pending]:
    """Run the stages' deferred writes, each in its own savepoint: one that fails is rolled
    back alone and its stage reported failed in ``stages`` (stamped nothing, so due
    again)."""
    where = {out.stage: index for index, out in enumerate(stages)}
    landed = []
    for item in pending:
        conn.execute("SAVEPOINT stage")
        try:
            with map_store_errors():
                item.body(conn)
            landed.append(item)
        except Exception as exc:
            if not conn.in_transaction:
                raise  # the whole transaction is lost: the write fails, as any would
            conn.execute("ROLLBACK TO stage")
            index = where[item.stage]
            stages[index] = stages[index].failed(repr(exc))
            log.error("stage_failed", stage=item.stage, error=repr(exc))
        conn.execute("RELEASE stage")
    return landed


def _after_landing(landed: list[Pending], conn: sqlite3.Connection) -> None:
    """What follows the closing commit (projections, events); like any projection, a
    failure here is logged and never un-acknowledges the pass."""
    for item in landed:
        if item.landed is None:
            continue
        try:
            item.landed(conn)
        except Exception as exc:
            log.warning("after_pass_failed", stage=item.stage, error=repr(exc))


def _append_logs(landed: list[Pending]) -> None:
    for item in landed:
        if item.records:
            item.append_log(item.log, item.records)


def _last_key(stage: str) -> str:
    """The review-state key of a stage's last run."""
    return f"{stage}:last_run"
