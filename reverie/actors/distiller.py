"""L4, daily distillation: rewrite summary.md of the topics that changed.

A topic is distilled when it has facts and no summary, and again once ``min_new_facts``
facts were added since its own watermark (the highest fact row it was last distilled
from); at most ``max_topics`` per round, most recently updated first. The rules summarise
it (no call) while its deepest and newest whole facts keep ``rules_keep`` of its live
text; beyond, the model does, in one call for the round — and a topic the model
summarised is asked about again only once its live text is ``regrow`` times what that
summary came from (meanwhile it waits, and the snapshot shows its newest live facts). A
topic whose summary failed, was deferred or did not fit the budget keeps its watermark
and is retried next round. The summary comes from live facts only and must pass the
rules (length, no value that no live fact carries) before it is stored.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from typing import Any, NamedTuple

from opentelemetry import trace

from reverie.actors.context import Judge
from reverie.actors.judging import consult
from reverie.actors.stage import Stage
from reverie.bus.messages import DistillDue
from reverie.clock import iso
from reverie.frozen import quick_init
from reverie.model import questions
from reverie.model.seam import Deferred
from reverie.reports import DistillerDetails, TopicResult
from reverie.rules.consolidation import summarise, summary_problem, text_size
from reverie.stores import generated, longterm, review_state, topics
from reverie.stores.db import fetchone
from reverie.stores.learning import LearningRecord
from reverie.stores.records import Fact
from reverie.stores.summaries import summary_key, watermark_key
from reverie.telemetry.logs import get_logger, info_wanted

log = get_logger("reverie.distiller")
BY_RULES = "rules"  # a summary made of whole live facts (no model asked)


class Due(NamedTuple):
    """A chosen topic's live facts, and the rules' summary of them (None: the model
    summarises them; ``waiting``: since when it has waited for a fuller batch)."""

    live: list[Fact]
    ruled: str | None
    waiting: str | None = None


@quick_init
@dataclass(frozen=True, slots=True)
class Draft:
    """A topic's live facts and the summary proposed for them (None: the model deferred,
    and ``by`` says why)."""

    live: list[Fact]
    summary: str | None
    by: str
    tokens: dict[str, int] = field(default_factory=lambda: {"input_tokens": 0, "output_tokens": 0})


def _fact_item(fact: Fact) -> dict[str, Any]:
    return {"id": fact.id, "content": fact.content, "depth": fact.depth, "since": fact.created_at}


def waiting_key(topic: str) -> str:
    """Since when ``topic`` has waited for a model call with other topics (``ask_batch``)."""
    return f"distill:waiting:{topic}"


BATCH_WAIT = "waiting for a fuller batch"


def asked_key(topic: str) -> str:
    """The live text (chars) the model's last summary of ``topic`` was made from."""
    return f"distill:asked:{topic}"


def _sized(live: list[Fact]) -> list[tuple[str, int]]:
    return [(f.content, f.depth) for f in live]


