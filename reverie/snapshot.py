"""The frozen snapshot a session starts from: the prompt block, never hot-updated.

Each section is rendered within its cap; if a cap was lowered after entries were written,
the oldest entries that fit are kept and the block says how many were left out. A topic's
summary older than the topic's latest change gives way to its newest live facts. The
skills index has its cap too: pinned skills, then the most recently used or changed,
and a count of the rest.

Stored text is data, never framing: every entry, summary and skill line is rendered by
:func:`~reverie.rules.injection.as_data` — on one line, tag openers and ``§`` as entities,
a leading header or role prefix escaped — so nothing stored can close this block, open a
section, forge an entry separator or a turn.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from reverie.clock import iso
from reverie.config import Config
from reverie.rules.injection import as_data
from reverie.stores import entries, learning, skill_activity, skills, summaries, topics
from reverie.stores.records import ENTRY_SEPARATOR, Entry, Skill
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
    carried: tuple[str, ...] = ()
    """The learning records it shows (entries and skills): each one's access."""


def shown(entry: Entry) -> str:
    """An entry as the snapshot shows it: its text as data, then its reinforcement mark."""
    text = as_data(entry.content)
    return text if entry.reinforce <= 1 else f"{text} ⟦×{entry.reinforce}⟧"


def fit(live: list[Entry], cap: int) -> tuple[str, int]:
    """The rendered block within ``cap`` chars, and how many entries did not fit."""
    kept: list[str] = []
    size = 0
    for entry in live:
        text = shown(entry)
        extra = len(text) + (len(ENTRY_SEPARATOR) if kept else 0)
        if size + extra > cap:
            break
        kept.append(text)
        size += extra
    return ENTRY_SEPARATOR.join(kept), len(live) - len(kept)


def _line(text: str, limit: int) -> str:
    flat = as_data(text)
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _marked(mark: str | None, body: str) -> str:
    return body if mark is None else f"{mark} {body}"


def _more(left: int) -> str:
    return f"… and {left} more skills not shown"


def _ordered(registered: list[Skill]) -> list[Skill]:
    """The index's order: pinned skills, then the most recently used or changed."""
    ordered = sorted(registered, key=lambda s: s.name)
    ordered.sort(key=lambda s: s.last_used_at or s.updated_at, reverse=True)
    ordered.sort(key=lambda s: not s.pinned)
    return ordered


def may_show(registered: list[Skill], cap: int) -> list[Skill]:
    """The skills the index can show within ``cap``: the first in its order whose lines
    fit unmarked (a mark only lengthens a line), so only their marks need reading."""
    out: list[Skill] = []
    size = 0
    for skill in _ordered(registered):
        size += len(_line(f"- {skill.name}: {skill.body}", SKILL_LINE_CHARS)) + 1
        if size > cap + 1:
            break
        out.append(skill)
    return out


def skills_index(
    registered: list[Skill], cap: int, marks: Mapping[str, str] | None = None
) -> tuple[str, int]:
    """The skills index within ``cap`` chars — pinned skills, then the most recently used
    or changed — and how many skills it leaves out (said in the index's last line). A
    skill's activity tier mark (``marks``, see :mod:`reverie.skills.scores`) leads its
    text: ``- name: 🔥 body``; :func:`take` marks the skills used within the scoring window
    (one not used yet has no score to show, and is not marked ⚰️ for being new)."""
    ordered = _ordered(registered)
    marked = marks or {}
    lines = [
        _line(f"- {s.name}: {_marked(marked.get(s.name), s.body)}", SKILL_LINE_CHARS)
        for s in ordered
    ]
    if len("\n".join(lines)) <= cap:
        return "\n".join(lines), 0
    room = cap - len(_more(len(ordered))) - 1  # for the last line, which says what is left
    kept: list[str] = []
    size = 0
    for line in lines:
        if size + len(line) > room:
            break
        kept.append(line)
        size += len(line) + 1
    left = len(ordered) - len(kept)
    if len(_more(left)) > cap:
        return "", left
    return "\n".join([*kept, _more(left)]), left


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
    label = as_data(namespace).replace('"', "&quot;")
    parts = [f'{SNAPSHOT_MARK} namespace="{label}" taken_at="{when}">']
    cold = learning.cold(conn, namespace)  # seed 003: COLD records leave the snapshot
    carried: list[str] = []
    for target, title in SECTIONS:
        live = [e for e in entries.live(conn, namespace, target) if e.id not in cold]
        cap = int(getattr(config.caps, target))
        block, omitted = fit(live, cap)
        blocks[target] = block
        carried += [e.id for e in live[: len(live) - omitted]]
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
    registered = [s for s in skills.registered(conn, namespace) if f"skill:{s.name}" not in cold]
    if registered:
        cap = int(config.caps.skills)
        shown = may_show(registered, cap)
        found = skill_activity.activities(conn, namespace, shown, datetime.fromisoformat(when))
        marks = {name: a.mark for name, a in found.items() if a.calls}  # unused: no mark
        index, _ = skills_index(registered, cap, marks)
        if index:
            parts.append("## SKILLS\n" + index)
            carried += [f"skill:{s.name}" for s in registered]
    parts.append("</reverie-snapshot>")
    return Snapshot(
        namespace=namespace,
        taken_at=when,
        text="\n\n".join(parts),
        blocks=blocks,
        topics=tuple(row[0] for row in topic_rows),
        skills=tuple(s.name for s in registered),
        carried=tuple(carried),
    )


__all__ = ["Snapshot", "fit", "iso", "shown", "skills_index", "take"]
