"""The learning graph's data (issue 13, after Hermes' learning_graph): what a namespace
knows — topics, MEMORY.md and USER.md entries, skills, patterns — as nodes sized by how
much each is used, and edges where a skill or pattern was learned from or cites a record.

Pure: reads one connection, writes nothing. Every edge is a link the stores already hold
(docs/skills.md#the-learning-graph-picture lists the kinds):

- ``session``: a skill was created or patched in a session (its ledger row) that also wrote
  the entry, or a live fact of the topic;
- ``member``: one of a pattern's member records tells the same lesson as the entry, or as
  a live fact of the topic (:func:`reverie.stores.patterns.same_lesson`, the measure that
  grouped the pattern);
- ``names``: a skill's body, or a pattern's name, trigger or response, names the topic;
- ``quotes``: a skill's body holds an entry's text, or a live fact's, word for word.

A fact is drawn as its topic: a link to a fact is a link to the topic it lives in.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from reverie.config import RecordsConfig
from reverie.rules.similarity import normalise, stem, tokens
from reverie.stores import skill_activity as skill_activity_store
from reverie.stores import skills
from reverie.stores.db import fetchall
from reverie.stores.patterns import same_lesson, subject_words
from reverie.stores.records import Skill

NODE_KINDS: Final = ("topic", "memory", "user", "skill", "pattern")
EDGE_KINDS: Final = ("session", "member", "names", "quotes")
DEFAULT_MAX_NODES: Final = 60
"""The drawing's bound: the most active nodes kept, the rest counted as left out."""
LABEL_CHARS: Final = 28
QUOTE_MIN_WORDS: Final = 3
"""An entry or fact shorter than this is not quoted by a skill's body (a word or two is
said everywhere)."""
TIER_BONUS: Final = {"hot": 2, "warm": 1, "cold": 0}
SCORE_PER_POINT: Final = 5.0
"""Score points per unit of a skill's drawn activity (a record's unit is one access)."""


@dataclass(frozen=True, slots=True)
class Node:
    """One thing the namespace knows: ``id`` (``topic:<name>``, an entry id,
    ``skill:<name>``, a pattern id), its kind, a short label and its activity."""

    id: str
    kind: str
    label: str
    activity: float

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "label": self.label, "activity": self.activity}


@dataclass(frozen=True, slots=True)
class Edge:
    """A skill or pattern (``src``) learned from or citing a record (``dst``)."""

    src: str
    dst: str
    kind: str

    def to_dict(self) -> dict[str, str]:
        return {"src": self.src, "dst": self.dst, "kind": self.kind}


@dataclass(frozen=True, slots=True)
class LearningGraph:
    """The nodes (most active first), the edges between them, and how many nodes the bound
    left out. Unpacks as ``nodes, edges``."""

    namespace: str
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    left_out: int = 0

    def __iter__(self) -> Iterator[Any]:
        return iter((self.nodes, self.edges))

    def to_dict(self) -> dict[str, Any]:
        return {
            "namespace": self.namespace,
            "nodes": [n.to_dict() for n in self.nodes],
            "edges": [e.to_dict() for e in self.edges],
            "left_out": self.left_out,
        }


@dataclass(slots=True)
class _Known:
    """What the nodes are matched by: each record's text and session, under its node id."""

    nodes: dict[str, Node] = field(default_factory=dict)
    texts: list[tuple[str, str]] = field(default_factory=list)  # (node id, text)
    sessions: dict[str, set[str]] = field(default_factory=dict)  # session → node ids
    topics: dict[str, str] = field(default_factory=dict)  # node id → topic name


def short(text: str, limit: int = LABEL_CHARS) -> str:
    """One line of at most ``limit`` characters, cut at a word with an ellipsis."""
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    cut = line[: limit - 1].rsplit(" ", 1)[0] if " " in line[: limit - 1] else line[: limit - 1]
    return cut.rstrip(" ,.;:") + "…"


def _record_activity(access_count: int | None, tier: str | None) -> float:
    """A fact's or entry's weight: itself, each access, and its tier's standing."""
    return 1.0 + (access_count or 0) + TIER_BONUS.get(tier or "cold", 0)


