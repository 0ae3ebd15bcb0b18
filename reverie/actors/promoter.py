"""L6, weekly promotion: durable topic facts become rules in MEMORY.md — the seed's four
stages, exactly.

1. Rule gate (free): live facts whose chain was corrected at least once (depth >= 2), that
   have survived >= 3 days, were never decided, are not text reverie wrote itself, and
   hold beyond their moment (not tied to a calendar day, not the speaker's worry or aim of
   the day: ``consolidation.momentary``); at most 8 per round, the most maintained first.
2. Model gate (one bounded call) against the current MEMORY.md: promote with a rewrite of
   at most 220 chars that keeps the fact's numbers, IDs and paths — checked by rules before
   anything is written — or skip. A verdict is final.
3. Write through the writer, at most 2 per round: a near-duplicate in MEMORY.md is a final
   skip; a failed write is ``deferred`` and one over the budget ``deferred_budget``; both
   are re-queued next round. A deferred model answer defers every candidate.
4. Audit: decided ids in a FIFO of at most 400 in review state, ``promotions.jsonl``, the
   ledger, and the ``memory.promotion`` event. Kill switch: ``promotion_enabled``.
"""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from opentelemetry import trace

from reverie.actors.context import Judge
from reverie.actors.judging import consult
from reverie.actors.rule_refresh import refresh_all
from reverie.actors.stage import Stage
from reverie.bus.bus import Bus
from reverie.bus.messages import Envelope, PromotedFactChanged, PromoteDue, ToolCall
from reverie.clock import iso
from reverie.commands import MemoryCommand
from reverie.errors import ReverieError
from reverie.model import questions
from reverie.model.seam import Deferred
from reverie.reports import PromoterDetails, PromotionOutcome, Verdict
from reverie.results import Decision, ToolResult
from reverie.rules.consolidation import momentary, rewrite_problem
from reverie.rules.secrets import redact
from reverie.stores import entries, generated, review_state, topics
from reverie.stores.records import Fact
from reverie.stores.review_state import promoted_key
from reverie.telemetry.logs import get_logger, info_wanted

log = get_logger("reverie.promoter")

DONE_IDS = "promotion_done_ids"
# Actors whose text is reverie's own: never a promotion candidate.
GENERATED_BY = frozenset({"promoter", "distiller", "linter", "reviewer", "curator"})


