"""Review state (watermarks, due times, decided ids) and the review lease.

Pending background work is a watermark here, not a queue in memory, so a crash only delays
it. The lease lets one process of several sharing a home run a review pass at a time.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from reverie.stores.db import fetchone


def get(conn: sqlite3.Connection, namespace: str, key: str, default: Any = None) -> Any:
    row = fetchone(
        conn, "SELECT value FROM review_state WHERE namespace = ? AND key = ?", (namespace, key)
    )
    return default if row is None else json.loads(row[0])


def put(conn: sqlite3.Connection, namespace: str, key: str, value: Any, when: str) -> None:
    conn.execute(
        "INSERT INTO review_state (namespace, key, value, updated_at) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value,"
        " updated_at = excluded.updated_at",
        (namespace, key, json.dumps(value, sort_keys=True), when),
    )


def acquire_lease(
    conn: sqlite3.Connection, name: str, holder: str, now: str, expires_at: str
) -> bool:
    """Take the lease if it is free, expired or already ours (call inside a transaction)."""
    row = fetchone(conn, "SELECT holder, expires_at FROM leases WHERE name = ?", (name,))
    if row is not None and row[0] != holder and row[1] > now:
        return False
    conn.execute(
        "INSERT INTO leases (name, holder, expires_at) VALUES (?, ?, ?) ON CONFLICT (name)"
        " DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at",
        (name, holder, expires_at),
    )
    return True


def release_lease(conn: sqlite3.Connection, name: str, holder: str) -> None:
    conn.execute("DELETE FROM leases WHERE name = ? AND holder = ?", (name, holder))
