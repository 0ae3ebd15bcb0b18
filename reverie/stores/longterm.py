"""Seed 004's long-term store, over seed 003's COLD tier (the same rule moves a record
there: last recalled over 30 days ago with fewer than 3 recalls). Before a distillation,
the words of the day's HIGH-weight statements query it (k = 5, the seed's numbers) and the
records recalled go into the distiller's context and its report; a recall counts as one
(:func:`counted`), which brings the record back to HOT."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any, Final

from reverie.config import RecordsConfig
from reverie.rules.query import Query
from reverie.stores import learning
from reverie.stores.db import fetchall, fetchone
from reverie.stores.learning import LearningRecord, Moved

HOW: Final = "recall"
"""How a long-term recall is written in a record's access history."""
_SNIPPET: Final = 100
"""Each statement's first chars that go into the query (the seed's ``snippet[:100]``)."""


def day_statements(conn: sqlite3.Connection, namespace: str, since: str, limit: int) -> list[str]:
    """The HIGH-weight statements (corrections, errors, decisions, completions, insights)
    extracted since ``since``, oldest first, at most ``limit``."""
    rows = fetchall(
        conn,
        "SELECT text FROM extracts WHERE namespace = ? AND weight = 'high' AND created_at >= ?"
        " ORDER BY id LIMIT ?",
        (namespace, since, limit),
    )
    return [str(r[0]) for r in rows]


def query_of(statements: Sequence[str]) -> str:
    """The long-term query: each statement's first chars, joined (the seed's)."""
    return " ".join(s[:_SNIPPET] for s in statements)


def recall(conn: sqlite3.Connection, namespace: str, query: str, k: int) -> list[LearningRecord]:
    """The ``k`` active COLD records that best match ``query`` (BM25), best first."""
    if k <= 0 or not query.strip():
        return []
    wanted = Query(
        filters={"tier": ("cold",), "status": ("active",)}, text=query, sort="relevance", limit=k
    )
    return learning.select(conn, namespace, wanted)


def counted(
    conn: sqlite3.Connection,
    namespace: str,
    recalled: Sequence[LearningRecord],
    now: str,
    settings: RecordsConfig,
) -> list[Moved]:
    """Write the recalls as accesses (seed 003: a COLD record referenced again goes HOT)."""
    return learning.touch(conn, namespace, [(r.id, HOW, now) for r in recalled], settings)


def status(conn: sqlite3.Connection, namespace: str) -> dict[str, Any]:
    """Short-term (HOT and WARM) and long-term (COLD, active) counts, and the last recall."""
    rows = fetchall(
        conn,
        "SELECT tier = 'cold', count(*) FROM records WHERE namespace = ? AND status = 'active'"
        " GROUP BY 1",
        (namespace,),
    )
    by = {bool(r[0]): int(r[1]) for r in rows}
    last = fetchone(
        conn,
        "SELECT max(ts), count(*) FROM accesses WHERE namespace = ? AND how = ?",
        (namespace, HOW),
    )
    return {
        "short_term": by.get(False, 0),
        "long_term": by.get(True, 0),
        "recalls": int(last[1]) if last else 0,
        "last_recall": last[0] if last else None,
    }
