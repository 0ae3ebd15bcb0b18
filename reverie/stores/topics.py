"""Topics and their facts. A superseded fact gets ``invalid_at`` and ``superseded_by``; no
fact is ever deleted, so every chain replays from its root."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from reverie.errors import StoreError
from reverie.rules.similarity import normalise
from reverie.rules.supersede import keys
from reverie.stores.db import fetchall, fetchone
from reverie.stores.records import Fact
from reverie.stores.search import match_expression

_COLUMNS = (
    "id, namespace, topic, content, chain_id, depth, supersedes, superseded_by, created_by, "
    "session_id, created_at, invalid_at"
)


def _fact(row: sqlite3.Row) -> Fact:
    return Fact(*(row[i] for i in range(12)))


def names(conn: sqlite3.Connection, namespace: str) -> list[str]:
    return [
        row[0]
        for row in fetchall(
            conn, "SELECT name FROM topics WHERE namespace = ? ORDER BY name", (namespace,)
        )
    ]


def index(conn: sqlite3.Connection, namespace: str) -> list[tuple[str, int, int]]:
    """(topic, live facts, superseded facts) for every topic of a namespace."""
    sql = """
        SELECT t.name, count(f.id) - count(f.invalid_at), count(f.invalid_at)
        FROM topics t LEFT JOIN facts f ON f.namespace = t.namespace AND f.topic = t.name
        WHERE t.namespace = ? GROUP BY t.name ORDER BY t.name
    """
    return [(row[0], row[1], row[2]) for row in fetchall(conn, sql, (namespace,))]


def exists(conn: sqlite3.Connection, namespace: str, topic: str) -> bool:
    return (
        fetchone(conn, "SELECT 1 FROM topics WHERE namespace = ? AND name = ?", (namespace, topic))
        is not None
    )


def create(conn: sqlite3.Connection, namespace: str, topic: str, when: str) -> None:
    conn.execute(
        "INSERT INTO topics (namespace, name, created_at, updated_at) VALUES (?, ?, ?, ?)",
        (namespace, topic, when, when),
    )


def live(conn: sqlite3.Connection, namespace: str, topic: str) -> list[Fact]:
    return [
        _fact(row)
        for row in fetchall(
            conn,
            f"SELECT {_COLUMNS} FROM facts WHERE namespace = ? AND topic = ? AND invalid_at IS NULL"
            " ORDER BY created_at, rowid",
            (namespace, topic),
        )
    ]


def live_page(
    conn: sqlite3.Connection, namespace: str, topic: str, limit: int
) -> tuple[list[Fact], int]:
    """A topic's newest ``limit`` live facts, newest first, and how many live facts it holds
    in all (what a bounded topic read shows, and what it leaves out)."""
    where = "namespace = ? AND topic = ? AND invalid_at IS NULL"
    total = fetchone(conn, f"SELECT count(*) FROM facts WHERE {where}", (namespace, topic))
    rows = fetchall(
        conn,
        f"SELECT {_COLUMNS} FROM facts WHERE {where} ORDER BY created_at DESC, rowid DESC LIMIT ?",
        (namespace, topic, max(0, limit)),
    )
    return [_fact(row) for row in rows], int(total[0]) if total else 0


def get(conn: sqlite3.Connection, namespace: str, fact_id: str) -> Fact | None:
    row = fetchone(
        conn, f"SELECT {_COLUMNS} FROM facts WHERE namespace = ? AND id = ?", (namespace, fact_id)
    )
    return _fact(row) if row else None


def insert(conn: sqlite3.Connection, fact: Fact) -> None:
    """Insert a fact with its supersede keys; a trigger indexes it for search."""
    k = keys(fact.content)
    conn.execute(
        f"INSERT INTO facts ({_COLUMNS}, norm, subject_key, role_key, skeleton_key)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            fact.id,
            fact.namespace,
            fact.topic,
            fact.content,
            fact.chain_id,
            fact.depth,
            fact.supersedes,
            fact.superseded_by,
            fact.created_by,
            fact.session_id,
            fact.created_at,
            fact.invalid_at,
            normalise(fact.content),
            k.subject,
            k.role,
            k.skeleton,
        ),
    )


def says_live(conn: sqlite3.Connection, namespace: str, text: str) -> bool:
    """Whether ``text`` is, normalised, the content of a live fact of the namespace."""
    key = normalise(text)
    row = fetchone(
        conn,
        "SELECT 1 FROM facts WHERE namespace = ? AND norm = ? AND invalid_at IS NULL LIMIT 1",
        (namespace, key),
    )
    return bool(key) and row is not None


def _by_keys(text: str, live: str, scope: list[object]) -> tuple[list[str], list[object]]:
    """One indexed lookup per supersede key of ``text`` (an OR would defeat the indexes):
    subqueries of fact rowids, and their parameters."""
    k = keys(text)
    parts: list[str] = []
    params: list[object] = []
    for name, value in (("subject", k.subject), ("role", k.role), ("skeleton", k.skeleton)):
        if value is not None:
            parts.append(
                f"SELECT rowid FROM facts INDEXED BY facts_{name} WHERE {live} AND {name}_key = ?"
            )
            params += [*scope, value]
    return parts, params


def candidates(
    conn: sqlite3.Connection,
    namespace: str,
    topic: str,
    text: str,
    term_sets: list[list[str]],
    limit: int,
) -> list[Fact]:
    """In one query, oldest first: the live facts of a topic that the write rules could
    match — the normalised twin, those sharing a supersede key (one indexed lookup per key;
    an OR would defeat the indexes), and those containing any term of each term set
    (FTS5, at most ``limit`` each)."""
    live = "namespace = ? AND topic = ? AND invalid_at IS NULL"
    parts = [f"SELECT rowid FROM facts INDEXED BY facts_norm WHERE {live} AND norm = ?"]
    params: list[object] = [namespace, topic, normalise(text)]
    key_parts, key_params = _by_keys(text, live, [namespace, topic])
    parts += key_parts
    params += key_params
    for terms in term_sets:
        expression = match_expression(" ".join(terms), keep_stopwords=True)
        if expression is None:
            continue
        parts.append(
            "SELECT rowid FROM (SELECT f.rowid AS rowid FROM search_index s"
            " JOIN facts f ON f.rowid = s.rowid / 4 WHERE search_index MATCH ?"
            " AND s.rowid % 4 = 1 AND f.namespace = ? AND f.topic = ?"
            " AND f.invalid_at IS NULL ORDER BY s.rank LIMIT ?)"
        )
        params += [expression, namespace, topic, limit]
    return _facts_in(conn, parts, params)


def _facts_in(conn: sqlite3.Connection, parts: list[str], params: list[object]) -> list[Fact]:
    """The facts whose rowids any of the subqueries yields, oldest first."""
    rows = fetchall(
        conn,
        f"SELECT {_COLUMNS} FROM facts WHERE rowid IN ({' UNION '.join(parts)})"
        " ORDER BY created_at, rowid",
        params,
    )
    return [_fact(row) for row in rows]


FORMER_CHARS = 4000  # a chain row's length, as the schema's trigger keeps it


def index_formerly(conn: sqlite3.Connection, fact_id: str, texts: Sequence[str]) -> None:
    """What was said before a fact in its session and collapsed into it ("30s" … "no
    wait, 45s"): indexed in the fact's chain row (kind 0, the row a superseded text joins),
    newest first before any older link's text, so the fact is found by those words too —
    shown as the fact, never stored as facts of their own."""
    if not texts:
        return
    row = fetchone(  # the chain's live fact: a repair indexes after the chains are made
        conn,
        "SELECT h.rowid, h.namespace FROM facts f JOIN facts h ON h.chain_id = f.chain_id"
        " AND h.invalid_at IS NULL WHERE f.id = ?",
        (fact_id,),
    )
    if row is None:
        return
    rid, namespace = int(row[0]) * 4, str(row[1])
    had = fetchone(conn, "SELECT text FROM search_index WHERE rowid = ?", (rid,))
    text = "\n".join([*reversed(texts), *([str(had[0])] if had else [])])[:FORMER_CHARS]
    conn.execute("DELETE FROM search_index WHERE rowid = ?", (rid,))
    conn.execute(
        "INSERT INTO search_index (rowid, text, namespace) VALUES (?, ?, ?)",
        (rid, text, namespace),
    )


def invalidate(conn: sqlite3.Connection, fact_id: str, superseded_by: str, when: str) -> None:
    """Soft invalidation: the old fact stays, stamped and pointing at its successor."""
    cur = conn.execute(
        "UPDATE facts SET invalid_at = ?, superseded_by = ? WHERE id = ? AND invalid_at IS NULL",
        (when, superseded_by, fact_id),
    )
    if cur.rowcount != 1:  # another writer got there first: the transaction rolls back
        raise StoreError(f"fact {fact_id} was no longer live when superseded; retry the call")


def chain(conn: sqlite3.Connection, namespace: str, fact_id: str) -> list[Fact]:
    """Every fact of the chain that ``fact_id`` belongs to, oldest first."""
    return [
        _fact(row)
        for row in fetchall(
            conn,
            f"SELECT {_COLUMNS} FROM facts WHERE namespace = ? AND chain_id ="
            " (SELECT chain_id FROM facts WHERE namespace = ? AND id = ?) ORDER BY depth",
            (namespace, namespace, fact_id),
        )
    ]


def all_facts(conn: sqlite3.Connection, namespace: str, topic: str) -> list[Fact]:
    return [
        _fact(row)
        for row in fetchall(
            conn,
            f"SELECT {_COLUMNS} FROM facts WHERE namespace = ? AND topic = ?"
            " ORDER BY created_at, rowid",
            (namespace, topic),
        )
    ]


def corrected(
    conn: sqlite3.Connection, namespace: str, min_depth: int, created_before: str
) -> list[Fact]:
    """Live facts whose chain was corrected (depth >= ``min_depth``) and that have stood
    since ``created_before``: the most maintained first, then the oldest."""
    return [
        _fact(row)
        for row in fetchall(
            conn,
            f"SELECT {_COLUMNS} FROM facts WHERE namespace = ? AND invalid_at IS NULL"
            " AND depth >= ? AND created_at <= ? ORDER BY depth DESC, created_at, id",
            (namespace, min_depth, created_before),
        )
    ]


def shared_subjects(conn: sqlite3.Connection, namespace: str) -> list[Fact]:
    """Live facts whose subject key is used in more than one topic (one grouped, indexed
    query: the cross-topic lint never reads the other facts)."""
    live = "namespace = ? AND invalid_at IS NULL AND subject_key IS NOT NULL"
    return [
        _fact(row)
        for row in fetchall(
            conn,
            f"SELECT {_COLUMNS} FROM facts WHERE {live} AND subject_key IN ("
            f" SELECT subject_key FROM facts WHERE {live}"
            " GROUP BY subject_key HAVING count(DISTINCT topic) > 1)"
            " ORDER BY subject_key, created_at, rowid",
            (namespace, namespace),
        )
    ]


def related(conn: sqlite3.Connection, namespace: str, text: str, limit: int) -> list[Fact]:
    """Live facts of any topic that a text may agree or conflict with: those sharing its
    supersede keys (exact, through the key indexes) and the ``limit`` best BM25 matches of
    its words."""
    # naming the topics lets the (namespace, topic, key) partial indexes serve the lookup
    live = (
        "namespace = ? AND topic IN (SELECT name FROM topics WHERE namespace = ?)"
        " AND invalid_at IS NULL"
    )
    parts, params = _by_keys(text, live, [namespace, namespace])
    expression = match_expression(text)
    if expression is not None:
        parts.append(
            "SELECT rowid FROM (SELECT s.rowid / 4 AS rowid FROM search_index s"
            " WHERE search_index MATCH ? AND s.namespace = ? AND s.rowid % 4 = 1"
            " ORDER BY bm25(search_index) LIMIT ?)"
        )
        params += [expression, namespace, limit]
    if not parts:
        return []
    return _facts_in(conn, parts, params)


def every_live(conn: sqlite3.Connection, namespace: str, limit: int) -> list[Fact] | None:
    """Every live fact of the namespace, oldest first, when it holds at most ``limit``;
    None when it holds more. The search index spans every namespace of the home, so a
    search costs all of the home's matches; a small namespace is cheaper read whole."""
    rows = fetchall(
        conn,
        f"SELECT {_COLUMNS} FROM facts WHERE namespace = ? AND invalid_at IS NULL"
        " ORDER BY created_at, rowid LIMIT ?",
        (namespace, limit + 1),
    )
    return None if len(rows) > limit else [_fact(row) for row in rows]


def every_superseded(
    conn: sqlite3.Connection, namespace: str, limit: int
) -> list[tuple[Fact, Fact]] | None:
    """Every superseded fact of the namespace with its chain's live head (as
    :func:`superseded_with` pairs them), when it holds at most ``limit``; else None."""
    rows = fetchall(
        conn,
        f"SELECT {_COLUMNS} FROM facts WHERE namespace = ? AND invalid_at IS NOT NULL"
        " ORDER BY created_at, rowid LIMIT ?",
        (namespace, limit + 1),
    )
    if len(rows) > limit:
        return None
    return [(old, head) for old in map(_fact, rows) if (head := _live_head(conn, old)) is not None]


def _live_head(conn: sqlite3.Connection, old: Fact) -> Fact | None:
    row = fetchone(
        conn,
        f"SELECT {_COLUMNS} FROM facts WHERE chain_id = ? AND invalid_at IS NULL",
        (old.chain_id,),
    )
    return None if row is None else _fact(row)


def superseded_with(
    conn: sqlite3.Connection, namespace: str, value_terms: list[str], limit: int
) -> list[tuple[Fact, Fact]]:
    """Superseded facts holding any of these value tokens, each with its chain's live
    head: what an entry citing an old value would be citing."""
    expression = match_expression(" ".join(value_terms), keep_stopwords=True)
    if expression is None:
        return []
    rows = fetchall(
        conn,
        f"SELECT {_COLUMNS} FROM facts WHERE rowid IN (SELECT s.rowid / 4 FROM"
        " search_superseded s WHERE search_superseded MATCH ? AND s.namespace = ?"
        " ORDER BY bm25(search_superseded) LIMIT ?)",
        (expression, namespace, limit),
    )
    return [(old, head) for old in map(_fact, rows) if (head := _live_head(conn, old)) is not None]


def newest(conn: sqlite3.Connection, namespace: str, topic: str, limit: int) -> list[str]:
    """The texts of a topic's newest live facts."""
    return [
        row[0]
        for row in fetchall(
            conn,
            "SELECT content FROM facts WHERE namespace = ? AND topic = ? AND invalid_at IS NULL"
            " ORDER BY rowid DESC LIMIT ?",
            (namespace, topic, limit),
        )
    ]


def last_change(conn: sqlite3.Connection, namespace: str, topic: str) -> int:
    """The rowid of a topic's newest fact (0 if none): every change to what a topic holds
    inserts a fact (a correction inserts the new one as it stamps the old)."""
    row = fetchone(
        conn,
        "SELECT max(rowid) FROM facts WHERE namespace = ? AND topic = ?",
        (namespace, topic),
    )
    return int(row[0] or 0) if row else 0


def topics_of_subjects(
    conn: sqlite3.Connection, namespace: str, subjects: list[str]
) -> dict[str, str]:
    """For each subject key, the topic of a live fact about it (the newest), if any."""
    out: dict[str, str] = {}
    for subject in subjects:
        row = fetchone(
            conn,
            "SELECT topic FROM facts INDEXED BY facts_subject WHERE namespace = ?"
            " AND topic IN (SELECT name FROM topics WHERE namespace = ?)"
            " AND invalid_at IS NULL AND subject_key = ? ORDER BY rowid DESC LIMIT 1",
            (namespace, namespace, subject),
        )
        if row is not None:
            out[subject] = row[0]
    return out


def latest(
    conn: sqlite3.Connection, namespace: str, topic: str, limit: int
) -> list[tuple[str, str]]:
    """(id, content) of a topic's newest live facts (where a natural correction's old value
    usually is), without loading whole facts."""
    return [
        (str(row[0]), str(row[1]))
        for row in fetchall(
            conn,
            "SELECT id, content FROM facts INDEXED BY facts_live WHERE namespace = ?"
            " AND topic = ? AND invalid_at IS NULL ORDER BY rowid DESC LIMIT ?",
            (namespace, topic, limit),
        )
    ]


def by_ids(conn: sqlite3.Connection, ids: list[str]) -> list[Fact]:
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    rows = fetchall(conn, f"SELECT {_COLUMNS} FROM facts WHERE id IN ({marks})", ids)
    return [_fact(row) for row in rows]


def topic_of(conn: sqlite3.Connection, fact_id: str) -> str | None:
    row = fetchone(conn, "SELECT topic FROM facts WHERE id = ?", (fact_id,))
    return None if row is None else str(row[0])
