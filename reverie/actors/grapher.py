"""Seed 004's hippocampus, phase 2: the grapher keeps the namespace's M-FLOW graph up to
date with what the loop stored (``reverie.stores.graph``), incrementally, past each
source's watermark.

It builds when a session goes idle or ends (after the turn's writes, like the learner) and
when asked :class:`GraphDue` (the dream cycle asks before it reads the graph; ``reverie
reindex`` asks for a rebuild). A build that changed something is projected to
``<ns>/graph/*.json`` after its commit. A crash only delays the graph: the watermarks are
rows of the same transaction.

When a model other than the offline one is configured, the rules' graph is refined after
an asked build (the dream cycle's ``GraphDue``; not a rebuild, not a search's, never on
idle or at a session's end, so the loop's own model calls and their breaker are not touched
between dreams): the model is asked (one bounded call, :data:`NAME_BATCH` new episodes) to
name the entity and facet each episode is about, and a name is kept only when it is made
of the episode's own words (:func:`reverie.rules.cone.carried`). A deferred answer leaves
those episodes to be asked again. ``graph.model_names`` switches it off.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import Any

from opentelemetry import trace

from reverie.actors.context import Judge
from reverie.actors.judging import consult
from reverie.bus.actor import Actor
from reverie.bus.messages import Envelope, GraphDue, SessionEnded, SessionIdle
from reverie.clock import Clock, iso
from reverie.config import GraphConfig
from reverie.model import questions
from reverie.model.offline import OfflineModel
from reverie.model.seam import Answer
from reverie.rules.cone import MODEL_KINDS, carried
from reverie.stores import graph, graph_build, namespaces, review_state
from reverie.stores.db import Database
from reverie.stores.projection import Projector
from reverie.telemetry.logs import get_logger

log = get_logger("reverie.grapher")
NAME_BATCH = 20
UNPROJECTED = "graph:unprojected"
"""Set by a build whose files were not written (on idle, at a session's end, for a
search); the next projecting ask writes them and drops it."""
"""Episodes a configured model is asked to name in one call (one call per build)."""


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
        judge: Judge,
        settings: GraphConfig,
    ) -> None:
        super().__init__(namespace)
        self.db, self.projector, self.clock, self.judge = db, projector, clock, judge
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
        project = isinstance(message, GraphDue) and message.project
        due = rebuild or await self.db.read(lambda c: graph.due(c, self.namespace))
        trace.get_current_span().set_attribute("reverie.graph.due", due)
        if due:
            changed = await self.db.write(lambda c: self._build(c, rebuild, now, project))
        else:
            changed = 0
        if self._refines(message):
            changed += await self._refine()
        if project:
            await self._project(changed > 0 or rebuild, now)
        trace.get_current_span().set_attribute("reverie.graph.changed", changed)
        return changed

    async def _project(self, changed: bool, now: datetime) -> None:
        """The files, when the graph changed since they were written (or they are gone)."""
        index = self.projector.namespace_dir(self.namespace) / "graph" / "index.json"
        stale = await self.db.read(lambda c: review_state.get(c, self.namespace, UNPROJECTED))
        if not (changed or stale or not index.exists()):
            return
        await self.db.read(self._files)
        if stale:
            await self.db.write(lambda c: review_state.drop(c, self.namespace, UNPROJECTED))

    def _build(self, conn: sqlite3.Connection, rebuild: bool, now: datetime, project: bool) -> int:
        """One transaction; an archived namespace's graph stands still, as its stores do.
        A build whose files are not written now marks them stale, in the same transaction."""
        if namespaces.is_archived(conn, self.namespace):
            return 0
        if rebuild:
            changed = graph.rebuild(conn, self.namespace, now)
        else:
            changed = graph.build(conn, self.namespace, now)
        if changed and not project:
            review_state.put(conn, self.namespace, UNPROJECTED, True, iso(now))
        return changed

    def _refines(self, message: Any) -> bool:
        """A model other than the offline one refines when an ask says so (the dream's),
        unless ``graph.model_names`` is off."""
        if isinstance(self.judge.model, OfflineModel) or not self.settings.model_names:
            return False
        return isinstance(message, GraphDue) and message.refine and not message.rebuild

    async def _refine(self) -> int:
        """Ask the model to name the entity and facet of new episodes; keep the names made
        of the episode's words. The nodes and edges added."""
        batch = await self.db.read(lambda c: graph_build.unnamed(c, self.namespace, NAME_BATCH))
        if not batch:
            return 0
        units = [{"id": int(r["id"]), "text": str(r["label"])[:800]} for r in batch]
        answer = await consult(self.judge, self.namespace, questions.graph_names(units))
        if not isinstance(answer, Answer):
            return 0  # deferred or resting: asked again at the next build
        by_id = {int(r["id"]): r for r in batch}
        kept = []
        for item in answer.data.get("names", []):
            row = by_id.get(int(item["id"]))
            if row is None or item["kind"] not in MODEL_KINDS:
                continue
            text = str(row["label"])
            if carried(item["entity"], text) and carried(item["facet"], text):
                kept.append((str(row["key"]), item["kind"], item["entity"], item["facet"]))
        upto, now = int(batch[-1]["id"]), self.clock.now().isoformat()
        return await self.db.write(lambda c: graph_build.name(c, self.namespace, kept, upto, now))

    def _files(self, conn: sqlite3.Connection) -> None:
        """After a commit: the graph's files, as a projection must — never raising."""
        try:
            graph.write_files(self.projector, conn, self.namespace)
        except (OSError, sqlite3.Error) as exc:
            trace.get_current_span().add_event("projection_failed", {"error": repr(exc)})
            log.warning("projection_failed", namespace=self.namespace, error=repr(exc))
