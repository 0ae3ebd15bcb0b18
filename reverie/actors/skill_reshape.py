"""The curator's consolidate and patch, inside its transactions: proposals from the stored
skills (:mod:`reverie.skills.consolidate` makes them), applying them, and undoing them.

Only agent-made skills are touched: ``created_by`` ``skill_manage``, unpinned, registered.
A merge keeps the name of its first member (the most used): that row is patched in place
to the merged body (a name is unique over registered and archived skills, so the skill
cannot be archived and created again under it), its old body in the ledger row; every
other member is archived the curator's reversible way. Undo reads the ledger row back."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from reverie.clock import iso
from reverie.config import Config
from reverie.errors import ToolInputError, quoted
from reverie.rules.secrets import secret_kind
from reverie.skills.consolidate import Member, Proposal, groups, merge_proposal, trim_proposal
from reverie.stores import ledger, skills
from reverie.stores.db import fetchone
from reverie.stores.records import LedgerRecord, Skill
from reverie.telemetry.tracing import trace_id_hex
from reverie.tools import parse_call

KINDS = ("consolidate", "patch")
UNDO = {"merge": "unmerge", "trim": "untrim"}
"""The ledger action a change is written as, and the one its undo is written as."""


@dataclass(frozen=True, slots=True)
class Reshaped:
    """The answer to a consolidate / patch request or an undo: the proposals (a dry run
    applies none), the skills changed, the skills archived (name → archive dir) and the
    skills brought back."""

    kind: str
    dry_run: bool
    proposals: tuple[Proposal, ...] = ()
    applied: tuple[str, ...] = ()
    archived: tuple[tuple[str, str], ...] = ()
    restored: tuple[tuple[str, str], ...] = ()

    @property
    def decision(self) -> str:
        if self.kind in UNDO.values():
            return "RESTORED"
        return "PATCHED" if self.applied else "NOOP"

    def to_dict(self) -> dict[str, Any]:
        return {
            "decision": self.decision,
            "kind": self.kind,
            "dry_run": self.dry_run,
            "proposals": [p.to_dict() for p in self.proposals],
            "applied": list(self.applied),
            "archived": [{"name": n, "archive_dir": d} for n, d in self.archived],
            "restored": [{"name": n, "archive_dir": d} for n, d in self.restored],
        }


def agent_made(conn: sqlite3.Connection, namespace: str) -> list[Skill]:
    """The skills a proposal may touch: registered, made by skill_manage, unpinned."""
    return [
        s
        for s in skills.registered(conn, namespace)
        if s.created_by == "skill_manage" and not s.pinned
    ]


def use_count(conn: sqlite3.Connection, namespace: str, name: str) -> int:
    """How often the host said the agent used the skill (its ledger's ``use`` rows)."""
    row = fetchone(
        conn,
        "SELECT COUNT(*) FROM ledger WHERE entry_id = ? AND namespace = ? AND action = 'use'",
        (f"skill:{name}", namespace),
    )
    return int(row[0]) if row else 0


def proposals(
    conn: sqlite3.Connection, namespace: str, config: Config, kind: str, *, checked: bool = True
) -> list[Proposal]:
    """The proposals of one kind as the skills stand. ``checked``: each body also passes
    skill_manage create's checks (a failing one is blocked) — what a host's dry run and
    every apply do; the review pass's report skips them (the secret scan is most of the
    cost, and a rules-built body holds only lines of skills that passed it)."""
    found = agent_made(conn, namespace)
    cfg, near = config.curator, config.curator.merge_near_duplicate
    made: list[Proposal] = []
    if kind == "consolidate":
        plain = [Member(s.name, s.body, 0, s.created_at) for s in found]
        for group in groups(plain, cfg.overlap_threshold):
            counted = [
                Member(m.name, m.body, use_count(conn, namespace, m.name), m.created_at)
                for m in group
            ]
            made.append(merge_proposal(counted, near, config.writer.max_skill_chars))
    else:
        for s in found:
            trimmed = trim_proposal(Member(s.name, s.body, 0, s.created_at), near, cfg.bloat_chars)
            if trimmed is not None:
                made.append(trimmed)
    return [_checked(p, config) for p in made] if checked else made


def _checked(proposal: Proposal, config: Config) -> Proposal:
    """The checks skill_manage's create makes (name, size, framing, no front matter, no
    credential), on the body a proposal would write; a failing one is blocked, with why."""
    if proposal.blocked:
        return proposal
    blocked = None
    try:
        if proposal.kind == "consolidate":
            args = {"action": "create", "name": proposal.merged_name, "content": proposal.body}
            parse_call("skill_manage", args, config.writer)
        found = secret_kind(proposal.body)
        if found is not None:
            blocked = f"the body holds what looks like a secret ({found})"
    except ToolInputError as exc:
        blocked = str(exc)
    if blocked is None:
        return proposal
    return replace(proposal, blocked=blocked)


def apply_merges(
    conn: sqlite3.Connection, namespace: str, config: Config, now: datetime
) -> tuple[list[Proposal], list[tuple[str, str]]]:
    """Apply every consolidate proposal that is not blocked: the first member patched to
    the merged body, the others archived. Returns what was applied, and the archived
    (name, archive dir) pairs whose directories move after the commit."""
    stamp, when = now.strftime("%Y%m%dT%H%M%SZ"), iso(now)
    applied, archived = [], []
    for proposal in proposals(conn, namespace, config, "consolidate"):
        if proposal.blocked:
            continue
        kept = proposal.merged_name
        moved = {}
        for name in proposal.names[1:]:
            target = f"skills/.archive/{name}__{stamp}"
            skills.archive(conn, namespace, name, when, target)
            audit(
                conn,
                when,
                namespace,
                name,
                "archive",
                "ARCHIVED",
                {"archive_dir": target, "merged_into": kept},
            )
            moved[name] = target
        before = skills.get(conn, namespace, kept)
        assert before is not None
        skills.update_body(conn, namespace, kept, proposal.body, when)
        detail = {
            "originals": list(proposal.names),
            "archived": moved,
            "dropped": [_dropped(d) for d in proposal.dropped],
            "why": proposal.why,
        }
        audit(
            conn,
            when,
            namespace,
            kept,
            "merge",
            "PATCHED",
            detail,
            before={"body": before.body},
            after={"body": proposal.body, "created_by": "skill_manage"},
        )
        applied.append(proposal)
        archived += list(moved.items())
    return applied, archived


def _dropped(d: Any) -> dict[str, Any]:
    return {"source": d.source, "section": d.section, "text": d.text, "reason": d.reason}


def apply_trims(
    conn: sqlite3.Connection, namespace: str, config: Config, now: datetime
) -> list[Proposal]:
    """Apply every patch proposal: the body replaced, the old one in the ledger row."""
    when = iso(now)
    applied = []
    for proposal in proposals(conn, namespace, config, "patch"):
        if proposal.blocked:
            continue
        name = proposal.merged_name
        before = skills.get(conn, namespace, name)
        assert before is not None
        skills.update_body(conn, namespace, name, proposal.body, when)
        detail = {
            "dropped": [_dropped(d) for d in proposal.dropped],
            "why": proposal.why,
            "chars_before": proposal.chars_before,
            "chars_after": proposal.chars_after,
        }
        audit(
            conn,
            when,
            namespace,
            name,
            "trim",
            "PATCHED",
            detail,
            before={"body": before.body},
            after={"body": proposal.body},
        )
        applied.append(proposal)
    return applied


def last_change(conn: sqlite3.Connection, namespace: str, name: str, change: str) -> LedgerRecord:
    """The ledger row of the skill's latest ``merge`` / ``trim`` that no undo undid (undo
    rows name the row they undid, so undoing twice walks back one change at a time)."""
    rows = [
        r
        for r in ledger.read(conn, namespace, entry_id=f"skill:{name}")
        if r.actor == "curator" and r.action in (change, UNDO[change])
    ]
    undone = {r.detail.get("undoes") for r in rows if r.action == UNDO[change]}
    left = [r for r in rows if r.action == change and r.seq not in undone]
    if not left:
        raise ToolInputError(f"skill {quoted(name)} has no {change} to undo")
    return left[-1]


def registered(conn: sqlite3.Connection, namespace: str, name: str) -> Skill:
    current = skills.get(conn, namespace, name)
    if current is None or current.archived_at is not None:
        raise ToolInputError(f"no registered skill {quoted(name)} in namespace {namespace!r}")
    return current


def undo(
    conn: sqlite3.Connection, namespace: str, name: str, change: str, now: str
) -> tuple[Skill, list[tuple[str, str]]]:
    """Undo the skill's last merge or trim: its body back from the ledger row (its
    current body goes in the undo's row) and, for a merge, the other originals restored
    from the archive. Returns the skill as it is now and the restored (name, dir) pairs."""
    if change not in UNDO:
        raise ToolInputError(f"change must be one of {sorted(UNDO)}, got {quoted(change)}")
    row = last_change(conn, namespace, name, change)
    current = registered(conn, namespace, name)
    restored = []
    for original, where in (row.detail.get("archived") or {}).items():
        if skills.archive_dir(conn, namespace, original) != where:
            continue  # restored by hand since, or archived again: left as it is
        skills.unarchive(conn, namespace, original, now)
        audit(conn, now, namespace, original, "restore", "RESTORED", {"archive_dir": where})
        restored.append((original, where))
    body = row.before["body"] if isinstance(row.before, dict) else current.body
    skills.update_body(conn, namespace, name, body, now)
    detail = {"undoes": row.seq, "restored": [n for n, _ in restored]}
    audit(
        conn,
        now,
        namespace,
        name,
        UNDO[change],
        "RESTORED",
        detail,
        before={"body": current.body},
        after={"body": body},
    )
    back = skills.get(conn, namespace, name)
    assert back is not None
    return back, restored


def audit(
    conn: sqlite3.Connection,
    now: str,
    namespace: str,
    name: str,
    action: str,
    decision: str,
    detail: dict[str, Any],
    *,
    before: Any = None,
    after: Any = None,
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
            before=before,
            after=after,
            detail=detail,
        ),
    )
