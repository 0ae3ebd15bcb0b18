"""Seed 004's hippocampus, phase 2: the grapher keeps the namespace's M-FLOW graph up to
date with what the loop stored (``reverie.stores.graph``), incrementally, past each
source's watermark.

It runs when a session goes idle or ends (after the turn's writes, like the learner) and
when asked :class:`GraphDue` (the dream cycle asks before it reads the graph; ``reverie
reindex`` asks for a rebuild). A build that changed something is projected to
``<ns>/graph/*.json`` after its commit. A crash only delays the graph: the watermarks are
rows of the same transaction.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import Any

from opentelemetry import trace

from reverie.bus.actor import Actor
from reverie.bus.messages import Envelope, GraphDue, SessionEnded, SessionIdle
from reverie.clock import Clock
from reverie.config import GraphConfig
from reverie.stores import graph, namespaces
from reverie.stores.db import Database
from reverie.stores.projection import Projector
from reverie.telemetry.logs import get_logger

log = get_logger("reverie.grapher")


class Grapher(Actor):
    name = "grapher"
    handles = (SessionIdle, SessionEnded, GraphDue)

    def __init__(
        self,
        namespace: str,
        *,
        db: Database,
        projector: Projector,
        clock: Clock,
        settings: GraphConfig,
    ) -> None:
        super().__init__(namespace)
        self.db, self.projector, self.clock = db, projector, clock
        self.settings = settings

    @property
    def enabled(self) -> bool:
        return self.settings.enabled

    @property
    def budget_s(self) -> float:
        return self.settings.timeout_s

    async def on_receive(self, envelope: Envelope) -> Any:
        message = envelope.message
        rebuild = isinstance(message, GraphDue) and message.rebuild
        now = self.clock.now()
        changed = await self.db.write(lambda c: self._build(c, rebuild, now))
        if changed or isinstance(message, GraphDue):
            await self.db.read(self._files)
        trace.get_current_span().set_attribute("reverie.graph.changed", changed)
        return changed

    def _build(self, conn: sqlite3.Connection, rebuild: bool, now: datetime) -> int:
        """One transaction; an archived namespace's graph stands still, as its stores do."""
        if namespaces.is_archived(conn, self.namespace):
            return 0
        if rebuild:
            return graph.rebuild(conn, self.namespace, now)
        return graph.build(conn, self.namespace, now)

    def _files(self, conn: sqlite3.Connection) -> None:
        """After a commit: the graph's files, as a projection must — never raising."""
        try:
            graph.write_files(self.projector, conn, self.namespace)
        except (OSError, sqlite3.Error) as exc:
            trace.get_current_span().add_event("projection_failed", {"error": repr(exc)})
            log.warning("projection_failed", namespace=self.namespace, error=repr(exc))
