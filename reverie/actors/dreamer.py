"""Seed 004's dream cycle, the last stage of a review pass: due at each of the day's slots
(07:00 and 22:00 in the namespace's timezone by default) and run on the first idle after
one passed — or now, by hand (:class:`~reverie.bus.messages.Dream`). No cron, no thread.

A dream brings the graph up to date, reads the day (episode log, HIGH-weight statements,
learnings), recalls from the long-term store, links each new learning through Bundle
Search, distils insights and next actions (rules, or a configured model checked by rules),
writes at most ``max_topic_updates`` topic facts through the writer, measures health,
and records all of it in one ledger row; its files (dream report, dream log, truth files,
archive, and with the evening dream the daily report) are written from that record after
the commit. See docs/dream.md."""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import asdict, replace
from datetime import datetime, timedelta
from functools import partial
from typing import Any, Final

from reverie.actors.judging import consult
from reverie.actors.stage import Stage
from reverie.bus.bus import Bus
from reverie.bus.messages import Dream, DreamDue, Envelope, GraphDue, ToolCall
from reverie.bus.replies import StageOutcome
from reverie.clock import iso
from reverie.commands import TopicCommand
from reverie.dream import distil, files, health, schedule, status
from reverie.errors import NamespaceArchived, ReverieError
from reverie.model.seam import Answer
from reverie.reports import DreamDetails, StageReport
from reverie.results import ToolResult
from reverie.stores import drafts as skill_drafts
from reverie.stores import dream as dream_store
from reverie.stores import (
    graph,
    longterm,
    namespaces,
    patterns,
    review_state,
    skill_activity,
    topics,
)
from reverie.stores.entries import live
from reverie.telemetry.logs import get_logger

log = get_logger("reverie.dreamer")

LAST: Final = status.LAST
"""The last dream's short record (when, its date and health), for the next one."""
_FIRST_DAY: Final = timedelta(days=1)
"""A first dream reads the last day."""
RECURRING: Final = 3
"""The report's recurring patterns: seen in at least this many sessions (the seed's ≥ 3)."""
LINKED: Final = 3
"""New learnings linked through Bundle Search per dream, newest first: each search costs
about seven default searches (``bench.bundle``), and the searches were most of a dream's
own time on ``reverie simulate`` (``duration_ms`` in its record)."""


