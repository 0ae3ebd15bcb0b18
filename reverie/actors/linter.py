"""L5, weekly wiki lint: find contradictions, record them, change nothing.

Rules first, and free: the same subject with different values in two topics; a MEMORY.md or
USER.md entry that a live topic fact contradicts; an entry that still cites a value its
topic has superseded. Pairs the rules cannot settle (much alike, no clear verdict) go to the
model in one bounded call. Conflicts are appended to ``conflicts.jsonl`` once each; nothing
is pushed to the host or rewritten. The 180 s breaker ends a round that runs long; the
round is then retried at the next pass.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from dataclasses import dataclass
from typing import Any

import anyio

from reverie.actors.judging import consult
from reverie.actors.stage import Stage
from reverie.model import questions
from reverie.model.seam import Deferred
from reverie.rules.similarity import jaccard, near_duplicate, values, word_set
from reverie.rules.supersede import keys, supersedes
from reverie.stores import entries, review_state, topics
from reverie.stores.records import Fact

SEEN = "lint:seen"
MAX_SEEN = 4000
MAX_PAIRS = 20
UNCLEAR_JACCARD = 0.5


@dataclass(frozen=True, slots=True)
class Item:
    id: str
    text: str
    where: str

    def as_dict(self) -> dict[str, str]:
        return {"id": self.id, "text": self.text, "where": self.where}


@dataclass(frozen=True, slots=True)
class Conflict:
    kind: str
    a: Item
    b: Item
    why: str
    by: str = "rules"

    @property
    def key(self) -> str:
        ids = "|".join(sorted((self.a.id, self.b.id)))
        return hashlib.sha1(f"{self.kind}|{ids}".encode()).hexdigest()[:16]


@dataclass
class Scan:
    conflicts: list[Conflict]
    unclear: list[tuple[str, Item, Item]]
    tripped: bool = False


class Linter(Stage):
    name = "linter"
    section = "linter"

    @property
    def budget_s(self) -> float:
        # the breaker ends the round itself; the budget is a backstop above it
        return float(self.cfg.breaker_s) + 30.0

    async def run(self) -> dict[str, Any]:
        found: list[Conflict] = []
        deferred = None
        deadline = time.monotonic() + self.cfg.breaker_s
        scan = await self.s.db.read(lambda conn: self._scan(conn, deadline))
        found.extend(scan.conflicts)
        unclear = scan.unclear
        tripped = scan.tripped
        if unclear and not tripped:
            with anyio.move_on_after(max(0.0, deadline - time.monotonic())) as breaker:
                verdicts = await self._ask(unclear[:MAX_PAIRS])
                if isinstance(verdicts, str):
                    deferred = verdicts
                else:
                    found.extend(verdicts)
            tripped = breaker.cancelled_caught
        seen = await self.s.db.read(
            lambda conn: list(review_state.get(conn, self.namespace, SEEN, []))
        )
        known = set(seen)
        new = []
        for conflict in found:
            if conflict.key not in known:
                known.add(conflict.key)
                seen.append(conflict.key)
                new.append(conflict)
        now = self.s.now()
        records = [
            {
                "ts": now,
                "kind": c.kind,
                "by": c.by,
                "why": c.why,
                "a": c.a.as_dict(),
                "b": c.b.as_dict(),
            }
            for c in new
        ]
        detail = {
            "conflicts": len(found),
            "new": len(new),
            "unclear": len(unclear),
            "breaker": tripped,
            "deferred": deferred,
        }

        def finish(conn: sqlite3.Connection) -> None:
            review_state.put(conn, self.namespace, SEEN, seen[-MAX_SEEN:], now)
            if tripped or deferred:
                self.audit(conn, "round", "RETRY", None, detail)
            else:
                self.done(conn, detail)

        await self.s.db.write(finish, then=lambda conn, _: self.log("conflicts", records))
        status = "breaker" if tripped else "deferred" if deferred else "ran"
        return {"status": status, **detail}

    async def _ask(self, pairs: list[tuple[str, Item, Item]]) -> list[Conflict] | str:
        prompt = questions.lint(
            [{"id": i, "a": a.text, "b": b.text} for i, (_, a, b) in enumerate(pairs)]
        )
        answer = await consult(self.s, self.namespace, prompt)
        if isinstance(answer, Deferred):
            return answer.reason
        out = []
        for verdict in answer.data["verdicts"]:
            index = verdict["id"]
            if verdict["conflict"] and 0 <= index < len(pairs):
                kind, a, b = pairs[index]
                out.append(Conflict(kind, a, b, verdict["why"] or "the model", by="model"))
        return out

    def _scan(self, conn: sqlite3.Connection, deadline: float) -> Scan:
        """The rules, over one snapshot; stops where it is when the breaker's deadline
        passes (what was found is kept, the round is retried)."""
        facts: list[Fact] = []
        superseded: list[Fact] = []
        for name in topics.names(conn, self.namespace):
            for fact in topics.all_facts(conn, self.namespace, name):
                (facts if fact.live else superseded).append(fact)
        cited = [
            Item(e.id, e.content, e.target)
            for target in ("memory", "user")
            for e in entries.live(conn, self.namespace, target)
        ]
        conflicts: list[Conflict] = []
        unclear: list[tuple[str, Item, Item]] = []
        self._across_topics(facts, conflicts, unclear)
        live_by_chain = {f.chain_id: f for f in facts}
        fact_items = [Item(f.id, f.content, f"topic:{f.topic}") for f in facts]
        # every rule needs a shared content word (same subject, same skeleton, a negated
        # value, or Jaccard >= 0.5), so only facts sharing a word with the entry are paired
        by_word: dict[str, list[int]] = {}
        for position, item in enumerate(fact_items):
            for word in word_set(item.text):
                by_word.setdefault(word, []).append(position)
        by_value: dict[str, list[int]] = {}  # a stale citation repeats a superseded value
        for position, old in enumerate(superseded):
            for value in values(old.content):
                by_value.setdefault(value, []).append(position)
        for entry in cited:
            if time.monotonic() > deadline:
                return Scan(conflicts, unclear, tripped=True)
            near = sorted({p for w in word_set(entry.text) for p in by_word.get(w, ())})
            for item in (fact_items[p] for p in near):
                verdict = _pair(entry, item)
                if verdict == "conflict":
                    conflicts.append(
                        Conflict(
                            "memory_vs_topic",
                            entry,
                            item,
                            "the entry and a live topic fact give one subject different values",
                        )
                    )
                elif verdict == "unclear":
                    unclear.append(("memory_vs_topic", entry, item))
            cited_values = values(entry.text)
            for old in (
                superseded[p]
                for p in sorted({p for v in cited_values for p in by_value.get(v, ())})
            ):
                head = live_by_chain.get(old.chain_id)
                if (
                    head is None
                    or not values(old.content)
                    or values(head.content) <= values(entry.text)
                ):
                    continue
                if (
                    values(old.content) <= values(entry.text)
                    and jaccard(word_set(old.content), word_set(entry.text)) >= UNCLEAR_JACCARD
                ):
                    conflicts.append(
                        Conflict(
                            "stale_citation",
                            entry,
                            Item(head.id, head.content, f"topic:{head.topic}"),
                            f"the entry cites {old.id}, superseded by the live value",
                        )
                    )
        return Scan(conflicts, unclear, tripped=time.monotonic() > deadline)

    def _across_topics(
        self,
        facts: list[Fact],
        conflicts: list[Conflict],
        unclear: list[tuple[str, Item, Item]],
    ) -> None:
        by_subject: dict[str, list[Fact]] = {}
        for fact in facts:
            subject = keys(fact.content).subject
            if subject:
                by_subject.setdefault(subject, []).append(fact)
        for group in by_subject.values():
            for i, a in enumerate(group):
                for b in group[i + 1 :]:
                    if a.topic == b.topic:
                        continue
                    ia = Item(a.id, a.content, f"topic:{a.topic}")
                    ib = Item(b.id, b.content, f"topic:{b.topic}")
                    if (
                        values(a.content)
                        and values(b.content)
                        and values(a.content) != values(b.content)
                    ):
                        conflicts.append(
                            Conflict(
                                "cross_topic",
                                ia,
                                ib,
                                "two topics give the same subject different values",
                            )
                        )
                    elif near_duplicate(a.content, b.content, 0.8) is None:
                        unclear.append(("cross_topic", ia, ib))


def _pair(entry: Item, fact: Item) -> str | None:
    """``conflict`` when a rule settles it, ``unclear`` when alike but unsettled."""
    if supersedes(fact.text, entry.text) or supersedes(entry.text, fact.text):
        return "conflict"
    if near_duplicate(entry.text, fact.text, 0.8) is not None:
        return None
    if jaccard(word_set(entry.text), word_set(fact.text)) >= UNCLEAR_JACCARD:
        return "unclear"
    return None
