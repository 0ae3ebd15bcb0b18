"""What a dream reads, in one read transaction: the store's counts (before and after),
the day's episode log, statements and learnings, the records that went COLD (the archive
candidates), skill use, and the counts the health score is computed from. Reads only: the
dreamer writes through the writer and its own commit."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final

from reverie.clock import iso
from reverie.dream.health import Counts
from reverie.frozen import quick_init
from reverie.rules.identity import timezone_in
from reverie.stores import graph
from reverie.stores.db import fetchall, fetchone

FRESH_DAYS: Final = 30
"""Freshness: a record referenced (or written) within this many days is fresh."""
COVERAGE_DAYS: Final = 14
"""Coverage: a topic with a fact written within this many days is covered."""
_HIGH_KINDS: Final = ("correction", "error", "insight", "lesson", "decision", "pattern")


@quick_init
@dataclass(frozen=True, slots=True)
class Said:
    """One statement of the day: a learning log record or a HIGH-weight extract."""

    id: str
    kind: str
    text: str
    status: str = "active"
    session_id: str | None = None


@quick_init
@dataclass(frozen=True, slots=True)
class Day:
    """What happened since the last dream (or in the last day, for a first one)."""

    since: str
    exchanges: int
    sessions: int
    stored: tuple[Said, ...]
    """What the write path took since and still holds: live facts (``update`` when one
    superseded an older value) and MEMORY/USER entries, newest first."""
    high: tuple[Said, ...]
    """HIGH-weight statements (corrections, errors, decisions, completions, insights)."""
    learnt: tuple[Said, ...]
    """Log records written since (corrections, errors, lessons, insights, patterns)."""
    open_errors: tuple[Said, ...]
    """Error records still active (not resolved), newest first."""
    writes: dict[str, int]
    """The agent's and the flush's writes since, by action (``add``, ``save``, ``turn`` …)."""
    refused: int
    """… and the writes the write path refused (ERROR) since."""
    cooled: tuple[dict[str, Any], ...]
    """Records moved to COLD since: the archive's candidates."""
    skills_used: dict[str, int]
    """Skill uses since, by name."""
    skills_changed: dict[str, list[str]]
    """Skills made, patched or archived since: their actions, in order."""


def counts(conn: sqlite3.Connection, namespace: str) -> dict[str, int]:
    """The snapshot a dream takes before and after: what the store holds."""
    one = {
        "entries": "SELECT count(*) FROM entries WHERE namespace = ? AND status = 'live'",
        "facts": "SELECT count(*) FROM facts WHERE namespace = ? AND invalid_at IS NULL",
        "topics": "SELECT count(*) FROM topics WHERE namespace = ?",
        "skills": "SELECT count(*) FROM skills WHERE namespace = ? AND archived_at IS NULL",
        "episodes": "SELECT count(*) FROM episodes WHERE namespace = ?",
        "patterns": "SELECT count(*) FROM patterns WHERE namespace = ?",
        "cold": "SELECT count(*) FROM learning WHERE namespace = ? AND tier = 'cold'",
    }
    found = {name: _count(conn, sql, (namespace,)) for name, sql in one.items()}
    found.update({f"graph_{k}": v for k, v in graph.counts(conn, namespace).items()})
    return found


def _count(conn: sqlite3.Connection, sql: str, params: tuple[Any, ...]) -> int:
    row = fetchone(conn, sql, params)
    return int(row[0]) if row and row[0] is not None else 0


