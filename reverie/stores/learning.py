"""Seed 003's learning records, over the stores that hold them (migration 9).

Every entry, fact and skill has a ``learning`` row (made by trigger) with its priority,
tier and accesses; corrections, errors and lessons learnt by hand are rows of their own,
with their text. The ``records`` view joins each row to its store, so a record's content
and status are always its store's. Tiers move by the seed's rules (:func:`retier`), by an
access (:func:`touch`) or by hand (:func:`set_tier`); every move is a ledger row.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final

from reverie.clock import iso
from reverie.config import RecordsConfig
from reverie.frozen import quick_init
from reverie.rules.query import PRIORITIES, Query
from reverie.stores import ledger
from reverie.stores.db import fetchall, fetchone
from reverie.stores.records import LedgerRecord, _Mapping
from reverie.stores.search import match_expression

ACTOR: Final = "learner"
LOG_KINDS: Final = ("correction", "error", "insight", "lesson", "decision", "pattern")
"""Kinds whose text lives in the learning row itself (no other store holds it)."""

_COLUMNS: Final = (  # LearningRecord's fields, in order
    "id, namespace, kind, content, priority, status, tier, access_count, last_access_at, "
    "place, session_id, created_at, updated_at"
)


@quick_init
@dataclass(frozen=True, slots=True)
class LearningRecord(_Mapping):
    """One learning record as seed 003 names its fields; ``place`` is where it lives (a
    fact's topic, an entry's target, a skill's name; None for a log record)."""

    id: str
    namespace: str
    kind: str
    content: str
    priority: str
    status: str
    tier: str
    access_count: int
    last_access_at: str | None
    place: str | None
    session_id: str | None
    created_at: str
    updated_at: str


@quick_init
@dataclass(frozen=True, slots=True)
class Moved:
    """A tier change, as its ledger row says it."""

    id: str
    before: str
    after: str
    why: str


def _record(row: sqlite3.Row) -> LearningRecord:
    return LearningRecord(*row)


def get(conn: sqlite3.Connection, namespace: str, record_id: str) -> LearningRecord | None:
    row = fetchone(
        conn,
        f"SELECT {_COLUMNS} FROM records WHERE namespace = ? AND id = ?",
        (namespace, record_id),
    )
    return None if row is None else _record(row)


def records_of(conn: sqlite3.Connection, namespace: str) -> list[LearningRecord]:
    """Every record of the namespace, oldest first."""
    rows = fetchall(
        conn, f"SELECT {_COLUMNS} FROM records WHERE namespace = ? ORDER BY rn", (namespace,)
    )
    return [_record(row) for row in rows]


def sessions(conn: sqlite3.Connection, namespace: str) -> int:
    """How many sessions of the namespace have ended: the tiers' clock."""
    row = fetchone(conn, "SELECT sessions FROM namespaces WHERE name = ?", (namespace,))
    return int(row[0]) if row else 0


def end_session(conn: sqlite3.Connection, namespace: str, now: str) -> int:
    """Count one more ended session; the new count."""
    conn.execute(
        "INSERT INTO namespaces (name, sessions, created_at) VALUES (?, 1, ?)"
        " ON CONFLICT (name) DO UPDATE SET sessions = sessions + 1",
        (namespace, now),
    )
    return sessions(conn, namespace)


def heartbeat_due(
    conn: sqlite3.Connection, namespace: str, now: datetime, settings: RecordsConfig
) -> bool:
    row = fetchone(conn, "SELECT heartbeat_at FROM namespaces WHERE name = ?", (namespace,))
    if row is None or row[0] is None:
        return True
    interval = timedelta(minutes=settings.heartbeat_interval_minutes)
    return datetime.fromisoformat(row[0]) + interval <= now


def beat(conn: sqlite3.Connection, namespace: str, now: str) -> None:
    conn.execute(
        "INSERT INTO namespaces (name, heartbeat_at, created_at) VALUES (?, ?, ?)"
        " ON CONFLICT (name) DO UPDATE SET heartbeat_at = excluded.heartbeat_at",
        (namespace, now, now),
    )


def add_log(
    conn: sqlite3.Connection,
    namespace: str,
    record: tuple[str, str, str, str],
    session_id: str | None,
    now: str,
) -> None:
    """A record whose text no other store holds: ``(id, kind, content, priority)``; HOT
    and active, as seed 003 makes new learnings."""
    record_id, kind, content, priority = record
    conn.execute(
        """INSERT INTO learning (namespace, id, kind, priority, status, content, session_id,
                                 seen_session, created_at, updated_at)
           VALUES (?, ?, ?, ?, 'active', ?, ?, ?, ?, ?)""",
        (
            namespace,
            record_id,
            kind,
            priority,
            content,
            session_id,
            sessions(conn, namespace),
            now,
            now,
        ),
    )


def learn(
    conn: sqlite3.Connection,
    namespace: str,
    record: tuple[str, str, str, str],
    session_id: str | None,
    now: str,
) -> None:
    """A log record learnt (:func:`add_log`) and its ledger row: ``(id, kind, content,
    priority)``."""
    record_id, kind, content, priority = record
    add_log(conn, namespace, record, session_id, now)
    ledger.append(
        conn,
        LedgerRecord(
            ts=now,
            namespace=namespace,
            actor=ACTOR,
            action="learn",
            decision="ADD",
            entry_id=record_id,
            session_id=session_id,
            after={"content": content, "kind": kind, "priority": priority},
        ),
    )


def logged(conn: sqlite3.Connection, namespace: str, kind: str) -> list[tuple[str, str]]:
    """The active log records of ``kind``: (id, content), newest first (for the caller's
    near-duplicate check)."""
    rows = fetchall(
        conn,
        "SELECT id, content FROM learning WHERE namespace = ? AND kind = ? AND status = 'active'"
        " ORDER BY rn DESC LIMIT 500",
        (namespace, kind),
    )
    return [(r[0], r[1]) for r in rows]


def touch(
    conn: sqlite3.Connection,
    namespace: str,
    accesses: Sequence[tuple[str, str, str]],
    settings: RecordsConfig,
    session: str | None = None,
) -> list[Moved]:
    """Count ``accesses`` — ``(record id, how, when)`` — in one go: each one's history
    row (with the ``session`` they were made in, when known), its count and time, and the
    tier it earns: COLD → HOT when referenced again, HOT → WARM at
    ``warm_after_accesses``. Ids that are no record are skipped."""
    if not accesses:
        return []
    now_session = sessions(conn, namespace)
    conn.executemany(
        "INSERT INTO accesses (namespace, id, ts, how, session_id) SELECT ?, ?, ?, ?, ?"
        " WHERE EXISTS (SELECT 1 FROM learning WHERE namespace = ? AND id = ?)",
        [(namespace, rid, ts, how, session, namespace, rid) for rid, how, ts in accesses],
    )
    counted: dict[str, tuple[int, str]] = {}
    for rid, _, ts in accesses:
        n, last = counted.get(rid, (0, ts))
        counted[rid] = (n + 1, max(last, ts))
    before = _tiers(conn, namespace, counted)
    conn.executemany(
        """UPDATE learning SET access_count = access_count + ?,
               last_access_at = max(coalesce(last_access_at, ''), ?), seen_session = ?
           WHERE namespace = ? AND id = ?""",
        [(n, last, now_session, namespace, rid) for rid, (n, last) in counted.items()],
    )
    moved = []
    for rid, (tier, count, base) in sorted(before.items()):
        since_hot = count + counted[rid][0] - base
        if tier == "cold":
            moved.append(Moved(rid, "cold", "hot", "referenced again"))
        elif tier == "hot" and _used_enough(since_hot, settings):
            moved.append(Moved(rid, "hot", "warm", f"accessed {since_hot} times"))
    return _apply(conn, namespace, moved, max(ts for _, _, ts in accesses))


def _used_enough(accesses: int, settings: RecordsConfig) -> bool:
    """Seed 003's HOT → WARM by use (one rule, for accesses written and for the sweep):
    ``accesses`` since the record last came (back) to HOT."""
    return accesses >= settings.warm_after_accesses


def _tiers(
    conn: sqlite3.Connection, namespace: str, ids: Iterable[str]
) -> dict[str, tuple[str, int, int]]:
    wanted = list(ids)
    found: dict[str, tuple[str, int, int]] = {}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for row in fetchall(
            conn,
            "SELECT id, tier, access_count, hot_base FROM learning"
            f" WHERE namespace = ? AND id IN ({marks})",
            (namespace, *chunk),
        ):
            found[row[0]] = (row[1], int(row[2]), int(row[3]))
    return found


_DUE: Final = """
    SELECT r.id, r.tier, r.access_count, coalesce(r.last_access_at, r.created_at),
           ? - r.seen_session, l.hot_base, r.status
    FROM records r JOIN learning l ON l.rn = r.rn
    WHERE r.namespace = ? AND r.tier != 'cold'
"""


def retier(
    conn: sqlite3.Connection, namespace: str, now: datetime, settings: RecordsConfig
) -> list[Moved]:
    """The seed's rules over the namespace's records: HOT → WARM after ``hot_sessions``
    ended sessions unreferenced (or ``warm_after_accesses`` accesses since it came to HOT);
    WARM → COLD after ``cold_sessions`` without an access; seed 004's long-term rule,
    → COLD when last recalled over ``longterm_days`` ago with fewer than
    ``longterm_recalls`` recalls; and a record no longer active (superseded, archived,
    resolved) → COLD, as nothing learns from it any more."""
    old = iso(now - timedelta(days=settings.longterm_days))
    moved = []
    for row in fetchall(conn, _DUE, (sessions(conn, namespace), namespace)):
        rid, tier, count, last_seen, idle = row[0], row[1], int(row[2]), row[3], int(row[4])
        if row[6] != "active":
            moved.append(Moved(rid, tier, "cold", f"{row[6]}, no longer active"))
        elif last_seen < old and count < settings.longterm_recalls:
            why = f"not recalled for {settings.longterm_days:g} days, {count} recalls"
            moved.append(Moved(rid, tier, "cold", why))
        elif tier == "warm" and idle >= settings.cold_sessions:
            moved.append(Moved(rid, tier, "cold", f"{idle} sessions without an access"))
        elif tier == "hot" and _used_enough(count - int(row[5]), settings):
            moved.append(Moved(rid, tier, "warm", f"accessed {count - int(row[5])} times"))
        elif tier == "hot" and idle >= settings.hot_sessions:
            moved.append(Moved(rid, tier, "warm", f"{idle} sessions since last referenced"))
    return _apply(conn, namespace, moved, iso(now))


def set_tier(
    conn: sqlite3.Connection, namespace: str, record_id: str, tier: str, why: str, now: str
) -> Moved | None:
    """Move one record by hand (None: it is there already). A move by hand counts as a
    reference (the tier clock restarts), so the rules do not move it straight back."""
    row = fetchone(
        conn, "SELECT tier FROM learning WHERE namespace = ? AND id = ?", (namespace, record_id)
    )
    if row is None or row[0] == tier:
        return None
    conn.execute(
        "UPDATE learning SET seen_session = ? WHERE namespace = ? AND id = ?",
        (sessions(conn, namespace), namespace, record_id),
    )
    [moved] = _apply(conn, namespace, [Moved(record_id, row[0], tier, why)], now)
    return moved


def _apply(conn: sqlite3.Connection, namespace: str, moved: list[Moved], now: str) -> list[Moved]:
    for m in moved:  # back to HOT: its accesses count toward WARM from here
        conn.execute(
            "UPDATE learning SET tier = ?, updated_at = ?,"
            " hot_base = iif(? = 'hot', access_count, hot_base) WHERE namespace = ? AND id = ?",
            (m.after, now, m.after, namespace, m.id),
        )
        ledger.append(
            conn,
            LedgerRecord(
                ts=now,
                namespace=namespace,
                actor=ACTOR,
                action="tier",
                decision=m.after.upper(),
                entry_id=m.id,
                before={"tier": m.before},
                after={"tier": m.after},
                detail={"why": m.why},
            ),
        )
    return moved


def raise_priority(
    conn: sqlite3.Connection, namespace: str, record_id: str, now: str
) -> tuple[str, str] | None:
    """Priority up one level (seed 003's ``promote``): (before, after); None when the
    record is unknown; the same twice at ``critical``."""
    row = fetchone(
        conn, "SELECT priority FROM learning WHERE namespace = ? AND id = ?", (namespace, record_id)
    )
    if row is None:
        return None
    before = row[0]
    after = PRIORITIES[min(PRIORITIES.index(before) + 1, len(PRIORITIES) - 1)]
    if after != before:
        conn.execute(
            "UPDATE learning SET priority = ?, updated_at = ? WHERE namespace = ? AND id = ?",
            (after, now, namespace, record_id),
        )
        ledger.append(
            conn,
            LedgerRecord(
                ts=now,
                namespace=namespace,
                actor=ACTOR,
                action="priority",
                decision=after.upper(),
                entry_id=record_id,
                before={"priority": before},
                after={"priority": after},
            ),
        )
    return before, after


_ORDER: Final = {
    "created": "created_at",
    "updated": "updated_at",
    "access": "access_count",
    "priority": "CASE priority WHEN 'critical' THEN 3 WHEN 'high' THEN 2"
    " WHEN 'medium' THEN 1 ELSE 0 END",
}
_MATCHED: Final = """
    matched (rid, rank) AS (
        SELECT rowid, bm25(search_index) FROM search_index
        WHERE search_index MATCH :text AND namespace = :ns
        UNION ALL SELECT rowid, bm25(search_superseded) FROM search_superseded
        WHERE search_superseded MATCH :text AND namespace = :ns
        UNION ALL SELECT -rowid, bm25(learning_text) FROM learning_text
        WHERE learning_text MATCH :text AND namespace = :ns)
"""


def select(conn: sqlite3.Connection, namespace: str, query: Query) -> list[LearningRecord]:
    """The records a parsed query asks for, in its order, at most its limit."""
    where = ["r.namespace = :ns"]
    params: dict[str, Any] = {"ns": namespace, "limit": query.limit}
    for i, (name, values) in enumerate(sorted(query.filters.items())):
        marks = ", ".join(f":f{i}_{j}" for j in range(len(values)))
        where.append(f"r.{name} IN ({marks})")
        params.update({f"f{i}_{j}": v for j, v in enumerate(values)})
    if query.since is not None:
        where.append("r.created_at >= :since")
        params["since"] = query.since
    if query.until is not None:
        where.append("r.created_at < :until")
        params["until"] = query.until
    direction = "DESC" if query.descending else "ASC"
    columns = ", ".join(f"r.{c.strip()}" for c in _COLUMNS.split(","))
    if query.text:
        expression = match_expression(query.text)
        if expression is None:
            return []
        params["text"] = expression
        order = "m.rank" + (" ASC, r.rn DESC" if query.descending else " DESC, r.rn ASC")
        if query.sort != "relevance":
            order = f"{_ORDER[query.sort]} {direction}, m.rank, r.rn {direction}"
        sql = (
            f"WITH {_MATCHED} SELECT {columns} FROM records r"
            " JOIN (SELECT iif(rid > 0 AND rid % 4 = 0, rid + 1, rid) AS rid, min(rank) AS rank"
            " FROM matched GROUP BY 1) m ON m.rid = r.rid"
            f" WHERE {' AND '.join(where)} ORDER BY {order} LIMIT :limit"
        )
    else:
        order = f"{_ORDER[query.sort]} {direction}, r.rn {direction}"
        sql = f"SELECT {columns} FROM records r WHERE {' AND '.join(where)} ORDER BY {order}"
        sql += " LIMIT :limit"
    return [_record(row) for row in conn.execute(sql, params).fetchall()]


def counts(conn: sqlite3.Connection, namespace: str) -> dict[str, dict[str, int]]:
    """How many records per tier, kind, status and priority."""
    found: dict[str, dict[str, int]] = {}
    for column in ("tier", "kind", "status", "priority"):
        rows = fetchall(
            conn,
            f"SELECT {column}, count(*) FROM records WHERE namespace = ? GROUP BY {column}"
            f" ORDER BY {column}",
            (namespace,),
        )
        found[column] = {r[0]: int(r[1]) for r in rows}
    return found


def history(conn: sqlite3.Connection, namespace: str, record_id: str) -> list[tuple[str, str]]:
    """A record's accesses, oldest first: (when, how)."""
    rows = fetchall(
        conn,
        "SELECT ts, how FROM accesses WHERE namespace = ? AND id = ? ORDER BY ts, rowid",
        (namespace, record_id),
    )
    return [(r[0], r[1]) for r in rows]


def cold(conn: sqlite3.Connection, namespace: str) -> frozenset[str]:
    """The ids of the namespace's COLD records (they leave the snapshot)."""
    rows = fetchall(
        conn, "SELECT id FROM learning WHERE namespace = ? AND tier = 'cold'", (namespace,)
    )
    return frozenset(r[0] for r in rows)


def status(conn: sqlite3.Connection, namespace: str) -> dict[str, Any]:
    """What ``reverie status`` shows of one namespace."""
    row = fetchone(
        conn, "SELECT sessions, heartbeat_at FROM namespaces WHERE name = ?", (namespace,)
    )
    return {
        "namespace": namespace,
        **counts(conn, namespace),
        "patterns": counts(conn, namespace)["kind"].get("pattern", 0),
        "sessions": int(row[0]) if row else 0,
        "last_heartbeat": row[1] if row else None,
    }
