"""What every actor is given: the stores, the projector, settings, the clock, the bus, the
model and the telemetry instruments."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from opentelemetry import metrics, trace

from reverie.bus.bus import Bus
from reverie.clock import Clock, iso
from reverie.config import Config
from reverie.embedding.index import VectorIndex
from reverie.model.breaker import Breaker
from reverie.model.seam import Model
from reverie.stores.db import Database
from reverie.stores.projection import Projector


@dataclass(frozen=True)
class Services:
    db: Database
    projector: Projector
    config: Config
    clock: Clock
    bus: Bus
    tracer: trace.Tracer
    model: Model
    token_usage: metrics.Histogram
    model_calls: metrics.Counter
    vectors: VectorIndex | None = None
    """The embedding seam, when one is configured: the flush asks it, in the background,
    for paraphrases and for the topic a statement belongs to."""
    breaker: Breaker = field(default_factory=Breaker)
    """In front of the model, for every stage of every namespace: a dead server is asked
    once per review round (see :mod:`reverie.model.breaker`)."""

    def now(self) -> str:
        return iso(self.clock.now())


def new_id(prefix: str) -> str:
    """A stable, unique, opaque id: ``ent-…`` for entries, ``fct-…`` for facts."""
    return f"{prefix}-{uuid.uuid4().hex[:16]}"
