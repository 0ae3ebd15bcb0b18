"""Tool calls named by the host's call id: the answer of each call that committed, stored
in the call's own transaction, so "did my cancelled call land?" has a truthful answer and a
retry with the same id replays the answer instead of writing twice."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import dataclass
from typing import Any

from reverie.stores.db import fetchone


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One committed call: its id, what was asked (a digest) and what it answered."""

    call_id: str
    session_id: str | None
    request: str
    result: dict[str, Any]
    ts: str


def digest(request: object) -> str:
    """A stable digest of a validated command (a frozen dataclass of strings)."""
    return hashlib.sha256(repr(request).encode("utf-8")).hexdigest()


def get(conn: sqlite3.Connection, namespace: str, call_id: str) -> CallRecord | None:
    row = fetchone(
        conn,
        "SELECT call_id, session_id, request, result, ts FROM tool_calls"
        " WHERE namespace = ? AND call_id = ?",
        (namespace, call_id),
    )
    if row is None:
        return None
    return CallRecord(row[0], row[1], row[2], json.loads(row[3]), row[4])


def record(
    conn: sqlite3.Connection,
    namespace: str,
    call_id: str,
    session_id: str | None,
    request: str,
    result: dict[str, Any],
    ts: str,
) -> None:
    conn.execute(
        "INSERT INTO tool_calls (namespace, call_id, session_id, request, result, ts)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (namespace, call_id, session_id, request, json.dumps(result, ensure_ascii=False), ts),
    )
