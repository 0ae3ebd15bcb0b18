"""L8, the review bus (bg_review): the only scheduler there is, and it is not resident.

A pass runs when a session goes idle (after its flush) and the 6 h cooldown on the clock
has passed, or when the host forces one. The cooldown check and a lease row are taken in
one transaction, so of several processes sharing a home only one runs a pass. The stages
run in the seed's order — lint (L5), distill (L4), promote (L6), curate (L7) — each behind
its own kill switch, due-check, time budget and span, and each fails silently.

A pass that left nothing for later marks the namespace quiet; until a new write lands (a
ledger row) or a clock-bound stage falls due, a quiet namespace is skipped with one
indexed read instead of a pass.

A pass costs few round trips, so a round over thousands of namespaces stays short: the
transaction that begins it also reads every stage's last run (the due-checks read nothing
more), one read then gathers what every due stage looks at, and the stages' writes that
nothing later in the pass reads (summaries, stamps, seen keys, ledger rows) join the
transaction that ends it, each stage in its own savepoint.
"""

from __future__ import annotations

import os
import sqlite3
import uuid
from datetime import datetime, timedelta
from functools import partial
from typing import Any

import anyio
from opentelemetry.trace import Status, StatusCode

from reverie.actors.context import Services
from reverie.actors.curator import Curator
from reverie.actors.distiller import Distiller
from reverie.actors.linter import Linter
from reverie.actors.promoter import Promoter
from reverie.actors.stage import Pending, Stage
from reverie.bus.actor import Actor
from reverie.bus.messages import Envelope, ReviewDue
from reverie.clock import iso
from reverie.errors import map_store_errors
from reverie.stores import ledger, review_state
from reverie.telemetry.logs import get_logger
from reverie.telemetry.tracing import trace_id_hex

log = get_logger("reverie.reviewer")

LAST_PASS = "review:last_pass"
ORDER: tuple[type[Stage], ...] = (Linter, Distiller, Promoter, Curator)
DATA_BOUND: tuple[type[Stage], ...] = (Linter, Distiller)
"""Stages whose outcome depends only on what is stored; the promoter's and curator's
candidates also ripen with age, so they bound a quiet mark by their next due time."""
NOTHING_NEW = "nothing new since the last pass"


