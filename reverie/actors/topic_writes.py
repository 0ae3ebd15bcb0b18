"""The topic tool's save: ADD / SUPERSEDE / NOOP / ERROR (docs/supersede.md), and bringing
an earlier fact value back as the newest link of its chain."""

from __future__ import annotations

import sqlite3
from typing import Any

from reverie.actors.context import new_id
from reverie.actors.write_base import Outcome, Projection, WriteBase, refuse_secret
from reverie.bus.messages import ToolCall
from reverie.commands import TopicCommand
from reverie.errors import ToolInputError
from reverie.results import Decision, ToolResult
from reverie.rules.similarity import (
    pigeonhole_terms,
    value_sequence,
)
from reverie.rules.supersede import (
    changes_value,
    parse,
    recounts,
    restates_all,
    restates_values,
    retired_names,
)
from reverie.rules.topic_decision import decide
from reverie.stores import generated, summaries, topics
from reverie.stores.projection import add_event, supersede_event
from reverie.stores.records import Fact

RELATED_FACTS = 10  # a topic's newest facts, checked for the value a correction changes


class TopicWrites(WriteBase):
    """Topic saves and fact restores."""

    def _candidates(self, conn: sqlite3.Connection, topic: str, text: str) -> list[Fact]:
        """Every live fact of the topic the rules could match, oldest first, found through
        indexes in one query rather than a scan: the normalised twin, supersede keys, the
        explicitly negated old value, and the terms that any Jaccard twin must contain."""
        # a twin carries the same values in the same order, so one value term is enough
        values = value_sequence(text)
        term_sets = [
            [max(values, key=len)]
            if values
            else pigeonhole_terms(text, self.cfg.writer.jaccard_threshold)
        ]
        negated = parse(text).negated
        if negated:
            term_sets.append(pigeonhole_terms(negated, 1.0))
        term_sets += [[name] for name in retired_names(text)]  # "ditched TuneLab" ends it
        found = topics.candidates(
            conn, self.namespace, topic, text, term_sets, self.cfg.writer.dedupe_candidates
        )
        if not values:
            return found
        # a natural correction shares the words around its value, not the value: the
        # topic's newest facts are where its old value usually is
        known = {f.id for f in found}
        near = topics.by_ids(
            conn,
            [
                fact_id
                for fact_id, content in topics.latest(conn, self.namespace, topic, RELATED_FACTS)
                if fact_id not in known
                and (
                    changes_value(text, content)
                    or recounts(text, content)
                    or restates_values(text, content)
                    or restates_all(text, content)
                )
            ],
        )
        return sorted(
            found + [f for f in near if f.id not in known], key=lambda f: (f.created_at, f.id)
        )

    async def _topic_save(self, cmd: TopicCommand, call: ToolCall) -> Outcome:
        refuse_secret("content", cmd.content)
        return await self._write(lambda conn: self._topic_save_txn(conn, cmd, call))

    def _topic_save_txn(
        self, conn: sqlite3.Connection, cmd: TopicCommand, call: ToolCall
    ) -> Outcome:
        assert cmd.topic is not None and cmd.content is not None
        topic, content, now = cmd.topic, cmd.content, self.now()
        created_topic = self._open_topic(conn, topic, now)
        candidates = {f.id: f for f in self._candidates(conn, topic, content)}
        live = [(f.id, f.content) for f in candidates.values()]
        decision = decide(content, live, self.cfg.writer.jaccard_threshold)
        match decision.action:
            case "noop":
                assert decision.fact_id is not None
                twin = candidates[decision.fact_id]
                return self._noop(conn, call, topic, "save", content, twin, decision.detail)
            case "supersede":
                assert decision.fact_id is not None
                old = candidates[decision.fact_id]
                fact = self._new_fact(call, topic, content, now, old)
                return self._save_fact(conn, call, fact, old, created_topic, cmd.formerly)
            case _:
                fact = self._new_fact(call, topic, content, now, None)
                return self._save_fact(conn, call, fact, None, created_topic, cmd.formerly)

    def _open_topic(self, conn: sqlite3.Connection, topic: str, now: str) -> bool:
        """Creates the topic if it is new and the topic limit allows; True if it was created."""
        if topics.exists(conn, self.namespace, topic):
            return False
        existing = topics.names(conn, self.namespace)
        if len(existing) >= self.cfg.writer.max_topics:
            raise ToolInputError(
                f"there are already {len(existing)} topics (the limit is "
                f"{self.cfg.writer.max_topics}): {', '.join(existing)}. Save this fact "
                "under one of them; nothing was written."
            )
        topics.create(conn, self.namespace, topic, now)
        return True

    def _new_fact(
        self, call: ToolCall, topic: str, content: str, now: str, old: Fact | None
    ) -> Fact:
        """The saved fact: a new chain, or the next link of the chain it supersedes."""
        fact_id = new_id("fct")
        return Fact(
            id=fact_id,
            namespace=self.namespace,
            topic=topic,
            content=content,
            chain_id=old.chain_id if old else fact_id,
            depth=old.depth + 1 if old else 1,
            supersedes=old.id if old else None,
            superseded_by=None,
            created_by=call.actor,
            session_id=call.session_id,
            created_at=now,
            invalid_at=None,
        )

    def _save_fact(
        self,
        conn: sqlite3.Connection,
        call: ToolCall,
        fact: Fact,
        old: Fact | None,
        created_topic: bool,
        formerly: tuple[str, ...] = (),
    ) -> Outcome:
        """Writes an ADD, or a SUPERSEDE that invalidates ``old``, with its ledger row; what
        the flush collapsed into it (``formerly``) is indexed with it."""
        topic, content, now = fact.topic, fact.content, fact.created_at
        topics.insert(conn, fact)
        events = [add_event(fact, formerly)]
        follow_ups: list[Projection] = []
        if old is not None:
            topics.invalidate(conn, old.id, fact.id, now)  # its trigger makes the chain row
            generated.forget(conn, self.namespace, f"distiller:{topic}")  # stale now
            events.append(supersede_event(old.id, fact.id, now))
            follow_ups = self._after_supersede(conn, old, fact)
            follow_ups.append(self._fresh_summary(conn, topic))
            decision = Decision.SUPERSEDE
            message = (
                f"superseded {old.id} ({old.content[:80]!r}); the old fact is kept "
                f"with invalid_at and stays in its chain"
            )
            before: Any = {"entry_id": old.id, "content": old.content}
        else:
            decision, message, before = Decision.ADD, f"saved to topic {topic!r}", None
        topics.index_formerly(conn, fact.id, formerly)  # into that row: after the trigger
        self._audit(
            conn,
            actor=call.actor,
            action="save",
            decision=decision,
            entry_id=fact.id,
            target=topic,
            session_id=call.session_id,
            before=before,
            after={"content": content, "chain_id": fact.chain_id, "depth": fact.depth},
            detail={"topic_created": created_topic},
        )

        def project(_: sqlite3.Connection) -> None:
            self.projector.append_history(self.namespace, topic, events)

        extra: dict[str, Any] = {"topic": topic, "chain_id": fact.chain_id, "depth": fact.depth}
        if old is not None:
            extra["superseded"] = old.id
        return Outcome(ToolResult(decision, fact.id, message, **extra), [project, *follow_ups])

    def _fresh_summary(self, conn: sqlite3.Connection, topic: str) -> Projection:
        """summary.md never shows a value a correction replaced: until the next distill it
        holds the topic's newest live facts."""
        text = summaries.current(conn, self.namespace, topic, separator="\n")

        def project(_: sqlite3.Connection) -> None:
            if text:
                self.projector.write_summary(self.namespace, topic, text)

        return project

    def _after_supersede(self, conn: sqlite3.Connection, old: Fact, new: Fact) -> list[Projection]:
        """What else a correction changes, in the same transaction (the writer keeps a
        promoted MEMORY.md rule current); returns the projections to rewrite."""
        return []

    def _after_restore(
        self, conn: sqlite3.Connection, undone: Fact, back: Fact
    ) -> list[Projection]:
        """What else restoring an earlier value changes: what a correction does."""
        return self._after_supersede(conn, undone, back)

    def _restore_fact(self, conn: sqlite3.Connection, fact: Fact) -> Outcome:
        """An earlier value comes back as the newest link of its chain (nothing is rewound)."""
        if fact.live:
            raise ToolInputError(f"{fact.id} is the live value of its chain already")
        call = ToolCall(
            self.namespace, None, TopicCommand("save", fact.topic, fact.content), actor="restore"
        )
        chain = topics.chain(conn, self.namespace, fact.id)
        head = next((f for f in chain if f.live), None)
        if head is None:
            raise ToolInputError(f"the chain of {fact.id} has no live value to supersede")
        return self._supersede_with(conn, call, head, fact.content)

    def _supersede_with(
        self, conn: sqlite3.Connection, call: ToolCall, head: Fact, content: str
    ) -> Outcome:
        now = self.now()
        fact_id = new_id("fct")
        fact = Fact(
            id=fact_id,
            namespace=self.namespace,
            topic=head.topic,
            content=content,
            chain_id=head.chain_id,
            depth=head.depth + 1,
            supersedes=head.id,
            superseded_by=None,
            created_by=call.actor,
            session_id=None,
            created_at=now,
            invalid_at=None,
        )
        topics.insert(conn, fact)
        topics.invalidate(conn, head.id, fact.id, now)
        generated.forget(conn, self.namespace, f"distiller:{head.topic}")  # stale now
        # like a correction: a promoted rule stating the value just undone is refreshed
        follow_ups = self._after_restore(conn, head, fact)
        follow_ups.append(self._fresh_summary(conn, head.topic))
        self._audit(
            conn,
            actor=call.actor,
            action="restore",
            decision=Decision.SUPERSEDE,
            entry_id=fact.id,
            target=head.topic,
            session_id=None,
            before={"entry_id": head.id, "content": head.content},
            after={"content": content, "chain_id": fact.chain_id, "depth": fact.depth},
        )
        events = [add_event(fact), supersede_event(head.id, fact.id, now)]

        def project(_: sqlite3.Connection) -> None:
            self.projector.append_history(self.namespace, head.topic, events)

        return Outcome(
            ToolResult(
                Decision.SUPERSEDE,
                fact.id,
                f"restored the value of an earlier fact as {fact.id}, superseding {head.id}",
                superseded=head.id,
                topic=head.topic,
            ),
            [project, *follow_ups],
        )
