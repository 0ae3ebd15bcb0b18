"""Seed 003's pattern detection and seed 004's pattern library (migration 9).

A pattern is the same lesson, error or correction seen in ``records.pattern_sessions``
sessions. "The same" is judged by meaning the way the writer judges it: by the stemmed
content-word sets of :func:`reverie.rules.similarity.word_set`, here as their overlap
(shared words over the shorter set), because a lesson said again in other words shares
its subject's words, not its length. A record restated word for word is one record with
a restatement (an access) in another session, so its sessions count too.

Each pattern is a ``patterns`` row (its name, trigger, response, examples and facets) and a
``learning`` row of kind ``pattern`` (its tier, priority and accesses), WARM from the
start as the seed promotes it. Nothing here is worded by a model: the name and trigger
are the words the examples share, the response is the newest example's text.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from reverie.config import RecordsConfig
from reverie.frozen import quick_init
from reverie.rules.query import PRIORITIES
from reverie.rules.similarity import NEGATIONS, is_value, normalise, stem, tokens, word_set
from reverie.stores import learning, ledger, search
from reverie.stores.db import fetchall, fetchone
from reverie.stores.records import LedgerRecord, _Mapping

SEEN_KINDS: Final = ("correction", "error", "lesson", "insight")
"""The log records a pattern is found among."""
_RECENT: Final = 500  # the newest log records, and user statements, compared
EXAMPLE_PREFIX: Final = "lrn-x"
"""A user statement made an example becomes a log record ``lrn-x<extract id>``."""
_NAME_WORDS: Final = 3
_PLURAL: Final = {"correction": "corrections", "error": "errors", "lesson": "lessons"}


@quick_init
@dataclass(frozen=True, slots=True)
class Sighting:
    """One log record and the sessions it was seen in (said, or restated)."""

    id: str
    kind: str
    content: str
    priority: str
    created_at: str
    sessions: frozenset[str]


@quick_init
@dataclass(frozen=True, slots=True)
class Pattern(_Mapping):
    """A pattern as seed 004's library writes it (``patterns/p-<id>.md``)."""

    id: str
    name: str
    trigger: str
    response: str
    examples: tuple[str, ...]
    facets: tuple[str, ...]
    sessions: int
    tier: str
    priority: str
    access_count: int
    created_at: str
    updated_at: str
    entity: str = "pattern"

    @property
    def episode_id(self) -> str:
        return self.id


def sightings(conn: sqlite3.Connection, namespace: str) -> list[Sighting]:
    """What a pattern is found among, oldest first: the newest active log records of
    :data:`SEEN_KINDS`, each with the sessions it was said and restated in (one said by
    hand is an occasion of its own); and the newest statements of the user's turns that no
    log record holds yet (the extractor's, whatever their tag: a lesson said again is
    often said as plain news), each in its session, with the id its log record will have."""
    marks = ", ".join("?" * len(SEEN_KINDS))
    rows = fetchall(
        conn,
        f"""SELECT id, kind, content, priority, created_at, session_id FROM learning
            WHERE namespace = ? AND status = 'active' AND kind IN ({marks})
            ORDER BY rn DESC LIMIT {_RECENT}""",
        (namespace, *SEEN_KINDS),
    )
    again: dict[str, set[str]] = {}
    for rid, session in fetchall(
        conn,
        "SELECT id, session_id FROM accesses WHERE namespace = ? AND how = 'restated'"
        " AND session_id IS NOT NULL",
        (namespace,),
    ):
        again.setdefault(rid, set()).add(session)
    logged = [
        Sighting(r[0], r[1], r[2], r[3], r[4], frozenset({r[5] or r[0], *again.get(r[0], ())}))
        for r in reversed(rows)
    ]
    known = {r[0] for r in rows} | {normalise(r[2]) for r in rows}
    return logged + _said(conn, namespace, known)