class Distiller(Stage):
    name = "distiller"
    section = "distiller"
    handles = (DistillDue,)
    data_bound = True

    def __init__(self, namespace: str, *, judge: Judge, **stage: Any) -> None:
        super().__init__(namespace, **stage)
        self.judge = judge

    def _stale(self, conn: sqlite3.Connection) -> list[tuple[str, int]]:
        """Topics with facts past their watermark, most recently updated first."""
        rows = conn.execute(
            "SELECT t.name, max(f.rowid) FROM topics t JOIN facts f"
            " ON f.namespace = t.namespace AND f.topic = t.name WHERE t.namespace = ?"
            " GROUP BY t.name ORDER BY t.updated_at DESC, t.name",
            (self.namespace,),
        ).fetchall()
        out = []
        for name, top in rows:
            mark = int(review_state.get(conn, self.namespace, watermark_key(name), 0))
            if top > mark and (mark == 0 or self._new_facts(conn, name, mark) >= self._enough):
                out.append((name, top))
        return out

    @property
    def _enough(self) -> int:
        return max(1, int(self.cfg.min_new_facts))

    def _new_facts(self, conn: sqlite3.Connection, topic: str, mark: int) -> int:
        row = fetchone(
            conn,
            "SELECT count(*) FROM facts WHERE namespace = ? AND topic = ? AND rowid > ?",
            (self.namespace, topic, mark),
        )
        return int(row[0]) if row else 0

    def look(
        self, conn: sqlite3.Connection
    ) -> tuple[list[tuple[str, int]], dict[str, Due], list[LearningRecord]]:
        """The due topics (stale ones not waiting to regrow), the live facts and way of
        summarising of those chosen, and what the long-term store recalls for them: one
        read."""
        due: list[tuple[str, int]] = []
        found: dict[str, Due] = {}
        for topic, top in self._stale(conn):
            if len(found) == self.cfg.max_topics:
                due.append((topic, top))  # over this round's budget: not read now
                continue
            live = topics.live(conn, self.namespace, topic)
            plan = self._plan(conn, topic, live)
            if plan is not None:
                due.append((topic, top))
                found[topic] = plan
        return due, found, self._recall(conn) if found else []

    def _plan(self, conn: sqlite3.Connection, topic: str, live: list[Fact]) -> Due | None:
        """How ``topic`` is summarised this round: by the rules (their summary), by the
        model, or not at all (None: the model summarised it and its live text has not
        regrown since)."""
        if not self.cfg.rules_first:
            return Due(live, None)
        facts, limit = _sized(live), self.cfg.summary_chars
        size = text_size(facts)
        if size * self.cfg.rules_keep <= limit:  # else no summary of ``limit`` keeps enough
            summary = summarise(facts, limit)
            if size <= limit or len(summary) >= self.cfg.rules_keep * size:
                return Due(live, summary)  # the rules keep enough of it: nothing to judge
        asked = float(review_state.get(conn, self.namespace, asked_key(topic), 0) or 0)
        if size < self.cfg.regrow * asked:
            return None
        return Due(live, None, review_state.get(conn, self.namespace, waiting_key(topic)))

    def _recall(self, conn: sqlite3.Connection) -> list[LearningRecord]:
        """Seed 004's long-term recall before a round: the words of the day's HIGH-weight
        statements query the long-term (COLD) store."""
        since = self.last_run or iso(self.clock.now() - timedelta(days=1))
        said = longterm.day_statements(
            conn, self.namespace, since, self.config.dream.recall_keywords
        )
        query = longterm.query_of(said)
        return longterm.recall(conn, self.namespace, query, self.config.dream.recall_k)

    async def run(self) -> DistillerDetails:
        stale, found, recalled = await self.looked()
        chosen, over = stale[: self.cfg.max_topics], stale[self.cfg.max_topics :]
        results: list[TopicResult] = []
        drafts = await self._drafts(found, [r.content for r in recalled])
        for topic, top in chosen:
            try:
                results.append(self._checked(topic, top, drafts[topic]))
            except Exception as exc:  # one topic's failure is not the round's
                log.warning(
                    "distill_failed", namespace=self.namespace, topic=topic, error=repr(exc)
                )
                results.append(TopicResult(topic, "failed", error=repr(exc)))
        results += [TopicResult(topic, "over_budget") for topic, _ in over]
        # a wait for a fuller batch starts at the first round that deferred for it
        starts = [t for t, d in drafts.items() if d.by == BATCH_WAIT and found[t].waiting is None]
        await self._store(results, drafts, starts, recalled)
        distilled = sum(1 for r in results if r.status == "distilled")
        ids = tuple(r.id for r in recalled)
        return DistillerDetails(distilled, len(results) - distilled, tuple(results), ids)

    async def _store(
        self,
        results: list[TopicResult],
        drafts: dict[str, Draft],
        waits: list[str],
        recalled: list[LearningRecord],
    ) -> None:
        """Every summary of the round, its watermark and the round's stamp in one write (one
        commit, one jsonl append; in a pass, the pass's closing one): a failed commit keeps
        every watermark, so the round is retried; the summaries are projected after it."""
        done = [r for r in results if r.status == "distilled"]
        now = self.now()
        records = [r.to_dict() for r in done]
        records += [{"ts": now, **r.to_dict()} for r in results if r.status != "distilled"]

        def store(conn: sqlite3.Connection) -> None:
            stamp = self.now()
            puts: dict[str, Any] = {waiting_key(topic): stamp for topic in waits}
            drops: list[str] = []
            for record, detail in zip(done, records, strict=False):  # records: done's first
                topic, summary = record.topic, str(drafts[record.topic].summary)
                drops.append(waiting_key(topic))
                puts[summary_key(topic)] = summary
                puts[watermark_key(topic)] = record.watermark
                if record.by != BY_RULES:
                    puts[asked_key(topic)] = text_size(_sized(drafts[topic].live))
                else:  # the rules' summary replaced the model's: regrow from it no more
                    drops.append(asked_key(topic))
                generated.remember(conn, self.namespace, summary, f"distiller:{topic}", stamp)
                self.audit(
                    conn,
                    "distill",
                    "DONE",
                    f"topic:{topic}",
                    detail,
                    target=topic,
                    after={"summary": summary},
                )
            review_state.put_many(conn, self.namespace, puts, stamp)
            review_state.drop_many(conn, self.namespace, drops)  # after: a wait that ended
            longterm.counted(conn, self.namespace, recalled, stamp, self.config.records)
            self.done(conn, {"topics": {r.topic: r.status for r in results}})

        # in a pass, the summaries join its closing transaction (one commit for the pass);
        # their files are written after it, from a reader thread (the state it left)
        landed = partial(self._landed, done) if done else None
        await self.commit(store, "distill", records, defer=True, landed=landed)

    def _landed(self, done: list[TopicResult], conn: sqlite3.Connection) -> None:
        """After the summaries committed: their files, then the news of them."""
        names = [r.topic for r in done]
        self.project(partial(self.projector.refresh_summaries, conn, self.namespace, names))
        self._announce(done)

    def _announce(self, done: list[TopicResult]) -> None:
        for record in done:
            trace.get_current_span().add_event(
                "memory.distill",
                {
                    "reverie.topic": record.topic,
                    "reverie.distill.facts": record.facts or 0,
                    "reverie.distill.chars": record.chars or 0,
                },
            )
            if info_wanted("reverie.distiller"):
                log.info(
                    "memory.distill",
                    namespace=self.namespace,
                    topic=record.topic,
                    chars=record.chars,
                )

    async def _drafts(self, found: dict[str, Due], recalled: list[str]) -> dict[str, Draft]:
        """Each chosen topic's live facts and a summary: by the rules where they keep
        enough of it, else from one model call for every topic of the round (one bounded
        call, not one each)."""
        drafts: dict[str, Draft] = {}
        asked: list[tuple[str, list[Fact]]] = []
        for topic, (live, ruled, _) in found.items():
            if ruled is not None:
                drafts[topic] = Draft(live, ruled, BY_RULES)
            else:
                asked.append((topic, live))
        if not asked:
            return drafts
        if not self._batch_due([found[topic].waiting for topic, _ in asked]):
            drafts.update({topic: Draft(live, None, BATCH_WAIT) for topic, live in asked})
            return drafts
        prompt = questions.distill_many(
            [(topic, [_fact_item(f) for f in live]) for topic, live in asked],
            self.cfg.summary_chars,
            recalled,
        )
        answer = await consult(self.judge, self.namespace, prompt)
        share = {  # the call's tokens, split over the topics it summarised
            "input_tokens": answer.usage.input_tokens // len(asked),
            "output_tokens": answer.usage.output_tokens // len(asked),
        }
        if isinstance(answer, Deferred):
            for topic, live in asked:
                drafts[topic] = Draft(live, None, answer.reason, share)
            return drafts
        written = {str(s["topic"]): str(s["summary"]) for s in answer.data["summaries"]}
        for topic, live in asked:
            text = " ".join(written.get(topic, "").split())
            drafts[topic] = Draft(live, text, self.judge.model.name, share)
        return drafts

    def _batch_due(self, waiting: list[str | None]) -> bool:
        """Whether the topics that need the model are worth a call now: enough of them, or
        one has waited ``ask_wait_h`` for the others (with ``rules_first`` off, always)."""
        if len(waiting) >= self.cfg.ask_batch or not self.cfg.rules_first:
            return True
        now, enough = self.clock.now(), timedelta(hours=min(self.cfg.ask_wait_h, 1e9))
        return any(w is not None and now - datetime.fromisoformat(w) >= enough for w in waiting)

    def _checked(self, topic: str, top: int, draft: Draft) -> TopicResult:
        """The topic's outcome: its record when the summary passes the rules (stored by
        :meth:`_store`), else why not."""
        live, summary, by = draft.live, draft.summary, draft.by
        spent = partial(
            TopicResult,
            input_tokens=draft.tokens["input_tokens"],
            output_tokens=draft.tokens["output_tokens"],
        )
        if summary is None:
            return spent(topic, "deferred", reason=by)
        problem = summary_problem(
            summary, [f.content for f in live], self.cfg.summary_chars, extractive=by == BY_RULES
        )
        if problem is not None:
            return spent(topic, "rejected", reason=problem)
        return spent(
            topic,
            "distilled",
            ts=self.now(),
            facts=len(live),
            chars=len(summary),
            watermark=top,
            by=by,
        )
