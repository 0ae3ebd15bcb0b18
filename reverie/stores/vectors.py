"""Embeddings of search rows: float32 blobs keyed by (embedder, search rowid), so a new
embedder re-embeds everything and an old one's vectors are simply never read.

Only rows still in ``search_index`` (live facts, live entries, episodes) are embedded or
returned; superseded facts (``search_superseded``) are returned on request only.
"""

from __future__ import annotations

import sqlite3
from array import array
from collections.abc import Sequence

from reverie.stores.db import fetchall
from reverie.stores.schema import KIND_ENTRY, KIND_EPISODE, KIND_FACT

_CODES = {"fact": KIND_FACT, "entry": KIND_ENTRY, "episode": KIND_EPISODE}


def kind_code(kind: str | None) -> int | None:
    if kind is None:
        return None
    if kind not in _CODES:
        raise ValueError(f"kind must be one of {sorted(_CODES)}, got {kind!r}")
    return _CODES[kind]


def pack(vector: Sequence[float]) -> bytes:
    return array("f", vector).tobytes()


def unpack(blob: bytes) -> list[float]:
    values = array("f")
    values.frombytes(blob)
    return values.tolist()


_MISSING = """
    SELECT c.rid AS rid, s.text AS text FROM (
        SELECT rowid * 4 + 1 AS rid FROM facts WHERE namespace = ? AND invalid_at IS NULL
        UNION ALL SELECT rowid * 4 + 2 FROM entries WHERE namespace = ? AND status = 'live'
        UNION ALL SELECT id * 4 + 3 FROM episodes WHERE namespace = ?
    ) AS c
    JOIN search_index s ON s.rowid = c.rid
    WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE v.embedder = ? AND v.rid = c.rid)
    ORDER BY c.rid DESC LIMIT ?
"""


def missing(
    conn: sqlite3.Connection, namespace: str, embedder: str, limit: int
) -> list[tuple[int, str]]:
    """Up to ``limit`` live search rows of ``namespace`` with no vector from ``embedder``
    (newest source rows of each kind first), as ``(rid, text)``."""
    params = (namespace, namespace, namespace, embedder, limit)
    return [(int(row["rid"]), str(row["text"])) for row in fetchall(conn, _MISSING, params)]


def save(
    conn: sqlite3.Connection,
    namespace: str,
    embedder: str,
    rows: Sequence[tuple[int, Sequence[float]]],
    now: str,
) -> int:
    """Store (or replace) vectors; returns how many."""
    conn.executemany(
        "INSERT OR REPLACE INTO vectors (rid, embedder, namespace, dim, vector, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        [(rid, embedder, namespace, len(v), pack(v), now) for rid, v in rows],
    )
    return len(rows)


def live(
    conn: sqlite3.Connection,
    namespace: str,
    embedder: str,
    *,
    kind: int | None = None,
    include_superseded: bool = False,
) -> list[tuple[int, list[float]]]:
    """Every vector of ``namespace`` from ``embedder`` whose row is live (or superseded,
    when asked), as ``(rid, vector)``."""
    alive = "EXISTS (SELECT 1 FROM search_index s WHERE s.rowid = v.rid)"
    if include_superseded:
        alive = f"({alive} OR EXISTS (SELECT 1 FROM search_superseded o WHERE o.rowid = v.rid))"
    sql = (
        "SELECT v.rid, v.vector FROM vectors v INDEXED BY vectors_ns"
        f" WHERE v.namespace = ? AND v.embedder = ? AND {alive}"
    )
    params: tuple[object, ...] = (namespace, embedder)
    if kind is not None:
        sql += " AND v.rid % 4 = ?"
        params += (kind,)
    return [(int(row[0]), unpack(row[1])) for row in fetchall(conn, sql, params)]


_DESCRIBE = """
    SELECT c.value AS rid,
           coalesce(s.text, o.text) AS text, f.id AS fact_id, e.id AS entry_id
    FROM json_each(?) AS c
    LEFT JOIN search_index s ON s.rowid = c.value
    LEFT JOIN search_superseded o ON o.rowid = c.value
    LEFT JOIN facts f ON c.value % 4 = 1 AND f.rowid = c.value / 4
    LEFT JOIN entries e ON c.value % 4 = 2 AND e.rowid = c.value / 4
"""


def describe(conn: sqlite3.Connection, rids: Sequence[int]) -> dict[int, tuple[str, str, str]]:
    """``(kind, id, text)`` of search rows, by rid (rows that no longer exist are left out)."""
    if not rids:
        return {}
    out: dict[int, tuple[str, str, str]] = {}
    for row in fetchall(conn, _DESCRIBE, (_json_ints(rids),)):
        rid, text = int(row["rid"]), row["text"]
        if text is None:
            continue
        kind = rid % 4
        if kind == KIND_FACT and row["fact_id"]:
            out[rid] = ("fact", str(row["fact_id"]), str(text))
        elif kind == KIND_ENTRY and row["entry_id"]:
            out[rid] = ("entry", str(row["entry_id"]), str(text))
        elif kind == KIND_EPISODE:
            out[rid] = ("episode", f"ep-{rid // 4}", str(text))
    return out


def _json_ints(values: Sequence[int]) -> str:
    return "[" + ",".join(str(int(v)) for v in values) + "]"
