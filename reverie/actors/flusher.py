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
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from opentelemetry import trace

from reverie.actors.context import Clocked, Judge
from reverie.actors.extracting import catch_up
from reverie.actors.judging import consult
from reverie.bus.actor import Actor
from reverie.bus.bus import Bus
from reverie.bus.messages import (
    Envelope,
    FlushBacklog,
    PreCompact,
    ReviewDue,
    SessionIdle,
    ToolCall,
)
from reverie.clock import Clock
from reverie.commands import Command, TopicCommand
from reverie.config import Config
from reverie.embedding.index import VectorIndex
from reverie.errors import ReverieError, ToolInputError
from reverie.model import questions
from reverie.model.seam import Deferred
from reverie.reports import FlushOutcome
from reverie.results import Decision, ToolResult, refused
from reverie.rules.directives import addresses_agent, aimed_at_agent
from reverie.rules.injection import turn_framing
from reverie.rules.ordering import by_priority, latest_only
from reverie.rules.routing import MEMORY_HOMES, Home, TopicHint, route_all
from reverie.rules.similarity import near_duplicate, values, word_set
from reverie.rules.supersede import closeness, keys, retired_names, same_fact, supersedes
from reverie.stores import (
    entries,
    episodes,
    extracts,
    ledger,
    namespaces,
    review_state,
    timeline,
    topics,
)
from reverie.stores.db import Database
from reverie.stores.extracts import Extract
from reverie.stores.records import LedgerRecord
from reverie.telemetry.logs import get_logger
from reverie.telemetry.tracing import trace_id_hex
from reverie.tools import parse_call

log = get_logger("reverie.flusher")

WATERMARK = "flush:watermark"
WAITING = "flush:waiting"
WAITING_CAP = 200
_INJECTED = frozenset(
    {Home.MEMORY, Home.USER, Home.SOUL}
)  # candidates a budget left for later; beyond it the oldest stay in the log
_WRITTEN = frozenset({Decision.ADD, Decision.SUPERSEDE, Decision.REPLACED})


@dataclass(frozen=True, slots=True)
class Batch:
    """One flush's reading: the watermark before and after, the candidates (waiting ones
    first read again), each episode's horizon (time order) and what is known of topics."""

    mark: int
    new_mark: int
    items: list[Extract]
    horizons: dict[int, int]
    known: list[dict[str, Any]]
    anchors: dict[int, str]
    framed: dict[int, str] = field(default_factory=dict)
    """Episodes whose user turn forges framing (why): nothing of such a turn is learned."""


@dataclass
class FlushReport:
    """What a flush did so far (it counts as it goes); :meth:`outcome` is its frozen end."""

    trigger: str
    candidates: int = 0
    memory_adds: int = 0
    topic_saves: int = 0
    noops: int = 0
    refused: int = 0
    skipped: int = 0
    left_for_next: int = 0
    over_budget: int = 0
    deferred: str | None = None
    asked_model: int = 0
    watermark: int = 0
    skipped_because: Counter[str] = field(default_factory=Counter)
    flagged: list[dict[str, Any]] = field(default_factory=list)
    """Candidates that give the agent an instruction: never stored, flagged in the ledger."""

    def outcome(self) -> FlushOutcome:
        return FlushOutcome(
            trigger=self.trigger,
            candidates=self.candidates,
            memory_adds=self.memory_adds,
            topic_saves=self.topic_saves,
            noops=self.noops,
            refused=self.refused,
            skipped=self.skipped,
            left_for_next=self.left_for_next,
            over_budget=self.over_budget,
            deferred=self.deferred,
            asked_model=self.asked_model,
            watermark=self.watermark,
            skipped_because=tuple(sorted(self.skipped_because.items())),
            flagged=len(self.flagged),
        )


def derived(content: str, source: str) -> bool:
    """Content a model proposes must be the candidate's own words: no value the candidate
    lacks, and most of its words taken from the candidate."""
    if not values(content) <= values(source):
        return False
    words = word_set(content)
    return bool(words) and len(words & word_set(source)) / len(words) >= 0.5


