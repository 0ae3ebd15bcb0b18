"""L4, daily distillation: rewrite summary.md of the topics that changed.

A topic is distilled when it has facts and no summary, and again once ``min_new_facts``
facts were added since its own watermark (the highest fact row it was last distilled
from); at most ``max_topics`` per round, most recently updated first. A topic whose
summary failed, was deferred or did not fit the budget keeps its watermark and is retried
next round. The summary comes from live facts only and must
pass the rules (length, no value that no live fact carries) before it is stored.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from opentelemetry import trace

from reverie.actors.judging import consult
from reverie.actors.stage import Stage
from reverie.model import questions
from reverie.model.seam import Deferred
from reverie.rules.consolidation import fits_whole, summarise, summary_problem
from reverie.stores import generated, review_state, topics
from reverie.stores.db import fetchone
from reverie.telemetry.logs import get_logger

log = get_logger("reverie.distiller")


def watermark_key(topic: str) -> str:
    return f"distill:watermark:{topic}"


def summary_key(topic: str) -> str:
    return f"summary:{topic}"


class Distiller(Stage):
    name = "distiller"
    section = "distiller"

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

    async def run(self) -> dict[str, Any]:
        stale = await self.s.db.read(self._stale)
        chosen, over = stale[: self.cfg.max_topics], stale[self.cfg.max_topics :]
        results = []
        for topic, top in chosen:
            try:
                results.append(await self._distil(topic, top))
            except Exception as exc:  # one topic's failure is not the round's
                log.warning(
                    "distill_failed", namespace=self.namespace, topic=topic, error=repr(exc)
                )
                results.append({"topic": topic, "status": "failed", "error": repr(exc)})
        results += [{"topic": topic, "status": "over_budget"} for topic, _ in over]
        now = self.s.now()
        records = [{"ts": now, **r} for r in results if r["status"] != "distilled"]

        def finish(conn: sqlite3.Connection) -> None:
            self.done(conn, {"topics": {r["topic"]: r["status"] for r in results}})

        await self.s.db.write(finish, then=lambda conn, _: self.log("distill", records))
        distilled = sum(1 for r in results if r["status"] == "distilled")
        return {
            "distilled": distilled,
            "retry_next_round": len(results) - distilled,
            "topics": results,
        }

    async def _distil(self, topic: str, top: int) -> dict[str, Any]:
        live = await self.s.db.read(lambda conn: topics.live(conn, self.namespace, topic))
        facts = [(f.content, f.depth) for f in live]
        tokens = {"input_tokens": 0, "output_tokens": 0}
        if self.cfg.rules_first and fits_whole(facts, self.cfg.summary_chars):
            # every live fact fits as it is: nothing to judge, so no model call
            summary, by = summarise(facts, self.cfg.summary_chars), "rules"
        else:
            prompt = questions.distill(
                topic,
                [
                    {"id": f.id, "content": f.content, "depth": f.depth, "since": f.created_at}
                    for f in live
                ],
                self.cfg.summary_chars,
            )
            answer = await consult(self.s, self.namespace, prompt)
            tokens = {
                "input_tokens": answer.usage.input_tokens,
                "output_tokens": answer.usage.output_tokens,
            }
            if isinstance(answer, Deferred):
                return {"topic": topic, "status": "deferred", "reason": answer.reason, **tokens}
            summary, by = " ".join(str(answer.data["summary"]).split()), self.s.model.name
        problem = summary_problem(summary, [f.content for f in live], self.cfg.summary_chars)
        if problem is not None:
            return {"topic": topic, "status": "rejected", "reason": problem, **tokens}
        record = {
            "ts": self.s.now(),
            "topic": topic,
            "status": "distilled",
            "facts": len(live),
            "chars": len(summary),
            "watermark": top,
            "by": by,
            **tokens,
        }

        def store(conn: sqlite3.Connection) -> None:
            now = self.s.now()
            review_state.put(conn, self.namespace, summary_key(topic), summary, now)
            review_state.put(conn, self.namespace, watermark_key(topic), top, now)
            generated.remember(conn, self.namespace, summary, f"distiller:{topic}", now)
            self.audit(
                conn,
                "distill",
                "DONE",
                f"topic:{topic}",
                record,
                target=topic,
                after={"summary": summary},
            )

        def project(_: sqlite3.Connection, __: None) -> None:
            self.project(lambda: self.s.projector.write_summary(self.namespace, topic, summary))
            self.log("distill", [record])

        await self.s.db.write(store, then=project)
        trace.get_current_span().add_event(
            "memory.distill",
            {
                "reverie.topic": topic,
                "reverie.distill.facts": len(live),
                "reverie.distill.chars": len(summary),
            },
        )
        log.info("memory.distill", namespace=self.namespace, topic=topic, chars=len(summary))
        return record
