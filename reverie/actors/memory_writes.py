"""The memory tool: entries of MEMORY.md, USER.md, SOUL.md, user_settings and
agent_profile, with caps that refuse and explain, near-duplicates, and restore."""

from __future__ import annotations

import sqlite3
from typing import Any

from rapidfuzz import fuzz, process

from reverie.actors.context import new_id
from reverie.actors.write_base import Outcome, Projection, WriteBase, refuse_secret
from reverie.bus.messages import ToolCall
from reverie.commands import MemoryCommand
from reverie.errors import ToolInputError
from reverie.results import Decision, ToolResult, Usage
from reverie.rules.similarity import Match, Tier, near_duplicate, normalise
from reverie.stores import entries, learning
from reverie.stores.projection import FILES
from reverie.stores.records import Entry
from reverie.tools import KEYED_TARGETS, keyed


def _exact(new: str, old: str, threshold: float) -> Match | None:
    """Only the exact tier of :func:`near_duplicate` (``threshold`` unused)."""
    return Match(Tier.EXACT, 1.0) if normalise(new) == normalise(old) else None


def _label(target: str) -> str:
    """How a target is named to the agent: its file, or the key-value store's name."""
    return FILES.get(target, target)


class MemoryWrites(WriteBase):
    """add / replace / remove / reinforce, and restoring an ended entry."""

    def _cap(self, target: str) -> int:
        return int(getattr(self.cfg.caps, target))

    def _usage(self, target: str, live: list[Entry]) -> Usage:
        return Usage(target, len(entries.render(live)), self._cap(target))

    def _check_cap(self, target: str, live: list[Entry], change: dict[str, str | None]) -> None:
        cap = self._cap(target)
        after = entries.usage_after(live, change)
        if after <= cap:
            return
        used = len(entries.render(live))
        raise ToolInputError(
            f"{_label(target)} is full: {used}/{cap} chars used ({used * 100 // cap}%), "
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
            raise ToolInputError(f"no live {_label(target)} entry contains {old_text[:80]!r}{hint}")
        listing = "; ".join(f"{e.id}: {e.content[:50]!r}" for e in found[:5])
        raise ToolInputError(
            f"{old_text[:80]!r} matches {len(found)} {_label(target)} entries ({listing});"
            " quote more of the one you mean"
        )

    def _twin(
        self, live: list[Entry], content: str, skip: str | None = None, *, exact: bool = False
    ) -> tuple[Entry, dict[str, Any]] | None:
        same = _exact if exact else near_duplicate
        for entry in live:
            if entry.id == skip:
                continue
            match = same(content, entry.content, self.cfg.writer.jaccard_threshold)
            if match is not None:
                return entry, {"tier": match.tier.value, "similarity": round(match.similarity, 3)}
        return None

    def _new_entry(self, target: str, content: str, session_id: str | None, actor: str) -> Entry:
        now = self.now()
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
        def project(conn: sqlite3.Connection) -> None:
            self.projector.write_entries(conn, self.namespace, target)

        return project

    async def _memory(self, cmd: MemoryCommand, call: ToolCall) -> Outcome:
        refuse_secret("content", cmd.content)
        return await self._write(lambda conn: self._memory_txn(conn, cmd, call))

    def _memory_txn(self, conn: sqlite3.Connection, cmd: MemoryCommand, call: ToolCall) -> Outcome:
        target, session = cmd.target, call.session_id
        live = entries.live(conn, self.namespace, target)
        if cmd.action == "add":
            assert cmd.content is not None
            fresh = self._new_entry(target, cmd.content, session, call.actor)
            return self._add_entry(conn, call, live, fresh, dedupe=cmd.dedupe)
        assert cmd.old_text is not None
        entry = self._match(live, cmd.old_text, target)
        match cmd.action:
            case "replace":
                assert cmd.content is not None
                fresh = self._new_entry(target, cmd.content, session, call.actor)
                return self._replace(conn, call, live, entry, fresh, dedupe=cmd.dedupe)
            case "remove":
                return self._remove_entry(conn, call, live, entry)
            case _:
                return self._reinforce_entry(conn, call, live, entry)

    def _add_entry(
        self,
        conn: sqlite3.Connection,
        call: ToolCall,
        live: list[Entry],
        fresh: Entry,
        *,
        dedupe: bool = True,
    ) -> Outcome:
        """A new entry, unless its key already has a value or a live entry says the same."""
        target, session = fresh.target, call.session_id
        same_key = [e for e in live if fresh.key is not None and e.key == fresh.key]
        if same_key:  # a keyed setting changes value in place of its old one
            return self._replace(conn, call, live, same_key[0], fresh)
        twin = self._twin(live, fresh.content, exact=not dedupe)
        if twin is not None:
            return self._noop(conn, call, target, "add", fresh.content, *twin)
        self._check_cap(target, live, {"": fresh.rendered})
        entries.insert(conn, fresh)
        self._audit(
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
            ToolResult(Decision.ADD, fresh.id, f"added to {_label(target)}", usage=usage),
            [self._entry_projection(target)],
        )

    def _remove_entry(
        self, conn: sqlite3.Connection, call: ToolCall, live: list[Entry], entry: Entry
    ) -> Outcome:
        """Ends an entry; it stays in the ledger, restorable."""
        target, session = entry.target, call.session_id
        now = self.now()
        entries.end(conn, entry.id, "removed", now)
        self._audit(
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
            ToolResult(
                Decision.REMOVED,
                entry.id,
                f"removed from {_label(target)}; it stays in the "
                f"ledger (restore with `reverie restore {entry.id}`)",
                usage=self._usage(target, rest),
            ),
            [self._entry_projection(target)],
        )

    def _reinforce_entry(
        self, conn: sqlite3.Connection, call: ToolCall, live: list[Entry], entry: Entry
    ) -> Outcome:
        """Counts one more confirmation of an entry, if its longer mark still fits the cap."""
        target, session = entry.target, call.session_id
        count = entry.reinforce + 1
        bumped = Entry(**{**entry.to_dict(), "reinforce": count})
        self._check_cap(target, live, {entry.id: bumped.rendered})
        entries.set_reinforce(conn, entry.id, count, self.now())
        self._audit(
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
            ToolResult(
                Decision.REINFORCED,
                entry.id,
                f"reinforced (×{count})",
                reinforce=count,
                usage=usage,
            ),
            [self._entry_projection(target)],
        )

    def _replace(
        self,
        conn: sqlite3.Connection,
        call: ToolCall,
        live: list[Entry],
        old: Entry,
        fresh: Entry,
        *,
        dedupe: bool = True,
    ) -> Outcome:
        target = old.target
        twin = self._twin(live, fresh.content, skip=old.id, exact=not dedupe)
        if twin is not None:
            return self._noop(conn, call, target, "replace", fresh.content, *twin)
        same = near_duplicate if dedupe else _exact
        if same(fresh.content, old.content, 1.0) is not None:
            return self._noop(
                conn,
                call,
                target,
                "replace",
                fresh.content,
                old,
                {"tier": "exact", "similarity": 1.0},
            )
        self._check_cap(target, live, {old.id: fresh.rendered})
        entries.end(conn, old.id, "replaced", fresh.created_at, replaced_by=fresh.id)
        entries.insert(conn, fresh)
        self._audit(
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
            ToolResult(
                Decision.REPLACED,
                fresh.id,
                f"replaced {old.id} in {_label(target)}; the old text stays "
                f"in the ledger (restore with `reverie restore {old.id}`)",
                replaced=old.id,
                usage=usage,
            ),
            [self._entry_projection(target)],
        )

    def _restore_entry(self, conn: sqlite3.Connection, call: ToolCall, entry: Entry) -> Outcome:
        if entry.status == "live":
            raise ToolInputError(f"{entry.id} is live; there is nothing to restore")
        target = entry.target
        live = entries.live(conn, self.namespace, target)
        successor = next((e for e in live if e.id == entry.replaced_by), None)
        twin = self._twin(live, entry.content, skip=successor.id if successor else None)
        if twin is not None:
            return self._noop(conn, call, target, "restore", entry.content, *twin)
        change: dict[str, str | None] = (
            {successor.id: entry.rendered} if successor else {"": entry.rendered}
        )
        self._check_cap(target, live, change)
        now = self.now()
        if successor is not None:
            entries.end(conn, successor.id, "replaced", now, replaced_by=entry.id)
        entries.revive(conn, entry.id, now)
        # seed 003: brought back is referenced again (a COLD record is HOT once more)
        learning.touch(conn, self.namespace, [(entry.id, "restored", now)], self.cfg.records)
        self._audit(
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
            ToolResult(
                Decision.RESTORED,
                entry.id,
                f"restored {entry.id} to {_label(target)}"
                + (f", retiring {successor.id}" if successor else ""),
            ),
            [self._entry_projection(target)],
        )
