"""Episodes: every ``Session.turn`` as it was said, searchable, never rewritten."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable

from reverie.stores.db import fetchall, fetchone
from reverie.stores.records import Episode


def record(
    conn: sqlite3.Connection,
    namespace: str,
    session_id: str,
    user: str | None,
    assistant: str | None,
    ts: str,
) -> Episode:
    """Append the session's next turn (0-based, numbered inside the write transaction), with
    the ledger's last seq: every write after the turn has a higher one (time order)."""
    row = fetchone(
        conn,
        "INSERT INTO episodes (namespace, session_id, turn, user_text, assistant_text, ts,"
        " horizon) SELECT ?, ?, coalesce(max(turn), -1) + 1, ?, ?, ?,"
        " (SELECT coalesce(max(seq), 0) FROM ledger) FROM episodes"
        " WHERE namespace = ? AND session_id = ? RETURNING id, turn",
        (namespace, session_id, user, assistant, ts, namespace, session_id),
    )
    assert row is not None
    return Episode(row[0], namespace, session_id, row[1], user, assistant, ts)


def since(conn: sqlite3.Connection, namespace: str, after_id: int) -> list[Episode]:
    """Episodes of a namespace with an id above a watermark, oldest first."""
    return [
        Episode(*(row[i] for i in range(7)))
        for row in fetchall(
            conn,
            "SELECT id, namespace, session_id, turn, user_text, assistant_text, ts FROM episodes"
            " WHERE namespace = ? AND id > ? ORDER BY id",
            (namespace, after_id),
        )
    ]


def turns(
    conn: sqlite3.Connection, episode_ids: Iterable[int]
) -> dict[int, tuple[int, str | None]]:
    """Of each of these episodes, in one query: its horizon (0 for episodes recorded before
    horizons existed) and what the user said (the flush checks a turn as a whole)."""
    wanted = json.dumps(sorted(set(episode_ids)))
    return {
        int(row[0]): (int(row[1]), None if row[2] is None else str(row[2]))
        for row in fetchall(
            conn,
            "SELECT e.id, coalesce(e.horizon, 0), e.user_text FROM json_each(?) AS c"
            " JOIN episodes e ON e.id = c.value",
            (wanted,),
        )
    }
