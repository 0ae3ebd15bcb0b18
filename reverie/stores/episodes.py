"""Episodes: every ``Session.turn`` as it was said, searchable, never rewritten."""

from __future__ import annotations

import aiosqlite

from reverie.stores import search
from reverie.stores.records import Episode
from reverie.stores.schema import KIND_EPISODE


async def record(
    conn: aiosqlite.Connection,
    namespace: str,
    session_id: str,
    user: str | None,
    assistant: str | None,
    ts: str,
) -> Episode:
    """Append the session's next turn (0-based, numbered inside the write transaction)."""
    async with conn.execute(
        "SELECT coalesce(max(turn), -1) + 1 FROM episodes WHERE namespace = ? AND session_id = ?",
        (namespace, session_id),
    ) as cur:
        row = await cur.fetchone()
    turn = int(row[0]) if row else 0
    cur2 = await conn.execute(
        "INSERT INTO episodes (namespace, session_id, turn, user_text, assistant_text, ts)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (namespace, session_id, turn, user, assistant, ts),
    )
    assert cur2.lastrowid is not None
    episode = Episode(cur2.lastrowid, namespace, session_id, turn, user, assistant, ts)
    await search.index(conn, KIND_EPISODE, episode.id, namespace, episode.text)
    return episode


async def since(conn: aiosqlite.Connection, namespace: str, after_id: int) -> list[Episode]:
    """Episodes of a namespace with an id above a watermark, oldest first."""
    async with conn.execute(
        "SELECT id, namespace, session_id, turn, user_text, assistant_text, ts FROM episodes"
        " WHERE namespace = ? AND id > ? ORDER BY id",
        (namespace, after_id),
    ) as cur:
        return [Episode(*(row[i] for i in range(7))) for row in await cur.fetchall()]
