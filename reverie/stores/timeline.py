"""Time order for the flush: which writes came after the turn a candidate was read from.

Each episode records the ledger's last ``seq`` when it was said (its horizon); every write
after the turn has a higher seq, so "written after" is exact even when the clock stands
still (a ManualClock, or many turns in one millisecond).
"""

from __future__ import annotations

import sqlite3

from reverie.stores.db import fetchall

_TOLD_AFTER = (
    " AND l.seq > ? AND (l.decision != 'NOOP' OR l.actor != 'flusher') AND l.actor != 'learner'"
)
"""A ledger row after the horizon that tells something: a write, or a tool call saying the
value again; the flush finding a turn's statement already stored (its own NOOP, maybe of
an earlier turn in this very flush) tells nothing newer than the turn, and nor does the
learner's bookkeeping (a fact's tier moving, an access counted)."""


def written_after(
    conn: sqlite3.Connection,
    namespace: str,
    horizon: int,
    *,
    subject: str | None,
    skeleton: str | None,
    topic: str | None = None,
    limit: int = 20,
) -> list[str]:
    """Live facts about the same subject (or with the same skeleton), and the agent's own
    facts of the same topic, written after the horizon, newest first: what the store
    learned after the turn was said. (A flush writing an earlier turn's statement after
    this turn's horizon learned nothing newer than this turn.)"""
    out: list[str] = []
    if topic is not None:
        out += [
            str(row[0])
            for row in fetchall(
                conn,
                "SELECT f.content FROM facts f WHERE f.namespace = ? AND f.topic = ?"
                " AND f.invalid_at IS NULL AND f.created_by != 'flusher'"
                f" AND EXISTS (SELECT 1 FROM ledger l WHERE l.entry_id = f.id{_TOLD_AFTER})"
                " ORDER BY f.rowid DESC LIMIT ?",
                (namespace, topic, horizon, limit),
            )
        ]
    for column, index, key in (
        ("subject_key", "facts_subject", subject),
        ("skeleton_key", "facts_skeleton", skeleton),
    ):
        if key is None:
            continue
        out += [
            str(row[0])
            for row in fetchall(
                conn,
                f"SELECT f.content FROM facts f INDEXED BY {index} WHERE f.namespace = ?"
                " AND f.topic IN (SELECT name FROM topics WHERE namespace = ?)"
                f" AND f.invalid_at IS NULL AND f.{column} = ? AND EXISTS (SELECT 1 FROM"
                f" ledger l WHERE l.entry_id = f.id{_TOLD_AFTER}) ORDER BY f.rowid DESC LIMIT ?",
                (namespace, namespace, key, horizon, limit),
            )
        ]
    return out


def undone_after(conn: sqlite3.Connection, namespace: str, horizon: int) -> list[str]:
    """What the agent removed or replaced in MEMORY/USER/SOUL after the horizon: the flush
    must not bring it back from an older turn."""
    return [
        str(row[0])
        for row in fetchall(
            conn,
            "SELECT json_extract(before, '$.content') FROM ledger WHERE namespace = ?"
            " AND seq > ? AND action IN ('remove', 'replace')"
            " AND json_extract(before, '$.content') IS NOT NULL ORDER BY seq",
            (namespace, horizon),
        )
    ]
