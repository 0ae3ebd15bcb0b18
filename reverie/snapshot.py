"""The frozen snapshot a session starts from: the prompt block, never hot-updated.

Each section is rendered within its cap; if a cap was lowered after entries were written,
the oldest entries that fit are kept and the block says how many were left out. A topic's
summary older than the topic's latest change gives way to its newest live facts.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from reverie.clock import iso
from reverie.config import Config
from reverie.stores import entries, skills, summaries, topics
from reverie.stores.records import ENTRY_SEPARATOR, Entry
from reverie.tools import SNAPSHOT_MARK

SECTIONS = (
    ("memory", "MEMORY (environment facts and lessons)"),
    ("user", "USER (the user's preferences)"),
    ("soul", "SOUL (how to reply)"),
    ("user_settings", "USER SETTINGS"),
    ("agent_profile", "AGENT PROFILE"),
)
TOPIC_LINE_CHARS = 240
SKILL_LINE_CHARS = 160


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What a session injects; ``text`` is the whole block."""

    namespace: str
    taken_at: str
    text: str
    blocks: dict[str, str]
    topics: tuple[str, ...]
    skills: tuple[str, ...]


def fit(live: list[Entry], cap: int) -> tuple[str, int]:
    """The rendered block within ``cap`` chars, and how many entries did not fit."""
    kept: list[str] = []
    size = 0
    for entry in live:
        extra = len(entry.rendered) + (len(ENTRY_SEPARATOR) if kept else 0)
        if size + extra > cap:
            break
        kept.append(entry.rendered)
        size += extra
    return ENTRY_SEPARATOR.join(kept), len(live) - len(kept)


def _line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _topic_line(
    conn: sqlite3.Connection, namespace: str, name: str, live_count: int, superseded: int
) -> str:
    """A topic's index line: its counts and its summary — or, when the summary was distilled
    before the topic last changed (a correction since), its newest live facts, so the index
    never shows a value that a correction replaced."""
    line = f"- {name}: {live_count} facts"
    if superseded:
        line += f" ({superseded} superseded)"
    summary = summaries.current(conn, namespace, name, TOPIC_LINE_CHARS - len(line))
    if summary:
        line += f" — {summary}"
    return _line(line, TOPIC_LINE_CHARS)


def take(conn: sqlite3.Connection, namespace: str, config: Config, when: str) -> Snapshot:
    blocks: dict[str, str] = {}
    parts = [f'{SNAPSHOT_MARK} namespace="{namespace}" taken_at="{when}">']
    for target, title in SECTIONS:
        live = entries.live(conn, namespace, target)
        cap = int(getattr(config.caps, target))
        block, omitted = fit(live, cap)
        blocks[target] = block
        if not block:
            continue
        note = f" ({len(block)}/{cap} chars)"
        parts.append(f"## {title}{note}\n{block}")
        if omitted:
            parts.append(f"({omitted} older entries over the cap are not shown)")
    topic_rows = topics.index(conn, namespace)
    if topic_rows:
        lines = [_topic_line(conn, namespace, *row) for row in topic_rows]
        parts.append("## TOPICS (read one with the topic tool)\n" + "\n".join(lines))
    registered = skills.registered(conn, namespace)
    if registered:
        lines = [_line(f"- {s.name}: {s.body}", SKILL_LINE_CHARS) for s in registered]
        parts.append("## SKILLS\n" + "\n".join(lines))
    parts.append("</reverie-snapshot>")
    return Snapshot(
        namespace=namespace,
        taken_at=when,
        text="\n\n".join(parts),
        blocks=blocks,
        topics=tuple(row[0] for row in topic_rows),
        skills=tuple(s.name for s in registered),
    )


__all__ = ["Snapshot", "fit", "iso", "take"]
