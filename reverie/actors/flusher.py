"""L3, the flush: when a session goes idle (or before compaction), route what the turns
taught to its one home, within a hard budget, through the writer like any other write.

The pending work is a watermark over the extracts in SQLite. Writes come first, the
watermark after: a crash between them replays the same routes, which the writer's
near-duplicate check answers with NOOP — nothing lost, nothing stored twice.
Candidates past an exhausted budget stay behind the watermark for the next flush.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import trace

from reverie.actors.context import Services
from reverie.actors.extractor import catch_up
from reverie.actors.judging import consult
from reverie.bus.actor import Actor
from reverie.bus.messages import Envelope, PreCompact, ReviewDue, SessionIdle, ToolCall
from reverie.errors import ReverieError, ToolInputError
from reverie.model import questions
from reverie.model.seam import Deferred
from reverie.rules.routing import MEMORY_HOMES, Home, TopicHint, route_all
from reverie.rules.similarity import values, word_set
from reverie.rules.supersede import keys
from reverie.stores import extracts, ledger, review_state, topics
from reverie.stores.extracts import Extract
from reverie.telemetry.logs import get_logger
from reverie.telemetry.tracing import trace_id_hex
from reverie.tools import Command, parse_call

log = get_logger("reverie.flusher")

WATERMARK = "flush:watermark"
_WRITTEN = frozenset({"ADD", "SUPERSEDE", "REPLACED"})


@dataclass
class FlushReport:
    trigger: str
    candidates: int = 0
    memory_adds: int = 0
    topic_saves: int = 0
    noops: int = 0
    refused: int = 0
    skipped: int = 0
    left_for_next: int = 0
    deferred: str | None = None
    asked_model: int = 0
    watermark: int = 0
    skipped_because: Counter[str] = field(default_factory=Counter)

    def attributes(self) -> dict[str, Any]:
        return {
            "reverie.flush.trigger": self.trigger,
            "reverie.flush.candidates": self.candidates,
            "reverie.flush.memory_adds": self.memory_adds,
            "reverie.flush.topic_saves": self.topic_saves,
            "reverie.flush.noops": self.noops,
            "reverie.flush.refused": self.refused,
            "reverie.flush.skipped": self.skipped,
            "reverie.flush.left_for_next": self.left_for_next,
            "reverie.flush.deferred": self.deferred or "",
            "reverie.flush.asked_model": self.asked_model,
            "reverie.flush.watermark": self.watermark,
        }


def derived(content: str, source: str) -> bool:
    """Content a model proposes must be the candidate's own words: no value the candidate
    lacks, and most of its words taken from the candidate."""
    if not values(content) <= values(source):
        return False
    words = word_set(content)
    return bool(words) and len(words & word_set(source)) / len(words) >= 0.5


class Flusher(Actor):
    name = "flusher"
    handles = (SessionIdle, PreCompact)

    def __init__(self, namespace: str, services: Services) -> None:
        super().__init__(namespace)
        self.s = services
        self.cfg = services.config.flusher

    @property
    def enabled(self) -> bool:
        return self.cfg.enabled

    @property
    def budget_s(self) -> float:
        return self.cfg.timeout_s

    async def on_receive(self, envelope: Envelope) -> Any:
        message = envelope.message
        trigger = "pre_compact" if isinstance(message, PreCompact) else "idle"
        try:
            report = await self.flush(trigger)
        finally:
            if isinstance(message, SessionIdle):
                # the review bus (L8) runs after the flush, whatever the flush did
                await self.s.bus.tell(ReviewDue(self.namespace), cause=envelope)
        return report

    def _pending(self, conn: sqlite3.Connection) -> tuple[int, list[Extract], list[dict[str, Any]]]:
        mark = int(review_state.get(conn, self.namespace, WATERMARK, 0))
        batch = extracts.since(conn, self.namespace, mark, self.cfg.max_candidates)
        if not batch:
            return mark, batch, []
        # which topic already holds each candidate's subject: one indexed lookup each, so a
        # flush costs the same with ten facts or a hundred thousand
        wanted = {k for e in batch if (k := keys(e.text).subject)}
        held = topics.topics_of_subjects(conn, self.namespace, sorted(wanted))
        known = [
            hints(
                name,
                topics.newest(conn, self.namespace, name, KEYWORD_FACTS),
                sorted(subject for subject, topic in held.items() if topic == name),
            )
            for name in topics.names(conn, self.namespace)
        ]
        return mark, batch, known

    async def flush(self, trigger: str) -> FlushReport:
        span = trace.get_current_span()
        report = FlushReport(trigger)
        await self.s.db.write(lambda conn: catch_up(conn, self.s, self.namespace))
        mark, batch, names = await self.s.db.read(self._pending)
        report.watermark, report.candidates = mark, len(batch)
        if batch:
            await self._route(batch, names, report)
        span.add_event("memory.flush", report.attributes())
        for key, value in report.attributes().items():
            span.set_attribute(key, value)
        log.info("memory.flush", namespace=self.namespace, **report.attributes())
        return report

    async def _routes(
        self, batch: list[Extract], known: list[dict[str, Any]], report: FlushReport
    ) -> tuple[dict[int, dict[str, Any]], int | None]:
        """Routes by candidate id, and the id from which the work waits for the next flush
        (a deferred model answer). Rules first: only the candidates the rules are unsure
        of go to the model, in one call (every candidate, with ``rules_first`` off)."""
        candidates = [
            {"id": e.id, "text": e.text, "tag": e.tag, "weight": e.weight, "speaker": e.speaker}
            for e in batch
        ]
        max_topics = self.s.config.writer.max_topics
        hinted = {
            t["name"]: TopicHint(frozenset(t["keywords"]), frozenset(t["subjects"])) for t in known
        }
        ruled = route_all(candidates, hinted, max_topics)
        routes = {i: r.as_answer(i) for i, r in ruled if r.sure} if self.cfg.rules_first else {}
        waiting = [e for e in batch if e.id not in routes]
        asked = [c for c in candidates if c["id"] not in routes]
        report.asked_model = len(asked)
        if not asked:
            return routes, None
        answer = await consult(self.s, self.namespace, questions.flush(asked, known, max_topics))
        if isinstance(answer, Deferred):
            report.deferred = answer.reason
            return routes, waiting[0].id
        asked_ids = {c["id"] for c in asked}
        routes.update({r["id"]: r for r in answer.data["routes"] if r["id"] in asked_ids})
        return routes, None

    async def _route(
        self, batch: list[Extract], known: list[dict[str, Any]], report: FlushReport
    ) -> None:
        routes, wait_from = await self._routes(batch, known, report)
        last = report.watermark
        for index, extract in enumerate(batch):
            if wait_from is not None and extract.id >= wait_from:
                report.left_for_next = len(batch) - index
                break
            route = routes.get(extract.id)
            if route is None:
                report.skipped += 1
                last = extract.id
                continue
            command, why = self._command(route, extract)
            if command is None:
                report.skipped += 1
                report.skipped_because[why] += 1
                last = extract.id
                continue
            home = Home(route["home"])
            if home is Home.TOPIC and report.topic_saves >= self.cfg.max_topic_saves:
                report.left_for_next = len(batch) - index
                break
            if home in MEMORY_HOMES and report.memory_adds >= self.cfg.max_memory_adds:
                report.left_for_next = len(batch) - index
                break
            result = await self._write(command, extract.session_id)
            decision = result["decision"]
            if decision in _WRITTEN:
                if home is Home.TOPIC:
                    report.topic_saves += 1
                else:
                    report.memory_adds += 1
            elif decision == "NOOP":
                report.noops += 1
            else:
                report.refused += 1
            last = extract.id
        if last != report.watermark:
            await self._advance(last, report)
            report.watermark = last

    def _command(self, route: dict[str, Any], extract: Extract) -> tuple[Command | None, str]:
        """The write a route asks for, checked against the candidate and the tools' own
        validation; or why it is not written."""
        home, content = route["home"], route["content"]
        if home == Home.SKIP:
            return None, route.get("reason") or "skip"
        if home == Home.SKILL:
            return None, "a workflow: left to the agent's skill_manage"
        source = extract.text
        if home in {Home.USER_SETTINGS, Home.AGENT_PROFILE}:
            _, _, value = content.partition(":")
            if not value.strip() or not derived(value, source):
                return None, "rejected: the value is not in the candidate"
        elif not derived(content, source):
            return None, "rejected: the content is not the candidate's own words"
        try:
            if home == Home.TOPIC:
                return parse_call(
                    "topic",
                    {"action": "save", "topic": route["topic"], "content": content},
                    self.s.config.writer,
                ), ""
            return parse_call(
                "memory",
                {"action": "add", "target": home, "content": content},
                self.s.config.writer,
            ), ""
        except ToolInputError as exc:
            return None, f"rejected: {exc}"

    async def _write(self, command: Command, session_id: str) -> dict[str, Any]:
        try:
            answer = await self.s.bus.ask(
                ToolCall(self.namespace, session_id, command, actor=self.name)
            )
        except (ReverieError, TimeoutError) as exc:
            return {"decision": "ERROR", "error": str(exc) or type(exc).__name__}
        assert isinstance(answer, dict)
        return answer

    async def _advance(self, mark: int, report: FlushReport) -> None:
        """Move the watermark past what this flush handled, with its ledger row."""
        detail = {k.removeprefix("reverie.flush."): v for k, v in report.attributes().items()}
        detail["watermark"] = mark
        detail["skipped_because"] = dict(report.skipped_because)  # why nothing was stored
        trace_id = trace_id_hex()

        def advance(conn: sqlite3.Connection) -> None:
            review_state.put(conn, self.namespace, WATERMARK, mark, self.s.now())
            ledger.append(
                conn,
                ts=self.s.now(),
                namespace=self.namespace,
                actor=self.name,
                action="flush",
                decision="DONE",
                entry_id=None,
                trace_id=trace_id,
                detail=detail,
            )

        await self.s.db.write(advance)


KEYWORD_FACTS = 50


def hints(name: str, newest: list[str], subjects: list[str], limit: int = 12) -> dict[str, Any]:
    """What the router is told of a topic: the words its newest facts use most, and which
    of this batch's subjects its live facts are already about (a fact about one of them
    belongs here)."""
    counts: Counter[str] = Counter()
    for content in newest:
        counts.update(w for w in word_set(content) if w.isalpha())
    return {
        "name": name,
        "keywords": [word for word, _ in counts.most_common(limit)],
        "subjects": subjects,
    }