class Dreamer(Stage):
    name = "dreamer"
    section = "dream"
    handles = (DreamDue, Dream)

    def __init__(self, namespace: str, *, judge: Any, bus: Bus, **stage: Any) -> None:
        super().__init__(namespace, **stage)
        self.judge, self.bus = judge, bus
        self.slots = schedule.parse_times(self.cfg.times)

    # -- when it is due: the stamp is the next slot, which only a run can tell ----------

    @property
    def enabled(self) -> bool:
        """Always on the bus: the switch stops the dream of a pass, never one asked for."""
        return True

    def _next_due(self) -> datetime | None:
        """The dreamer's stamp (its ``last_key``, read with every stage's by the pass) is
        when it is next due, not when it last ran: its slots are in the namespace's
        timezone, which only a run reads, and the pass's due-check reads nothing."""
        stamp = self.last_run
        return None if stamp is None else datetime.fromisoformat(stamp)

    def _answer(self, report: StageReport) -> StageOutcome:
        # interval 0: the reviewer's quiet check takes the stamp itself as the next due time
        return replace(super()._answer(report), interval_h=0.0, data_bound=False)

    def look(self, conn: sqlite3.Connection) -> None:
        """Nothing read ahead: a dream reads after the graph is brought up to date."""
        return None

    async def on_receive(self, envelope: Envelope) -> Any:
        message = envelope.message
        if isinstance(message, Dream):
            self.pending = None
            try:
                await self.db.read(lambda c: namespaces.check_open(c, self.namespace))
            except NamespaceArchived as exc:  # the host's call raises it; not a failure here
                return exc
            return await self.dream(dry_run=message.dry_run)
        return await super().on_receive(envelope)

    async def run(self) -> DreamDetails:
        found = await self.dream(dry_run=False)
        return DreamDetails(found.run, found.files, brief=True)

    # -- a dream ------------------------------------------------------------------------

    async def dream(self, *, dry_run: bool) -> DreamDetails:
        """One dream: read, recall, link, distil, write, measure, record, then the files."""
        started = time.perf_counter()
        if not dry_run:
            await self._graph_up_to_date()
        graphed = time.perf_counter()
        now = self.clock.now()
        seen = await self.db.read(partial(self._read, now))
        learnt = await self._distil(seen)
        writes = [] if dry_run else await self._topic_updates(learnt)
        measure = partial(self._measure, now, seen["day"].since, bool(seen["linked"]))
        after = await self.db.read(measure)
        run = self._record(now, seen, learnt, writes, after, dry_run)
        run["duration_ms"] = {  # the wall clock, not the ManualClock: what the dream cost
            "graph": round(1000 * (graphed - started), 1),
            "dream": round(1000 * (time.perf_counter() - graphed), 1),
        }
        if dry_run:
            return DreamDetails(run)
        await self.db.write(partial(self._commit, run, seen["recalled_records"]))
        written = files.write(self.projector, self.namespace, run, self.project)
        return DreamDetails(run, tuple(written))

    async def _graph_up_to_date(self) -> None:
        try:
            # a configured model names new entities when the model writes the dream too
            await self.bus.ask(GraphDue(self.namespace, refine=not self.cfg.rules_first))
        except (ReverieError, TimeoutError) as exc:  # a dream on yesterday's graph is still one
            log.warning("graph_not_built", namespace=self.namespace, error=repr(exc))

    def _read(self, now: datetime, conn: sqlite3.Connection) -> dict[str, Any]:
        """Everything a dream reads before it distils, in one read."""
        last = review_state.get(conn, self.namespace, LAST) or {}
        since = last.get("ts") or iso(now - _FIRST_DAY)
        today = dream_store.day(conn, self.namespace, since)
        said = [s.text for s in today.high][: self.cfg.recall_keywords]
        recalled = longterm.recall(conn, self.namespace, longterm.query_of(said), self.cfg.recall_k)
        links = [_linked(conn, self.namespace, s) for s in reversed(today.learnt[-LINKED:])]
        zone = self.cfg.timezone or dream_store.timezone_of(conn, self.namespace)
        return {
            "last": last,
            "day": today,
            "before": dream_store.counts(conn, self.namespace),
            "recalled_records": recalled,
            "linked": links,
            "zone": zone,
            "topics": topics.names(conn, self.namespace),
        }

    async def _distil(self, seen: dict[str, Any]) -> distil.Learnt:
        today = seen["day"]
        recalled = [r.content for r in seen["recalled_records"]]
        cfg = self.cfg
        limits = (cfg.max_insights, cfg.max_actions, cfg.max_topic_updates)
        rules = distil.by_rules(today, recalled, cfg.max_insights, cfg.max_actions)
        if cfg.rules_first or self.judge.model.name == "offline" or not rules.sources:
            return rules  # the rules wrote it; nothing the model could add from nothing
        prompt = distil.question(today, recalled, limits, seen["topics"])
        answer = await consult(self.judge, self.namespace, prompt)
        if not isinstance(answer, Answer):
            return rules
        sources = list(rules.sources) + recalled
        return distil.checked(answer.data, sources, rules, self.judge.model.name, limits)

    async def _topic_updates(self, learnt: distil.Learnt) -> list[dict[str, Any]]:
        """The model's topic facts, each through the writer (its caps, near-duplicate and
        supersede checks, scanning and ledger)."""
        done: list[dict[str, Any]] = []
        for topic, content in learnt.topics[: self.cfg.max_topic_updates]:
            command = TopicCommand("save", topic, content)
            try:
                result = await self.bus.ask(
                    ToolCall(self.namespace, None, command, actor=self.name)
                )
            except (ReverieError, TimeoutError) as exc:
                done.append({"topic": topic, "decision": "ERROR", "why": repr(exc)})
                continue
            assert isinstance(result, ToolResult)
            done.append({"topic": topic, "decision": result.decision.value, "id": result.entry_id})
        return done

    def _measure(
        self, now: datetime, since: str, links: bool, conn: sqlite3.Connection
    ) -> dict[str, Any]:
        """The counts and health after the dream's writes, and what changed ``since``; a
        Bundle Search sample for the report when no learning was linked (whose searches
        are the sample otherwise)."""
        lines = status.index_lines(conn, self.namespace)
        counts = dream_store.health_counts(conn, self.namespace, now, lines)
        library = patterns.library(conn, self.namespace)
        return {
            "after": dream_store.counts(conn, self.namespace),
            "health": health.score(counts).to_dict(),
            "records": longterm.status(conn, self.namespace),
            "skills": _board(conn, self.namespace, since, now),
            "drafts": [  # issue 13: skill drafts waiting for a person's verdict
                {"name": d.name, "sessions": d.sessions, "description": d.description}
                for d in skill_drafts.every(conn, self.namespace, "draft")
            ],
            "recurring": [
                {"id": p.id, "name": p.name, "sessions": p.sessions}
                for p in library
                if p.sessions >= RECURRING
            ],
            "sample": None if links else _sample(conn, self.namespace),
            "patterns_updated": [
                {"id": p.id, "name": p.name} for p in library if p.updated_at >= since
            ],
            "index": {"lines": lines, "cap": self.cfg.index_lines},
            "user_state": [
                e.content
                for target in ("user_settings", "user")
                for e in live(conn, self.namespace, target)
            ],
        }

    def _record(
        self,
        now: datetime,
        seen: dict[str, Any],
        learnt: distil.Learnt,
        writes: list[dict[str, Any]],
        after: dict[str, Any],
        dry_run: bool,
    ) -> dict[str, Any]:
        """The dream's record: what the ledger keeps and the reports are rendered from (as
        JSON reads it back, so a report from the ledger is the one written now)."""
        tz = _zone(seen["zone"])
        slot = schedule.last_slot(now, self.slots, tz)
        today = seen["day"]
        before = seen["before"]
        run = {
            "namespace": self.namespace,
            "ts": iso(now),
            "date": schedule.local_day(slot, tz),
            "slot": slot.astimezone(tz).strftime("%H:%M"),
            "timezone": getattr(tz, "key", "UTC"),
            **_evening(seen, now, self.slots, tz),
            "next_due": iso(schedule.next_slot(now, self.slots, tz)),
            "dry_run": dry_run,
            "day": _day(today),
            "before": before,
            "deltas": {k: v - before.get(k, 0) for k, v in after["after"].items()},
            "recalled": [
                {"id": r.id, "kind": r.kind, "text": r.content} for r in seen["recalled_records"]
            ],
            "linked": seen["linked"],
            "learnt": asdict(learnt),
            "topic_writes": writes,
            "health_before": (seen["last"] or {}).get("health"),
            **after,
        }
        as_read: dict[str, Any] = json.loads(json.dumps(run))
        return as_read

    def _commit(self, run: dict[str, Any], recalled: list[Any], conn: sqlite3.Connection) -> None:
        """The dream's one write: its recalls counted, its stamp, its ledger row."""
        longterm.counted(conn, self.namespace, recalled, run["ts"], self.config.records)
        short = {"ts": run["ts"], "date": run["date"], "health": run["health"]["score"]}
        review_state.put(conn, self.namespace, LAST, short, run["ts"])
        review_state.put(conn, self.namespace, self.last_key, run["next_due"], run["ts"])
        self.audit(conn, "round", "DONE", None, run)
        self.know(run["next_due"])


