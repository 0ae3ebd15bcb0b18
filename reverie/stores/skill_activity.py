"""Skill uses with their outcome, and the history of skill activity scores (issue 13).

A use row is written by the writer with the ledger row that audits it; a score row by
the curator's review pass, one per registered skill per scoring (history, never updated).
:func:`scored` computes every skill's activity as of a moment from these rows."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final

from reverie.clock import iso
from reverie.skills import scores
from reverie.stores import skills
from reverie.stores.db import fetchall
from reverie.stores.records import Skill

OUTCOMES: Final = ("success", "failure", "unknown")


def outcome_of(ok: bool | None) -> str:
    """The stored outcome of a use: ``ok`` True, False, or None (the host did not say)."""
    return "unknown" if ok is None else ("success" if ok else "failure")


def record_use(
    conn: sqlite3.Connection,
    namespace: str,
    name: str,
    when: str,
    outcome: str,
    session_id: str | None,
) -> None:
    if outcome not in OUTCOMES:
        raise ValueError(f"outcome must be one of {OUTCOMES}, got {outcome!r}")
    conn.execute(
        "INSERT INTO skill_uses (namespace, name, ts, outcome, session_id) VALUES (?, ?, ?, ?, ?)",
        (namespace, name, when, outcome, session_id),
    )


NAMED_AT_MOST: Final = 500
"""Past this many names, :func:`counts` reads every skill's rows instead of an IN list."""


def counts(
    conn: sqlite3.Connection, namespace: str, since: str, names: Sequence[str] | None = None
) -> dict[str, tuple[int, int, int]]:
    """Each skill's (calls, successes, failures) since ``since`` — of ``names`` only, when
    given — in one grouped read of the covering index."""
    sql = (
        "SELECT name, count(*), sum(outcome = 'success'), sum(outcome = 'failure')"
        " FROM skill_uses WHERE namespace = ? AND ts >= ?"
    )
    params: list[str] = [namespace, since]
    if names is not None and len(names) <= NAMED_AT_MOST:
        sql += f" AND name IN ({', '.join('?' * len(names))})"
        params += names
    rows = fetchall(conn, sql + " GROUP BY name", params)
    return {str(r[0]): (int(r[1]), int(r[2]), int(r[3])) for r in rows}


def idle_since(skill: Skill) -> str:
    """When a skill's idle clock started: its last use, else its last change."""
    return skill.last_used_at or skill.updated_at or skill.created_at


def idle_days(skill: Skill, now: datetime) -> float:
    """Days since the skill's last use (never negative: a clock set back reads as 0)."""
    since = datetime.fromisoformat(idle_since(skill))
    return max(0.0, (now - since).total_seconds() / 86400)


def activities(
    conn: sqlite3.Connection, namespace: str, registered: list[Skill], now: datetime
) -> dict[str, scores.Activity]:
    """Every given skill's activity as of ``now``."""
    since = iso(now - timedelta(days=scores.WINDOW_DAYS))
    window = counts(conn, namespace, since, [s.name for s in registered])
    found = {}
    for skill in registered:
        calls, ok, failed = window.get(skill.name, (0, 0, 0))
        found[skill.name] = scores.activity(calls, ok, failed, idle_days(skill, now))
    return found


@dataclass(frozen=True, slots=True)
class Previous:
    """A skill's last stored scoring."""

    score: float
    tier: str
    scored_at: str


def previous(conn: sqlite3.Connection, namespace: str) -> dict[str, Previous]:
    """Each skill's latest stored score row."""
    rows = fetchall(
        conn,
        "SELECT name, score, tier, scored_at FROM skill_scores WHERE id IN"
        " (SELECT max(id) FROM skill_scores WHERE namespace = ? GROUP BY name)",
        (namespace,),
    )
    return {str(r[0]): Previous(float(r[1]), str(r[2]), str(r[3])) for r in rows}


def store(
    conn: sqlite3.Connection, namespace: str, found: dict[str, scores.Activity], when: str
) -> None:
    """One history row per scored skill."""
    conn.executemany(
        "INSERT INTO skill_scores (namespace, name, scored_at, score, tier, calls, successes,"
        " failures, quality, decay) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (namespace, name, when, a.score, a.tier, a.calls, a.successes, a.failures)
            + (a.quality, a.decay)
            for name, a in found.items()
        ],
    )


def score_round(conn: sqlite3.Connection, namespace: str, now: datetime) -> dict[str, str]:
    """Score every registered skill as of ``now`` and keep the scores (one history row
    each): the curator's scoring, inside its transaction. Returns the tier changes since
    the last scoring (``name: "before→after"``)."""
    found = activities(conn, namespace, skills.registered(conn, namespace), now)
    before = previous(conn, namespace)
    store(conn, namespace, found, iso(now))
    return {
        name: f"{before[name].tier}→{a.tier}"
        for name, a in found.items()
        if name in before and before[name].tier != a.tier
    }


def history(conn: sqlite3.Connection, namespace: str, name: str) -> list[dict[str, Any]]:
    """A skill's stored scorings, oldest first."""
    rows = fetchall(
        conn,
        "SELECT scored_at, score, tier, calls, successes, failures, quality, decay"
        " FROM skill_scores WHERE namespace = ? AND name = ? ORDER BY id",
        (namespace, name),
    )
    keys = ("scored_at", "score", "tier", "calls", "successes", "failures", "quality", "decay")
    return [dict(zip(keys, tuple(r), strict=True)) for r in rows]


def table(conn: sqlite3.Connection, namespace: str, now: datetime) -> list[dict[str, Any]]:
    """Every registered skill's activity as of ``now`` with its last stored scoring, the
    highest score first (ties by name): what ``ns.skill_scores()`` returns."""
    registered = skills.registered(conn, namespace)
    found = activities(conn, namespace, registered, now)
    before = previous(conn, namespace)
    out = []
    for skill in registered:
        a, last = found[skill.name], before.get(skill.name)
        out.append(
            {
                "name": skill.name,
                **a.to_dict(),
                "last_used_at": skill.last_used_at,
                "idle_days": round(idle_days(skill, now), 2),
                "pinned": skill.pinned,
                "created_by": skill.created_by,
                "previous_score": None if last is None else last.score,
                "previous_tier": None if last is None else last.tier,
                "previous_scored_at": None if last is None else last.scored_at,
            }
        )
    out.sort(key=lambda row: (-row["score"], row["name"]))
    return out
