"""L2, the extractor: after each turn, the candidate statements worth showing the flush.

No model call. The thalamus filter, the verification ladder and the tags are rules
(``reverie.rules.extraction``); text reverie injected — the snapshot block, review
reports, and any sentence that repeats a summary, a promotion or a live entry — is dropped.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from opentelemetry import trace

from reverie.actors.context import Clocked
from reverie.actors.extracting import catch_up, extract, unextracted
from reverie.bus.actor import Actor
from reverie.bus.bus import Bus
from reverie.bus.messages import Envelope, Noted, SessionEnded, TurnEnded
from reverie.clock import Clock
from reverie.config import ExtractorConfig
from reverie.stores.db import Database, fetchone

_NOTED = "SELECT 1 FROM extracts WHERE episode_id = ? AND tag IN ('correction', 'error') LIMIT 1"


class Extractor(Actor, Clocked):
    name = "extractor"
    handles = (TurnEnded, SessionEnded)

    def __init__(
        self, namespace: str, *, db: Database, bus: Bus, clock: Clock, settings: ExtractorConfig
    ) -> None:
        super().__init__(namespace)
        self.db, self.bus, self.clock, self.cfg = db, bus, clock, settings

    @property
    def enabled(self) -> bool:
        return self.cfg.enabled

    @property
    def budget_s(self) -> float:
        return self.cfg.timeout_s

    async def on_receive(self, envelope: Envelope) -> Any:
        message = envelope.message
        if isinstance(message, SessionEnded):  # whatever of the namespace is still pending
            if not await self.db.read(lambda conn: unextracted(conn, self.namespace)):
                return 0
            added = await self.db.write(
                lambda conn: catch_up(conn, self.namespace, self.cfg.min_chars, self.now())
            )
        else:
            assert isinstance(message, TurnEnded)
            added, noted = await self.db.write(lambda conn: self._extract(conn, message))
            if noted:  # seed 003's correction and error triggers
                await self.bus.tell(Noted(self.namespace, message.session_id), cause=envelope)
        trace.get_current_span().set_attribute("reverie.extract.candidates", added)
        return added

    def _extract(self, conn: sqlite3.Connection, message: TurnEnded) -> tuple[int, bool]:
        """The turn's candidates, and whether one is a correction or an error."""
        added = extract(conn, self.namespace, message.episode_id, self.cfg.min_chars, self.now())
        noted = added > 0 and fetchone(conn, _NOTED, (message.episode_id,)) is not None
        return added, noted


__all__ = ["Extractor", "catch_up", "extract", "unextracted"]
