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

from reverie.actors.context import Judge
from reverie.actors.judging import consult
from reverie.actors.stage import Stage
from reverie.bus.messages import LintDue
from reverie.frozen import quick_init
from reverie.model import questions
from reverie.model.seam import Deferred
from reverie.reports import LinterDetails
from reverie.rules.similarity import jaccard, near_duplicate, values, word_set
from reverie.rules.supersede import keys, supersedes
from reverie.stores import entries, review_state, topics
from reverie.stores.records import Fact

SEEN = "lint:seen"
ASKED = "lint:asked"  # pairs the model judged: a fact never changes, so neither does its verdict
MAX_SEEN = 4000
MAX_PAIRS = 20
RELATED = 50  # the best BM25 matches an entry is compared with, besides exact key matches
UNCLEAR_JACCARD = 0.5


@quick_init
@dataclass(frozen=True, slots=True)
class Item:
    id: str
    text: str
    where: str

    def as_dict(self) -> dict[str, str]:
        return {"id": self.id, "text": self.text, "where": self.where}


@quick_init
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
    seen: list[str] | None = None
    """The keys of the conflicts already recorded, read in the scan's snapshot."""
    deadline: float = 0.0
    """When the breaker ends the round (monotonic), set as the scan began."""
    asked: list[str] | None = None
    """The keys of the unclear pairs the model already judged, read in the same snapshot."""


class Linter(Stage):
    name = "linter"
    section = "linter"
    handles = (LintDue,)
    data_bound = True

    def __init__(self, namespace: str, *, judge: Judge, **stage: Any) -> None:
        super().__init__(namespace, **stage)
        self.judge = judge

    @property
    def budget_s(self) -> float:
        # the breaker ends the round itself; the budget is a backstop above it
        return float(self.cfg.breaker_s) + 30.0

    async def run(self) -> LinterDetails:
        found: list[Conflict] = []
        deferred = None
        scan: Scan = await self.looked()
        deadline = scan.deadline
        found.extend(scan.conflicts)
        asked = list(scan.asked or [])
        judged = set(asked)
        unclear = [p for p in scan.unclear if _pair_key(p) not in judged]
        tripped = scan.tripped
        if unclear and not tripped:
            with anyio.move_on_after(max(0.0, deadline - time.monotonic())) as breaker:
                verdicts = await self._ask(unclear[:MAX_PAIRS])
                if isinstance(verdicts, str):
                    deferred = verdicts
                else:
                    found.extend(verdicts)
                    asked += [_pair_key(p) for p in unclear[:MAX_PAIRS]]
            tripped = breaker.cancelled_caught
        seen = list(scan.seen or [])
        known = set(seen)
        new = []
        for conflict in found:
            if conflict.key not in known:
                known.add(conflict.key)
                seen.append(conflict.key)
                new.append(conflict)
        now = self.now()
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
        details = LinterDetails(len(found), len(new), len(scan.unclear), tripped, deferred)
        detail = details.detail()

        def finish(conn: sqlite3.Connection) -> None:
            review_state.put(conn, self.namespace, SEEN, seen[-MAX_SEEN:], now)
            review_state.put(conn, self.namespace, ASKED, asked[-MAX_SEEN:], now)
            if tripped or deferred:
                self.audit(conn, "round", "RETRY", None, detail)
            else:
                self.done(conn, detail)

        await self.commit(finish, "conflicts", records, defer=True)
        return details

    async def _ask(self, pairs: list[tuple[str, Item, Item]]) -> list[Conflict] | str:
        prompt = questions.lint(
            [{"id": i, "a": a.text, "b": b.text} for i, (_, a, b) in enumerate(pairs)]
        )
        answer = await consult(self.judge, self.namespace, prompt)
        if isinstance(answer, Deferred):
            return answer.reason
        out = []
        for verdict in answer.data["verdicts"]:
            index = verdict["id"]
            if verdict["conflict"] and 0 <= index < len(pairs):
                kind, a, b = pairs[index]
                out.append(Conflict(kind, a, b, verdict["why"] or "the model", by="model"))
        return out

    def look(self, conn: sqlite3.Connection) -> Scan:
        """The scan and the keys already recorded, in one read; the breaker's deadline
        starts with it."""
        deadline = time.monotonic() + self.cfg.breaker_s
        scan = self._scan(conn, deadline)
        kept = review_state.values(conn, self.namespace, [SEEN, ASKED])
        scan.seen, scan.asked = list(kept.get(SEEN, [])), list(kept.get(ASKED, []))
        scan.deadline = deadline
        return scan

    def _scan(self, conn: sqlite3.Connection, deadline: float) -> Scan:
        """The rules, over one snapshot, through indexes (the lint reads the facts that can
        conflict, not every fact); stops where it is when the breaker's deadline passes
        (what was found is kept, the round is retried).

        A namespace with at most ``RELATED`` live (and superseded) facts is compared whole:
        a superset of what the search would pick, judged by the same rules, read with one
        indexed query instead of searches whose cost grows with every namespace of the home.
        """
        conflicts: list[Conflict] = []
        unclear: list[tuple[str, Item, Item]] = []
        self._across_topics(topics.shared_subjects(conn, self.namespace), conflicts, unclear)
        cited = [
            Item(e.id, e.content, e.target)
            for target in ("memory", "user")
            for e in entries.live(conn, self.namespace, target)
        ]
        live = topics.every_live(conn, self.namespace, RELATED) if cited else None
        old = topics.every_superseded(conn, self.namespace, RELATED) if cited else None
        for entry in cited:
            if time.monotonic() > deadline:
                return Scan(conflicts, unclear, tripped=True)
            facts = (
                live
                if live is not None
                else topics.related(conn, self.namespace, entry.text, RELATED)
            )
            _versus_facts(entry, facts, conflicts, unclear)
            cited_values = values(entry.text)
            olds = (
                old
                if old is not None
                else topics.superseded_with(conn, self.namespace, sorted(cited_values), RELATED)
            )
            _stale_citations(entry, cited_values, olds, conflicts)
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


def _pair_key(pair: tuple[str, Item, Item]) -> str:
    kind, a, b = pair
    return Conflict(kind, a, b, "").key


def _versus_facts(
    entry: Item,
    facts: list[Fact],
    conflicts: list[Conflict],
    unclear: list[tuple[str, Item, Item]],
) -> None:
    """An entry against live topic facts: a conflict the rules settle, or a pair unclear."""
    for fact in facts:
        item = Item(fact.id, fact.content, f"topic:{fact.topic}")
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


def _stale_citations(
    entry: Item,
    cited_values: frozenset[str],
    olds: list[tuple[Fact, Fact]],
    conflicts: list[Conflict],
) -> None:
    """An entry citing a superseded fact's values (and not its live head's)."""
    for old, head in olds:
        if values(head.content) <= cited_values or not values(old.content):
            continue
        if (
            values(old.content) <= cited_values
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


def _pair(entry: Item, fact: Item) -> str | None:
    """``conflict`` when a rule settles it, ``unclear`` when alike but unsettled."""
    if supersedes(fact.text, entry.text) or supersedes(entry.text, fact.text):
        return "conflict"
    if near_duplicate(entry.text, fact.text, 0.8) is not None:
        return None
    if jaccard(word_set(entry.text), word_set(fact.text)) >= UNCLEAR_JACCARD:
        return "unclear"
    return None
