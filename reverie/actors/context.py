"""What actors are given. Each actor takes, in its constructor, only the capabilities it
uses — the database, the projector, the bus, the clock, the settings, the model (a
:class:`Judge`), the embedding index — wired by the runtime (``reverie.runtime``, the one
composition root); no actor is handed a locator of everything."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from opentelemetry import metrics, trace

from reverie.clock import Clock, iso
from reverie.model.breaker import Breaker
from reverie.model.seam import Model
from reverie.stores.db import Database


class Clocked:
    """An actor that stamps what it writes with its clock."""

    clock: Clock

    def now(self) -> str:
        return iso(self.clock.now())


@dataclass(frozen=True, slots=True)
class Judge(Clocked):
    """The model as the stages may ask it: behind its breaker (a dead server is asked once
    per review round, see :mod:`reverie.model.breaker`), on a span, in the call and token
    metrics, and recorded in the ledger (see :func:`reverie.actors.judging.consult`)."""

    model: Model
    breaker: Breaker
    tracer: trace.Tracer
    token_usage: metrics.Histogram
    model_calls: metrics.Counter
    db: Database
    clock: Clock


def new_id(prefix: str) -> str:
    """A stable, unique, opaque id: ``ent-…`` for entries, ``fct-…`` for facts."""
    return f"{prefix}-{uuid.uuid4().hex[:16]}"
