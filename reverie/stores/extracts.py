"""Per-turn extracts (L2): candidate statements the flush (L3) reviews past its watermark."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass

from reverie.rules.extraction import Candidate
from reverie.stores.db import fetchall


@dataclass(frozen=True, slots=True)
class Extract:
    id: int
    session_id: str
    episode_id: int
    speaker: str
    text: str
    tag: str
    weight: str


def record(
    conn: sqlite3.Connection,
    namespace: str,
    session_id: str,
    episode_id: int,
    found: list[tuple[str, Candidate]],
    when: str,
) -> int:
    """Store a turn's candidates and tag its episode (its weight marks it extracted)."""
    added = 0
    for speaker, candidate in found:
        cur = conn.execute(
            "INSERT OR IGNORE INTO extracts (namespace, session_id, episode_id, speaker, text,"
            " tag, weight, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                namespace,
                session_id,
                episode_id,
                speaker,
                candidate.text,
                candidate.tag.value,
                candidate.weight.value,
                when,
            ),
        )
        added += cur.rowcount
    tags = sorted({c.tag.value for _, c in found})
    weight = "none"  # extracted, nothing worth a candidate
    if found:
        weight = "high" if any(c.weight.value == "high" for _, c in found) else "normal"
    conn.execute(
        "UPDATE episodes SET tags = ?, weight = ? WHERE id = ?",
        (json.dumps(tags), weight, episode_id),
    )
    return added


def since(conn: sqlite3.Connection, namespace: str, after_id: int, limit: int) -> list[Extract]:
    return [
        Extract(*(row[i] for i in range(7)))
        for row in fetchall(
            conn,
            "SELECT id, session_id, episode_id, speaker, text, tag, weight FROM extracts"
            " WHERE namespace = ? AND id > ? ORDER BY id LIMIT ?",
            (namespace, after_id, limit),
        )
    ]


def recent_texts(
    conn: sqlite3.Connection, namespace: str, session_id: str, limit: int
) -> list[str]:
    """The session's latest candidate statements, oldest first (what a fragment refers to)."""
    rows = fetchall(
        conn,
        "SELECT text FROM extracts WHERE namespace = ? AND session_id = ? ORDER BY id DESC LIMIT ?",
        (namespace, session_id, limit),
    )
    return [r[0] for r in reversed(rows)]


def by_ids(conn: sqlite3.Connection, namespace: str, ids: list[int]) -> list[Extract]:
    """The extracts with these ids (those a flush left waiting), oldest first."""
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    return [
        Extract(*(row[i] for i in range(7)))
        for row in fetchall(
            conn,
            "SELECT id, session_id, episode_id, speaker, text, tag, weight FROM extracts"
            f" WHERE namespace = ? AND id IN ({marks}) ORDER BY id",
            (namespace, *ids),
        )
    ]