class Reviewer(Actor):
    name = "reviewer"
    handles = (ReviewDue,)

    def __init__(self, namespace: str, services: Services) -> None:
        super().__init__(namespace)
        self.s = services
        self.cfg = services.config.reviewer
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

    async def review(self, force: bool = False) -> dict[str, Any]:
        now = self.s.clock.now()
        order = [stage_type(self.namespace, self.s) for stage_type in ORDER]
        began, reason = await self.s.db.write(lambda conn: self._begin(conn, now, force, order))
        report: dict[str, Any] = {"namespace": self.namespace, "ran": began, "force": force}
        if not began:
            report["reason"] = reason
            return report
        pending: list[Pending] = []
        for stage in order:
            stage.pending = pending  # their bookkeeping joins the closing transaction
        stages: list[dict[str, Any]] = []
        started = anyio.current_time()
        complete = False
        try:
            await self._prefetch(order)
            for stage in order:
                stages.append(await self._stage(stage))
            complete = True
        finally:
            report["stages"] = stages
            report["duration_ms"] = round((anyio.current_time() - started) * 1000, 3)
            with anyio.CancelScope(shield=True):
                landed = await self.s.db.write(
                    lambda conn: self._end(conn, report, order if complete else [], pending)
                )
                if any(item.records for item in landed):
                    await anyio.to_thread.run_sync(_append_logs, landed)
                if any(item.landed for item in landed):
                    await self.s.db.read(partial(_after_landing, landed))
        report["text"] = render(report)
        return report

    async def _prefetch(self, order: list[Stage]) -> None:
        """Every due stage's look in one read: no stage writes before the closing
        transaction, so each reads what it would have read on its own, one hop for all."""
        due = [stage for stage in order if stage.enabled and stage.due_now()]
        if due:
            await self.s.db.read(partial(_prefetch_all, due))

    def _quiet_until(self, order: list[Stage], stages: list[dict[str, Any]]) -> str | None:
        """Until when this namespace stays quiet without a new write: the earliest due time
        of a stage that could act by the clock alone; "" when one may act now (it left work
        for later, failed, or never ran); None when only a new write can change anything.
        Every stage knows its last run (read when the pass began, stamped when it ran)."""
        now = self.s.clock.now()
        soonest: datetime | None = None
        for stage, out in zip(order, stages, strict=True):
            status = out["status"]
            if status == "disabled" or (
                type(stage) in DATA_BOUND and status == "ran" and not out.get("retry_next_round")
            ):
                continue
            if status in {"failed", "over_budget"} or stage.last_run is None:
                return ""
            when = datetime.fromisoformat(stage.last_run) + stage.interval
            if when <= now:
                return ""
            soonest = when if soonest is None else min(soonest, when)
        return None if soonest is None else iso(soonest)

    def _begin(
        self, conn: sqlite3.Connection, now: datetime, force: bool, order: list[Stage]
    ) -> tuple[bool, str]:
        """Quiet mark, cooldown and lease in one transaction, which also reads every stage's
        last run for its due-check (one read for the pass, not one per stage)."""
        if review_state.quiet(conn, iso(now), self.namespace):
            return False, NOTHING_NEW
        stamps = review_state.values(
            conn, self.namespace, [LAST_PASS, *(stage.last_key for stage in order)]
        )
        for stage in order:
            stage.know(stamps.get(stage.last_key))
        if not force:
            last = stamps.get(LAST_PASS)
            if last is not None:
                due = datetime.fromisoformat(last) + timedelta(hours=self.cfg.cooldown_h)
                if now < due:
                    return False, f"cooling down until {iso(due)}"
        expires = iso(now + timedelta(seconds=self.cfg.lease_s))
        if not review_state.acquire_lease(conn, self._lease, self.holder, iso(now), expires):
            return False, "another process is running a review pass"
        review_state.put(conn, self.namespace, LAST_PASS, iso(now), iso(now))
        return True, ""

    @property
    def _lease(self) -> str:
        return f"review:{self.namespace}"

    def _end(
        self,
        conn: sqlite3.Connection,
        report: dict[str, Any],
        order: list[Stage],
        pending: list[Pending],
    ) -> list[Pending]:
        """The pass's one closing transaction: the stages' deferred writes, the lease back,
        the pass in the ledger, and the quiet mark when nothing is left for later (only
        after a complete pass: ``order`` empty means it was cut short). Returns the
        deferred writes that landed."""
        landed = _settle(conn, report["stages"], pending)
        until = self._quiet_until(order, report["stages"]) if order else ""
        review_state.release_lease(conn, self._lease, self.holder)
        ledger.append(
            conn,
            ts=self.s.now(),
            namespace=self.namespace,
            actor=self.name,
            action="review_pass",
            decision="DONE",
            entry_id=None,
            trace_id=trace_id_hex(),
            detail={
                "force": report["force"],
                "duration_ms": report["duration_ms"],
                "stages": {s["stage"]: s["status"] for s in report.get("stages", [])},
            },
        )
        if until != "":
            review_state.mark_quiet(conn, self.namespace, until, self.s.now())
        return landed

    async def _stage(self, stage: Stage) -> dict[str, Any]:
        """One stage, fail-silent: whatever it does, the pass goes on to the next."""
        with self.s.tracer.start_as_current_span(
            f"reverie.review {stage.name}", record_exception=False, set_status_on_exception=False
        ) as span:
            span.set_attribute("reverie.stage", stage.name)
            span.set_attribute("gen_ai.memory.store.id", self.namespace)
            out: dict[str, Any] = {"stage": stage.name}
            if not stage.enabled:
                out["status"] = "disabled"
            else:
                try:
                    with anyio.fail_after(stage.budget_s):
                        if await stage.due():
                            out.update(await stage.run())
                            out.setdefault("status", "ran")
                        else:
                            out["status"] = "not_due"
                            next_due = await stage.next_due()
                            out["next_due"] = iso(next_due) if next_due else None
                except TimeoutError:
                    out["status"] = "over_budget"
                    span.set_status(Status(StatusCode.ERROR, "over its time budget"))
                    log.warning("stage_over_budget", stage=stage.name, namespace=self.namespace)
                except Exception as exc:
                    out["status"] = "failed"
                    out["error"] = repr(exc)
                    span.record_exception(exc)
                    span.set_status(Status(StatusCode.ERROR, repr(exc)))
                    log.error(
                        "stage_failed", stage=stage.name, namespace=self.namespace, error=repr(exc)
                    )
            span.set_attribute("reverie.stage.status", out["status"])
            return out


def _settle(
    conn: sqlite3.Connection, stages: list[dict[str, Any]], pending: list[Pending]
) -> list[Pending]:
    """Run the stages' deferred writes, each in its own savepoint: one that fails is rolled
    back alone and its stage reported failed (stamped nothing, so due again)."""
    outcome = {out["stage"]: out for out in stages}
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
            out = outcome[item.stage.name]
            out.update(status="failed", error=repr(exc))
            log.error("stage_failed", stage=item.stage.name, error=repr(exc))
        conn.execute("RELEASE stage")
    return landed


def _prefetch_all(due: list[Stage], conn: sqlite3.Connection) -> None:
    for stage in due:
        stage.prefetch(conn)


def _after_landing(landed: list[Pending], conn: sqlite3.Connection) -> None:
    """What follows the closing commit (projections, events); like any projection, a
    failure here is logged and never un-acknowledges the pass."""
    for item in landed:
        if item.landed is None:
            continue
        try:
            item.landed(conn)
        except Exception as exc:
            log.warning("after_pass_failed", stage=item.stage.name, error=repr(exc))


def _append_logs(landed: list[Pending]) -> None:
    for item in landed:
        if item.records:
            item.stage.log(item.log, item.records)


def render(report: dict[str, Any]) -> str:
    """The pass as text a host may show the agent, marked so the extractor never takes it
    for something the conversation said."""
    lines = [f'<reverie-report namespace="{report["namespace"]}">']
    for stage in report.get("stages", []):
        details = ", ".join(
            f"{key}={value}"
            for key, value in stage.items()
            if key not in {"stage", "status"} and isinstance(value, int | str)
        )
        lines.append(f"{stage['stage']}: {stage['status']}" + (f" ({details})" if details else ""))
    lines.append("</reverie-report>")
    return "\n".join(lines)
