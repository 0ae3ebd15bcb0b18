"""Building the M-FLOW graph from what the loop stores, incrementally (migration 10); the
units are read by :mod:`reverie.stores.graph_sources`.

Each source has a watermark in ``graph_marks``: facts, entries, turns of the episode log and
log records are read past it in rowid order; topic summaries, patterns and skills (a few
per namespace, and rewritten in place) are compared whole at each build. A unit whose text
changed loses its old edges and gets its cone again. Then the currency pass: an episode
whose unit was superseded, removed, archived or resolved is marked not current (bundle
search never returns it), and one revived is current again. The cone of each unit is
:func:`reverie.rules.cone.nodes_and_edges`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from datetime import datetime
from typing import Final

from reverie.rules.cone import Edge, Node, Unit, named, nodes_and_edges
from reverie.stores import graph_sources as sources
from reverie.stores.db import fetchall, fetchone

_CURRENT: Final = (
    ("fact", "SELECT id FROM facts WHERE namespace = :ns AND invalid_at IS NULL"),
    ("entry", "SELECT id FROM entries WHERE namespace = :ns AND status = 'live'"),
    ("record", "SELECT id FROM learning WHERE namespace = :ns AND status = 'active'"),
    (
        "skill",
        "SELECT 'skill:' || name FROM skills WHERE namespace = :ns AND archived_at IS NULL",
    ),
)


class _Writer:
    """One build's writes: node ids cached, changes counted."""

    def __init__(self, conn: sqlite3.Connection, namespace: str, now: str) -> None:
        self.conn, self.namespace, self.now = conn, namespace, now
        self.ids: dict[tuple[int, str], int] = {}
        self.changed = 0
        self.dropped = False
        """Whether a unit lost its old edges (then nodes that lead nowhere are pruned)."""

    def node(self, node: Node) -> int:
        place = (node.layer, node.key)
        if place in self.ids and node.layer != 1:
            return self.ids[place]
        row = fetchone(
            self.conn,
            "SELECT id, label, current, broad FROM graph_nodes"
            " WHERE namespace = ? AND layer = ? AND key = ?",
            (self.namespace, node.layer, node.key),
        )
        if row is not None and node.layer != 1:  # a tip node keeps the words it was made with
            self.ids[place] = int(row["id"])
            return self.ids[place]
        if row is None:
            cursor = self.conn.execute(
                """INSERT INTO graph_nodes (namespace, layer, kind, key, label, ref, current,
                                            broad, created_at, updated_at)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                (self.namespace, node.layer, node.kind, node.key, node.label, node.ref,
                 int(node.current), int(node.broad), self.now, self.now),
            )  # fmt: skip
            self.changed += 1
            node_id = int(cursor.lastrowid or 0)
        else:
            node_id = int(row["id"])
            if (row["label"], bool(row["current"]), bool(row["broad"])) != (
                node.label,
                node.current,
                node.broad,
            ):
                self.conn.execute(
                    "UPDATE graph_nodes SET label = ?, current = ?, broad = ?, updated_at = ?"
                    " WHERE id = ?",
                    (node.label, int(node.current), int(node.broad), self.now, node_id),
                )
                self.changed += 1
        self.ids[place] = node_id
        return node_id

    def edge(self, edge: Edge) -> None:
        src, dst = self.ids[edge.src], self.ids[edge.dst]
        cursor = self.conn.execute(
            """INSERT OR IGNORE INTO graph_edges (namespace, src, dst, description, cost,
                                                  created_at) VALUES (?, ?, ?, ?, ?, ?)""",
            (self.namespace, src, dst, edge.description, edge.cost, self.now),
        )
        self.changed += cursor.rowcount

    def unit(self, unit: Unit) -> None:
        """The unit's cone; a unit whose text changed loses the edges of its old one."""
        old = fetchone(
            self.conn,
            "SELECT id, label FROM graph_nodes WHERE namespace = ? AND layer = 1 AND key = ?",
            (self.namespace, unit.key),
        )
        if old is not None and old["label"] != unit.text:
            dropped = self.conn.execute("DELETE FROM graph_edges WHERE dst = ?", (old["id"],))
            self.changed += dropped.rowcount
            self.dropped = True
        nodes, edges = nodes_and_edges(unit)
        for node in nodes:
            self.node(node)
        for edge in edges:
            self.edge(edge)


def mark(conn: sqlite3.Connection, namespace: str, source: str) -> int:
    row = fetchone(
        conn,
        "SELECT mark FROM graph_marks WHERE namespace = ? AND source = ?",
        (namespace, source),
    )
    return int(row[0]) if row else 0


def marks(conn: sqlite3.Connection, namespace: str) -> dict[str, int]:
    rows = fetchall(conn, "SELECT source, mark FROM graph_marks WHERE namespace = ?", (namespace,))
    return {str(r[0]): int(r[1]) for r in rows}


def _set_mark(conn: sqlite3.Connection, namespace: str, source: str, value: int, now: str) -> None:
    conn.execute(
        "INSERT INTO graph_marks VALUES (?, ?, ?, ?) ON CONFLICT (namespace, source)"
        " DO UPDATE SET mark = excluded.mark, updated_at = excluded.updated_at",
        (namespace, source, value, now),
    )


_SOURCES: Final = (
    ("facts", sources.facts, "SELECT max(rowid) FROM facts WHERE namespace = ?"),
    ("entries", sources.entries, "SELECT max(rowid) FROM entries WHERE namespace = ?"),
    ("records", sources.records, "SELECT max(rn) FROM learning WHERE namespace = ?"),
)


def build(conn: sqlite3.Connection, namespace: str, now: str) -> int:
    """Bring the namespace's graph up to date with its stores, past each source's
    watermark; the nodes and edges added or changed (0 when nothing was new)."""
    writer = _Writer(conn, namespace, now)
    known = sources.known_names(conn, namespace)
    for source, read, top in _SOURCES:
        after = mark(conn, namespace, source)
        _apply(writer, read(conn, namespace, after, known))
        row = fetchone(conn, top, (namespace,))
        highest = int(row[0]) if row and row[0] is not None else 0
        if highest > after:
            _set_mark(conn, namespace, source, highest, now)
    after = mark(conn, namespace, "turns")
    turns = sources.turns(conn, namespace, after, known)
    _apply(writer, turns)
    if turns:
        _set_mark(conn, namespace, "turns", int(turns[-1].ref.removeprefix("ep-")), now)
    _apply(writer, sources.whole(conn, namespace, known))
    writer.changed += _currency(conn, namespace, now)
    if writer.dropped:
        writer.changed += _prune(conn, namespace)
    for source, value in _seen(conn, namespace).items():
        if value > mark(conn, namespace, source):
            _set_mark(conn, namespace, source, value, now)
    return writer.changed


_SEEN: Final = {
    "ledger": "SELECT max(seq) FROM ledger WHERE namespace = ?",
    "tagged": "SELECT max(id) FROM episodes WHERE namespace = ? AND weight IS NOT NULL",
    "learning": "SELECT max(rn) FROM learning WHERE namespace = ?",
    "distilled": "SELECT max(updated_at) FROM review_state WHERE namespace = ?"
    " AND key LIKE 'summary:%'",
}


def _seen(conn: sqlite3.Connection, namespace: str) -> dict[str, int]:
    """How far each kind of change has gone: the ledger (every write and every change of
    state), the turns the extractor tagged, the log records, the distilled summaries (as
    microseconds since the epoch)."""
    out = {}
    for source, sql in _SEEN.items():
        row = fetchone(conn, sql, (namespace,))
        value = row[0] if row else None
        if isinstance(value, str):
            value = int(datetime.fromisoformat(value).timestamp() * 1_000_000)
        out[source] = int(value or 0)
    return out


def due(conn: sqlite3.Connection, namespace: str) -> bool:
    """Whether anything changed in the stores since the last build (one read: a build of
    nothing new is not worth a write transaction)."""
    return any(v > mark(conn, namespace, s) for s, v in _seen(conn, namespace).items())


def _prune(conn: sqlite3.Connection, namespace: str) -> int:
    """Facets and facet points that no longer lead straight to an episode (a rewritten
    summary's old words), then entities left leading nowhere, with their edges."""
    pruned = 0
    for layer in (2, 3, 4):
        below = "JOIN graph_nodes d ON d.id = e.dst AND d.layer = 1" if layer < 4 else ""
        barren = f"""SELECT id FROM graph_nodes n WHERE namespace = :ns AND layer = :layer
                     AND NOT EXISTS (SELECT 1 FROM graph_edges e {below} WHERE e.src = n.id)"""
        params = {"ns": namespace, "layer": layer}
        for side in ("src", "dst"):
            sql = f"DELETE FROM graph_edges WHERE namespace = :ns AND {side} IN ({barren})"
            pruned += conn.execute(sql, params).rowcount
        pruned += conn.execute(f"DELETE FROM graph_nodes WHERE id IN ({barren})", params).rowcount
    return pruned


def _apply(writer: _Writer, units: Iterable[Unit]) -> None:
    for unit in units:
        writer.unit(unit)


def _currency(conn: sqlite3.Connection, namespace: str, now: str) -> int:
    """Episodes whose unit stopped (or started again) being live: marked so."""
    changed = 0
    for kind, live in _CURRENT:
        params = {"ns": namespace, "kind": kind, "now": now}
        for value, test in ((0, "NOT IN"), (1, "IN")):
            cursor = conn.execute(
                f"UPDATE graph_nodes SET current = {value}, updated_at = :now"
                f" WHERE namespace = :ns AND layer = 1 AND kind = :kind"
                f" AND current != {value} AND ref {test} ({live})",
                params,
            )
            changed += cursor.rowcount
    return changed


def reset(conn: sqlite3.Connection, namespace: str) -> None:
    """The namespace's graph dropped, watermarks and all: the next build makes it again
    from the stores (``reverie reindex``)."""
    conn.execute("DELETE FROM graph_edges WHERE namespace = ?", (namespace,))
    conn.execute("DELETE FROM graph_nodes WHERE namespace = ?", (namespace,))
    conn.execute("DELETE FROM graph_marks WHERE namespace = ?", (namespace,))


def unnamed(conn: sqlite3.Connection, namespace: str, limit: int) -> list[sqlite3.Row]:
    """Current episodes a configured model has not been asked to name yet, oldest first:
    ``id``, ``key``, ``label``."""
    return fetchall(
        conn,
        "SELECT id, key, label FROM graph_nodes WHERE namespace = ? AND layer = 1"
        " AND current = 1 AND id > ? ORDER BY id LIMIT ?",
        (namespace, mark(conn, namespace, "named"), limit),
    )


def name(
    conn: sqlite3.Connection,
    namespace: str,
    names_: list[tuple[str, str, str, str]],
    upto: int,
    now: str,
) -> int:
    """The entities and facets a model named, ``(episode key, kind, entity, facet)`` each,
    already checked against the episode's words; episodes up to node ``upto`` count as
    asked. The nodes and edges added."""
    writer = _Writer(conn, namespace, now)
    for episode_key, kind, entity, facet in names_:
        episode = fetchone(
            conn,
            "SELECT id FROM graph_nodes WHERE namespace = ? AND layer = 1 AND key = ?",
            (namespace, episode_key),
        )
        if episode is None:
            continue  # gone since it was read
        writer.ids[(1, episode_key)] = int(episode[0])
        nodes, edges = named(episode_key, kind, entity, facet)
        for node in nodes:
            writer.node(node)
        for edge in edges:
            writer.edge(edge)
    if upto > mark(conn, namespace, "named"):
        _set_mark(conn, namespace, "named", upto, now)
    return writer.changed
