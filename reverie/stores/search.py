"""Full-text search over live facts, entries and episodes: SQLite FTS5 ranked by BM25."""

from __future__ import annotations

import math

import aiosqlite

from reverie.rules.similarity import NEGATIONS, STOPWORDS, stem, tokens
from reverie.stores.db import fetchall, fetchone
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


def match_expression(text: str, *, keep_stopwords: bool = False) -> str | None:
    """A safe FTS5 query: every token quoted, OR-ed (recall first, BM25 orders); stop words
    are left out unless they are all there is."""
    found = tokens(text)
    words: list[str] = []
    kept = found if keep_stopwords else [t for t in found if t not in STOPWORDS]
    for token in kept or found:
        for part in token.replace('"', " ").split():
            if part not in words:
                words.append(part)
    if not words:
        return None
    return " OR ".join(f'"{w}"' for w in words[:64])


def pigeonhole_terms(text: str, threshold: float) -> list[str]:
    """Terms of which any near-duplicate (Jaccard >= threshold) must contain at least one.

    A twin B of A shares at least ``ceil(threshold * |A|)`` of A's content words, so it holds
    at least one of any ``|A| - ceil(threshold * |A|) + 1`` of them; the longest are taken
    as the likeliest to be rare, so the query matches few rows."""
    by_stem: dict[str, str] = {}
    for token in tokens(text):
        if token in STOPWORDS and token not in NEGATIONS:
            continue
        by_stem.setdefault(stem(token), token)
    words = sorted(by_stem.values(), key=len, reverse=True)
    need = math.ceil(threshold * len(words) - 1e-9)
    return words[: max(1, len(words) - need + 1)]


async def fact_candidates(
    conn: aiosqlite.Connection, namespace: str, topic: str, terms: list[str], limit: int
) -> list[int]:
    """Rowids of live facts of one topic containing any of ``terms`` (no ranking: the
    caller checks each one, so the query stops at ``limit`` matches)."""
    expression = match_expression(" ".join(terms), keep_stopwords=True)
    if expression is None:
        return []
    sql = """
        SELECT f.rowid FROM search_index s JOIN facts f ON f.rowid = s.rowid / 4
        WHERE search_index MATCH ? AND s.rowid % 4 = ? AND f.namespace = ? AND f.topic = ?
          AND f.invalid_at IS NULL
        LIMIT ?
    """
    return [
        row[0]
        for row in await fetchall(conn, sql, (expression, KIND_FACT, namespace, topic, limit))
    ]


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
    for row in await fetchall(conn, sql, (expression, namespace, k)):
        kind = row["rid"] % 4
        score = -float(row["rank"])
        if kind == KIND_FACT:
            hit = SearchHit("fact", row["fact_id"], row["text"], score, topic=row["topic"])
        elif kind == KIND_ENTRY:
            hit = SearchHit("entry", row["entry_id"], row["text"], score, target=row["target"])
        else:
            hit = SearchHit(
                "episode",
                f"ep-{row['rid'] // 4}",
                row["text"],
                score,
                session_id=row["session_id"],
                turn=row["turn"],
            )
        hits.append(hit)
    hidden = 0
    if not include_superseded:
        count_sql = """
            SELECT count(*) FROM search_index s JOIN facts f ON f.rowid = s.rowid / 4
            WHERE search_index MATCH ? AND s.namespace = ? AND s.rowid % 4 = 1
              AND f.invalid_at IS NOT NULL
        """
        counted = await fetchone(conn, count_sql, (expression, namespace))
        hidden = int(counted[0]) if counted else 0
    return SearchResults(hits, hidden)