def _evening(seen: dict[str, Any], now: datetime, slots: Any, tz: Any) -> dict[str, Any]:
    """Whether this dream writes a daily report (an evening slot passed since the last
    dream; for a first one, when the slot it answers is the evening), and that evening's
    date."""
    last = (seen["last"] or {}).get("ts")
    if last:
        since = datetime.fromisoformat(last)
    else:
        since = schedule.last_slot(now, slots, tz) - timedelta(microseconds=1)
    evening = schedule.evening_passed(since, now, slots, tz)
    return {
        "evening": evening is not None,
        "daily_date": None if evening is None else schedule.local_day(evening, tz),
    }


def _zone(name: str) -> Any:
    try:
        return schedule.zone(name)
    except ValueError:  # a timezone said in chat ("JST", "Pacific time"): not a zone name
        return schedule.zone("")


def _linked(conn: sqlite3.Connection, namespace: str, said: dream_store.Said) -> dict[str, Any]:
    """A learning's nearest knowledge in the graph other than itself, and the paths."""
    hits = [h for h in graph.bundle(conn, namespace, said.text, 3) if h.id != said.id]
    return {"id": said.id, "text": said.text, "hits": [_hit(h) for h in hits[:2]]}


def _hit(hit: graph.BundleHit) -> dict[str, Any]:
    return {"id": hit.id, "kind": hit.kind, "cost": round(hit.cost, 4), "path": list(hit.path)}


def _day(today: dream_store.Day, limit: int = 50) -> dict[str, Any]:
    found = asdict(today)
    for key in ("high", "learnt", "open_errors", "cooled"):
        found[key] = found[key][:limit]
    return found


def _board(
    conn: sqlite3.Connection, namespace: str, since: str, now: datetime
) -> dict[str, dict[str, Any]]:
    """Each registered skill's uses (all time, and since the last dream) and its activity
    score as of now, with its tier at the curator's last scoring (``tier_before``)."""
    today = dream_store.skills_used(conn, namespace, since)
    scored = {row["name"]: row for row in skill_activity.table(conn, namespace, now)}
    board: dict[str, dict[str, Any]] = {}
    for name, total in dream_store.skill_totals(conn, namespace).items():
        row = scored.get(name, {})
        board[name] = {
            "total": total,
            "today": today.get(name, 0),
            "score": row.get("score"),
            "tier": row.get("tier"),
            "mark": row.get("mark"),
            "tier_before": row.get("previous_tier"),
        }
    return board


def _sample(conn: sqlite3.Connection, namespace: str) -> dict[str, Any] | None:
    """A Bundle Search sample for the report: the newest topic's name as the query."""
    row = conn.execute(
        "SELECT topic FROM facts WHERE namespace = ? AND invalid_at IS NULL"
        " ORDER BY rowid DESC LIMIT 1",
        (namespace,),
    ).fetchone()
    if row is None:
        return None
    query = str(row[0]).replace("-", " ")
    return {"query": query, "hits": [_hit(h) for h in graph.bundle(conn, namespace, query, 3)]}
