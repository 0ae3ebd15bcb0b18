"""L7, the skill curator: retire agent-built skills nobody uses, reversibly.

A skill is a candidate only when all four hold: ``created_by`` is ``skill_manage`` (official,
preinstalled and marketplace skills are never touched), it is not pinned, it has been idle
for ``idle_days`` (90), and its directory really exists. The review pass reports them
(``curator.jsonl``); archiving them happens when asked (``reverie curator --apply``, a
:class:`~reverie.bus.messages.Curate` message to this actor): the row is marked archived
(deregistered) and the directory moved to ``skills/.archive/<name>__<ts>/``.
``--restore NAME`` undoes both. A report-only scan lists near-duplicate and oversized skills.

The round also scores every registered skill's activity (seed 004, kept as history; see
:mod:`reverie.skills.scores`) and archives, by the same path, the candidates idle
``skill_scores.archive_days`` (180) or more — the seed's automatic archive.
"""

from __future__ import annotations

import shutil
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from reverie.actors import drafting, skill_reshape
from reverie.actors.context import Judge
from reverie.actors.stage import Stage
from reverie.bus.messages import Curate, CurateDue, Envelope, ReshapeSkills, UndoReshape
from reverie.clock import iso
from reverie.errors import NamespaceArchived, ToolInputError, quoted
from reverie.reports import (
    BloatIssue,
    CuratorArchived,
    CuratorCandidate,
    CuratorDetails,
    OverlapIssue,
    SkillIssue,
)
from reverie.results import Archived, Decision, ToolResult, refused
from reverie.rules.similarity import jaccard, word_set
from reverie.skills.drafts import Look
from reverie.skills.drafts import look as look_drafts
from reverie.skills.drafts import project as project_drafts
from reverie.skills.drafts import save as save_drafts
from reverie.stores import ledger, namespaces, skill_activity, skills
from reverie.stores.projection import Projector
from reverie.stores.records import LedgerRecord, Skill
from reverie.stores.skill_activity import idle_since
from reverie.telemetry.tracing import trace_id_hex


def skill_dir(projector: Projector, namespace: str, name: str) -> Path:
    return projector.skill_file(namespace, name).parent


def candidates(
    conn: sqlite3.Connection, projector: Projector, namespace: str, now: datetime, idle_days: float
) -> list[dict[str, Any]]:
    """The four-condition safety model, applied to the registered skills."""
    cutoff = iso(now - timedelta(days=idle_days))
    out = []
    for skill in skills.registered(conn, namespace):
        if skill.created_by != "skill_manage" or skill.pinned:
            continue
        if idle_since(skill) > cutoff or not skill_dir(projector, namespace, skill.name).is_dir():
            continue
        out.append({"name": skill.name, "idle_since": idle_since(skill)})
    return out


def scan(registered: list[Skill], overlap: float, bloat_chars: int) -> list[dict[str, Any]]:
    """Report-only: near-duplicate pairs of skills, and skills over the size budget."""
    found: list[dict[str, Any]] = []
    for i, a in enumerate(registered):
        if len(a.body) > bloat_chars:
            found.append(
                {"kind": "bloat", "name": a.name, "chars": len(a.body), "limit": bloat_chars}
            )
        for b in registered[i + 1 :]:
            score = jaccard(word_set(a.body), word_set(b.body))
            if score >= overlap:
                found.append(
                    {"kind": "overlap", "names": [a.name, b.name], "similarity": round(score, 3)}
                )
    return found


