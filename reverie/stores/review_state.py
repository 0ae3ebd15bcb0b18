"""Review state (watermarks, due times, decided ids) and the review lease.

Pending background work is a watermark here, not a queue in memory, so a crash only delays
it. The lease lets one process of several sharing a home run a review pass at a time.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Mapping
from typing import Any

from reverie.stores.db import fetchone


def get(conn: sqlite3.Connection, namespace: str, key: str, default: Any = None) -> Any:
    row = fetchone(
        conn, "SELECT value FROM review_state WHERE namespace = ? AND key = ?", (namespace, key)
    )
    return default if row is None else json.loads(row[0])


def values(conn: sqlite3.Connection, namespace: str, keys: list[str]) -> dict[str, Any]:
    """Several keys of one namespace in one indexed query; a key never stored is absent."""
    marks = ", ".join("?" * len(keys))
    rows = conn.execute(
        f"SELECT key, value FROM review_state WHERE namespace = ? AND key IN ({marks})",
        (namespace, *keys),
    )
    return {key: json.loads(value) for key, value in rows}


_PUT = (
    "INSERT INTO review_state (namespace, key, value, updated_at) VALUES (?, ?, ?, ?)"
    " ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value,"
    " updated_at = excluded.updated_at"
)


def put(conn: sqlite3.Connection, namespace: str, key: str, value: Any, when: str) -> None:
    conn.execute(_PUT, (namespace, key, json.dumps(value, sort_keys=True), when))


def put_many(
    conn: sqlite3.Connection, namespace: str, values: Mapping[str, Any], when: str
) -> None:
    """Several keys of one namespace in one statement run for each (a stage's round)."""
    conn.executemany(
        _PUT,
        [
            (namespace, key, json.dumps(value, sort_keys=True), when)
            for key, value in values.items()
        ],
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


QUIET = "review:quiet"
"""A namespace's mark after a review pass that left nothing for later: the ledger's last
seq then, and until when nothing but a new write can change what a pass would do."""


def mark_quiet(conn: sqlite3.Connection, namespace: str, until: str | None, now: str) -> None:
    """Stamp the namespace quiet as of its ledger's last row (call after the pass's own
    rows, inside the transaction that wrote them); ``until`` None means no clock bound."""
    row = fetchone(conn, "SELECT max(seq) FROM ledger WHERE namespace = ?", (namespace,))
    seq = row[0] if row is not None else None
    put(conn, namespace, QUIET, {"seq": seq, "until": until}, now)


def last_seq(conn: sqlite3.Connection, namespace: str) -> int:
    """The namespace's ledger position (0 before its first row)."""
    row = fetchone(conn, "SELECT max(seq) FROM ledger WHERE namespace = ?", (namespace,))
    return int(row[0]) if row is not None and row[0] is not None else 0


def written_since(
    conn: sqlite3.Connection, namespace: str, seq: int, reviewers: frozenset[str]
) -> bool:
    """Whether anyone but ``reviewers`` wrote to the namespace after ledger row ``seq``
    (a write that landed while a pass ran, which that pass may not have seen)."""
    marks = ", ".join("?" * len(reviewers))
    row = fetchone(
        conn,
        f"SELECT 1 FROM ledger WHERE namespace = ? AND seq > ? AND actor NOT IN ({marks}) LIMIT 1",
        (namespace, seq, *sorted(reviewers)),
    )
    return row is not None


def quiet(conn: sqlite3.Connection, now: str, namespace: str | None = None) -> set[str]:
    """Namespaces with nothing new since their last quiet pass, in one query: no ledger row
    past the mark (an indexed max per namespace) and no stage due by the clock."""
    sql = (
        "SELECT r.namespace FROM review_state r WHERE r.key = ?"
        " AND coalesce(json_extract(r.value, '$.until') > ?, 1)"
        " AND json_extract(r.value, '$.seq')"
        " IS (SELECT max(l.seq) FROM ledger l WHERE l.namespace = r.namespace)"
    )
    params: tuple[str, ...] = (QUIET, now)
    if namespace is not None:
        sql += " AND r.namespace = ?"
        params += (namespace,)
    return {row[0] for row in conn.execute(sql, params)}


def promoted_key(chain_id: str) -> str:
    """The key naming the MEMORY.md entry a chain was promoted into."""
    return f"promoted:{chain_id}"


REFRESH = "refresh:"
"""The outbox of promoted rules to refresh: one row per chain, written by the writer in
the transaction of the correction (or restore), removed by the promoter once handled."""


def ask_refresh(
    conn: sqlite3.Connection, namespace: str, chain_id: str, ask: dict[str, Any], when: str
) -> None:
    """Ask the promoter to refresh the rule promoted from ``chain_id`` (a later ask for the
    same chain replaces an earlier one: the rule follows the chain's newest value)."""
    put(conn, namespace, REFRESH + chain_id, ask, when)


def refreshes(conn: sqlite3.Connection, namespace: str) -> dict[str, dict[str, Any]]:
    """The pending refresh asks of a namespace, by chain id."""
    rows = conn.execute(
        "SELECT key, value FROM review_state WHERE namespace = ? AND key >= ? AND key < ?",
        (namespace, REFRESH, REFRESH[:-1] + chr(ord(REFRESH[-1]) + 1)),
    )
    return {key[len(REFRESH) :]: json.loads(value) for key, value in rows}


def drop(conn: sqlite3.Connection, namespace: str, key: str) -> None:
    conn.execute("DELETE FROM review_state WHERE namespace = ? AND key = ?", (namespace, key))


def drop_many(conn: sqlite3.Connection, namespace: str, keys: Collection[str]) -> None:
    """Several keys of one namespace in one statement (none: no statement)."""
    if keys:
        marks = ", ".join("?" * len(keys))
        conn.execute(
            f"DELETE FROM review_state WHERE namespace = ? AND key IN ({marks})",
            (namespace, *keys),
        )
