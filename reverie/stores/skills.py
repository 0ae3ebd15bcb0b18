"""The skills registry; SKILL.md files are projections of these rows."""

from __future__ import annotations

import sqlite3

from reverie.stores.db import fetchall, fetchone
from reverie.stores.records import Skill

_COLUMNS = (
    "namespace, name, body, created_by, pinned, created_at, updated_at, last_used_at, archived_at"
)


def _skill(row: sqlite3.Row) -> Skill:
    values = [row[i] for i in range(9)]
    values[4] = bool(values[4])
    return Skill(*values)


def get(conn: sqlite3.Connection, namespace: str, name: str) -> Skill | None:
    row = fetchone(
        conn, f"SELECT {_COLUMNS} FROM skills WHERE namespace = ? AND name = ?", (namespace, name)
    )
    return _skill(row) if row else None


def registered(conn: sqlite3.Connection, namespace: str) -> list[Skill]:
    return [
        _skill(row)
        for row in fetchall(
            conn,
            f"SELECT {_COLUMNS} FROM skills WHERE namespace = ? AND archived_at IS NULL"
            " ORDER BY name",
            (namespace,),
        )
    ]


def insert(conn: sqlite3.Connection, skill: Skill) -> None:
    conn.execute(
        f"INSERT INTO skills ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            skill.namespace,
            skill.name,
            skill.body,
            skill.created_by,
            int(skill.pinned),
            skill.created_at,
            skill.updated_at,
            skill.last_used_at,
            skill.archived_at,
        ),
    )


def update_body(conn: sqlite3.Connection, namespace: str, name: str, body: str, when: str) -> None:
    conn.execute(
        "UPDATE skills SET body = ?, updated_at = ?, last_used_at = ?"
        " WHERE namespace = ? AND name = ?",
        (body, when, when, namespace, name),
    )


def set_pinned(conn: sqlite3.Connection, namespace: str, name: str, pinned: bool) -> None:
    conn.execute(
        "UPDATE skills SET pinned = ? WHERE namespace = ? AND name = ?",
        (int(pinned), namespace, name),
    )


def mark_used(conn: sqlite3.Connection, namespace: str, name: str, when: str) -> None:
    conn.execute(
        "UPDATE skills SET last_used_at = ? WHERE namespace = ? AND name = ?",
        (when, namespace, name),
    )


def archive(
    conn: sqlite3.Connection, namespace: str, name: str, when: str, archive_dir: str
) -> None:
    """Deregister: the row stays, marked archived, with where its directory went."""
    conn.execute(
        "UPDATE skills SET archived_at = ?, archive_dir = ? WHERE namespace = ? AND name = ?",
        (when, archive_dir, namespace, name),
    )


def unarchive(conn: sqlite3.Connection, namespace: str, name: str, when: str) -> None:
    conn.execute(
        "UPDATE skills SET archived_at = NULL, archive_dir = NULL, last_used_at = ?"
        " WHERE namespace = ? AND name = ?",
        (when, namespace, name),
    )


def archive_dir(conn: sqlite3.Connection, namespace: str, name: str) -> str | None:
    row = fetchone(
        conn,
        "SELECT archive_dir FROM skills WHERE namespace = ? AND name = ?"
        " AND archived_at IS NOT NULL",
        (namespace, name),
    )
    return None if row is None else row[0]


def every(conn: sqlite3.Connection, namespace: str) -> list[Skill]:
    """Registered and archived skills."""
    return [
        _skill(row)
        for row in fetchall(
            conn, f"SELECT {_COLUMNS} FROM skills WHERE namespace = ? ORDER BY name", (namespace,)
        )
    ]
