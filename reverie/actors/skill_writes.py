"""The skill_manage tool: create and patch skills marked created_by: skill_manage."""

from __future__ import annotations

import sqlite3
from typing import Any

from reverie.actors.write_base import Outcome, WriteBase, refuse_secret
from reverie.bus.messages import PinSkill, SkillUsed, ToolCall
from reverie.commands import SkillCommand
from reverie.errors import ToolInputError, quoted
from reverie.results import Decision, ToolResult
from reverie.stores import skill_activity, skills
from reverie.stores.records import Skill


class SkillWrites(WriteBase):
    """Skill create and patch."""

    async def _skill(self, cmd: SkillCommand, call: ToolCall) -> Outcome:
        refuse_secret("content", cmd.content)
        return await self._write(lambda conn: self._skill_txn(conn, cmd, call))

    def _skill_txn(self, conn: sqlite3.Connection, cmd: SkillCommand, call: ToolCall) -> Outcome:
        now = self.now()
        current = skills.get(conn, self.namespace, cmd.name)
        before: dict[str, Any] | None
        if cmd.action == "create":
            skill = self._create_skill(conn, cmd, current, now)
            decision, before = Decision.CREATED, None
        else:
            skill = self._patch_skill(conn, cmd, current, now)
            assert current is not None
            decision, before = Decision.PATCHED, {"body": current.body}
        self._audit(
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

        def project(_: sqlite3.Connection) -> None:
            self.projector.write_skill(skill)

        verb = "created" if decision is Decision.CREATED else "patched"
        return Outcome(
            ToolResult(decision, f"skill:{cmd.name}", f"skill {cmd.name!r} {verb}", name=cmd.name),
            [project],
        )

    def _create_skill(
        self, conn: sqlite3.Connection, cmd: SkillCommand, current: Skill | None, now: str
    ) -> Skill:
        """A new skill under a name no skill, registered or archived, has."""
        if current is not None:
            state = "archived" if current.archived_at else "registered"
            raise ToolInputError(
                f"skill {cmd.name!r} already exists ({state}); use action 'patch' to change it"
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
        skills.insert(conn, skill)
        return skill

    def _patch_skill(
        self, conn: sqlite3.Connection, cmd: SkillCommand, current: Skill | None, now: str
    ) -> Skill:
        """Replaces the one occurrence of old_text in a registered skill, within its limit."""
        if current is None or current.archived_at is not None:
            raise ToolInputError(f"no registered skill {cmd.name!r}; create it first")
        assert cmd.old_text is not None
        hits = current.body.count(cmd.old_text)
        if hits != 1:
            raise ToolInputError(
                f"old_text occurs {hits} times in skill {cmd.name!r}; it must occur exactly once"
            )
        body = current.body.replace(cmd.old_text, cmd.content, 1)
        if len(body) > self.cfg.writer.max_skill_chars:
            raise ToolInputError(
                f"the patched skill would be {len(body)} chars; the limit is "
                f"{self.cfg.writer.max_skill_chars}"
            )
        skills.update_body(conn, self.namespace, cmd.name, body, now)
        return Skill(**{**current.to_dict(), "body": body, "updated_at": now, "last_used_at": now})

    # -- use, pin, curate ---------------------------------------------------------------

    async def _skill_admin(self, message: SkillUsed | PinSkill) -> Outcome:
        return await self._write(lambda conn: self._skill_flag_txn(conn, message))

    def _skill_flag_txn(self, conn: sqlite3.Connection, message: SkillUsed | PinSkill) -> Outcome:
        current = skills.get(conn, self.namespace, message.name)
        if current is None or current.archived_at is not None:
            raise ToolInputError(f"no registered skill {quoted(message.name)}")
        now = self.now()
        if isinstance(message, SkillUsed):
            skills.mark_used(conn, self.namespace, message.name, now)
            skill_activity.record_use(
                conn, self.namespace, message.name, now, message.outcome, message.session_id
            )
            detail = {"last_used_at": now, "outcome": message.outcome}
            action, session = "use", message.session_id
        else:
            skills.set_pinned(conn, self.namespace, message.name, message.pinned)
            action, detail, session = ("pin" if message.pinned else "unpin"), {}, None
        self._audit(
            conn,
            actor="session" if isinstance(message, SkillUsed) else "cli",
            action=action,
            decision=Decision.PATCHED,
            entry_id=f"skill:{message.name}",
            target="skill",
            session_id=session,
            detail=detail,
        )
        return Outcome(
            ToolResult(
                Decision.PATCHED,
                f"skill:{message.name}",
                f"skill {message.name!r}: {action}",
                name=message.name,
            )
        )
