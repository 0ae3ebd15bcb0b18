"""``reverie dream status`` / ``ns.dream_status()``: the graph's size, the health score as
of now, the pattern count, the last dream and when the next is due; and ``reverie dream
longterm`` / ``ns.longterm()``: the short- and long-term counts and the last recall."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import Any, Final

from reverie.dream import health
from reverie.stores import dream as dream_store
from reverie.stores import graph, longterm, patterns, review_state
from reverie.stores.entries import live
from reverie.stores.projection import entry_file_text

DUE_AT: Final = "dreamer:last_run"
"""The dreamer's stamp, which holds when it is next due (see ``Dreamer._next_due``)."""
LAST: Final = "dreamer:last"


def index_lines(conn: sqlite3.Connection, namespace: str) -> int:
    """MEMORY.md's lines (efficiency's measure)."""
    return len(entry_file_text(live(conn, namespace, "memory")).splitlines())


def status(conn: sqlite3.Connection, namespace: str, now: datetime) -> dict[str, Any]:
    counts = dream_store.health_counts(conn, namespace, now, index_lines(conn, namespace))
    return {
        "namespace": namespace,
        "graph": graph.counts(conn, namespace),
        "health": health.score(counts).to_dict(),
        "patterns": len(patterns.library(conn, namespace)),
        "last_dream": review_state.get(conn, namespace, LAST),
        "next_due": review_state.get(conn, namespace, DUE_AT),
        "longterm": longterm.status(conn, namespace),
    }