class Flusher(Actor, Clocked):
    name = "flusher"
    handles = (SessionIdle, PreCompact, FlushBacklog)

    def __init__(
        self,
        namespace: str,
        *,
        db: Database,
        bus: Bus,
        clock: Clock,
        config: Config,
        judge: Judge,
        vectors: VectorIndex | None,
    ) -> None:
        super().__init__(namespace)
        self.db, self.bus, self.clock, self.judge = db, bus, clock, judge
        self.config, self.cfg = config, config.flusher
        self.vectors = vectors
        """The embedding seam, when one is configured: the flush asks it for paraphrases
        and for the topic a statement belongs to."""

    @property
    def enabled(self) -> bool:
        return self.cfg.enabled

    @property
    def budget_s(self) -> float:
        return self.cfg.timeout_s

    async def on_receive(self, envelope: Envelope) -> Any:
        message = envelope.message
        trigger = _TRIGGERS.get(type(message), "idle")
        try:
            report = await self.flush(trigger)
            await self._again(envelope, report)
        finally:
            if isinstance(message, SessionIdle):
                # the review bus (L8) runs after the flush, whatever the flush did
                await self.bus.tell(ReviewDue(self.namespace), cause=envelope)
        return report

    async def _again(self, envelope: Envelope, report: FlushOutcome) -> None:
        """Flush once more, as the next message, when this flush's budget left statements
        waiting (``backlog_rounds`` times after an idle at most): the budget bounds one
        flush's work, not how much of a talkative session is ever learned from. A write
        that failed for a passing reason, or a deferred model, waits for the next idle."""
        message = envelope.message
        if isinstance(message, FlushBacklog):
            rounds = message.rounds
        else:
            rounds = self.cfg.backlog_rounds
        if report.over_budget and rounds > 0:
            follow = FlushBacklog(self.namespace, getattr(message, "session_id", ""), rounds - 1)
            await self.bus.tell(follow, cause=envelope)

    def _pending(self, conn: sqlite3.Connection) -> Batch:
        """What this flush reads: the candidates a budget left waiting, then the new ones
        past the watermark (at most ``max_candidates``; the watermark moves past all of
        them, so every turn of a conversation is read by some flush). Nothing while the
        namespace is archived."""
        mark = int(review_state.get(conn, self.namespace, WATERMARK, 0))
        if namespaces.is_archived(conn, self.namespace):  # read-only: its flush waits
            return Batch(mark, mark, [], {}, [], {})
        held = extracts.by_ids(
            conn, self.namespace, review_state.get(conn, self.namespace, WAITING, [])
        )
        fresh = extracts.since(conn, self.namespace, mark, self.cfg.max_candidates)
        items = sorted({e.id: e for e in held + fresh}.values(), key=lambda e: e.id)
        new_mark = fresh[-1].id if fresh else mark
        if not items:
            return Batch(mark, new_mark, [], {}, [], {})
        # which topic already holds each candidate's subject: one indexed lookup each, so a
        # flush costs the same with ten facts or a hundred thousand
        wanted = {k for e in items if (k := keys(e.text).subject)}
        held_by = topics.topics_of_subjects(conn, self.namespace, sorted(wanted))
        known = [
            hints(
                name,
                topics.newest(conn, self.namespace, name, KEYWORD_FACTS),
                sorted(subject for subject, topic in held_by.items() if topic == name),
            )
            for name in topics.names(conn, self.namespace)
        ]
        turns = episodes.turns(conn, (e.episode_id for e in items))
        seen = {i: horizon for i, (horizon, _) in turns.items()}
        anchors = {e.id: t for e in items if (t := self._anchor(conn, e.text))}
        framed = {i: why for i, (_, text) in turns.items() if text and (why := turn_framing(text))}
        return Batch(mark, new_mark, items, seen, known, anchors, framed)

    async def _nearest_topics(self, batch: Batch) -> None:
        """With an embedding seam: a statement the rules found no topic for goes to the
        topic of the live fact nearest in meaning, when it is near enough (same subject)."""
        vectors, cfg = self.vectors, self.config.embedder
        if vectors is None:
            return
        for extract in batch.items:
            if extract.id in batch.anchors or not values(extract.text):
                continue
            found = await vectors.nearest(
                self.namespace,
                extract.text,
                kind="fact",
                k=1,
                min_similarity=cfg.route_similarity,
                now=self.now(),
            )
            if found:
                topic = await self.db.read(partial(topics.topic_of, fact_id=found[0].id))
                if topic:
                    batch.anchors[extract.id] = topic

    async def _paraphrase(self, home: Home, content: str) -> str | None:
        """With an embedding seam: the live entry a MEMORY/USER/SOUL candidate paraphrases
        ("I like terse answers" / "Prefers terse answers"), if any."""
        vectors = self.vectors
        if vectors is None or home not in {Home.MEMORY, Home.USER, Home.SOUL}:
            return None
        found = await vectors.nearest(
            self.namespace,
            content,
            kind="entry",
            k=1,
            min_similarity=self.config.embedder.paraphrase_similarity,
            now=self.now(),
        )
        return found[0].id if found else None

    def _anchor(self, conn: sqlite3.Connection, text: str) -> str | None:
        """The topic of a live fact, in any topic, that the statement corrects or restates:
        a correction lives in its fact's topic, where SUPERSEDE can act (a named thing given
        up too: "ditched TuneLab, moved over to Verituner" ends "I use TuneLab")."""
        if not values(text) and not retired_names(text):
            return None
        related = topics.related(conn, self.namespace, text, RELATED_FACTS)
        threshold = self.config.writer.jaccard_threshold
        for fact in related:  # a restatement first: its topic answers NOOP, once
            if same_fact(text, fact.content, threshold):
                return fact.topic
        corrected = [f for f in related if supersedes(text, f.content)]
        if not corrected:
            return None  # of several it could correct, the one most about the same thing
        return max(corrected, key=lambda f: (closeness(text, f.content), f.created_at)).topic

    async def flush(self, trigger: str) -> FlushOutcome:
        span = trace.get_current_span()
        report = FlushReport(trigger)
        min_chars = self.config.extractor.min_chars
        await self.db.write(lambda conn: catch_up(conn, self.namespace, min_chars, self.now()))
        batch = await self.db.read(self._pending)
        await self._nearest_topics(batch)
        report.watermark, report.candidates = batch.mark, len(batch.items)
        if batch.items or batch.new_mark != batch.mark:
            await self._route(batch, report)
        outcome = report.outcome()
        attributes = outcome.attributes()
        span.add_event("memory.flush", attributes)
        for key, value in attributes.items():
            span.set_attribute(key, value)
        log.info("memory.flush", namespace=self.namespace, **attributes)
        return outcome

    async def _routes(
        self,
        batch: list[Extract],
        known: list[dict[str, Any]],
        report: FlushReport,
        anchors: dict[int, str],
    ) -> tuple[dict[int, dict[str, Any]], list[int]]:
        """Routes by candidate id, and the ids that wait for the next flush (a deferred
        model answer). Rules first: only the candidates the rules are unsure of go to the
        model, in one call (every candidate, with ``rules_first`` off)."""
        candidates = [
            {"id": e.id, "text": e.text, "tag": e.tag, "weight": e.weight, "speaker": e.speaker}
            for e in batch
        ]
        max_topics = max(0, self.config.writer.max_topics - self.cfg.topic_reserve)
        hinted = {
            t["name"]: TopicHint(frozenset(t["keywords"]), frozenset(t["subjects"])) for t in known
        }
        ruled = route_all(candidates, hinted, max_topics, anchors)
        routes = {i: r.as_answer(i) for i, r in ruled if r.sure} if self.cfg.rules_first else {}
        asked = [c for c in candidates if c["id"] not in routes]
        if not asked:
            return routes, []
        if len(asked) < self.cfg.ask_batch and report.trigger != "pre_compact":
            return routes, [e.id for e in batch if e.id not in routes]  # wait for a fuller batch
        report.asked_model = len(asked)
        answer = await consult(
            self.judge, self.namespace, questions.flush(asked, known, max_topics)
        )
        if isinstance(answer, Deferred):
            report.deferred = answer.reason
            return routes, [e.id for e in batch if e.id not in routes]
        asked_ids = {c["id"] for c in asked}
        routes.update({r["id"]: r for r in answer.data["routes"] if r["id"] in asked_ids})
        return routes, []

    async def _route(self, batch: Batch, report: FlushReport) -> None:
        # every instruction is flagged, even one a later statement restates
        unflagged = [e for e in batch.items if not self._flag(e, report, batch.framed)]
        current, formerly = latest_only([e for e in unflagged if not _for_agent(e, report)])
        if replaced := sum(len(v) for v in formerly.values()):
            report.skipped += replaced
            report.skipped_because["restated later in the session"] += replaced
        routes, waiting = await self._routes(current, batch.known, report, batch.anchors)
        for extract in _identity_first(
            by_priority([e for e in current if e.id not in waiting], batch.mark), routes
        ):
            said = tuple(e.text for e in formerly.get(extract.id, []))  # collapsed into it
            outcome = await self._one(extract, routes.get(extract.id), batch, report, said)
            if outcome == "wait":
                waiting.append(extract.id)
        # what a waiting statement replaced waits with it, to be collapsed into it again
        waiting += [e.id for w in list(waiting) for e in formerly.get(w, [])]
        report.left_for_next = len(waiting)
        await self._advance(batch.new_mark, sorted(waiting)[-WAITING_CAP:], report)
        report.watermark = batch.new_mark

    async def _one(
        self,
        extract: Extract,
        route: dict[str, Any] | None,
        batch: Batch,
        report: FlushReport,
        formerly: tuple[str, ...] = (),
    ) -> str:
        """Write one candidate, or say why not: "done", "skip" or "wait" (over budget, or a
        write that failed for a passing reason — it is tried again by the next flush)."""
        command, why = (
            (None, "no route") if route is None else self._command(route, extract, formerly)
        )
        if route is not None and aimed_at_agent(str(route.get("content") or ""), extract.speaker):
            command, why = None, "rejected: the content gives the agent an instruction"
        if command is None or route is None:
            report.skipped += 1
            report.skipped_because[why] += 1
            return "skip"
        home = Home(route["home"])
        horizon = batch.horizons.get(extract.episode_id, 0)
        known = await self.db.read(lambda conn: self._known(conn, home, route, horizon))
        if known:
            report.skipped += 1
            report.skipped_because[known] += 1
            return "skip"
        if await self._paraphrase(home, str(route["content"])):
            report.noops += 1
            report.skipped_because["a paraphrase of a live entry"] += 1
            return "skip"
        if (home is Home.TOPIC and report.topic_saves >= self.cfg.max_topic_saves) or (
            home in MEMORY_HOMES and report.memory_adds >= self.cfg.max_memory_adds
        ):
            report.over_budget += 1
            return "wait"
        result = await self._write(command, extract.session_id)
        decision = result.decision
        if result.transient:
            return "wait"
        if decision in _WRITTEN:
            if home is Home.TOPIC:
                report.topic_saves += 1
            else:
                report.memory_adds += 1
        elif decision is Decision.NOOP:
            report.noops += 1
        else:
            report.refused += 1
        return "done"

    def _flag(self, extract: Extract, report: FlushReport, framed: dict[int, str]) -> bool:
        """A statement that instructs the agent ("ignore your rules", "you are now …",
        "include the keys"; from the user, any standing order to act) is never a memory
        and never shown to a model: it stays in the episode log and is flagged in the
        ledger. So is every statement of a user turn that forges framing (one flag)."""
        forged = framed.get(extract.episode_id) if extract.speaker == "user" else None
        kind = "framing" if forged else aimed_at_agent(extract.text, extract.speaker)
        if kind is None:
            return False
        report.skipped += 1
        report.skipped_because["an instruction aimed at the agent"] += 1
        if forged and any(
            f["episode_id"] == extract.episode_id and f["kind"] == "framing" for f in report.flagged
        ):
            return True  # the turn is flagged once
        report.flagged.append(
            {
                "reason": "injection",
                "kind": kind,
                "extract_id": extract.id,
                "episode_id": extract.episode_id,
                "session_id": extract.session_id,
                "speaker": extract.speaker,
                "text": extract.text[:200],
            }
            | ({"framing": forged} if forged else {})
        )
        return True

    def _known(
        self, conn: sqlite3.Connection, home: Home, route: dict[str, Any], horizon: int
    ) -> str | None:
        """Why the store knows better than this turn, if it does. Time order: the turn's
        reading never overrides what was written after it (a fact about the same subject,
        an entry the agent removed or replaced); one home, once: what another injected
        store (USER.md / SOUL.md / MEMORY.md) already says is not said again."""
        content = str(route["content"])
        threshold = self.config.writer.jaccard_threshold
        if home is Home.TOPIC:
            found = keys(content)
            newer = timeline.written_after(
                conn,
                self.namespace,
                horizon,
                subject=found.subject,
                skeleton=found.skeleton,
                topic=str(route.get("topic") or "") or None,
            )
            if any(
                (
                    (found.subject is not None and keys(text).subject == found.subject)
                    or supersedes(text, content)
                )
                and not same_fact(content, text, threshold)
                for text in newer
            ):
                return "a newer value was written after this turn"
            return None
        undone = timeline.undone_after(conn, self.namespace, horizon)
        if any(near_duplicate(content, old, threshold) for old in undone):
            return "the agent removed or replaced it after this turn"
        if home in _INJECTED and any(
            near_duplicate(content, e.content, threshold)
            for target in _INJECTED - {home}
            for e in entries.live(conn, self.namespace, target.value)
        ):
            return "another injected store says it already"
        return None

    def _command(
        self, route: dict[str, Any], extract: Extract, formerly: tuple[str, ...] = ()
    ) -> tuple[Command | None, str]:
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
                save = parse_call(
                    "topic",
                    {"action": "save", "topic": route["topic"], "content": content},
                    self.config.writer,
                )
                if formerly and isinstance(save, TopicCommand):
                    save = replace(save, formerly=formerly)  # its words are indexed with it
                return save, ""
            return parse_call(
                "memory",
                {"action": "add", "target": home, "content": content},
                self.config.writer,
            ), ""
        except ToolInputError as exc:
            return None, f"rejected: {exc}"

    async def _write(self, command: Command, session_id: str) -> ToolResult:
        try:
            answer = await self.bus.ask(
                ToolCall(self.namespace, session_id, command, actor=self.name)
            )
        except (ReverieError, TimeoutError) as exc:  # busy, timed out, closing: try again
            return refused(str(exc) or type(exc).__name__, transient=True)
        assert isinstance(answer, ToolResult)
        return answer

    async def _advance(self, mark: int, waiting: list[int], report: FlushReport) -> None:
        """Move the watermark past what this flush read and keep what waits, with the
        flush's ledger row."""
        detail = {**report.outcome().to_dict(), "watermark": mark}
        trace_id = trace_id_hex()

        def row(action: str, decision: str, found: dict[str, Any]) -> LedgerRecord:
            return LedgerRecord(
                ts=self.now(),
                namespace=self.namespace,
                actor=self.name,
                action=action,
                decision=decision,
                entry_id=None,
                session_id=found.get("session_id"),
                trace_id=trace_id,
                detail=found,
            )

        def advance(conn: sqlite3.Connection) -> None:
            review_state.put(conn, self.namespace, WATERMARK, mark, self.now())
            review_state.put(conn, self.namespace, WAITING, waiting, self.now())
            ledger.append(conn, row("flush", "DONE", detail))
            for flag in report.flagged:  # after the flush row: the flush read them
                ledger.append(conn, row("flag", "FLAG", flag))

        await self.db.write(advance)


