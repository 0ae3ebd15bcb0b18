"""Building the M-FLOW graph from what the loop stores, incrementally (migration 10).

Each source has a watermark in ``graph_marks``: facts, entries, turns of the episode log and
log records are read past it in rowid order; topic summaries, patterns and skills (a few
per namespace, and rewritten in place) are compared whole at each build. A unit whose text
changed loses its old edges and gets its cone again. Then the currency pass: an episode
whose unit was superseded, removed, archived or resolved is marked not current (bundle
search never returns it), and one revived is current again. The cone of each unit is
:func:`reverie.rules.cone.nodes_and_edges`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from typing import Final

from reverie.rules.cone import (
    BROAD_CHARS,
    ENTITY,
    ENTRY_HOMES,
    Edge,
    Node,
    Scope,
    Unit,
    names,
    nodes_and_edges,
)
from reverie.stores import patterns, skills, summaries
from reverie.stores.db import fetchall, fetchone

LOG_KINDS: Final = ("correction", "error", "lesson", "insight", "decision")
"""Log records that are episodes of their own (patterns are read from their library)."""

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


def _known_names(conn: sqlite3.Connection, namespace: str) -> frozenset[str]:
    rows = fetchall(
        conn,
        "SELECT label FROM graph_nodes WHERE namespace = ? AND layer = ? AND kind = 'person'",
        (namespace, ENTITY),
    )
    return frozenset(str(r[0]).removeprefix("person ") for r in rows)


def _people(text: str, known: frozenset[str]) -> tuple[Scope, ...]:
    return tuple(Scope("person", n) for n in names(text, known))


def _tags(conn: sqlite3.Connection, namespace: str) -> dict[str, str]:
    """The extractor's tag of each statement it kept, by its text: a fact flushed from a
    tagged statement is of that type."""
    rows = fetchall(conn, "SELECT text, tag FROM extracts WHERE namespace = ?", (namespace,))
    return {str(r[0]): str(r[1]) for r in rows}


def _facts(conn: sqlite3.Connection, ns: str, after: int, known: frozenset[str]) -> list[Unit]:
    rows = fetchall(
        conn,
        "SELECT rowid, id, topic, content, invalid_at FROM facts"
        " WHERE namespace = ? AND rowid > ? ORDER BY rowid",
        (ns, after),
    )
    tags = _tags(conn, ns) if rows else {}
    return [
        Unit(
            f"fact:{r['id']}",
            "fact",
            r["id"],
            r["content"],
            (tags.get(r["content"], "fact"),),
            (Scope("project", r["topic"]), *_people(r["content"], known)),
            current=r["invalid_at"] is None,
        )
        for r in rows
    ]


def _entries(conn: sqlite3.Connection, ns: str, after: int, known: frozenset[str]) -> list[Unit]:
    rows = fetchall(
        conn,
        "SELECT rowid, id, target, content, status FROM entries"
        " WHERE namespace = ? AND rowid > ? ORDER BY rowid",
        (ns, after),
    )
    units = []
    for r in rows:
        kind, name, type_ = ENTRY_HOMES.get(r["target"], ("reference", r["target"], "note"))
        scopes = (Scope(kind, name), *_people(r["content"], known))
        units.append(
            Unit(f"entry:{r['id']}", "entry", r["id"], r["content"], (type_,), scopes,
                 current=r["status"] == "live")
        )  # fmt: skip
    return units


def _turns(conn: sqlite3.Connection, ns: str, after: int, known: frozenset[str]) -> list[Unit]:
    """The episode log's turns the extractor has tagged, in order, up to the first it has
    not (its tags are the turn's types)."""
    rows = fetchall(
        conn,
        "SELECT id, user_text, assistant_text, tags, weight FROM episodes"
        " WHERE namespace = ? AND id > ? ORDER BY id",
        (ns, after),
    )
    units = []
    for r in rows:
        if r["weight"] is None:
            break
        parts = [f"user: {r['user_text']}"] if r["user_text"] else []
        parts += [f"assistant: {r['assistant_text']}"] if r["assistant_text"] else []
        text = "\n".join(parts)
        types = tuple(dict.fromkeys(json.loads(r["tags"] or "[]"))) or ("exchange",)
        scopes = (Scope("user", "user"), *_people(text, known))
        ref = f"ep-{r['id']}"
        said = "\n".join(t for t in (r["user_text"], r["assistant_text"]) if t)
        broad = len(text) > BROAD_CHARS
        units.append(Unit(ref, "episode", ref, text, types, scopes, broad=broad, said=said))
    return units


def _records(conn: sqlite3.Connection, ns: str, after: int, known: frozenset[str]) -> list[Unit]:
    marks_ = ",".join("?" * len(LOG_KINDS))
    rows = fetchall(
        conn,
        f"SELECT rn, id, kind, content, status FROM learning WHERE namespace = ? AND rn > ?"
        f" AND content IS NOT NULL AND kind IN ({marks_}) ORDER BY rn",
        (ns, after, *LOG_KINDS),
    )
    return [
        Unit(
            f"record:{r['id']}",
            "record",
            r["id"],
            r["content"],
            (r["kind"],),
            (Scope("feedback", "feedback"), *_people(r["content"], known)),
            current=r["status"] == "active",
        )
        for r in rows
    ]


def _whole(conn: sqlite3.Connection, ns: str, known: frozenset[str]) -> list[Unit]:
    """Summaries, patterns and skills: few, rewritten in place, compared at every build."""
    units = []
    for (topic,) in fetchall(conn, "SELECT name FROM topics WHERE namespace = ?", (ns,)):
        text = summaries.current(conn, ns, topic)
        if text:
            scope = (Scope("project", topic), *_people(text, known))
            units.append(Unit(f"summary:{topic}", "summary", f"summary:{topic}", text,
                              ("summary",), scope, broad=True))  # fmt: skip
    for p in patterns.library(conn, ns):
        text = f"{p.trigger}: {p.response}"
        kinds = tuple(f for f in p.facets if f in LOG_KINDS) or ("pattern",)
        units.append(Unit(f"pattern:{p.id}", "pattern", p.id, text, kinds,
                          (Scope("feedback", "feedback"),)))  # fmt: skip
    for s in skills.every(conn, ns):
        units.append(
            Unit(f"skill:{s.name}", "skill", f"skill:{s.name}", f"{s.name}: {s.body}",
                 ("skill",), (Scope("skill", s.name),), current=s.archived_at is None)
        )  # fmt: skip
    return units


_SOURCES: Final = (
    ("facts", _facts, "SELECT max(rowid) FROM facts WHERE namespace = ?"),
    ("entries", _entries, "SELECT max(rowid) FROM entries WHERE namespace = ?"),
    ("records", _records, "SELECT max(rn) FROM learning WHERE namespace = ?"),
)


def build(conn: sqlite3.Connection, namespace: str, now: str) -> int:
    """Bring the namespace's graph up to date with its stores, past each source's
    watermark; the nodes and edges added or changed (0 when nothing was new)."""
    writer = _Writer(conn, namespace, now)
    known = _known_names(conn, namespace)
    for source, read, top in _SOURCES:
        after = mark(conn, namespace, source)
        _apply(writer, read(conn, namespace, after, known))
        row = fetchone(conn, top, (namespace,))
        highest = int(row[0]) if row and row[0] is not None else 0
        if highest > after:
            _set_mark(conn, namespace, source, highest, now)
    after = mark(conn, namespace, "turns")
    turns = _turns(conn, namespace, after, known)
    _apply(writer, turns)
    if turns:
        _set_mark(conn, namespace, "turns", int(turns[-1].ref.removeprefix("ep-")), now)
    _apply(writer, _whole(conn, namespace, known))
    writer.changed += _currency(conn, namespace, now)
    if writer.dropped:
        writer.changed += _prune(conn, namespace)
    return writer.changed


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
