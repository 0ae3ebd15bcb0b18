"""The profile and self-model syntheses: for each synthesis entry (USER.md, SOUL.md) that
the profiler wrote, its clauses and the ids of the records each clause came from. The entry
itself lives in ``entries`` like any other (replaced, restorable); this table says where
its every value came from, so a value can be checked against its sources at any time."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from reverie.rules.profile import Clause, clause_problem
from reverie.stores import entries
from reverie.stores.db import fetchall, fetchone


def record(
    conn: sqlite3.Connection,
    namespace: str,
    entry_id: str,
    target: str,
    author: str,
    clauses: list[Clause],
    when: str,
) -> None:
    """What a synthesis entry was made of (``author``: ``rules`` or ``model``)."""
    conn.execute(
        "INSERT OR REPLACE INTO syntheses (namespace, entry_id, target, author, clauses,"
        " created_at) VALUES (?, ?, ?, ?, ?, ?)",
        (
            namespace,
            entry_id,
            target,
            author,
            json.dumps([c.to_dict() for c in clauses], ensure_ascii=False),
            when,
        ),
    )


def of_entry(
    conn: sqlite3.Connection, namespace: str, entry_id: str
) -> tuple[str, list[Clause]] | None:
    """(author, clauses) of one synthesis entry; None for an entry the profiler never
    recorded (its write committed, its record did not)."""
    row = fetchone(
        conn,
        "SELECT author, clauses FROM syntheses WHERE namespace = ? AND entry_id = ?",
        (namespace, entry_id),
    )
    if row is None:
        return None
    return str(row[0]), [Clause.of(item) for item in json.loads(row[1])]


def lessons(
    conn: sqlite3.Connection, namespace: str, kinds: tuple[str, ...], limit: int
) -> list[tuple[str, str, str, str | None]]:
    """The active log records of ``kinds`` (seed 003: corrections, lessons, errors), the
    most pressing first: ``(id, kind, content, session_id)`` — a session id when it was
    logged from a conversation turn, None when it was learnt by hand."""
    marks = ", ".join("?" for _ in kinds)
    rows = fetchall(
        conn,
        "SELECT id, kind, content, session_id FROM learning"
        f" WHERE namespace = ? AND kind IN ({marks}) AND status = 'active'"
        " ORDER BY CASE priority WHEN 'critical' THEN 0 WHEN 'high' THEN 1"
        " WHEN 'medium' THEN 2 ELSE 3 END, created_at DESC, rn DESC LIMIT ?",
        (namespace, *kinds, limit),
    )
    return [(r[0], r[1], r[2], r[3]) for r in rows]


def topic_sources(
    conn: sqlite3.Connection, namespace: str, limit: int, per_topic: int
) -> list[tuple[str, list[tuple[str, str]]]]:
    """The ``limit`` topics with the most live facts (the most recently written first
    among equals), each with its newest ``per_topic`` live facts ``(id, content)``."""
    rows = fetchall(
        conn,
        "SELECT topic, count(*) AS n, max(rowid) AS last FROM facts"
        " WHERE namespace = ? AND invalid_at IS NULL GROUP BY topic"
        " ORDER BY n DESC, last DESC LIMIT ?",
        (namespace, limit),
    )
    out = []
    for row in rows:
        facts = fetchall(
            conn,
            "SELECT id, content FROM facts WHERE namespace = ? AND topic = ?"
            " AND invalid_at IS NULL ORDER BY rowid DESC LIMIT ?",
            (namespace, row[0], per_topic),
        )
        out.append((str(row[0]), [(f[0], f[1]) for f in facts]))
    return out


def liveness(
    conn: sqlite3.Connection, namespace: str, ids: list[str]
) -> dict[str, tuple[str, str, str]]:
    """Each known record id's ``(status, content, place)`` as the ``records`` view has it
    (an entry, a fact or a log record; status ``active`` when live; place a fact's topic,
    an entry's target); an id no store knows is left out."""
    out: dict[str, tuple[str, str, str]] = {}
    for record_id in dict.fromkeys(ids):
        row = fetchone(
            conn,
            "SELECT status, content, place FROM records WHERE namespace = ? AND id = ?",
            (namespace, record_id),
        )
        if row is not None:
            out[record_id] = (str(row[0]), str(row[1]), str(row[2] or ""))
    return out


def current(conn: sqlite3.Connection, namespace: str) -> dict[str, Any]:
    """The live syntheses of USER.md and SOUL.md (the profiler's entries), each with its
    clauses, each clause's sources and whether it is still grounded in live sources."""
    out: dict[str, Any] = {"namespace": namespace}
    for target in ("user", "soul"):
        mine = [e for e in entries.live(conn, namespace, target) if e.created_by == "profiler"]
        if not mine:
            out[target] = None
            continue
        entry = mine[-1]
        made = of_entry(conn, namespace, entry.id)
        author, clauses = made if made is not None else ("unknown", [])
        found = liveness(conn, namespace, [i for c in clauses for i in c.sources])
        shown = []
        for clause in clauses:
            problem = clause_problem(clause, found)
            shown.append({**clause.to_dict(), "grounded": problem is None, "problem": problem})
        out[target] = {
            "entry_id": entry.id,
            "content": entry.content,
            "author": author,
            "created_at": entry.created_at,
            "clauses": shown,
            "grounded": bool(shown) and all(c["grounded"] for c in shown),
        }
    return out