def _add_topics(conn: sqlite3.Connection, namespace: str, known: _Known) -> None:
    weight: dict[str, float] = {
        name: 0.0
        for (name,) in fetchall(conn, "SELECT name FROM topics WHERE namespace = ?", (namespace,))
    }
    rows = fetchall(
        conn,
        """SELECT f.topic, f.content, f.session_id, l.access_count, l.tier FROM facts f
           LEFT JOIN learning l ON l.namespace = f.namespace AND l.id = f.id
           WHERE f.namespace = ? AND f.invalid_at IS NULL ORDER BY f.rowid""",
        (namespace,),
    )
    for topic, content, session, accesses, tier in rows:
        nid = f"topic:{topic}"
        weight[topic] = weight.get(topic, 0.0) + _record_activity(accesses, tier)
        known.texts.append((nid, content))
        if session:
            known.sessions.setdefault(session, set()).add(nid)
    for topic, total in weight.items():
        nid = f"topic:{topic}"
        known.nodes[nid] = Node(nid, "topic", short(topic), max(total, 1.0))
        known.topics[nid] = topic


def _add_entries(conn: sqlite3.Connection, namespace: str, known: _Known) -> None:
    rows = fetchall(
        conn,
        """SELECT e.id, e.target, e.content, e.session_id, e.reinforce, l.access_count, l.tier
           FROM entries e LEFT JOIN learning l ON l.namespace = e.namespace AND l.id = e.id
           WHERE e.namespace = ? AND e.status = 'live' AND e.target IN ('memory', 'user')
           ORDER BY e.rowid""",
        (namespace,),
    )
    for eid, target, content, session, reinforce, accesses, tier in rows:
        activity = _record_activity(accesses, tier) + max(int(reinforce) - 1, 0)
        known.nodes[eid] = Node(eid, target, short(content), activity)
        known.texts.append((eid, content))
        if session:
            known.sessions.setdefault(session, set()).add(eid)


def skill_activity(
    conn: sqlite3.Connection, namespace: str, now: datetime, registered: list[Skill]
) -> dict[str, float]:
    """Each registered skill's activity: one, plus its activity score (seed 004's calls ×
    quality × decay on 0–100, :mod:`reverie.skills.scores`) over :data:`SCORE_PER_POINT`,
    so a 🔥 skill (≥ 80) weighs as much as a record read some sixteen times."""
    found = skill_activity_store.activities(conn, namespace, registered, now)
    return {name: 1.0 + a.score / SCORE_PER_POINT for name, a in found.items()}


def _add_skills(
    conn: sqlite3.Connection, namespace: str, now: datetime, known: _Known
) -> dict[str, str]:
    """The skill nodes; returns each one's body (what it names and quotes)."""
    registered = skills.registered(conn, namespace)
    for name, activity in skill_activity(conn, namespace, now, registered).items():
        nid = f"skill:{name}"
        known.nodes[nid] = Node(nid, "skill", short(name), activity)
    return {f"skill:{s.name}": s.body for s in registered}


def _add_patterns(conn: sqlite3.Connection, namespace: str, known: _Known) -> dict[str, Any]:
    """The pattern nodes (by occurrences: sessions seen in, and accesses); returns each
    one's text and member ids."""
    rows = fetchall(
        conn,
        """SELECT p.id, p.name, p.trigger, p.response, p.examples, p.sessions, l.access_count
           FROM patterns p JOIN learning l ON l.namespace = p.namespace AND l.id = p.id
           WHERE p.namespace = ? AND l.status = 'active'""",
        (namespace,),
    )
    found: dict[str, Any] = {}
    for pid, name, trigger, response, examples, sessions, accesses in rows:
        known.nodes[pid] = Node(pid, "pattern", short(name), float(sessions + (accesses or 0)))
        found[pid] = (f"{name} {trigger} {response}", json.loads(examples))
    return found


