"""L1, the writer: every in-session write of one namespace, one at a time.

The bus gives each namespace one writer mailbox, so writes of a namespace are serialised
in-process; each write is one ``BEGIN IMMEDIATE`` transaction that re-reads what it checks
(duplicates, caps, topic count), so several processes sharing a home stay correct too.
Projections are rewritten after the commit; a failure there never un-acknowledges a write.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import aiosqlite
from opentelemetry import trace
from rapidfuzz import fuzz, process

from reverie.actors.context import Services, new_id
from reverie.bus.actor import Actor
from reverie.bus.messages import Envelope, Restore, ToolCall, TurnEnded, TurnRecord
from reverie.errors import StoreBusy, StoreError, ToolInputError
from reverie.rules.similarity import near_duplicate, normalise, value_sequence
from reverie.rules.supersede import parse, pick_superseded
from reverie.stores import entries, episodes, ledger, skills, topics
from reverie.stores.projection import add_event, supersede_event
from reverie.stores.records import ENTRY_SEPARATOR, Entry, Episode, Fact, Skill
from reverie.stores.search import pigeonhole_terms
from reverie.telemetry.logs import get_logger
from reverie.telemetry.tracing import trace_id_hex
from reverie.tools import KEYED_TARGETS, MemoryCommand, SkillCommand, TopicCommand, keyed

log = get_logger("reverie.writer")

FILE_NAMES = {
    "memory": "MEMORY.md",
    "user": "USER.md",
    "soul": "SOUL.md",
    "user_settings": "user_settings",
    "agent_profile": "agent_profile",
}


class Decision(StrEnum):
    """What a write did; a tool result always names one."""

    ADD = "ADD"
    SUPERSEDE = "SUPERSEDE"
    NOOP = "NOOP"
    REPLACED = "REPLACED"
    REMOVED = "REMOVED"
    REINFORCED = "REINFORCED"
    CREATED = "CREATED"
    PATCHED = "PATCHED"
    RESTORED = "RESTORED"
    ERROR = "ERROR"


Projection = Callable[[], Awaitable[None]]


@dataclass
class Outcome:
    result: dict[str, Any]
    projections: list[Projection] = field(default_factory=list)


def error_result(message: str) -> dict[str, Any]:
    return {"ok": False, "decision": Decision.ERROR.value, "entry_id": None, "error": message}


def _result(decision: Decision, entry_id: str | None, message: str, **extra: Any) -> dict[str, Any]:
    return {
        "ok": True,
        "decision": decision.value,
        "entry_id": entry_id,
        "message": message,
        **extra,
    }


class Writer(Actor):
    """Serialised writes of one namespace: the memory, topic and skill_manage tools,
    episode recording and restore."""

    name = "writer"
    handles = (ToolCall, TurnRecord, Restore)

    def __init__(self, namespace: str, services: Services) -> None:
        super().__init__(namespace)
        self.s = services
        self.cfg = services.config

    @property
    def enabled(self) -> bool:
        return self.cfg.writer.enabled

    @property
    def budget_s(self) -> float:
        return self.cfg.writer.timeout_s

    async def on_receive(self, envelope: Envelope) -> Any:
        message = envelope.message
        if isinstance(message, TurnRecord):
            return await self._turn(message, envelope)
        try:
            if isinstance(message, ToolCall):
                outcome = await self._tool(message)
            elif isinstance(message, Restore):
                outcome = await self._restore(message)
            else:
                raise TypeError(f"writer cannot handle {type(message).__name__}")
        except ToolInputError as exc:
            return error_result(str(exc))
        except StoreBusy as exc:
            return error_result(f"{exc}; nothing was written, retry the call")
        except StoreError as exc:
            return error_result(f"{exc}; nothing was written")
        await self._project(outcome.projections)
        span = trace.get_current_span()
        span.set_attribute("reverie.decision", outcome.result["decision"])
        if outcome.result.get("entry_id"):
            span.set_attribute("reverie.entry_id", outcome.result["entry_id"])
        return outcome.result

    async def _project(self, projections: list[Projection]) -> None:
        if not projections:
            return
        try:
            for projection in projections:
                await projection()
        except Exception as exc:  # the write is committed; the file is rebuilt on next open
            trace.get_current_span().add_event("projection_failed", {"error": repr(exc)})
            log.warning("projection_failed", namespace=self.namespace, error=repr(exc))

    async def _audit(
        self,
        conn: aiosqlite.Connection,
        *,
        actor: str,
        action: str,
        decision: Decision,
        entry_id: str | None,
        target: str | None,
        session_id: str | None,
        before: Any = None,
        after: Any = None,
        detail: dict[str, Any] | None = None,
    ) -> None:
        await ledger.append(
            conn,
            ts=self.s.now(),
            namespace=self.namespace,
            actor=actor,
            action=action,
            decision=decision.value,
            entry_id=entry_id,
            target=target,
            session_id=session_id,
            trace_id=trace_id_hex(),
            before=before,
            after=after,
            detail=detail,
        )

    # -- episodes -----------------------------------------------------------------------

    async def _turn(self, message: TurnRecord, envelope: Envelope) -> Episode:
        async with self.s.db.transaction() as conn:
            episode = await episodes.record(
                conn,
                self.namespace,
                message.session_id,
                message.user,
                message.assistant,
                self.s.now(),
            )
            await self._audit(
                conn,
                actor="session",
                action="turn",
                decision=Decision.ADD,
                entry_id=f"ep-{episode.id}",
                target="episode",
                session_id=message.session_id,
                after={"turn": episode.turn, "chars": len(episode.text)},
            )
        await self.s.bus.tell(
            TurnEnded(self.namespace, message.session_id, episode.id, episode.turn), cause=envelope
        )
        return episode

    # -- tools --------------------------------------------------------------------------

    async def _tool(self, call: ToolCall) -> Outcome:
        command = call.command
        if isinstance(command, MemoryCommand):
            return await self._memory(command, call)
        if isinstance(command, TopicCommand):
            return await self._topic_save(command, call)
        return await self._skill(command, call)

    def _cap(self, target: str) -> int:
        return int(getattr(self.cfg.caps, target))

    def _usage(self, target: str, live: list[Entry]) -> dict[str, Any]:
        return {"target": target, "used": len(entries.render(live)), "cap": self._cap(target)}

    def _check_cap(self, target: str, live: list[Entry], change: dict[str, str | None]) -> None:
        cap = self._cap(target)
        after = entries.usage_after(live, change)
        if after <= cap:
            return
        used = len(entries.render(live))
        raise ToolInputError(
            f"{FILE_NAMES[target]} is full: {used}/{cap} chars used ({used * 100 // cap}%), "
            f"and this write would make it {after}. Nothing was written. Free room first: "
            "'replace' an entry with a shorter one or 'remove' one that no longer matters "
            "(it stays in the ledger and can be restored), or save this as a specific fact "
            "with the topic tool."
        )

    def _match(self, live: list[Entry], old_text: str, target: str) -> Entry:
        needle = old_text.casefold()
        found = [e for e in live if needle in e.content.casefold()]
        if len(found) == 1:
            return found[0]
        if not found:
            hint = ""
            if live:
                best = process.extractOne(
                    old_text, [e.content for e in live], scorer=fuzz.partial_ratio
                )
                if best is not None:
                    hint = f"; the closest entry is {best[0][:80]!r}"
            raise ToolInputError(
                f"no live {FILE_NAMES[target]} entry contains {old_text[:80]!r}{hint}"
            )
        listing = "; ".join(f"{e.id}: {e.content[:50]!r}" for e in found[:5])
        raise ToolInputError(
            f"{old_text[:80]!r} matches {len(found)} {FILE_NAMES[target]} entries ({listing});"
            " quote more of the one you mean"
        )

    def _twin(
        self, live: list[Entry], content: str, skip: str | None = None
    ) -> tuple[Entry, dict[str, Any]] | None:
        for entry in live:
            if entry.id == skip:
                continue
            match = near_duplicate(content, entry.content, self.cfg.writer.jaccard_threshold)
            if match is not None:
                return entry, {"tier": match.tier.value, "similarity": round(match.similarity, 3)}
        return None

    def _new_entry(self, target: str, content: str, session_id: str | None, actor: str) -> Entry:
        now = self.s.now()
        key = keyed(content)[0] if target in KEYED_TARGETS else None
        if key is not None:
            content = f"{key}: {keyed(content)[1]}"
        return Entry(
            id=new_id("ent"),
            namespace=self.namespace,
            target=target,
            content=content,
            key=key,
            reinforce=1,
            status="live",
            replaced_by=None,
            created_by=actor,
            session_id=session_id,
            created_at=now,
            updated_at=now,
            ended_at=None,
        )

    def _entry_projection(self, target: str) -> Projection:
        async def project() -> None:
            async with self.s.projector.locked(), self.s.db.reading() as conn:
                await self.s.projector.entries(conn, self.namespace, target)

        return project

    async def _memory(self, cmd: MemoryCommand, call: ToolCall) -> Outcome:
        target, session = cmd.target, call.session_id
        async with self.s.db.transaction() as conn:
            live = await entries.live(conn, self.namespace, target)
            if cmd.action == "add":
                assert cmd.content is not None
                fresh = self._new_entry(target, cmd.content, session, call.actor)
                same_key = [e for e in live if fresh.key is not None and e.key == fresh.key]
                if same_key:  # a keyed setting changes value in place of its old one
                    return await self._replace(conn, call, live, same_key[0], fresh)
                twin = self._twin(live, fresh.content)
                if twin is not None:
                    return await self._noop(conn, call, target, "add", fresh.content, *twin)
                self._check_cap(target, live, {"": fresh.rendered})
                await entries.insert(conn, fresh)
                await self._audit(
                    conn,
                    actor=call.actor,
                    action="add",
                    decision=Decision.ADD,
                    entry_id=fresh.id,
                    target=target,
                    session_id=session,
                    after={"content": fresh.content},
                )
                usage = self._usage(target, [*live, fresh])
                return Outcome(
                    _result(Decision.ADD, fresh.id, f"added to {FILE_NAMES[target]}", usage=usage),
                    [self._entry_projection(target)],
                )
            assert cmd.old_text is not None
            entry = self._match(live, cmd.old_text, target)
            if cmd.action == "replace":
                assert cmd.content is not None
                fresh = self._new_entry(target, cmd.content, session, call.actor)
                return await self._replace(conn, call, live, entry, fresh)
            if cmd.action == "remove":
                now = self.s.now()
                await entries.end(conn, entry.id, "removed", now)
                await self._audit(
                    conn,
                    actor=call.actor,
                    action="remove",
                    decision=Decision.REMOVED,
                    entry_id=entry.id,
                    target=target,
                    session_id=session,
                    before={"content": entry.content},
                )
                rest = [e for e in live if e.id != entry.id]
                return Outcome(
                    _result(
                        Decision.REMOVED,
                        entry.id,
                        f"removed from {FILE_NAMES[target]}; it stays in the "
                        f"ledger (restore with `reverie restore {entry.id}`)",
                        usage=self._usage(target, rest),
                    ),
                    [self._entry_projection(target)],
                )
            # reinforce
            count = entry.reinforce + 1
            bumped = Entry(**{**entry.to_dict(), "reinforce": count})
            self._check_cap(target, live, {entry.id: bumped.rendered})
            await entries.set_reinforce(conn, entry.id, count, self.s.now())
            await self._audit(
                conn,
                actor=call.actor,
                action="reinforce",
                decision=Decision.REINFORCED,
                entry_id=entry.id,
                target=target,
                session_id=session,
                before={"reinforce": entry.reinforce},
                after={"reinforce": count},
            )
            usage = self._usage(target, [bumped if e.id == entry.id else e for e in live])
            return Outcome(
                _result(
                    Decision.REINFORCED,
                    entry.id,
                    f"reinforced (×{count})",
                    reinforce=count,
                    usage=usage,
                ),
                [self._entry_projection(target)],
            )

    async def _replace(
        self,
        conn: aiosqlite.Connection,
        call: ToolCall,
        live: list[Entry],
        old: Entry,
        fresh: Entry,
    ) -> Outcome:
        target = old.target
        twin = self._twin(live, fresh.content, skip=old.id)
        if twin is not None:
            return await self._noop(conn, call, target, "replace", fresh.content, *twin)
        if near_duplicate(fresh.content, old.content, 1.0) is not None:
            return await self._noop(
                conn,
                call,
                target,
                "replace",
                fresh.content,
                old,
                {"tier": "exact", "similarity": 1.0},
            )
        self._check_cap(target, live, {old.id: fresh.rendered})
        await entries.end(conn, old.id, "replaced", fresh.created_at, replaced_by=fresh.id)
        await entries.insert(conn, fresh)
        await self._audit(
            conn,
            actor=call.actor,
            action="replace",
            decision=Decision.REPLACED,
            entry_id=fresh.id,
            target=target,
            session_id=call.session_id,
            before={"entry_id": old.id, "content": old.content},
            after={"entry_id": fresh.id, "content": fresh.content},
        )
        usage = self._usage(target, [fresh if e.id == old.id else e for e in live])
        return Outcome(
            _result(
                Decision.REPLACED,
                fresh.id,
                f"replaced {old.id} in {FILE_NAMES[target]}; the old text stays "
                f"in the ledger (restore with `reverie restore {old.id}`)",
                replaced=old.id,
                usage=usage,
            ),
            [self._entry_projection(target)],
        )

    async def _noop(
        self,
        conn: aiosqlite.Connection,
        call: ToolCall,
        target: str,
        action: str,
        content: str,
        twin: Entry | Fact,
        detail: dict[str, Any],
    ) -> Outcome:
        await self._audit(
            conn,
            actor=call.actor,
            action=action,
            decision=Decision.NOOP,
            entry_id=twin.id,
            target=target,
            session_id=call.session_id,
            after={"content": content},
            detail={"duplicate_of": twin.id, **detail},
        )
        return Outcome(
            _result(
                Decision.NOOP,
                twin.id,
                f"already stored as {twin.id}: {twin.content[:120]!r}; nothing was written",
                duplicate_of=twin.id,
                **detail,
            )
        )

    # -- topics -------------------------------------------------------------------------

    async def _candidates(self, conn: aiosqlite.Connection, topic: str, text: str) -> list[Fact]:
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
        return await topics.candidates(
            conn, self.namespace, topic, text, term_sets, self.cfg.writer.dedupe_candidates
        )

    async def _topic_save(self, cmd: TopicCommand, call: ToolCall) -> Outcome:
        assert cmd.topic is not None and cmd.content is not None
        topic, content, now = cmd.topic, cmd.content, self.s.now()
        async with self.s.db.transaction() as conn:
            created_topic = False
            if not await topics.exists(conn, self.namespace, topic):
                existing = await topics.names(conn, self.namespace)
                if len(existing) >= self.cfg.writer.max_topics:
                    raise ToolInputError(
                        f"there are already {len(existing)} topics (the limit is "
                        f"{self.cfg.writer.max_topics}): {', '.join(existing)}. Save this fact "
                        "under one of them; nothing was written."
                    )
                await topics.create(conn, self.namespace, topic, now)
                created_topic = True
            candidates = await self._candidates(conn, topic, content)
            key = normalise(content)
            exact = next((f for f in candidates if normalise(f.content) == key), None)
            if exact is not None:
                return await self._noop(
                    conn, call, topic, "save", content, exact, {"tier": "exact", "similarity": 1.0}
                )
            old_id = pick_superseded(content, [(f.id, f.content) for f in candidates])
            if old_id is None:
                for fact in candidates:
                    match = near_duplicate(content, fact.content, self.cfg.writer.jaccard_threshold)
                    if match is not None:
                        return await self._noop(
                            conn,
                            call,
                            topic,
                            "save",
                            content,
                            fact,
                            {"tier": match.tier.value, "similarity": round(match.similarity, 3)},
                        )
            old = next((f for f in candidates if f.id == old_id), None)
            fact_id = new_id("fct")
            fact = Fact(
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
            await topics.insert(conn, fact)
            events = [add_event(fact)]
            if old is not None:
                await topics.invalidate(conn, old.id, fact.id, now)
                events.append(supersede_event(old.id, fact.id, now))
                decision = Decision.SUPERSEDE
                message = (
                    f"superseded {old.id} ({old.content[:80]!r}); the old fact is kept "
                    f"with invalid_at and stays in its chain"
                )
                before: Any = {"entry_id": old.id, "content": old.content}
            else:
                decision, message, before = Decision.ADD, f"saved to topic {topic!r}", None
            await self._audit(
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

        async def project() -> None:
            await self.s.projector.append_history(self.namespace, topic, events)

        extra: dict[str, Any] = {"topic": topic, "chain_id": fact.chain_id, "depth": fact.depth}
        if old is not None:
            extra["superseded"] = old.id
        return Outcome(_result(decision, fact.id, message, **extra), [project])

    # -- skills -------------------------------------------------------------------------

    async def _skill(self, cmd: SkillCommand, call: ToolCall) -> Outcome:
        now = self.s.now()
        async with self.s.db.transaction() as conn:
            current = await skills.get(conn, self.namespace, cmd.name)
            if cmd.action == "create":
                if current is not None:
                    state = "archived" if current.archived_at else "registered"
                    raise ToolInputError(
                        f"skill {cmd.name!r} already exists ({state}); use "
                        "action 'patch' to change it"
                    )
                skill = Skill(
                    namespace=self.namespace,
                    name=cmd.name,
                    body=cmd.content,
                    created_by="skill_manage",
                    pinned=False,
                    created_at=now,
                    updated_at=now,
                    last_used_at=now,
                    archived_at=None,
                )
                await skills.insert(conn, skill)
                decision, before = Decision.CREATED, None
            else:
                if current is None or current.archived_at is not None:
                    raise ToolInputError(f"no registered skill {cmd.name!r}; create it first")
                assert cmd.old_text is not None
                hits = current.body.count(cmd.old_text)
                if hits != 1:
                    raise ToolInputError(
                        f"old_text occurs {hits} times in skill {cmd.name!r}; it must occur "
                        "exactly once"
                    )
                body = current.body.replace(cmd.old_text, cmd.content, 1)
                if len(body) > self.cfg.writer.max_skill_chars:
                    raise ToolInputError(
                        f"the patched skill would be {len(body)} chars; the limit is "
                        f"{self.cfg.writer.max_skill_chars}"
                    )
                await skills.update_body(conn, self.namespace, cmd.name, body, now)
                skill = Skill(
                    **{**current.to_dict(), "body": body, "updated_at": now, "last_used_at": now}
                )
                decision, before = Decision.PATCHED, {"body": current.body}
            await self._audit(
                conn,
                actor=call.actor,
                action=cmd.action,
                decision=decision,
                entry_id=f"skill:{cmd.name}",
                target="skill",
                session_id=call.session_id,
                before=before,
                after={"body": skill.body, "created_by": skill.created_by},
            )

        async def project() -> None:
            await self.s.projector.skill(skill)

        verb = "created" if decision is Decision.CREATED else "patched"
        return Outcome(
            _result(decision, f"skill:{cmd.name}", f"skill {cmd.name!r} {verb}", name=cmd.name),
            [project],
        )

    # -- restore ------------------------------------------------------------------------

    async def _restore(self, message: Restore) -> Outcome:
        call = ToolCall(
            self.namespace, None, MemoryCommand("add", "memory", None, None), actor="restore"
        )
        async with self.s.db.transaction() as conn:
            entry = await entries.get(conn, self.namespace, message.entry_id)
            if entry is not None:
                return await self._restore_entry(conn, call, entry)
            fact = await topics.get(conn, self.namespace, message.entry_id)
            if fact is None:
                raise ToolInputError(
                    f"no entry or fact {message.entry_id!r} in namespace {self.namespace!r}"
                )
        return await self._restore_fact(fact)

    async def _restore_entry(
        self, conn: aiosqlite.Connection, call: ToolCall, entry: Entry
    ) -> Outcome:
        if entry.status == "live":
            raise ToolInputError(f"{entry.id} is live; there is nothing to restore")
        target = entry.target
        live = await entries.live(conn, self.namespace, target)
        successor = next((e for e in live if e.id == entry.replaced_by), None)
        twin = self._twin(live, entry.content, skip=successor.id if successor else None)
        if twin is not None:
            return await self._noop(conn, call, target, "restore", entry.content, *twin)
        change: dict[str, str | None] = (
            {successor.id: entry.rendered} if successor else {"": entry.rendered}
        )
        self._check_cap(target, live, change)
        now = self.s.now()
        if successor is not None:
            await entries.end(conn, successor.id, "replaced", now, replaced_by=entry.id)
        await entries.revive(conn, entry.id, now)
        await self._audit(
            conn,
            actor="restore",
            action="restore",
            decision=Decision.RESTORED,
            entry_id=entry.id,
            target=target,
            session_id=None,
            before={"status": entry.status, "successor": successor.id if successor else None},
            after={"content": entry.content},
        )
        return Outcome(
            _result(
                Decision.RESTORED,
                entry.id,
                f"restored {entry.id} to {FILE_NAMES[target]}"
                + (f", retiring {successor.id}" if successor else ""),
            ),
            [self._entry_projection(target)],
        )

    async def _restore_fact(self, fact: Fact) -> Outcome:
        """An earlier value comes back as the newest link of its chain (nothing is rewound)."""
        if fact.live:
            raise ToolInputError(f"{fact.id} is the live value of its chain already")
        call = ToolCall(
            self.namespace, None, TopicCommand("save", fact.topic, fact.content), actor="restore"
        )
        async with self.s.db.transaction() as conn:
            chain = await topics.chain(conn, self.namespace, fact.id)
        head = next(f for f in chain if f.live)
        return await self._supersede_with(call, head, fact.content)

    async def _supersede_with(self, call: ToolCall, head: Fact, content: str) -> Outcome:
        now = self.s.now()
        fact_id = new_id("fct")
        async with self.s.db.transaction() as conn:
            current = await topics.get(conn, self.namespace, head.id)
            if current is None or not current.live:
                raise ToolInputError(f"{head.id} changed meanwhile; try again")
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
            await topics.insert(conn, fact)
            await topics.invalidate(conn, head.id, fact.id, now)
            await self._audit(
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

        async def project() -> None:
            await self.s.projector.append_history(self.namespace, head.topic, events)

        return Outcome(
            _result(
                Decision.SUPERSEDE,
                fact.id,
                f"restored the value of an earlier fact as {fact.id}, superseding {head.id}",
                superseded=head.id,
                topic=head.topic,
            ),
            [project],
        )


__all__ = ["ENTRY_SEPARATOR", "Decision", "Writer", "error_result"]
