"""The units the M-FLOW graph is built from, read from the stores past a watermark (see
:mod:`reverie.stores.graph_build`): each a :class:`~reverie.rules.cone.Unit` with its home,
its types and the names it carries."""

from __future__ import annotations

import json
import sqlite3
from typing import Final

from reverie.rules.cone import BROAD_CHARS, ENTITY, ENTRY_HOMES, Scope, Unit, names
from reverie.stores import patterns, skills, summaries
from reverie.stores.db import fetchall

LOG_KINDS: Final = ("correction", "error", "lesson", "insight", "decision")
"""Log records that are episodes of their own (patterns are read from their library)."""


def known_names(conn: sqlite3.Connection, namespace: str) -> frozenset[str]:
    rows = fetchall(
        conn,
        "SELECT label FROM graph_nodes WHERE namespace = ? AND layer = ? AND kind = 'name'",
        (namespace, ENTITY),
    )
    return frozenset(str(r[0]).removeprefix("name ") for r in rows)


def people(text: str, known: frozenset[str]) -> tuple[Scope, ...]:
    return tuple(Scope("name", n) for n in names(text, known))


def statement_tags(conn: sqlite3.Connection, namespace: str) -> dict[str, str]:
    """The extractor's tag of each statement it kept, by its text: a fact flushed from a
    tagged statement is of that type."""
    rows = fetchall(conn, "SELECT text, tag FROM extracts WHERE namespace = ?", (namespace,))
    return {str(r[0]): str(r[1]) for r in rows}


def facts(conn: sqlite3.Connection, ns: str, after: int, known: frozenset[str]) -> list[Unit]:
    rows = fetchall(
        conn,
        "SELECT rowid, id, topic, content, invalid_at FROM facts"
        " WHERE namespace = ? AND rowid > ? ORDER BY rowid",
        (ns, after),
    )
    tags = statement_tags(conn, ns) if rows else {}
    return [
        Unit(
            f"fact:{r['id']}",
            "fact",
            r["id"],
            r["content"],
            (tags.get(r["content"], "fact"),),
            (Scope("project", r["topic"]), *people(r["content"], known)),
            current=r["invalid_at"] is None,
        )
        for r in rows
    ]


def entries(conn: sqlite3.Connection, ns: str, after: int, known: frozenset[str]) -> list[Unit]:
    rows = fetchall(
        conn,
        "SELECT rowid, id, target, content, status FROM entries"
        " WHERE namespace = ? AND rowid > ? ORDER BY rowid",
        (ns, after),
    )
    units = []
    for r in rows:
        kind, name, type_ = ENTRY_HOMES.get(r["target"], ("reference", r["target"], "note"))
        scopes = (Scope(kind, name), *people(r["content"], known))
        units.append(
            Unit(f"entry:{r['id']}", "entry", r["id"], r["content"], (type_,), scopes,
                 current=r["status"] == "live")
        )  # fmt: skip
    return units


def turns(conn: sqlite3.Connection, ns: str, after: int, known: frozenset[str]) -> list[Unit]:
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
        scopes = (Scope("user", "user"), *people(text, known))
        ref = f"ep-{r['id']}"
        said = "\n".join(t for t in (r["user_text"], r["assistant_text"]) if t)
        broad = len(text) > BROAD_CHARS
        units.append(Unit(ref, "episode", ref, text, types, scopes, broad=broad, said=said))
    return units


def records(conn: sqlite3.Connection, ns: str, after: int, known: frozenset[str]) -> list[Unit]:
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
            (Scope("feedback", "feedback"), *people(r["content"], known)),
            current=r["status"] == "active",
        )
        for r in rows
    ]


def whole(conn: sqlite3.Connection, ns: str, known: frozenset[str]) -> list[Unit]:
    """Summaries, patterns and skills: few, rewritten in place, compared at every build."""
    units = []
    for (topic,) in fetchall(conn, "SELECT name FROM topics WHERE namespace = ?", (ns,)):
        text = summaries.current(conn, ns, topic)
        if text:
            scope = (Scope("project", topic), *people(text, known))
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
