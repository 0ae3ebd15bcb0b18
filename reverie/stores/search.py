"""Full-text search over live facts, entries and episodes: SQLite FTS5 ranked by BM25."""

from __future__ import annotations

import sqlite3

from reverie.rules.similarity import STOPWORDS, tokens
from reverie.stores.db import fetchall, fetchone
from reverie.stores.records import SearchHit, SearchResults
from reverie.stores.schema import KIND_ENTRY, KIND_EPISODE, KIND_FACT

_KINDS = {KIND_FACT: "fact", KIND_ENTRY: "entry", KIND_EPISODE: "episode"}


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


_TOP = """
    SELECT rowid AS rid, text, bm25({table}) AS rank FROM {table}
    WHERE {table} MATCH ? AND namespace = ? ORDER BY rank LIMIT ?
"""
_DETAILS = """
    WITH top AS ({top})
    SELECT top.rid, top.text, top.rank, f.id AS fact_id, f.topic AS topic,
           e.id AS entry_id, e.target AS target, p.session_id AS session_id, p.turn AS turn
    FROM top
    LEFT JOIN facts f ON top.rid % 4 = 1 AND f.rowid = top.rid / 4
    LEFT JOIN entries e ON top.rid % 4 = 2 AND e.rowid = top.rid / 4
    LEFT JOIN episodes p ON top.rid % 4 = 3 AND p.id = top.rid / 4
    ORDER BY top.rank
"""


def _hit(row: sqlite3.Row) -> SearchHit:
    kind, score = row["rid"] % 4, -float(row["rank"])
    if kind == KIND_FACT:
        return SearchHit("fact", row["fact_id"], row["text"], score, topic=row["topic"])
    if kind == KIND_ENTRY:
        return SearchHit("entry", row["entry_id"], row["text"], score, target=row["target"])
    return SearchHit(
        "episode",
        f"ep-{row['rid'] // 4}",
        row["text"],
        score,
        session_id=row["session_id"],
        turn=row["turn"],
    )


def search(
    conn: sqlite3.Connection,
    namespace: str,
    query: str,
    k: int,
    *,
    include_superseded: bool = False,
) -> SearchResults:
    """The top ``k`` live rows by BM25 (FTS5 keeps only the best k while it scans), then
    their details for those k rows alone; superseded matches are counted, or searched too."""
    expression = match_expression(query)
    if expression is None or k <= 0:
        return SearchResults([], 0)
    params = (expression, namespace, k)
    sql = _DETAILS.format(top=_TOP.format(table="search_index"))
    hits = [_hit(row) for row in fetchall(conn, sql, params)]
    if include_superseded:
        old_sql = _DETAILS.format(top=_TOP.format(table="search_superseded"))
        hits += [_hit(row) for row in fetchall(conn, old_sql, params)]
        hits = sorted(hits, key=lambda h: h.score, reverse=True)[:k]
        return SearchResults(hits, 0)
    counted = fetchone(
        conn,
        "SELECT count(*) FROM search_superseded WHERE search_superseded MATCH ? AND namespace = ?",
        (expression, namespace),
    )
    return SearchResults(hits, int(counted[0]) if counted else 0)