class Curator(Stage):
    name = "curator"
    section = "curator"
    handles = (CurateDue, Curate, ReshapeSkills, UndoReshape)

    def __init__(self, namespace: str, *, judge: Judge | None = None, **parts: Any) -> None:
        super().__init__(namespace, **parts)
        self.judge = judge
        """The model that writes skill drafts, when one is configured (issue 13)."""

    @property
    def enabled(self) -> bool:
        """Always on the bus: the curator's switch stops its dry run in a pass, never an
        archive or restore the host asks for (an archive must stay undoable)."""
        return True

    async def on_receive(self, envelope: Envelope) -> Any:
        message = envelope.message
        if isinstance(message, ReshapeSkills | UndoReshape):
            return await self._reshape(message)
        if not isinstance(message, Curate):
            return await super().on_receive(envelope)
        try:
            if message.restore is not None:
                return await self._restore(message.restore)
            if message.apply:
                return await self._apply()
        except ToolInputError as exc:
            return refused(str(exc))
        except NamespaceArchived as exc:  # the host's call raises it; not a failure here
            return exc
        found = await self.db.read(
            lambda conn: candidates(
                conn, self.projector, self.namespace, self.clock.now(), self.cfg.idle_days
            )
        )
        return ToolResult(
            Decision.NOOP,
            None,
            f"{len(found)} candidates (dry run)",
            candidates=tuple(found),
            archived=(),
            dry_run=True,
        )

    async def _apply(self) -> ToolResult:
        """Archive every candidate; the directories move once that committed (and a move a
        crash cut short is finished by the next apply)."""

        def archive(conn: sqlite3.Connection) -> tuple[list[dict[str, Any]], list[Any]]:
            namespaces.check_open(conn, self.namespace)
            here = self.projector, self.namespace
            return leftovers(conn, *here), apply(conn, *here, self.clock.now(), self.cfg.idle_days)

        unfinished, archived = await self.db.write(archive)
        self.project(lambda: move_archived(self.projector, self.namespace, unfinished + archived))
        return ToolResult(
            Decision.ARCHIVED if archived else Decision.NOOP,
            None,
            f"{len(archived)} skills archived",
            archived=tuple(Archived(**a) for a in archived),
            dry_run=False,
        )

    async def _restore(self, name: str) -> ToolResult:
        def back(conn: sqlite3.Connection) -> tuple[str, Skill]:
            namespaces.check_open(conn, self.namespace)
            where = restore(conn, self.namespace, name, self.now())
            skill = skills.get(conn, self.namespace, name)
            assert skill is not None
            return where, skill

        where, skill = await self.db.write(back)

        def project() -> None:
            move_back(self.projector, self.namespace, name, where)
            self.projector.write_skill(skill)

        self.project(project)
        return ToolResult(
            Decision.RESTORED,
            f"skill:{name}",
            f"skill {name!r} restored",
            name=name,
            archive_dir=where,
        )

    # -- consolidate and patch (trim) -------------------------------------------------

    async def _reshape(self, message: ReshapeSkills | UndoReshape) -> Any:
        """A consolidate / patch request, or an undo; bad input is refused, nothing written."""
        try:
            if isinstance(message, UndoReshape):
                return await self._undo(message.name, message.change)
            if message.kind not in skill_reshape.KINDS:
                raise ToolInputError(
                    f"kind must be one of {list(skill_reshape.KINDS)}, got {quoted(message.kind)}"
                )
            if message.apply:
                return await self._apply_reshape(message.kind)
        except ToolInputError as exc:
            return refused(str(exc))
        except NamespaceArchived as exc:
            return exc
        found = await self.db.read(
            lambda conn: skill_reshape.proposals(conn, self.namespace, self.config, message.kind)
        )
        return skill_reshape.Reshaped(message.kind, dry_run=True, proposals=tuple(found))

    async def _apply_reshape(self, kind: str) -> skill_reshape.Reshaped:
        """Apply the proposals as they stand when the write begins; the archived
        directories move and the changed SKILL.md files are rewritten after the commit."""
        here, config, now = self.namespace, self.config, self.clock.now()

        def write(conn: sqlite3.Connection) -> tuple[Any, list[tuple[str, str]], list[Skill]]:
            namespaces.check_open(conn, here)
            if kind == "consolidate":
                applied, archived = skill_reshape.apply_merges(conn, here, config, now)
            else:
                applied, archived = skill_reshape.apply_trims(conn, here, config, now), []
            changed = [skills.get(conn, here, p.merged_name) for p in applied]
            return applied, archived, [s for s in changed if s is not None]

        applied, archived, changed = await self.db.write(write)

        def project() -> None:
            moves = [{"name": n, "archive_dir": d} for n, d in archived]
            move_archived(self.projector, here, moves)
            for skill in changed:
                self.projector.write_skill(skill)

        self.project(project)
        return skill_reshape.Reshaped(
            kind,
            dry_run=False,
            proposals=tuple(applied),
            applied=tuple(p.merged_name for p in applied),
            archived=tuple(archived),
        )

    async def _undo(self, name: str, change: str) -> skill_reshape.Reshaped:
        """Undo a merge (originals restored, the kept skill's body back) or a trim."""

        def write(conn: sqlite3.Connection) -> tuple[Skill, list[tuple[str, str]], list[Skill]]:
            namespaces.check_open(conn, self.namespace)
            skill, restored = skill_reshape.undo(conn, self.namespace, name, change, self.now())
            back = [skills.get(conn, self.namespace, n) for n, _ in restored]
            return skill, restored, [s for s in back if s is not None]

        skill, restored, back = await self.db.write(write)

        def project() -> None:
            for original, where in restored:
                move_back(self.projector, self.namespace, original, where)
            for each in [skill, *back]:
                self.projector.write_skill(each)

        self.project(project)
        return skill_reshape.Reshaped(
            "unmerge" if change == "merge" else "untrim",
            dry_run=False,
            applied=(name,),
            restored=tuple(restored),
        )

    # -- the review pass ----------------------------------------------------------------

    def look(self, conn: sqlite3.Connection) -> tuple[Any, ...]:
        """The candidates as of now, the overlap / bloat scan of the skills, the consolidate
        and patch proposals (reported, never applied, by a pass), and what the drafting round
        reads (issue 13; None when drafts are off)."""
        now = self.clock.now()
        found = candidates(conn, self.projector, self.namespace, now, self.cfg.idle_days)
        issues = scan(
            skills.registered(conn, self.namespace),
            self.cfg.overlap_threshold,
            self.cfg.bloat_chars,
        )
        proposed = [
            p
            for kind in skill_reshape.KINDS
            for p in skill_reshape.proposals(conn, self.namespace, self.config, kind, checked=False)
        ]
        enabled = self.config.drafts.enabled
        return (
            found,
            issues,
            proposed,
            look_drafts(conn, self.namespace, now, self.config) if enabled else None,
        )

    async def run(self) -> CuratorDetails:
        """The dry run: report candidates, the overlap / bloat scan and the consolidate /
        patch proposals; score every skill and archive those idle past
        ``skill_scores.archive_days`` (see :meth:`_score`); and draft the skill gaps (issue
        13), stored with the pass's closing transaction."""
        found, issues, proposed, seen = await self.looked()
        drafted = await self._draft(seen)
        stamp = self.now()
        archived = await self._score(found)
        records = [{"ts": stamp, "action": "candidate", "dry_run": True, **c} for c in found]
        records += [{"ts": stamp, "action": "report", **i} for i in issues]
        records += [
            {"ts": stamp, "action": "proposal", "dry_run": True, **_brief(p)} for p in proposed
        ]
        records += [{"ts": stamp, "action": "archive", "dry_run": False, **a} for a in archived]
        if drafted.made or drafted.stale:
            records.append({"ts": stamp, "action": "drafts", **drafted.record()})

        def finish(conn: sqlite3.Connection) -> None:
            detail = {"candidates": [c["name"] for c in found], "issues": len(issues)}
            detail["archived"] = [a["name"] for a in archived]
            self.done(conn, {**detail, "drafts": [d.name for d in drafted.made]})
            save_drafts(conn, drafted.made, stamp)

        def landed(_: sqlite3.Connection) -> None:
            self.project(lambda: project_drafts(self.projector, drafted.made))

        await self.commit(
            finish, "curator", records, defer=True, landed=landed if drafted.made else None
        )
        return CuratorDetails(
            tuple(CuratorCandidate(c["name"], c["idle_since"]) for c in found),
            tuple(_issue(i) for i in issues),
            dry_run=True,
            archived=tuple(CuratorArchived(**a) for a in archived),
        )

    async def _score(self, found: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Score every registered skill and keep the scores (history). When some of the
        dry run's candidates are idle ``archive_days`` or more, archive those now (the
        path ``--apply`` takes: reversible, audited) and move their directories; else the
        scoring joins the pass's closing transaction."""
        settings = self.config.skill_scores
        now = self.clock.now()
        cutoff = iso(now - timedelta(days=settings.archive_days))
        due = settings.auto_archive and any(c["idle_since"] <= cutoff for c in found)

        def score(conn: sqlite3.Connection) -> None:
            skill_activity.score_round(conn, self.namespace, now)

        if not due:
            await self.commit(score, "curator", [], defer=True)
            return []

        def retire(conn: sqlite3.Connection) -> list[dict[str, Any]]:
            score(conn)
            return apply(conn, self.projector, self.namespace, now, settings.archive_days)

        archived = await self.db.write(retire)
        self.project(lambda: move_archived(self.projector, self.namespace, archived))
        return archived

    async def _draft(self, seen: Look | None) -> drafting.Round:
        """Issue 13's drafting round: skill gaps drafted, stale skills reported."""
        if seen is None:
            return drafting.Round([], [])
        return await drafting.round_(
            self.namespace, seen, clock=self.clock, config=self.config, judge=self.judge
        )


