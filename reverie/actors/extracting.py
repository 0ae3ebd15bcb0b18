"""The extraction step (L2) as functions over one write transaction: the extractor actor
runs it after each turn and at a session's end, and the flusher runs :func:`catch_up`
before it reads, so a turn whose message was still queued (or lost to a crash) is never
skipped. Shared code, not an actor: actors do not import each other."""

from __future__ import annotations

import sqlite3
from dataclasses import replace

from reverie.rules.claims import parse
from reverie.rules.extraction import (
    Candidate,
    candidates,
    correct_held,
    counts_a_thing,
    resolve,
)
from reverie.rules.similarity import near_duplicate, value_sequence, values, word_set
from reverie.stores import entries, extracts, generated, topics
from reverie.stores.db import fetchone
from reverie.tools import MEMORY_TARGETS

CATCH_UP_LIMIT = 500
ANTECEDENTS = 8  # earlier statements of the session a fragment may refer to
HOLDERS = 5  # live facts, of any session, holding a value a fragment denies


def extract(
    conn: sqlite3.Connection, namespace: str, episode_id: int, min_chars: int, now: str
) -> int:
    """Extract one episode's candidates, once (inside the caller's write transaction):
    statements of at least ``min_chars``, stamped ``now``."""
    row = fetchone(
        conn,
        "SELECT session_id, user_text, assistant_text FROM episodes"
        " WHERE id = ? AND namespace = ? AND weight IS NULL",
        (episode_id, namespace),
    )
    if row is None:  # unknown, or extracted already
        return 0
    own = generated.norms(conn, namespace)
    known = [e.content for t in MEMORY_TARGETS for e in entries.live(conn, namespace, t)]
    earlier = extracts.recent_texts(conn, namespace, row[0], ANTECEDENTS)
    found: list[tuple[str, Candidate]] = []
    for speaker, text in (("user", row[1]), ("assistant", row[2])):
        for raw in candidates(text or "", min_chars, speaker):
            said = earlier + [c.text for _, c in found]
            holders = _holders(conn, namespace, raw) + said  # the session's own last
            candidate = _held(raw, holders) or _resolved(raw, said)
            if (
                candidate is None
                or _echoes_own(conn, namespace, candidate.text, own)
                or any(near_duplicate(candidate.text, k, 0.8) for k in known)
            ):
                continue
            if any(_echoes(candidate.text, prior.text) for _, prior in found):
                continue  # the assistant repeating what the user just said
            found.append((speaker, candidate))
    return extracts.record(conn, namespace, row[0], episode_id, found, now)


def _echoes_own(conn: sqlite3.Connection, namespace: str, text: str, own: list[str]) -> bool:
    """Whether a sentence repeats reverie's own text — not a live fact said again in the
    user's words, which a summary made of whole facts also holds: said again, it is said
    now, so a statement earlier in its session that it corrects gives way to it."""
    return generated.is_generated(text, own) and not topics.says_live(conn, namespace, text)


def _resolved(candidate: Candidate, earlier: list[str]) -> Candidate | None:
    """A fragment restated with its antecedent's subject, or None (it stays in the log)."""
    if not candidate.anchor:
        return candidate
    text = resolve(candidate.text, earlier)
    if text is None:  # kept as said when its count names what it counts ("165 guests")
        return replace(candidate, anchor=False) if counts_a_thing(candidate.text) else None
    return replace(candidate, text=text, anchor=False)


def _held(candidate: Candidate, holders: list[str]) -> Candidate | None:
    """A fragment denying a held value, said as the newest holder with the value replaced."""
    if not candidate.anchor:
        return None
    for holder in reversed(holders):
        text = correct_held(candidate.text, holder)
        if text is not None:
            return replace(candidate, text=text, anchor=False)
    return None


def _holders(conn: sqlite3.Connection, namespace: str, candidate: Candidate) -> list[str]:
    """For a fragment that denies a value ("she wants 3000 bottles, not 2400 like before"),
    the live facts holding that value, oldest first: what it corrects, in any session."""
    if not candidate.anchor:
        return []
    former = set(value_sequence(parse(candidate.text).negated or ""))
    if not former:
        return []
    related = topics.related(conn, namespace, " ".join(sorted(former)), HOLDERS)
    held = [f for f in related if former & set(value_sequence(f.content))]
    return [f.content for f in sorted(held, key=lambda f: f.created_at)]


def _echoes(text: str, earlier: str) -> bool:
    """Whether a sentence only repeats (a part of) an earlier one of the same turn."""
    words = word_set(text)
    return bool(words) and words <= word_set(earlier) and values(text) <= values(earlier)


def catch_up(conn: sqlite3.Connection, namespace: str, min_chars: int, now: str) -> int:
    """Extract every episode not extracted yet: a turn whose TurnEnded was still queued, or
    lost to a crash after its episode was committed, is extracted before a flush reads."""
    pending = [
        r[0]
        for r in conn.execute(
            "SELECT id FROM episodes WHERE namespace = ? AND weight IS NULL ORDER BY id LIMIT ?",
            (namespace, CATCH_UP_LIMIT),
        )
    ]
    return sum(extract(conn, namespace, episode_id, min_chars, now) for episode_id in pending)


def unextracted(conn: sqlite3.Connection, namespace: str) -> bool:
    """Whether an episode of the namespace waits for extraction (one indexed read)."""
    return (
        fetchone(
            conn,
            "SELECT 1 FROM episodes WHERE namespace = ? AND weight IS NULL LIMIT 1",
            (namespace,),
        )
        is not None
    )
