"""L1, the writer: every in-session write of one namespace, one at a time.

The bus gives each namespace one writer mailbox, so writes of a namespace are serialised
in-process; each write is one ``BEGIN IMMEDIATE`` transaction that re-reads what it checks
(duplicates, caps, topic count), so several processes sharing a home stay correct too.
Projections are rewritten after the commit; a failure there never un-acknowledges a write.
"""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from typing import Any

import anyio
from opentelemetry import trace

from reverie.actors.memory_writes import MemoryWrites
from reverie.actors.skill_writes import SkillWrites
from reverie.actors.topic_writes import TopicWrites
from reverie.actors.write_base import Outcome, Projection
from reverie.bus.messages import (
    CallLookup,
    Envelope,
    Message,
    PinSkill,
    PromotedFactChanged,
    Restore,
    SkillUsed,
    ToolCall,
    TurnEnded,
    TurnRecord,
)
from reverie.commands import MemoryCommand, TopicCommand
from reverie.errors import NamespaceArchived, StoreBusy, StoreError, ToolInputError, quoted
from reverie.results import Decision, ToolResult, refused
from reverie.rules.secrets import redact
from reverie.stores import calls, entries, episodes, namespaces, review_state, topics
from reverie.stores.records import Episode, Fact
from reverie.stores.review_state import promoted_key