def day(conn: sqlite3.Connection, namespace: str, since: str, limit: int = 200) -> Day:
    """The day's log since ``since`` (each list bounded by ``limit``)."""
    ep = fetchone(
        conn,
        "SELECT count(*), count(DISTINCT session_id) FROM episodes WHERE namespace = ? AND ts >= ?",
        (namespace, since),
    )
    high = fetchall(
        conn,
        "SELECT 'x' || id, tag, text, session_id FROM extracts WHERE namespace = ?"
        " AND weight = 'high' AND created_at >= ? ORDER BY id LIMIT ?",
        (namespace, since, limit),
    )
    marks = ", ".join("?" * len(_HIGH_KINDS))
    logs = fetchall(
        conn,
        f"SELECT id, kind, content, status, session_id FROM learning WHERE namespace = ?"
        f" AND kind IN ({marks}) AND created_at >= ? ORDER BY rn LIMIT ?",
        (namespace, *_HIGH_KINDS, since, limit),
    )
    errors = fetchall(
        conn,
        "SELECT id, kind, content, status, session_id FROM learning WHERE namespace = ?"
        " AND kind = 'error' AND status = 'active' ORDER BY rn DESC LIMIT ?",
        (namespace, limit),
    )
    return Day(
        since=since,
        exchanges=int(ep[0]) if ep else 0,
        sessions=int(ep[1]) if ep else 0,
        stored=tuple(_stored(conn, namespace, since, limit)),
        high=tuple(Said(r[0], r[1], r[2], session_id=r[3]) for r in high),
        learnt=tuple(Said(*r) for r in logs),
        open_errors=tuple(Said(*r) for r in errors),
        writes=_writes(conn, namespace, since),
        refused=_count(
            conn,
            "SELECT count(*) FROM ledger WHERE namespace = ? AND ts >= ? AND decision = 'ERROR'",
            (namespace, since),
        ),
        cooled=tuple(_cooled(conn, namespace, since, limit)),
        skills_used=skills_used(conn, namespace, since),
        skills_changed=_skills_changed(conn, namespace, since),
    )


_BACKGROUND: Final = (
    "learner",
    "grapher",
    "reviewer",
    "linter",
    "distiller",
    "promoter",
    "curator",
    "profiler",
    "dreamer",
)
"""Actors whose ledger rows are upkeep, not the day's work."""


def _stored(conn: sqlite3.Connection, namespace: str, since: str, limit: int) -> list[Said]:
    rows = fetchall(
        conn,
        "SELECT id, iif(supersedes IS NULL, 'fact', 'update'), content, session_id, created_at"
        " FROM facts WHERE namespace = ? AND created_at >= ? AND invalid_at IS NULL"
        " UNION ALL SELECT id, 'entry', content, session_id, updated_at FROM entries"
        " WHERE namespace = ? AND updated_at >= ? AND status = 'live'"
        " AND target IN ('memory', 'user') AND created_by != 'profiler'"  # a synthesis: no news
        " ORDER BY 5 DESC LIMIT ?",
        (namespace, since, namespace, since, limit),
    )
    return [Said(r[0], r[1], r[2], session_id=r[3]) for r in rows]


def _writes(conn: sqlite3.Connection, namespace: str, since: str) -> dict[str, int]:
    marks = ", ".join("?" * len(_BACKGROUND))
    rows = fetchall(
        conn,
        "SELECT action, count(*) FROM ledger WHERE namespace = ? AND ts >= ?"
        f" AND decision NOT IN ('NOOP', 'ERROR') AND actor NOT IN ({marks})"
        " GROUP BY action ORDER BY action",
        (namespace, since, *_BACKGROUND),
    )
    return {str(r[0]): int(r[1]) for r in rows}


def _cooled(
    conn: sqlite3.Connection, namespace: str, since: str, limit: int
) -> list[dict[str, Any]]:
    rows = fetchall(
        conn,
        "SELECT l.entry_id, l.ts, l.detail, r.kind, r.content, r.place FROM ledger l"
        " JOIN records r ON r.namespace = l.namespace AND r.id = l.entry_id"
        " WHERE l.namespace = ? AND l.actor = 'learner' AND l.action = 'tier'"
        " AND l.decision = 'COLD' AND l.ts >= ? ORDER BY l.seq LIMIT ?",
        (namespace, since, limit),
    )
    out = []
    for r in rows:
        why = _why(r[2])
        out.append({"id": r[0], "ts": r[1], "why": why, "kind": r[3], "text": r[4], "place": r[5]})
    return out


def _why(detail: str | None) -> str:
    try:
        return str((json.loads(detail or "{}") or {}).get("why", ""))
    except ValueError:
        return ""


def skills_used(conn: sqlite3.Connection, namespace: str, since: str) -> dict[str, int]:
    rows = fetchall(
        conn,
        "SELECT entry_id, count(*) FROM ledger WHERE namespace = ? AND action = 'use'"
        " AND target = 'skill' AND ts >= ? GROUP BY entry_id ORDER BY count(*) DESC, entry_id",
        (namespace, since),
    )
    return {str(r[0]).removeprefix("skill:"): int(r[1]) for r in rows}


