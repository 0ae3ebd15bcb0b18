"""Entries of MEMORY.md, USER.md, SOUL.md, user_settings and agent_profile.

An entry is never deleted: remove and replace end it (``status``) and keep its text, so it
can be restored and the ledger can always be replayed against it.
"""

from __future__ import annotations

import sqlite3

from reverie.rules.similarity import normalise
from reverie.stores.db import fetchall, fetchone
from reverie.stores.records import ENTRY_SEPARATOR, Entry

_COLUMNS = (
    "id, namespace, target, content, key, reinforce, status, replaced_by, created_by, "
    "session_id, created_at, updated_at, ended_at"
)


def _entry(row: sqlite3.Row) -> Entry:
    return Entry(*(row[i] for i in range(13)))


def render(entries: list[Entry]) -> str:
    """The block injected and projected for one target: entries joined by a § line."""
    return ENTRY_SEPARATOR.join(e.rendered for e in entries)


def usage_after(entries: list[Entry], change: dict[str, str | None]) -> int:
    """Rendered size after replacing entries by id (None = removed); key '' = a new entry."""
    texts = []
    for entry in entries:
        if entry.id in change:
            replacement = change[entry.id]
            if replacement is not None:
                texts.append(replacement)
        else:
            texts.append(entry.rendered)
    if change.get("") is not None:
        texts.append(change[""] or "")
    return len(ENTRY_SEPARATOR.join(texts))


def live(conn: sqlite3.Connection, namespace: str, target: str) -> list[Entry]:
    return [
        _entry(row)
        for row in fetchall(
            conn,
            f"SELECT {_COLUMNS} FROM entries WHERE namespace = ? AND target = ? AND status = 'live'"
            " ORDER BY created_at, rowid",
            (namespace, target),
        )
    ]


def every(conn: sqlite3.Connection, namespace: str, target: str) -> list[Entry]:
    """Every entry of a target ever written, live or ended (what its file may still show)."""
    return [
        _entry(row)
        for row in fetchall(
            conn,
            f"SELECT {_COLUMNS} FROM entries WHERE namespace = ? AND target = ? ORDER BY rowid",
            (namespace, target),
        )
    ]


def get(conn: sqlite3.Connection, namespace: str, entry_id: str) -> Entry | None:
    row = fetchone(
        conn,
        f"SELECT {_COLUMNS} FROM entries WHERE namespace = ? AND id = ?",
        (namespace, entry_id),
    )
    return _entry(row) if row else None


def insert(conn: sqlite3.Connection, entry: Entry) -> None:
    conn.execute(
        f"INSERT INTO entries ({_COLUMNS}, norm) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            entry.id,
            entry.namespace,
            entry.target,
            entry.content,
            entry.key,
            entry.reinforce,
            entry.status,
            entry.replaced_by,
            entry.created_by,
            entry.session_id,
            entry.created_at,
            entry.updated_at,
            entry.ended_at,
            normalise(entry.content),
        ),
    )


def end(
    conn: sqlite3.Connection,
    entry_id: str,
    status: str,
    when: str,
    replaced_by: str | None = None,
) -> None:
    """End a live entry (removed / replaced); its text stays for restore and audit."""
    conn.execute(
        "UPDATE entries SET status = ?, replaced_by = ?, ended_at = ?, updated_at = ? WHERE id = ?",
        (status, replaced_by, when, when, entry_id),
    )


def revive(conn: sqlite3.Connection, entry_id: str, when: str) -> None:
    conn.execute(
        "UPDATE entries SET status = 'live', replaced_by = NULL, ended_at = NULL,"
        " updated_at = ? WHERE id = ?",
        (when, entry_id),
    )


def set_reinforce(conn: sqlite3.Connection, entry_id: str, count: int, when: str) -> None:
    conn.execute(
        "UPDATE entries SET reinforce = ?, updated_at = ? WHERE id = ?", (count, when, entry_id)
    )


def namespaces(conn: sqlite3.Connection) -> list[str]:
    sql = """SELECT namespace FROM entries UNION SELECT namespace FROM topics
             UNION SELECT namespace FROM skills UNION SELECT namespace FROM episodes
             UNION SELECT namespace FROM learning"""  # a lesson learnt by hand, alone
    return sorted(row[0] for row in fetchall(conn, sql))
