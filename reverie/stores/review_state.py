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


_POINT = "SELECT key, value FROM review_state WHERE namespace = ? AND key = ?"


def values(conn: sqlite3.Connection, namespace: str, keys: list[str]) -> dict[str, Any]:
    """Several keys of one namespace in one statement; a key never stored is absent. The
    statement is one primary-key lookup per key (``UNION ALL``): an ``IN`` list would have
    SQLite build a temporary index of the keys first, which costs more than the reads."""
    if not keys:
        return {}
    sql = " UNION ALL ".join([_POINT] * len(keys))
    rows = conn.execute(sql, [part for key in keys for part in (namespace, key)])
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


def mark_quiet(
    conn: sqlite3.Connection, namespace: str, seq: int, until: str | None, now: str
) -> None:
    """Stamp the namespace quiet as of ledger row ``seq``, its last (see :func:`quiet_since`;
    inside the transaction that wrote the pass's rows); ``until`` None: no clock bound."""
    put(conn, namespace, QUIET, {"seq": seq, "until": until}, now)


def carry_quiet(conn: sqlite3.Connection, namespace: str, seq: int) -> None:
    """Ledger rows after ``seq`` that no stage reads (the learner's bookkeeping: tiers,
    log records, patterns) leave a quiet namespace quiet: its mark moves past them when
    it stood at ``seq``."""
    mark = get(conn, namespace, QUIET, None)
    if isinstance(mark, dict) and mark.get("seq") == seq:
        now = last_seq(conn, namespace)
        if now != seq:
            conn.execute(
                "UPDATE review_state SET value = json_set(value, '$.seq', ?)"
                " WHERE namespace = ? AND key = ?",
                (now, namespace, QUIET),
            )


def last_seq(conn: sqlite3.Connection, namespace: str) -> int:
    """The namespace's ledger position (0 before its first row)."""
    row = fetchone(conn, "SELECT max(seq) FROM ledger WHERE namespace = ?", (namespace,))
    return int(row[0]) if row is not None and row[0] is not None else 0


def quiet_since(
    conn: sqlite3.Connection, namespace: str, seq: int, reviewers: frozenset[str]
) -> int | None:
    """The namespace's last ledger row when no one but ``reviewers`` wrote to it after row
    ``seq`` (the pass's own rows only), else None: a write landed while a pass ran, which
    that pass may not have seen. One indexed read of the few rows after ``seq`` answers
    both (a ``NOT IN`` list in SQL would build a temporary index first)."""
    rows = conn.execute(
        "SELECT seq, actor FROM ledger WHERE namespace = ? AND seq > ?", (namespace, seq)
    ).fetchall()
    if any(actor not in reviewers for _, actor in rows):
        return None
    return max((row[0] for row in rows), default=seq)


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
    """Several keys of one namespace, one statement run for each (an ``IN`` list would
    build a temporary index of the keys first)."""
    conn.executemany(
        "DELETE FROM review_state WHERE namespace = ? AND key = ?",
        [(namespace, key) for key in keys],
    )
