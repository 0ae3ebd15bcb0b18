"""Seed 003's learner: the six triggers over the learning records (``reverie.stores.learning``).

- ``session-end`` (:class:`SessionEnded`): the session's turns still waiting for the
  extractor are extracted (once, whoever comes first), the namespace's session count goes up, the
  reads' accesses and the session's restatements are counted, corrections and errors not
  yet logged are, and the tier rules run.
- ``error`` / ``correction`` (:class:`Noted`, told by the extractor): the turn's tagged
  statements become HOT log records of those kinds.
- ``pattern-detected`` (:class:`PatternDetected`): at a session's end or a heartbeat the
  learner looks for a lesson seen in enough sessions (``reverie.stores.patterns``) and
  tells itself each one found; handling it makes or extends the pattern, WARM.
- ``manual`` (:class:`Learn`, ``ns.learn``): a learning said by hand.
- ``heartbeat`` (:class:`SessionIdle`): the tier rules, at most every
  ``records.heartbeat_interval_minutes`` — checked on idle events, never by a timer.

Reads (a search, a topic read, a snapshot) count their accesses in an :class:`AccessBook`
in memory, written in one transaction here at the next idle or session end: a read never
waits for a write. Losing the uncounted accesses of a crash only delays a tier move.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any, TypeVar

from opentelemetry import trace

from reverie.actors.context import Clocked, new_id
from reverie.actors.extracting import catch_up
from reverie.bus.actor import Actor
from reverie.bus.bus import Bus
from reverie.bus.messages import (
    AccessesDue,
    Envelope,
    Learn,
    MoveRecord,
    Noted,
    PatternDetected,
    RecordsDue,
    SessionEnded,
    SessionIdle,
)
from reverie.clock import Clock, iso
from reverie.config import Config, RecordsConfig
from reverie.errors import InputError, NamespaceArchived, quoted
from reverie.results import Decision, ToolResult
from reverie.rules.similarity import near_duplicate
from reverie.stores import learning, namespaces, patterns, record_files, review_state
from reverie.stores.db import Database, fetchall
from reverie.stores.learning import LearningRecord, Moved
from reverie.stores.projection import Projector
from reverie.telemetry.logs import get_logger

log = get_logger("reverie.learner")
T = TypeVar("T")

LOGGED_TAGS = ("correction", "error")
"""Extract tags that become log records of their own kind."""
_EXTRACTS = "learner:extracts"  # the last extract id considered
_LEDGER = "learner:ledger"  # the last ledger seq read for restatements


class AccessBook:
    """Accesses counted by reads, per namespace, until the learner writes them."""

    def __init__(self, batch: int) -> None:
        self.batch = batch
        self._pending: dict[str, list[tuple[str, str, str]]] = {}

    def note(self, namespace: str, ids: Iterable[str], how: str, when: str) -> bool:
        """Count an access of each of ``ids``; True when the batch is full (tell the
        learner :class:`AccessesDue`)."""
        pending = self._pending.setdefault(namespace, [])
        pending.extend((rid, how, when) for rid in ids)
        return len(pending) >= self.batch

    def take(self, namespace: str) -> list[tuple[str, str, str]]:
        return self._pending.pop(namespace, [])

    def give_back(self, namespace: str, taken: list[tuple[str, str, str]]) -> None:
        """Accesses taken for a write that failed: counted again at the next one."""
        if taken:
            self._pending[namespace] = taken + self._pending.get(namespace, [])

    def waiting(self) -> list[str]:
        return [ns for ns, pending in self._pending.items() if pending]


class Learner(Actor, Clocked):
    name = "learner"
    handles = (
        SessionEnded,
        SessionIdle,
        Noted,
        AccessesDue,
        Learn,
        MoveRecord,
        PatternDetected,
        RecordsDue,
    )

    def __init__(
        self,
        namespace: str,
        *,
        db: Database,
        projector: Projector,
        bus: Bus,
        clock: Clock,
        config: Config,
        book: AccessBook,
    ) -> None:
        super().__init__(namespace)
        self.db, self.projector, self.bus, self.clock = db, projector, bus, clock
        self.book, self.config = book, config
        self.cfg: RecordsConfig = config.records  # the namespace's own, read in each txn
        self.jaccard = config.writer.jaccard_threshold
        self.min_chars = config.extractor.min_chars

    @property
    def enabled(self) -> bool:
        return self.cfg.enabled

    @property
    def budget_s(self) -> float:
        return self.cfg.timeout_s

    async def on_receive(self, envelope: Envelope) -> Any:
        message = envelope.message
        if isinstance(message, RecordsDue):
            return await self.db.read(self._rewrite)
        if isinstance(message, Learn | MoveRecord | PatternDetected):
            return await self._by_hand(message)
        accesses = self.book.take(self.namespace)
        ended = isinstance(message, SessionEnded)
        try:
            moved, found = await self.db.write(
                self._unseen(lambda c: self._keep(c, accesses, ended, message))
            )
        except BaseException:  # not written: they wait for the next try
            self.book.give_back(self.namespace, accesses)
            raise
        if found is not None:  # the rules ran: the files follow, and any pattern found
            await self.db.read(self._files)
            for examples in found:
                await self.bus.tell(PatternDetected(self.namespace, examples), cause=envelope)
        span = trace.get_current_span()
        span.set_attribute("reverie.records.accesses", len(accesses))
        span.set_attribute("reverie.records.moved", len(moved))
        return len(moved)

    async def _by_hand(self, message: Learn | MoveRecord | PatternDetected) -> Any:
        """A learning, a move or a pattern: one write, then the record files, rewritten
        outside the write (they read the whole namespace, and writes wait for none of it)."""
        body: Callable[[sqlite3.Connection], Any]
        if isinstance(message, Learn):
            body = partial(self._learn, message=message)
        elif isinstance(message, MoveRecord):
            body = partial(self._move, message=message)
        else:
            body = partial(self._pattern, message=message)
        try:
            done = await self.db.write(self._unseen(body))
        except NamespaceArchived as exc:  # the host's call raises it; not a failure here
            return exc
        await self.db.read(self._files)
        return done

    def _unseen(self, body: Callable[[sqlite3.Connection], T]) -> Callable[[sqlite3.Connection], T]:
        """A write whose ledger rows no review stage reads: a quiet namespace stays quiet
        (tier moves and log records are no new knowledge to distil or promote)."""

        def run(conn: sqlite3.Connection) -> T:
            seq = review_state.last_seq(conn, self.namespace)
            done = body(conn)
            review_state.carry_quiet(conn, self.namespace, seq)
            return done

        return run

    def _keep(
        self,
        conn: sqlite3.Connection,
        accesses: list[tuple[str, str, str]],
        ended: bool,
        message: Any,
    ) -> tuple[list[Moved], list[tuple[str, ...]] | None]:
        """One transaction: log what the extractor tagged, count the accesses and
        restatements, and — at a session's end or a due heartbeat — run the tier rules and
        look for patterns (None: the rules did not run). An archived namespace is left as
        it is: its accesses are not counted, its tier clock stands still."""
        if not self._settle(conn, writing=False):
            return [], None
        now = self.clock.now()
        if ended:  # the session's last turns may wait for the extractor: taken here first
            catch_up(conn, self.namespace, self.min_chars, iso(now))
        self._log_tagged(conn, iso(now))
        moved = learning.touch(conn, self.namespace, accesses + self._restated(conn), self.cfg)
        if ended:
            learning.end_session(conn, self.namespace, iso(now))
        beat = isinstance(message, SessionIdle) and learning.heartbeat_due(
            conn, self.namespace, now, self.cfg
        )
        if not (ended or beat):
            return moved, None
        moved += learning.retier(conn, self.namespace, now, self.cfg)
        learning.beat(conn, self.namespace, iso(now))
        return moved, patterns.detect(conn, self.namespace, self.cfg)

    def _pattern(
        self, conn: sqlite3.Connection, message: PatternDetected
    ) -> patterns.Pattern | None:
        return patterns.save(conn, self.namespace, message.examples, new_id("p"), self.now())

    def _files(self, conn: sqlite3.Connection) -> None:
        """After a commit: the record files, as a projection must — never raising."""
        try:
            self._rewrite(conn)
        except (OSError, sqlite3.Error) as exc:
            trace.get_current_span().add_event("projection_failed", {"error": repr(exc)})
            log.warning("projection_failed", namespace=self.namespace, error=repr(exc))

    def _rewrite(self, conn: sqlite3.Connection) -> list[str]:
        return record_files.write(self.projector, conn, self.namespace)

    def _log_tagged(self, conn: sqlite3.Connection, now: str) -> int:
        """Corrections and errors the extractor tagged since the last look, as log records
        (HIGH weight → high priority); a restated one counts as its twin's access."""
        after = int(review_state.get(conn, self.namespace, _EXTRACTS, 0))
        rows = fetchall(
            conn,
            "SELECT id, tag, text, weight, session_id FROM extracts"
            " WHERE namespace = ? AND id > ? ORDER BY id",
            (self.namespace, after),
        )
        for row in rows:
            if row["tag"] in LOGGED_TAGS:
                priority = "high" if row["weight"] == "high" else "medium"
                self._log(conn, (row["tag"], row["text"], priority), row["session_id"], now)
        if rows:
            review_state.put(conn, self.namespace, _EXTRACTS, rows[-1]["id"], now)
        return len(rows)

    def _log(
        self, conn: sqlite3.Connection, said: tuple[str, str, str], session: str | None, now: str
    ) -> ToolResult:
        kind, content, priority = said
        for rid, text in learning.logged(conn, self.namespace, kind):
            if near_duplicate(content, text, self.jaccard) is not None:
                learning.touch(conn, self.namespace, [(rid, "restated", now)], self.cfg, session)
                return ToolResult(Decision.NOOP, rid, f"the same {kind} as {rid}")
        rid = new_id("lrn")
        learning.learn(conn, self.namespace, (rid, kind, content, priority), session, now)
        return ToolResult(Decision.ADD, rid, f"a {priority} {kind}, HOT")

    def _restated(self, conn: sqlite3.Connection) -> list[tuple[str, str, str]]:
        """The restatements (NOOP naming a twin) and reinforcements the ledger holds since
        the last look, as accesses of those records."""
        after = int(review_state.get(conn, self.namespace, _LEDGER, 0))
        rows = fetchall(
            conn,
            "SELECT seq, ts, decision, entry_id FROM ledger WHERE namespace = ? AND seq > ?"
            " ORDER BY seq",
            (self.namespace, after),
        )
        if rows:
            review_state.put(conn, self.namespace, _LEDGER, rows[-1]["seq"], self.now())
        return [
            (r["entry_id"], "restated" if r["decision"] == "NOOP" else "reinforced", r["ts"])
            for r in rows
            if r["entry_id"] and r["decision"] in ("NOOP", "REINFORCED")
        ]

    def _settle(self, conn: sqlite3.Connection, *, writing: bool) -> bool:
        """Read the namespace's own settings into ``cfg``; False when it is archived (a
        write, ``writing``, is refused: :class:`NamespaceArchived`)."""
        settings = namespaces.open_settings(conn, self.namespace, self.config)
        if settings is None:
            if writing:
                namespaces.check_open(conn, self.namespace)  # raises: it is archived
            return False
        self.cfg = settings.records
        return True

    def _learn(self, conn: sqlite3.Connection, message: Learn) -> ToolResult:
        self._settle(conn, writing=True)
        said = (message.kind, message.content, message.priority)
        return self._log(conn, said, None, self.now())

    def _move(self, conn: sqlite3.Connection, message: MoveRecord) -> LearningRecord:
        self._settle(conn, writing=True)
        now = self.now()
        if learning.get(conn, self.namespace, message.record_id) is None:
            raise InputError(f"no record {quoted(message.record_id)} in {self.namespace!r}")
        rid = message.record_id
        if message.raise_priority:
            learning.raise_priority(conn, self.namespace, rid, now)
        elif message.tier is not None:
            learning.set_tier(conn, self.namespace, rid, message.tier, message.why, now)
            if message.why == "recalled":  # seed 003's recall is a reference too
                learning.touch(conn, self.namespace, [(rid, "recalled", now)], self.cfg)
        found = learning.get(conn, self.namespace, message.record_id)
        assert found is not None
        return found