def _said(conn: sqlite3.Connection, namespace: str, known: set[str]) -> list[Sighting]:
    """The user's statements no log record holds (by id, or word for word: one said again
    is that record's restatement, counted with its session), oldest first, each with the
    id its log record will have (``lrn-x<extract id>``)."""
    rows = fetchall(
        conn,
        f"""SELECT id, tag, text, weight, created_at, session_id FROM extracts
            WHERE namespace = ? AND speaker = 'user' ORDER BY id DESC LIMIT {_RECENT}""",
        (namespace,),
    )
    found = []
    for eid, tag, text, weight, created, session in reversed(rows):
        rid = f"{EXAMPLE_PREFIX}{eid}"
        if rid in known or normalise(text) in known:
            continue
        kind = tag if tag in ("correction", "error") else "insight"
        priority = "high" if weight == "high" else "medium"
        found.append(Sighting(rid, kind, text, priority, created, frozenset({session})))
    return found


@lru_cache(maxsize=65536)
def subject_words(text: str) -> frozenset[str]:
    """The words a lesson is about: the writer's content words without negations and
    letters left over from contractions — a correction's "no, that's not …" frames it,
    whichever way it is put."""
    return frozenset(w for w in word_set(text) if w not in NEGATIONS and len(w) > 1)


def rarity(seen: Sequence[Sighting], settings: RecordsConfig) -> dict[str, float]:
    """Each subject word's weight: the rarer among the sessions, the more it says (the
    project's everyday words — its name, "deploy" — say little about which lesson). Told
    apart only over enough sessions: in a namespace of fewer than twice
    ``pattern_sessions``, a lesson's own words are in most of them, so all weigh alike."""
    per_session: dict[str, set[str]] = {}
    for s in seen:
        for session in s.sessions:
            per_session.setdefault(session, set()).update(subject_words(s.content))
    n = len(per_session)
    if n < 2 * settings.pattern_sessions:
        return {}
    counted = Counter(w for words in per_session.values() for w in words)
    return {w: math.log((n + 1) / (df + 0.5)) for w, df in counted.items()}


def same_lesson(
    a: str, b: str, settings: RecordsConfig, weights: Mapping[str, float] | None = None
) -> bool:
    """Whether two statements tell the same lesson: at least ``pattern_words`` subject
    words shared, and those carrying ``pattern_overlap`` of the shorter one's weight
    (each word by its rarity; all alike without ``weights``)."""
    x, y = subject_words(a), subject_words(b)
    shared = x & y
    if len(shared) < settings.pattern_words:
        return False

    def weight(words: frozenset[str]) -> float:
        return sum(weights.get(w, 1.0) for w in words) if weights is not None else len(words)

    least = min(weight(x), weight(y))
    return least > 0 and weight(shared) / least >= settings.pattern_overlap


def groups(seen: Sequence[Sighting], settings: RecordsConfig) -> list[list[Sighting]]:
    """The sightings gathered into groups that tell one lesson, oldest member first, each
    seen in at least ``pattern_sessions`` sessions. A sighting joins the group whose core
    (its first ``pattern_sessions`` members) tells the same lesson as it does most often,
    or starts one: a group cannot drift, step by step, from one lesson to the next (linked
    pairwise, a namespace's statements about its db host, its token lifetime and its
    billing day ran together into one group of 53). Groups are found through a word
    index of their cores."""
    weights = rarity(seen, settings)
    found: list[list[Sighting]] = []
    cores: dict[str, set[int]] = {}  # a core member's word → its groups
    for s in seen:
        words = subject_words(s.content)
        near = sorted({g for w in words for g in cores.get(w, ())})
        best, most = None, 0
        for g in near:
            core = found[g][: settings.pattern_sessions]
            alike = sum(same_lesson(s.content, m.content, settings, weights) for m in core)
            if alike > most:
                best, most = g, alike
        if best is None:
            found.append([s])
            best = len(found) - 1
        else:
            found[best].append(s)
        if len(found[best]) <= settings.pattern_sessions:
            for w in words:
                cores.setdefault(w, set()).add(best)
    return [
        sorted(members, key=lambda m: m.created_at)
        for members in found
        if len(frozenset().union(*(m.sessions for m in members))) >= settings.pattern_sessions
    ]