def _skills_changed(conn: sqlite3.Connection, namespace: str, since: str) -> dict[str, list[str]]:
    rows = fetchall(
        conn,
        "SELECT entry_id, action FROM ledger WHERE namespace = ? AND target = 'skill'"
        " AND action NOT IN ('use', 'pin', 'unpin') AND decision NOT IN ('NOOP', 'ERROR')"
        " AND ts >= ? ORDER BY seq",
        (namespace, since),
    )
    found: dict[str, list[str]] = {}
    for entry_id, action in rows:
        found.setdefault(str(entry_id).removeprefix("skill:"), []).append(str(action))
    return found


def skill_totals(conn: sqlite3.Connection, namespace: str) -> dict[str, int]:
    """Every registered skill's uses, all time (the leaderboard's ground)."""
    rows = fetchall(
        conn,
        "SELECT s.name, (SELECT count(*) FROM ledger l WHERE l.namespace = s.namespace"
        " AND l.action = 'use' AND l.target = 'skill' AND l.entry_id = 'skill:' || s.name)"
        " FROM skills s WHERE s.namespace = ? AND s.archived_at IS NULL ORDER BY s.name",
        (namespace,),
    )
    return {str(r[0]): int(r[1]) for r in rows}


def health_counts(
    conn: sqlite3.Connection, namespace: str, now: datetime, index_lines: int
) -> Counts:
    """What the health metrics are computed from (see ``reverie.dream.health``)."""
    fresh = iso(now - timedelta(days=FRESH_DAYS))
    covered = iso(now - timedelta(days=COVERAGE_DAYS))
    row = fetchone(
        conn,
        "SELECT count(*), coalesce(sum(coalesce(last_access_at, created_at) >= ?), 0)"
        " FROM records WHERE namespace = ? AND status = 'active'",
        (fresh, namespace),
    )
    categories = _count(
        conn,
        "SELECT count(DISTINCT topic) FROM facts WHERE namespace = ? AND created_at >= ?",
        (namespace, covered),
    )
    shape = graph.health(conn, namespace)
    return Counts(
        records=int(row[0]) if row else 0,
        referenced=int(row[1]) if row else 0,
        categories=categories,
        episodes=shape.episodes,
        linked=shape.linked,
        nodes=shape.nodes,
        components=shape.components,
        reachable=shape.reachable,
        index_lines=index_lines,
    )


def timezone_of(conn: sqlite3.Connection, namespace: str) -> str:
    """The timezone the user gave (a user_settings entry ``timezone: …``), or ""."""
    rows = fetchall(
        conn,
        "SELECT content FROM entries WHERE namespace = ? AND target = 'user_settings'"
        " AND status = 'live' ORDER BY updated_at DESC",
        (namespace,),
    )
    for (content,) in rows:
        key, _, value = str(content).partition(":")
        if key.strip().lower() == "timezone" and value.strip():
            return value.strip()
        found = timezone_in(str(content))
        if found:
            return found
    return ""


def runs(conn: sqlite3.Connection, namespace: str) -> list[dict[str, Any]]:
    """Every dream's record, oldest first (the ledger keeps them; reports render from them)."""
    rows = fetchall(conn, _RUNS + " ORDER BY seq", (namespace,))
    return [json.loads(r[0]) for r in rows if r[0]]


_RUNS: Final = (
    "SELECT detail FROM ledger WHERE namespace = ? AND actor = 'dreamer' AND action = 'round'"
)


def run_of(
    conn: sqlite3.Connection, namespace: str, day_key: str, date: str | None
) -> dict[str, Any] | None:
    """The latest dream whose ``day_key`` (``date``, or ``daily_date`` for the daily
    report) is ``date`` — or is set at all, for ``None``: one row, not every dream read."""
    sql = _RUNS + f" AND json_extract(detail, '$.{day_key}') IS NOT NULL"
    params: tuple[Any, ...] = (namespace,)
    if date is not None:
        sql += f" AND json_extract(detail, '$.{day_key}') = ?"
        params += (date,)
    row = fetchone(conn, sql + " ORDER BY seq DESC LIMIT 1", params)
    return json.loads(row[0]) if row else None