def _session_edges(conn: sqlite3.Connection, namespace: str, known: _Known) -> set[Edge]:
    """A skill → what the sessions it was created or patched in also wrote."""
    rows = fetchall(
        conn,
        """SELECT DISTINCT entry_id, session_id FROM ledger WHERE namespace = ?
           AND target = 'skill' AND action IN ('create', 'patch')
           AND decision IN ('CREATED', 'PATCHED') AND session_id IS NOT NULL""",
        (namespace,),
    )
    return {
        Edge(sid, dst, "session")
        for sid, session in rows
        if sid in known.nodes
        for dst in sorted(known.sessions.get(session, ()))
    }


def _member_edges(
    conn: sqlite3.Connection,
    namespace: str,
    patterns: dict[str, Any],
    known: _Known,
    settings: RecordsConfig,
) -> set[Edge]:
    """A pattern → each entry, or topic of a live fact, that one of its members tells the
    same lesson as. Candidates come from a word index, so each member meets only the
    records it shares enough subject words with."""
    members = {
        str(rid): str(content)
        for rid, content in fetchall(
            conn,
            "SELECT id, content FROM learning WHERE namespace = ? AND content IS NOT NULL",
            (namespace,),
        )
    }
    index: dict[str, set[int]] = {}
    for i, (_, text) in enumerate(known.texts):
        for word in subject_words(text):
            index.setdefault(word, set()).add(i)
    found: set[Edge] = set()
    for pid, (_, examples) in patterns.items():
        for rid in examples:
            said = members.get(rid)
            if said is None:
                continue
            shared: dict[int, int] = {}
            for word in subject_words(said):
                for i in index.get(word, ()):
                    shared[i] = shared.get(i, 0) + 1
            for i, n in shared.items():
                nid, text = known.texts[i]
                if n >= settings.pattern_words and same_lesson(said, text, settings):
                    found.add(Edge(pid, nid, "member"))
    return found


def _names(text: str, topic: str) -> bool:
    said = {stem(t) for t in tokens(text)}
    words = {stem(t) for t in tokens(topic)}
    return bool(words) and words <= said


def _citing_edges(bodies: dict[str, str], patterns: dict[str, Any], known: _Known) -> set[Edge]:
    """Skills and patterns naming a topic; skill bodies quoting an entry or a live fact."""
    found: set[Edge] = set()
    texts = {**bodies, **{pid: text for pid, (text, _) in patterns.items()}}
    for src, text in texts.items():
        for nid, topic in known.topics.items():
            if _names(text, topic):
                found.add(Edge(src, nid, "names"))
    for src, body in bodies.items():
        said = f" {normalise(body)} "
        for nid, text in known.texts:
            if len(tokens(text)) >= QUOTE_MIN_WORDS and f" {normalise(text)} " in said:
                found.add(Edge(src, nid, "quotes"))
    return found


def _bounded(namespace: str, known: _Known, edges: set[Edge], max_nodes: int) -> LearningGraph:
    """The ``max_nodes`` most active nodes (ties: kind, then id), the edges among them."""
    order = {kind: i for i, kind in enumerate(NODE_KINDS)}
    ranked = sorted(known.nodes.values(), key=lambda n: (-n.activity, order[n.kind], n.id))
    kept = ranked[:max_nodes]
    ids = {n.id for n in kept}
    drawn = sorted(
        (e for e in edges if e.src in ids and e.dst in ids),
        key=lambda e: (e.src, e.dst, EDGE_KINDS.index(e.kind)),
    )
    return LearningGraph(namespace, tuple(kept), tuple(drawn), len(ranked) - len(kept))


def learning_graph(
    conn: sqlite3.Connection,
    namespace: str,
    now: datetime,
    *,
    max_nodes: int = DEFAULT_MAX_NODES,
    settings: RecordsConfig | None = None,
) -> LearningGraph:
    """The namespace's learning graph as of ``now``: archived skills, ended entries and
    superseded facts left out; at most ``max_nodes`` nodes, the most active."""
    settings = settings or RecordsConfig()
    known = _Known()
    _add_topics(conn, namespace, known)
    _add_entries(conn, namespace, known)
    bodies = _add_skills(conn, namespace, now, known)
    patterns = _add_patterns(conn, namespace, known)
    edges = _session_edges(conn, namespace, known)
    edges |= _member_edges(conn, namespace, patterns, known, settings)
    edges |= _citing_edges(bodies, patterns, known)
    return _bounded(namespace, known, edges, max_nodes)