def covering(conn: sqlite3.Connection, namespace: str) -> dict[str, str]:
    """Each example record's pattern id."""
    found: dict[str, str] = {}
    for pid, examples in fetchall(
        conn, "SELECT id, examples FROM patterns WHERE namespace = ?", (namespace,)
    ):
        found.update(dict.fromkeys(json.loads(examples), pid))
    return found


def detect(
    conn: sqlite3.Connection, namespace: str, settings: RecordsConfig
) -> list[tuple[str, ...]]:
    """The groups that are a new pattern or add examples to a known one, as their record
    ids (oldest first): what the learner's ``pattern-detected`` trigger is told."""
    known = covering(conn, namespace)
    return [
        tuple(m.id for m in members)
        for members in groups(sightings(conn, namespace), settings)
        if any(m.id not in known for m in members)
    ]


def _words(members: Sequence[Sighting]) -> list[str]:
    """The subject words most of the members share, most shared first, each as first
    said ("staging", not its stem)."""
    counted = Counter(w for m in members for w in subject_words(m.content) if not is_value(w))
    said: dict[str, str] = {}
    for m in members:
        for token in tokens(m.content):
            said.setdefault(stem(token), token)
    ranked = sorted(counted.items(), key=lambda kv: (-kv[1], kv[0]))
    return [said.get(w, w) for w, n in ranked if n > 1]


def _priority(members: Sequence[Sighting]) -> str:
    return max((m.priority for m in members), key=PRIORITIES.index)


def describe(members: Sequence[Sighting]) -> tuple[str, str, str, tuple[str, ...]]:
    """(name, trigger, response, facets) of a group, by rule: the shared words name it
    and say when it applies, and its newest member's text is the response."""
    words = _words(members) or sorted(subject_words(members[-1].content))[:_NAME_WORDS]
    kinds = sorted({m.kind for m in members})
    sessions = len(frozenset().union(*(m.sessions for m in members)))
    said = " and ".join(_PLURAL.get(k, k + "s") for k in kinds)
    trigger = f"{said} about {', '.join(words[:_NAME_WORDS])} ({sessions} sessions)"
    name = "-".join(words[:_NAME_WORDS]) or members[-1].id
    return name, trigger, members[-1].content, (*kinds, *words[:_NAME_WORDS])