class Writer(MemoryWrites, TopicWrites, SkillWrites):
    """Serialised writes of one namespace: the memory, topic and skill_manage tools,
    episode recording and restore."""

    name = "writer"
    handles = (ToolCall, TurnRecord, Restore, SkillUsed, PinSkill, CallLookup)

    @property
    def enabled(self) -> bool:
        return self.cfg.writer.enabled

    @property
    def budget_s(self) -> float:
        return self.cfg.writer.timeout_s

    async def on_receive(self, envelope: Envelope) -> Any:
        self._follow: list[Message] = []  # what this write asks of other actors, once committed
        try:
            return await self._receive(envelope)
        finally:
            for message in self._follow:  # an ask of a write rolled back finds no row
                # never waits on the promoter: a full mailbox, a disabled promoter or a
                # closing runtime leave the ask to the row, run at the promoter's next turn
                self.bus.offer(message, cause=envelope)

    async def _receive(self, envelope: Envelope) -> Any:
        try:
            return await self._answer(envelope)
        except NamespaceArchived as exc:  # a refusal, not the actor's failure (never logged so)
            if isinstance(envelope.message, ToolCall):  # transient: a flush retries once restored
                return refused(str(exc), transient=True)
            return exc  # the host's call raises it

    async def _answer(self, envelope: Envelope) -> Any:
        message = envelope.message
        if isinstance(message, TurnRecord):
            return await self._turn(message, envelope)
        if isinstance(message, CallLookup):
            return await self._lookup(message.call_id)
        try:
            if isinstance(message, ToolCall):
                outcome = await self._tool(message)
            elif isinstance(message, Restore):
                outcome = await self._restore(message)
            elif isinstance(message, SkillUsed | PinSkill):
                outcome = await self._skill_admin(message)
            else:
                raise TypeError(f"writer cannot handle {type(message).__name__}")
        except ToolInputError as exc:
            return refused(str(exc))
        except StoreBusy as exc:  # "transient": the same call may land later (the flush waits)
            return refused(f"{exc}; nothing was written, retry the call", transient=True)
        except StoreError as exc:
            return refused(f"{exc}; nothing was written", transient=True)
        span = trace.get_current_span()
        span.set_attribute("reverie.decision", outcome.result.decision.value)
        if outcome.result.entry_id:
            span.set_attribute("reverie.entry_id", outcome.result.entry_id)
        return outcome.result

    # -- episodes -----------------------------------------------------------------------

    async def _turn(self, message: TurnRecord, envelope: Envelope) -> Episode:
        # the episode log keeps the turn, never a credential said in it (D5)
        user, assistant = message.user, message.assistant
        message = replace(
            message,
            user=user and await _redacted(user),
            assistant=assistant and await _redacted(assistant),
        )
        episode = await self.db.write(lambda conn: self._turn_txn(conn, message))
        await self.bus.tell(
            TurnEnded(self.namespace, message.session_id, episode.id, episode.turn), cause=envelope
        )
        return episode

    def _turn_txn(self, conn: sqlite3.Connection, message: TurnRecord) -> Episode:
        namespaces.check_open(conn, self.namespace)
        episode = episodes.record(
            conn,
            self.namespace,
            message.session_id,
            message.user,
            message.assistant,
            self.now(),
        )
        self._audit(
            conn,
            actor="session",
            action="turn",
            decision=Decision.ADD,
            entry_id=f"ep-{episode.id}",
            target="episode",
            session_id=message.session_id,
            after={"turn": episode.turn, "chars": len(episode.text)},
        )
        return episode

    # -- tools --------------------------------------------------------------------------

    async def _tool(self, call: ToolCall) -> Outcome:
        command = call.command
        self._named = call if call.call_id is not None else None  # its write is answered once
        try:
            if isinstance(command, MemoryCommand):
                return await self._memory(command, call)
            if isinstance(command, TopicCommand):
                return await self._topic_save(command, call)
            return await self._skill(command, call)
        finally:
            self._named = None

    async def _lookup(self, call_id: str) -> ToolResult | None:
        done = await self.db.read(lambda conn: calls.get(conn, self.namespace, call_id))
        return None if done is None else ToolResult.from_dict(done.result)

    # -- keeping a promoted rule current: the promoter's, asked through an outbox ---------

    def _after_supersede(self, conn: sqlite3.Connection, old: Fact, new: Fact) -> list[Projection]:
        """A correction of a fact that was promoted into MEMORY.md asks the promoter to
        refresh that rule: the ask is a row of this very transaction, and the message that
        wakes the promoter follows the commit (so nothing is lost between them)."""
        return self._ask_refresh(conn, old, new, restored=False)

    def _after_restore(
        self, conn: sqlite3.Connection, undone: Fact, back: Fact
    ) -> list[Projection]:
        """Restoring an earlier value asks for the refresh as a correction does; a rule the
        promoter cannot rewrite is then retired (it states the value just undone)."""
        return self._ask_refresh(conn, undone, back, restored=True)

    def _ask_refresh(
        self, conn: sqlite3.Connection, old: Fact, new: Fact, *, restored: bool
    ) -> list[Projection]:
        entry_id = review_state.get(conn, self.namespace, promoted_key(old.chain_id))
        entry = entries.get(conn, self.namespace, entry_id) if entry_id else None
        if entry is None or entry.status != "live":
            return []
        ask = {"fact_id": new.id, "old_id": old.id, "restored": restored}
        review_state.ask_refresh(conn, self.namespace, old.chain_id, ask, self.now())
        self._follow.append(PromotedFactChanged(self.namespace, old.chain_id))
        return []

    # -- restore ------------------------------------------------------------------------

    async def _restore(self, message: Restore) -> Outcome:
        return await self._write(lambda conn: self._restore_txn(conn, message))

    def _restore_txn(self, conn: sqlite3.Connection, message: Restore) -> Outcome:
        call = ToolCall(
            self.namespace, None, MemoryCommand("add", "memory", None, None), actor="restore"
        )
        entry = entries.get(conn, self.namespace, message.entry_id)
        if entry is not None:
            return self._restore_entry(conn, call, entry)
        fact = topics.get(conn, self.namespace, message.entry_id)
        if fact is None:
            raise ToolInputError(
                f"no entry or fact {quoted(message.entry_id)} in namespace {self.namespace!r}"
            )
        return self._restore_fact(conn, fact)


BIG_TURN = 16_000  # chars: scanning more (about 1 us a char) runs off the event loop


async def _redacted(text: str) -> str:
    """The text with each secret replaced by its marker; a long text is scanned in a worker
    thread, so the host's event loop is not held for the scan."""
    if len(text) <= BIG_TURN:
        return redact(text)
    return await anyio.to_thread.run_sync(redact, text)


__all__ = ["Writer", "promoted_key"]
