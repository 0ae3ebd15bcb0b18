"""Full-text search over live facts, entries and episodes: SQLite FTS5 ranked by BM25."""

from __future__ import annotations

import aiosqlite

from reverie.rules.similarity import tokens
from reverie.stores.records import SearchHit, SearchResults
from reverie.stores.schema import KIND_ENTRY, KIND_EPISODE, KIND_FACT

_KINDS = {KIND_FACT: "fact", KIND_ENTRY: "entry", KIND_EPISODE: "episode"}


async def index(
    conn: aiosqlite.Connection, kind: int, source_rowid: int, namespace: str, text: str
) -> None:
    await conn.execute(
        "INSERT INTO search_index (rowid, text, namespace) VALUES (?, ?, ?)",
        (source_rowid * 4 + kind, text, namespace),
    )


async def unindex(conn: aiosqlite.Connection, kind: int, source_rowid: int) -> None:
    await conn.execute("DELETE FROM search_index WHERE rowid = ?", (source_rowid * 4 + kind,))


def match_expression(text: str) -> str | None:
    """A safe FTS5 query: every token quoted, OR-ed (recall first, BM25 orders)."""
    words = []
    for token in tokens(text):
        for part in token.replace('"', " ").split():
            if part not in words:
                words.append(part)
    if not words:
        return None
    return " OR ".join(f'"{w}"' for w in words[:64])


async def fact_candidates(
    conn: aiosqlite.Connection, namespace: str, topic: str, text: str, limit: int
) -> list[int]:
    """Rowids of the live facts of one topic that best match ``text``."""
    expression = match_expression(text)
    if expression is None:
        return []
    sql = """
        SELECT f.rowid FROM search_index s JOIN facts f ON f.rowid = s.rowid / 4
        WHERE search_index MATCH ? AND s.rowid % 4 = ? AND f.namespace = ? AND f.topic = ?
          AND f.invalid_at IS NULL
        ORDER BY bm25(search_index) LIMIT ?
    """
    async with conn.execute(sql, (expression, KIND_FACT, namespace, topic, limit)) as cur:
        return [row[0] for row in await cur.fetchall()]


async def search(
    conn: aiosqlite.Connection,
    namespace: str,
    query: str,
    k: int,
    *,
    include_superseded: bool = False,
) -> SearchResults:
    expression = match_expression(query)
    if expression is None or k <= 0:
        return SearchResults([], 0)
    live_fact = "1" if include_superseded else "f.invalid_at IS NULL"
    sql = f"""
        SELECT s.rowid AS rid, s.text AS text, bm25(search_index) AS rank,
               f.id AS fact_id, f.topic AS topic,
               e.id AS entry_id, e.target AS target,
               p.session_id AS session_id, p.turn AS turn
        FROM search_index s
        LEFT JOIN facts f ON s.rowid % 4 = 1 AND f.rowid = s.rowid / 4
        LEFT JOIN entries e ON s.rowid % 4 = 2 AND e.rowid = s.rowid / 4
        LEFT JOIN episodes p ON s.rowid % 4 = 3 AND p.id = s.rowid / 4
        WHERE search_index MATCH ? AND s.namespace = ?
          AND ((f.id IS NOT NULL AND {live_fact}) OR e.status = 'live' OR p.id IS NOT NULL)
        ORDER BY rank LIMIT ?
    """
    hits: list[SearchHit] = []
    async with conn.execute(sql, (expression, namespace, k)) as cur:
        for row in await cur.fetchall():
            kind = row["rid"] % 4
            score = -float(row["rank"])
            if kind == KIND_FACT:
                hit = SearchHit("fact", row["fact_id"], row["text"], score, topic=row["topic"])
            elif kind == KIND_ENTRY:
                hit = SearchHit("entry", row["entry_id"], row["text"], score,
                                target=row["target"])
            else:
                hit = SearchHit("episode", f"ep-{row['rid'] // 4}", row["text"], score,
                                session_id=row["session_id"], turn=row["turn"])
            hits.append(hit)
    hidden = 0
    if not include_superseded:
        count_sql = """
            SELECT count(*) FROM search_index s JOIN facts f ON f.rowid = s.rowid / 4
            WHERE search_index MATCH ? AND s.namespace = ? AND s.rowid % 4 = 1
              AND f.invalid_at IS NOT NULL
        """
        async with conn.execute(count_sql, (expression, namespace)) as cur:
            counted = await cur.fetchone()
            hidden = int(counted[0]) if counted else 0
    return SearchResults(hits, hidden)