def _brief(proposal: Any) -> dict[str, Any]:
    """A proposal as curator.jsonl logs it: what would change, not the whole body."""
    return {
        "kind": proposal.kind,
        "names": list(proposal.names),
        "merged_name": proposal.merged_name,
        "chars_before": proposal.chars_before,
        "chars_after": proposal.chars_after,
        "dropped": len(proposal.dropped),
        "blocked": proposal.blocked,
    }


def _issue(found: dict[str, Any]) -> SkillIssue:
    """A finding of :func:`scan`, typed."""
    if found["kind"] == "bloat":
        return BloatIssue(found["name"], found["chars"], found["limit"])
    first, second = found["names"]
    return OverlapIssue((first, second), found["similarity"])


def apply(
    conn: sqlite3.Connection, projector: Projector, namespace: str, now: datetime, idle_days: float
) -> list[dict[str, Any]]:
    """Archive every candidate (inside the curator's transaction); the directories are
    moved by :func:`move_archived` after the commit."""
    stamp = now.strftime("%Y%m%dT%H%M%SZ")
    archived = []
    for found in candidates(conn, projector, namespace, now, idle_days):
        name = found["name"]
        target = f"skills/.archive/{name}__{stamp}"
        skills.archive(conn, namespace, name, iso(now), target)
        _audit(
            conn,
            iso(now),
            namespace,
            name,
            "archive",
            "ARCHIVED",
            {"archive_dir": target, "idle_since": found["idle_since"]},
        )
        archived.append({"name": name, "archive_dir": target, "idle_since": found["idle_since"]})
    return archived