_TRIGGERS: dict[type, str] = {PreCompact: "pre_compact", FlushBacklog: "backlog"}


def _for_agent(extract: Extract, report: FlushReport) -> bool:
    """A user's statement aimed at the agent rather than about the user's world ("I prefer
    that you run…", "…, and you should disable TLS") stays in the log, unflagged."""
    if extract.speaker != "user" or not addresses_agent(extract.text):
        return False
    report.skipped += 1
    report.skipped_because["aimed at the agent, not knowledge"] += 1
    return True


def _identity_first(batch: list[Extract], routes: dict[int, dict[str, Any]]) -> list[Extract]:
    """Who the user and the agent are (one setting each) goes before anything else."""
    settings = {Home.USER_SETTINGS.value, Home.AGENT_PROFILE.value}
    return sorted(batch, key=lambda e: routes.get(e.id, {}).get("home") not in settings)


KEYWORD_FACTS = 50
RELATED_FACTS = 8  # live facts a candidate is compared with to find its topic


def hints(name: str, newest: list[str], subjects: list[str], limit: int = 12) -> dict[str, Any]:
    """What the router is told of a topic: the words its newest facts use most, and which
    of this batch's subjects its live facts are already about (a fact about one of them
    belongs here)."""
    counts: Counter[str] = Counter()
    for content in newest:
        counts.update(w for w in sorted(word_set(content)) if w.isalpha())  # ties: seed-free
    return {
        "name": name,
        "keywords": [word for word, _ in counts.most_common(limit)],
        "subjects": subjects,
    }