class Promoter(Stage):
    name = "promoter"
    section = "promoter"
    handles = (PromoteDue, PromotedFactChanged)
    switch = "promotion_enabled"

    def __init__(self, namespace: str, *, judge: Judge, bus: Bus, **stage: Any) -> None:
        super().__init__(namespace, **stage)
        self.judge, self.bus = judge, bus

    @property
    def enabled(self) -> bool:
        """Always on the bus: ``promotion_enabled`` stops new promotions (the pass's turn),
        never the refresh of a rule promoted before, which MEMORY.md must keep current."""
        return True

    async def on_receive(self, envelope: Envelope) -> Any:
        message = envelope.message
        if isinstance(message, PromotedFactChanged):
            return await self.refresh()
        if isinstance(message, PromoteDue) and message.refresh and await self.refresh():
            stale = replace(message, look=None, looked=False)  # MEMORY.md changed since
            envelope = replace(envelope, message=stale)
        return await super().on_receive(envelope)

    async def refresh(self) -> bool:
        """Every pending refresh of a promoted rule (see :mod:`reverie.actors.rule_refresh`)
        in one transaction; MEMORY.md rewritten once it committed."""
        changed = await self.db.write(
            lambda conn: refresh_all(conn, self.config, self.namespace, self.now())
        )
        if changed:
            await self.db.read(
                lambda conn: self.project(
                    lambda: self.projector.write_entries(conn, self.namespace, "memory")
                )
            )
        return changed

    # -- 1. the rule gate ----------------------------------------------------------------

    def candidates(self, conn: sqlite3.Connection, now: datetime) -> list[Fact]:
        decided = set(review_state.get(conn, self.namespace, DONE_IDS, []))
        cutoff = iso(now - timedelta(hours=self.cfg.min_age_h))
        out = []
        for fact in topics.corrected(conn, self.namespace, self.cfg.min_chain_depth, cutoff):
            if fact.id in decided or fact.created_by in GENERATED_BY:
                continue
            if momentary(fact.content):
                continue  # an event, a worry, an aim of its day: it stays in its topic
            promoted = review_state.get(conn, self.namespace, promoted_key(fact.chain_id))
            entry = entries.get(conn, self.namespace, promoted) if promoted else None
            if entry is not None and entry.status == "live":
                continue  # its chain's rule is in MEMORY.md already, kept current by refresh
            own = generated.norms(conn, self.namespace, before=fact.created_at)
            if generated.is_generated(fact.content, own):
                continue
            out.append(fact)
            if len(out) >= self.cfg.max_candidates:
                break
        return out

    # -- the round -----------------------------------------------------------------------

    def look(self, conn: sqlite3.Connection) -> tuple[list[Fact], list[str]]:
        """The candidates as of now, and MEMORY.md's live entries."""
        memory = [e.content for e in entries.live(conn, self.namespace, "memory")]
        return self.candidates(conn, self.clock.now()), memory

    async def run(self) -> PromoterDetails:
        candidates, memory = await self.looked()
        outcomes: list[PromotionOutcome] = []
        if candidates:
            outcomes = await self._judge_and_write(candidates, memory)
        decided = [o.fact_id for o in outcomes if o.verdict in {"promoted", "skip"}]
        stamp = self.now()
        records = [{"ts": stamp, **o.to_dict()} for o in outcomes]
        details = PromoterDetails.of(len(candidates), outcomes)
        counts = details.by_verdict

        def finish(conn: sqlite3.Connection) -> None:
            fifo = list(review_state.get(conn, self.namespace, DONE_IDS, []))
            fifo = [i for i in fifo if i not in decided] + decided
            review_state.put(conn, self.namespace, DONE_IDS, fifo[-self.cfg.decided_fifo :], stamp)
            for o in outcomes:
                verdict = o.verdict.upper()
                self.audit(conn, "promote", verdict, o.fact_id, o.to_dict(), target="memory")
                if o.verdict == "promoted":
                    review_state.put(
                        conn, self.namespace, promoted_key(o.chain_id), o.entry_id, stamp
                    )
            self.done(conn, {"candidates": len(candidates), **counts})

        # a round that decided something commits at once: no verdict waits behind its write
        await self.commit(finish, "promotions", records, defer=not outcomes)
        trace.get_current_span().add_event(
            "memory.promotion",
            {
                "reverie.promotion.candidates": len(candidates),
                **{f"reverie.promotion.{k}": v for k, v in counts.items()},
            },
        )
        if info_wanted("reverie.promoter"):
            log.info(
                "memory.promotion", namespace=self.namespace, candidates=len(candidates), **counts
            )
        return details

    # -- 2. the model gate, 3. the writes ------------------------------------------------

    async def _judge_and_write(
        self, candidates: list[Fact], memory: list[str]
    ) -> list[PromotionOutcome]:
        limit = self.cfg.rewrite_chars
        prompt = questions.promote(
            memory,
            [
                {"id": i, "content": f.content, "topic": f.topic, "depth": f.depth}
                for i, f in enumerate(candidates)
            ],
            limit,
        )
        answer = await consult(self.judge, self.namespace, prompt)
        if isinstance(answer, Deferred):
            return [self._outcome(f, "deferred", reason=answer.reason) for f in candidates]
        verdicts = {v["id"]: v for v in answer.data["verdicts"]}
        outcomes = []
        writes = 0
        for index, fact in enumerate(candidates):
            verdict = verdicts.get(index)
            if verdict is None:
                outcomes.append(self._outcome(fact, "deferred", reason="no verdict given"))
                continue
            if verdict["verdict"] == "skip":
                outcomes.append(self._outcome(fact, "skip", reason=verdict["reason"]))
                continue
            text = " ".join(verdict["rewrite"].split())
            problem = rewrite_problem(text, fact.content, fact.topic, limit)
            if problem is not None:
                outcomes.append(
                    self._outcome(fact, "skip", reason=f"rewrite refused: {problem}", rewrite=text)
                )
                continue
            if writes >= self.cfg.max_writes:
                outcomes.append(
                    self._outcome(
                        fact,
                        "deferred_budget",
                        rewrite=text,
                        reason=f"over {self.cfg.max_writes} writes",
                    )
                )
                continue
            outcome = await self._write(fact, text)
            writes += outcome.verdict == "promoted"
            outcomes.append(outcome)
        return outcomes

    async def _write(self, fact: Fact, text: str) -> PromotionOutcome:
        command = MemoryCommand("add", "memory", text, None)
        try:
            result = await self.bus.ask(ToolCall(self.namespace, None, command, actor=self.name))
        except (ReverieError, TimeoutError) as exc:
            return self._outcome(fact, "deferred", rewrite=text, reason=f"write failed: {exc!r}")
        assert isinstance(result, ToolResult)
        if result.decision is Decision.ADD:
            entry_id = result.entry_id

            def remember(conn: sqlite3.Connection) -> None:
                generated.remember(
                    conn, self.namespace, text, f"promoter:{fact.chain_id}", self.now()
                )

            await self.db.write(remember)
            return self._outcome(fact, "promoted", rewrite=text, entry_id=entry_id)
        if result.decision is Decision.NOOP:
            return self._outcome(
                fact,
                "skip",
                rewrite=text,
                reason=f"near-duplicate of {result.entry_id} in MEMORY.md",
            )
        why = result.error or result.decision.value
        return self._outcome(fact, "deferred", rewrite=text, reason=f"write refused: {why}")

    def _outcome(
        self,
        fact: Fact,
        verdict: Verdict,
        *,
        rewrite: str | None = None,
        reason: str | None = None,
        entry_id: str | None = None,
    ) -> PromotionOutcome:
        """One fact's outcome, as logged to promotions.jsonl: a model's text in it (rewrite,
        reason) is redacted, so a refused rewrite never carries its secret into the log."""
        return PromotionOutcome(
            fact_id=fact.id,
            chain_id=fact.chain_id,
            topic=fact.topic,
            content=fact.content,
            depth=fact.depth,
            verdict=verdict,
            rewrite=None if rewrite is None else redact(rewrite),
            reason=None if reason is None else redact(reason),
            entry_id=entry_id,  # reverie's own id: never redacted, or the rule is lost
        )