def leftovers(
    conn: sqlite3.Connection, projector: Projector, namespace: str
) -> list[dict[str, Any]]:
    """Archived skills whose directory is still in place (a crash between the commit and
    the move): the next ``--apply`` finishes the move."""
    return [
        {"name": s.name, "archive_dir": where}
        for s in skills.every(conn, namespace)
        if s.archived_at is not None
        and (where := skills.archive_dir(conn, namespace, s.name)) is not None
        and skill_dir(projector, namespace, s.name).is_dir()
    ]


def move_archived(projector: Projector, namespace: str, archived: list[dict[str, Any]]) -> None:
    base = projector.namespace_dir(namespace)
    for item in archived:
        source = skill_dir(projector, namespace, item["name"])
        target = base / item["archive_dir"]
        if source.is_dir() and not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(source), str(target))


def restore(conn: sqlite3.Connection, namespace: str, name: str, now: str) -> str:
    """Register an archived skill again (inside the curator's transaction); returns where
    its directory was archived, for :func:`move_back`."""
    where = skills.archive_dir(conn, namespace, name)
    if where is None:
        raise ToolInputError(f"no archived skill {quoted(name)} in namespace {namespace!r}")
    skills.unarchive(conn, namespace, name, now)
    _audit(conn, now, namespace, name, "restore", "RESTORED", {"archive_dir": where})
    return where


def move_back(projector: Projector, namespace: str, name: str, where: str) -> None:
    """Move the directory back; the SKILL.md is rewritten from the database either way."""
    source = projector.namespace_dir(namespace) / where
    target = skill_dir(projector, namespace, name)
    if source.is_dir() and not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(source), str(target))


def _audit(
    conn: sqlite3.Connection,
    now: str,
    namespace: str,
    name: str,
    action: str,
    decision: str,
    detail: dict[str, Any],
) -> None:
    ledger.append(
        conn,
        LedgerRecord(
            ts=now,
            namespace=namespace,
            actor="curator",
            action=action,
            decision=decision,
            entry_id=f"skill:{name}",
            target="skill",
            trace_id=trace_id_hex(),
            detail=detail,
        ),
    )
