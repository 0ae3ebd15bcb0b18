"""What every write handler shares: decisions, outcomes, the ledger row, the NOOP answer,
and projection after the commit."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from opentelemetry import trace

from reverie.actors.context import Clocked
from reverie.bus.actor import Actor
from reverie.bus.bus import Bus
from reverie.bus.messages import ToolCall
from reverie.clock import Clock
from reverie.config import Config
from reverie.errors import ToolInputError, quoted
from reverie.results import Decision, ToolResult
from reverie.rules.secrets import refusal, secret_kind
from reverie.stores import calls, ledger, namespaces
from reverie.stores.db import Database
from reverie.stores.projection import Projector
from reverie.stores.records import Entry, Fact, LedgerRecord
from reverie.telemetry.logs import get_logger
from reverie.telemetry.tracing import trace_id_hex

log = get_logger("reverie.writer")


# Runs in the write's worker thread right after its commit, with the write connection.
Projection = Callable[[sqlite3.Connection], None]


@dataclass
class Outcome:
    result: ToolResult
    projections: list[Projection] = field(default_factory=list)


Txn = Callable[[sqlite3.Connection], Outcome]


def refuse_secret(field: str, text: str | None) -> None:
    """A write carrying a credential is refused before anything is written: memory is
    injected into every later prompt, and a secret there leaks to every model it meets."""
    kind = secret_kind(text) if text else None
    if kind is not None:
        assert text is not None
        raise ToolInputError(refusal(kind, field, text))


class WriteBase(Actor, Clocked):
    """The writer's common ground; the handlers for each tool are mixins of it."""

    def __init__(
        self,
        namespace: str,
        *,
        db: Database,
        projector: Projector,
        bus: Bus,
        clock: Clock,
        config: Config,
    ) -> None:
        super().__init__(namespace)
        self.db, self.projector, self.bus, self.clock = db, projector, bus, clock
        self.base = config
        self.cfg = config  # the namespace's own settings, read in each write (see _guarded)
        self._named: ToolCall | None = None  # a tool call the host named, not yet written
        self._call_id: str | None = None  # the host's id of the call being written, if any

    async def _write(self, body: Txn) -> Outcome:
        """One write transaction, then its projections in the same hop to the thread."""
        named, self._named = self._named, None
        body = self._guarded(body)
        if named is not None:
            return await self.db.write(
                lambda conn: self._named_txn(conn, named, body), then=self._project
            )
        return await self.db.write(body, then=self._project)

    def _guarded(self, body: Txn) -> Txn:
        """``body`` refused (:class:`NamespaceArchived`) when the namespace is archived, and
        run with the namespace's own settings (its caps), both read in its transaction."""

        def txn(conn: sqlite3.Connection) -> Outcome:
            namespaces.check_open(conn, self.namespace)
            self.cfg = namespaces.effective(conn, self.namespace, self.base)
            return body(conn)

        return txn

    def _named_txn(self, conn: sqlite3.Connection, call: ToolCall, body: Txn) -> Outcome:
        """A call with the host's call id is answered once: its answer is stored in the
        write's own transaction (so it exists exactly when the write landed) and a retry
        replays it without writing; the ledger rows of the write carry the id."""
        assert call.call_id is not None
        request = calls.digest(call.command)
        done = calls.get(conn, self.namespace, call.call_id)
        if done is not None:
            if done.request != request:
                raise ToolInputError(
                    f"call_id {quoted(call.call_id, 80)} was already used for a different "
                    "call; use a new id for a new call"
                )
            return Outcome(ToolResult.from_dict(done.result).replay())
        self._call_id = call.call_id
        try:
            outcome = body(conn)
        finally:
            self._call_id = None
        answer = replace(outcome.result, call_id=call.call_id)
        calls.record(
            conn,
            self.namespace,
            call.call_id,
            call.session_id,
            request,
            answer.to_dict(),
            self.now(),
        )
        return Outcome(answer, outcome.projections)

    def _project(self, conn: sqlite3.Connection, outcome: Outcome) -> None:
        """Rewrite the outcome's projections; the write is committed already, so a failure
        here is recorded and the file is rebuilt from the database on the next open."""
        try:
            for projection in outcome.projections:
                projection(conn)
        except Exception as exc:
            trace.get_current_span().add_event("projection_failed", {"error": repr(exc)})
            log.warning("projection_failed", namespace=self.namespace, error=repr(exc))

    def _audit(
        self,
        conn: sqlite3.Connection,
        *,
        actor: str,
        action: str,
        decision: Decision,
        entry_id: str | None,
        target: str | None,
        session_id: str | None,
        before: Any = None,
        after: Any = None,
        detail: dict[str, Any] | None = None,
    ) -> None:
        if self._call_id:
            detail = {**(detail or {}), "call_id": self._call_id}
        ledger.append(
            conn,
            LedgerRecord(
                ts=self.now(),
                namespace=self.namespace,
                actor=actor,
                action=action,
                decision=decision.value,
                entry_id=entry_id,
                target=target,
                session_id=session_id,
                trace_id=trace_id_hex(),
                before=before,
                after=after,
                detail=detail or {},
            ),
        )

    def _noop(
        self,
        conn: sqlite3.Connection,
        call: ToolCall,
        target: str,
        action: str,
        content: str,
        twin: Entry | Fact,
        detail: dict[str, Any],
    ) -> Outcome:
        self._audit(
            conn,
            actor=call.actor,
            action=action,
            decision=Decision.NOOP,
            entry_id=twin.id,
            target=target,
            session_id=call.session_id,
            after={"content": content},
            detail={"duplicate_of": twin.id, **detail},
        )
        return Outcome(
            ToolResult(
                Decision.NOOP,
                twin.id,
                f"already stored as {twin.id}: {twin.content[:120]!r}; nothing was written",
                duplicate_of=twin.id,
                **detail,
            )
        )
