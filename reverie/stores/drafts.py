"""Skill drafts: gaps no skill covers, each a row (draft, accepted or rejected) that the
``skills/.drafts/<name>/SKILL.md`` file projects while it waits for a person."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import asdict, dataclass
from typing import Any, Final

from reverie.stores.db import fetchall, fetchone

STATES: Final = ("draft", "accepted", "rejected")

_COLUMNS: Final = (
    "namespace, name, gap_key, kind, state, description, triggers, body, evidence, sessions,"
    " score, written_by, created_at, updated_at"
)


@dataclass(frozen=True, slots=True)
class SkillDraft:
    """A drafted skill and the gap it answers. ``gap_key``: the gap's core words (sorted,
    space-joined), so a rejected gap is known again however it is named; ``evidence``: the
    episode ids that revealed it; ``written_by``: ``rules`` or the model's name."""

    namespace: str
    name: str
    gap_key: str
    kind: str
    state: str
    description: str
    triggers: tuple[str, ...]
    body: str
    evidence: tuple[int, ...]
    sessions: int
    score: float
    written_by: str
    created_at: str
    updated_at: str

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["triggers"], out["evidence"] = list(self.triggers), list(self.evidence)
        return out


def _draft(row: sqlite3.Row) -> SkillDraft:
    values = [row[i] for i in range(14)]
    values[6] = tuple(json.loads(values[6]))
    values[8] = tuple(json.loads(values[8]))
    return SkillDraft(*values)


def every(conn: sqlite3.Connection, namespace: str, state: str | None = None) -> list[SkillDraft]:
    """The namespace's drafts (of one state), best ranked first."""
    sql = f"SELECT {_COLUMNS} FROM skill_drafts WHERE namespace = ?"
    params: tuple[str, ...] = (namespace,)
    if state is not None:
        sql += " AND state = ?"
        params += (state,)
    return [_draft(r) for r in fetchall(conn, sql + " ORDER BY score DESC, name", params)]


def get(conn: sqlite3.Connection, namespace: str, name: str) -> SkillDraft | None:
    row = fetchone(
        conn,
        f"SELECT {_COLUMNS} FROM skill_drafts WHERE namespace = ? AND name = ?",
        (namespace, name),
    )
    return None if row is None else _draft(row)


def put(conn: sqlite3.Connection, draft: SkillDraft) -> None:
    """Insert a draft, or refresh a waiting one (its evidence and body) under its name."""
    conn.execute(
        f"INSERT INTO skill_drafts ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (namespace, name) DO UPDATE SET gap_key = excluded.gap_key,"
        " kind = excluded.kind, description = excluded.description,"
        " triggers = excluded.triggers, body = excluded.body, evidence = excluded.evidence,"
        " sessions = excluded.sessions, score = excluded.score,"
        " written_by = excluded.written_by, updated_at = excluded.updated_at"
        " WHERE skill_drafts.state = 'draft'",
        (
            draft.namespace,
            draft.name,
            draft.gap_key,
            draft.kind,
            draft.state,
            draft.description,
            json.dumps(list(draft.triggers)),
            draft.body,
            json.dumps(list(draft.evidence)),
            draft.sessions,
            draft.score,
            draft.written_by,
            draft.created_at,
            draft.updated_at,
        ),
    )


def set_state(conn: sqlite3.Connection, namespace: str, name: str, state: str, when: str) -> None:
    assert state in STATES
    conn.execute(
        "UPDATE skill_drafts SET state = ?, updated_at = ? WHERE namespace = ? AND name = ?",
        (state, when, namespace, name),
    )
