"""Text reverie wrote itself (summaries, promotion rewrites, reports), sentence by sentence,
so it is never extracted again as a new fact and never promoted."""

from __future__ import annotations

import sqlite3

from reverie.rules.extraction import sentences
from reverie.rules.similarity import jaccard, normalise, word_set


def remember(conn: sqlite3.Connection, namespace: str, text: str, source: str, when: str) -> None:
    """Record what one source (``distiller:<topic>``, ``promoter:<chain>``) wrote now, in
    place of what it wrote before: a summary that was rewritten, or a rule that was
    refreshed, is no longer reverie's text in anyone's prompt, and a user saying that
    old value again is saying something new."""
    conn.execute("DELETE FROM generated WHERE namespace = ? AND source = ?", (namespace, source))
    for sentence in [text, *sentences(text.replace("; ", ".\n"))]:
        key = normalise(sentence)
        if key:
            conn.execute(
                "INSERT OR IGNORE INTO generated (namespace, norm, source, created_at)"
                " VALUES (?, ?, ?, ?)",
                (namespace, key, source, when),
            )


def forget(conn: sqlite3.Connection, namespace: str, source: str) -> None:
    """What one source wrote is no longer shown to anyone (a summary a correction made
    stale gives way to live facts in the snapshot): it is nobody's text any more."""
    conn.execute("DELETE FROM generated WHERE namespace = ? AND source = ?", (namespace, source))


def norms(conn: sqlite3.Connection, namespace: str, before: str | None = None) -> list[str]:
    """reverie's own sentences in a namespace (only those written before ``before``: text
    cannot have been copied from a summary that did not exist yet)."""
    sql, params = "SELECT norm FROM generated WHERE namespace = ?", [namespace]
    if before is not None:
        sql += " AND created_at < ?"
        params.append(before)
    return [row[0] for row in conn.execute(sql, params)]


def is_generated(text: str, known: list[str], threshold: float = 0.8) -> bool:
    """Whether a sentence repeats reverie's own text (exactly, or as a near-duplicate)."""
    key = normalise(text)
    if not key:
        return False
    words = word_set(text)
    return any(
        key == k
        or (len(key) > 20 and key in k)
        or (len(k) > 20 and k in key)
        or jaccard(words, word_set(k)) >= threshold
        for k in known
    )
