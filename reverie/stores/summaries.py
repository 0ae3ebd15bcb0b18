"""A topic's summary as it may be shown: the distilled summary while it is current; once
the topic changed after it was distilled (a correction since), the topic's newest live
facts instead — so neither the snapshot nor summary.md ever shows a superseded value."""

from __future__ import annotations

import sqlite3

from reverie.stores import review_state, topics

SUMMARY_CHARS = 1000
NEWEST = 5


def summary_key(topic: str) -> str:
    return f"summary:{topic}"


def watermark_key(topic: str) -> str:
    return f"distill:watermark:{topic}"


def stale(conn: sqlite3.Connection, namespace: str, topic: str) -> bool:
    """Whether the topic gained a fact past the one its summary was distilled up to."""
    watermark = int(review_state.get(conn, namespace, watermark_key(topic), 0))
    return topics.last_change(conn, namespace, topic) > watermark


def newest(texts: list[str], budget: int, separator: str = "; ") -> str:
    """Newest first, whole facts within ``budget`` chars (the first one at least)."""
    kept: list[str] = []
    size = 3  # room for what is put before them
    for text in (" ".join(t.split()) for t in texts):
        extra = len(text) + (len(separator) if kept else 0)
        if kept and size + extra > budget:
            break
        kept.append(text)
        size += extra
    return separator.join(kept)


def current(
    conn: sqlite3.Connection,
    namespace: str,
    topic: str,
    budget: int = SUMMARY_CHARS,
    separator: str = "; ",
) -> str:
    """The distilled summary, or — when the topic changed since — its newest live facts
    within ``budget`` chars; "" for a topic never summarised."""
    keys = [summary_key(topic), watermark_key(topic)]
    kept = review_state.values(conn, namespace, keys)  # the summary and its mark, one read
    summary = str(kept.get(keys[0]) or "")
    if summary and topics.last_change(conn, namespace, topic) > int(kept.get(keys[1], 0)):
        return newest(topics.newest(conn, namespace, topic, NEWEST), budget, separator)
    return summary