def save(
    conn: sqlite3.Connection, namespace: str, ids: Sequence[str], new_id: str, now: str
) -> Pattern | None:
    """Make the pattern ``ids`` tell, or add them to the pattern some of them are examples
    of already (its examples all kept, however old); None when none of them is still an
    active log record or a user statement. One ledger row."""
    seen = {s.id: s for s in sightings(conn, namespace)}
    members = [seen[i] for i in ids if i in seen]
    if not members:
        return None
    known = covering(conn, namespace)
    pid = next((known[m.id] for m in members if m.id in known), None)
    old, had = _examples(conn, namespace, pid) if pid is not None else ([], 0)
    examples = list(dict.fromkeys([*old, *(m.id for m in members)]))
    members = [seen[i] for i in examples if i in seen]  # what the wording reads
    for m in members:
        if m.id.startswith(EXAMPLE_PREFIX) and _unlogged(conn, namespace, m.id):
            _log_example(conn, namespace, m, now)
    name, trigger, response, facets = describe(members)
    sessions = max(had, len(frozenset().union(*(m.sessions for m in members))))
    row = (name, trigger, response, json.dumps(examples), json.dumps(facets), sessions)
    content, priority = f"{trigger}: {response}", _priority(members)
    clock = learning.sessions(conn, namespace)  # made or extended: referenced now
    if pid is None:
        pid = new_id
        conn.execute("INSERT INTO patterns VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (namespace, pid, *row))
        conn.execute(
            """INSERT INTO learning (namespace, id, kind, priority, tier, status, content,
                                     seen_session, created_at, updated_at)
               VALUES (?, ?, 'pattern', ?, 'warm', 'active', ?, ?, ?, ?)""",
            (namespace, pid, priority, content, clock, now, now),
        )
    else:
        conn.execute(
            """UPDATE patterns SET name = ?, trigger = ?, response = ?, examples = ?,
                   facets = ?, sessions = ? WHERE namespace = ? AND id = ?""",
            (*row, namespace, pid),
        )
        conn.execute(
            "UPDATE learning SET content = ?, priority = ?, seen_session = ?, updated_at = ?"
            " WHERE namespace = ? AND id = ?",
            (content, priority, clock, now, namespace, pid),
        )
        _reindex(conn, namespace, pid, content)
    decision = "UPDATE" if old else "ADD"
    _audit(conn, namespace, pid, decision, now, {"name": name, "examples": examples})
    return get(conn, namespace, pid)


def _unlogged(conn: sqlite3.Connection, namespace: str, rid: str) -> bool:
    return (
        fetchone(conn, "SELECT 1 FROM learning WHERE namespace = ? AND id = ?", (namespace, rid))
        is None
    )


def _log_example(conn: sqlite3.Connection, namespace: str, said: Sighting, now: str) -> None:
    """A user statement a pattern is made of becomes the log record it links to."""
    [session] = said.sessions
    learning.learn(conn, namespace, (said.id, said.kind, said.content, said.priority), session, now)


def _reindex(conn: sqlite3.Connection, namespace: str, pid: str, content: str) -> None:
    """A pattern's text changed: its row in the log records' search index too."""
    [rn] = conn.execute(
        "SELECT rn FROM learning WHERE namespace = ? AND id = ?", (namespace, pid)
    ).fetchone()
    search.put_row(conn, "learning_text", int(rn), content, namespace)


def _audit(
    conn: sqlite3.Connection,
    namespace: str,
    pid: str,
    decision: str,
    now: str,
    after: dict[str, object],
) -> None:
    ledger.append(
        conn,
        LedgerRecord(
            ts=now,
            namespace=namespace,
            actor="learner",
            action="pattern",
            decision=decision,
            entry_id=pid,
            after=after,
        ),
    )


_SELECT: Final = """
    SELECT p.id, p.name, p.trigger, p.response, p.examples, p.facets, p.sessions,
           l.tier, l.priority, l.access_count, l.created_at, l.updated_at
    FROM patterns p JOIN learning l ON l.namespace = p.namespace AND l.id = p.id
    WHERE p.namespace = ?
"""


def _examples(conn: sqlite3.Connection, namespace: str, pid: str) -> tuple[list[str], int]:
    """A pattern's examples and the sessions it was seen in."""
    row = fetchone(
        conn,
        "SELECT examples, sessions FROM patterns WHERE namespace = ? AND id = ?",
        (namespace, pid),
    )
    return ([], 0) if row is None else (list(json.loads(row[0])), int(row[1]))


def _pattern(row: sqlite3.Row) -> Pattern:
    return Pattern(
        row[0],
        row[1],
        row[2],
        row[3],
        tuple(json.loads(row[4])),
        tuple(json.loads(row[5])),
        int(row[6]),
        row[7],
        row[8],
        int(row[9]),
        row[10],
        row[11],
    )


def get(conn: sqlite3.Connection, namespace: str, pid: str) -> Pattern | None:
    row = conn.execute(_SELECT + " AND p.id = ?", (namespace, pid)).fetchone()
    return None if row is None else _pattern(row)


def library(conn: sqlite3.Connection, namespace: str) -> list[Pattern]:
    """The namespace's patterns, newest first."""
    rows = conn.execute(_SELECT + " ORDER BY l.updated_at DESC, p.id", (namespace,))
    return [_pattern(row) for row in rows.fetchall()]
