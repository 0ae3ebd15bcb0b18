"""The audit ledger: one row per write decision, never updated, never deleted."""

from __future__ import annotations

import sqlite3
from typing import Any

from reverie.stores.db import fetchall
from reverie.stores.records import LedgerRecord, dumps, loads


def append(conn: sqlite3.Connection, record: LedgerRecord) -> int:
    """Append one record (inside the caller's transaction); returns its ``seq``."""
    cur = conn.execute(
        """INSERT INTO ledger (ts, namespace, actor, action, decision, entry_id, target,
                               session_id, trace_id, before, after, detail)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
        (
            record.ts,
            record.namespace,
            record.actor,
            record.action,
            record.decision,
            record.entry_id,
            record.target,
            record.session_id,
            record.trace_id,
            dumps(record.before),
            dumps(record.after),
            dumps(record.detail),
        ),
    )
    assert cur.lastrowid is not None
    return cur.lastrowid


def read(
    conn: sqlite3.Connection, namespace: str, *, entry_id: str | None = None
) -> list[LedgerRecord]:
    """The ledger of one namespace (optionally of one entry), oldest first."""
    sql = "SELECT * FROM ledger WHERE namespace = ?"
    params: tuple[Any, ...] = (namespace,)
    if entry_id is not None:
        sql += " AND entry_id = ?"
        params += (entry_id,)
    rows = fetchall(conn, sql + " ORDER BY seq", params)
    return [
        LedgerRecord(
            seq=r["seq"],
            ts=r["ts"],
            namespace=r["namespace"],
            actor=r["actor"],
            action=r["action"],
            decision=r["decision"],
            entry_id=r["entry_id"],
            target=r["target"],
            session_id=r["session_id"],
            trace_id=r["trace_id"],
            before=loads(r["before"]),
            after=loads(r["after"]),
            detail=loads(r["detail"]) or {},
        )
        for r in rows
    ]
