"""The drafts' life: found in the curator's review pass, kept in ``skill_drafts``, projected
to ``skills/.drafts/<name>/SKILL.md``; a person accepts one (it becomes a skill through
skill_manage create, so caps, scanning and the ledger apply) or rejects it (its gap is
never drafted again). Every change of state is in the ledger."""

from __future__ import annotations

import json
import shutil
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Final

from reverie.clock import iso
from reverie.config import Config
from reverie.skills.gaps import (
    ERROR,
    PROCEDURE,
    REQUEST,
    Gap,
    Signal,
    content_words,
    gaps,
    same_gap,
    stale,
    steps,
)
from reverie.skills.writing import Written, draft_file, slug
from reverie.stores import drafts as store
from reverie.stores import ledger, skills
from reverie.stores.db import fetchall
from reverie.stores.projection import Projector, atomic_write
from reverie.stores.records import LedgerRecord
from reverie.telemetry.tracing import trace_id_hex

DRAFTS_DIR = ".drafts"


@dataclass(frozen=True, slots=True)
class Look:
    """What a pass reads, in one read transaction."""

    signals: list[Signal]
    said: list[str | None]
    skills: list[Any]
    drafts: list[store.SkillDraft]
    values: list[frozenset[str]] = field(default_factory=list)
    """The content words of every stored value (see :func:`known_values`)."""


@dataclass(frozen=True, slots=True)
class StaleSkill:
    """A registered skill none of whose trigger words users said in ``days`` days."""

    name: str
    words: tuple[str, ...]
    days: float

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "words": list(self.words), "days": self.days}


def draft_dir(projector: Projector, namespace: str, name: str) -> Path:
    return projector.namespace_dir(namespace) / "skills" / DRAFTS_DIR / name


KNOWN_SHARE: Final = 2 / 3
"""A turn whose content words are this much one stored value's words is about that value."""


def known_values(conn: sqlite3.Connection, namespace: str) -> list[tuple[str, frozenset[str]]]:
    """Every value the stores hold (facts, current or not, and entries), with the session
    that stored it: what memory answers, so no skill is needed for it."""
    rows = fetchall(
        conn,
        "SELECT coalesce(session_id, ''), content FROM facts WHERE namespace = ?"
        " UNION ALL SELECT coalesce(session_id, ''), content FROM entries WHERE namespace = ?",
        (namespace, namespace),
    )
    return [(session, words) for session, text in rows if (words := content_words(text))]


def about_a_known_value(text: str, session: str, known: list[tuple[str, frozenset[str]]]) -> bool:
    """A user turn that states, restates, corrects or looks up a value an earlier session
    stored ("whats our billing cutoff day again", "redis cache ttl: 5 min") asks for no
    capability: memory answers it. So does a turn that carried a secret (redacted), which
    no draft may quote. Judged by words: most of the turn's content words are one stored
    value's (from another session — a request stored as a fact in its own session is
    still a request)."""
    if "[redacted" in text:
        return True
    words = content_words(text)
    if len(words) < 2:
        return False
    need = KNOWN_SHARE * len(words)
    return any(s != session and len(words & value) >= need for s, value in known)


def look(conn: sqlite3.Connection, namespace: str, now: datetime, config: Config) -> Look:
    """The window's turns as signals, the registered skills and every draft."""
    cfg = config.drafts
    since = iso(now - timedelta(days=max(cfg.window_days, cfg.stale_days)))
    window = iso(now - timedelta(days=cfg.window_days))
    signals: list[Signal] = []
    said: list[str | None] = []
    known = known_values(conn, namespace)
    stale_from = iso(now - timedelta(days=cfg.stale_days))
    for eid, session, user, assistant, ts in fetchall(
        conn,
        "SELECT id, session_id, user_text, assistant_text, ts FROM episodes"
        " WHERE namespace = ? AND ts >= ? ORDER BY id",
        (namespace, since),
    ):
        if ts >= stale_from:
            said.append(user)
        if ts < window:
            continue
        if user and not about_a_known_value(user, session, known):
            signals.append(Signal(REQUEST, eid, session, user, assistant))
        if len(steps(assistant)) >= cfg.min_steps:
            signals.append(Signal(PROCEDURE, eid, session, assistant))
    for eid, session, text in fetchall(
        conn,
        "SELECT x.episode_id, x.session_id, x.text FROM extracts x JOIN episodes e"
        " ON e.id = x.episode_id WHERE x.namespace = ? AND x.tag = 'error' AND e.ts >= ?"
        " ORDER BY x.id",
        (namespace, window),
    ):
        signals.append(Signal(ERROR, eid, session, text))
    values = [words for _, words in known]
    drafts = store.every(conn, namespace)
    return Look(signals, said, skills.registered(conn, namespace), drafts, values)


def found(seen: Look, config: Config) -> list[Gap]:
    """The ranked gaps of a look, the top ``top_n`` of them."""
    decided = [(d.gap_key, d.evidence) for d in seen.drafts if d.state != "draft"]
    ranked = gaps(seen.signals, seen.skills, decided, config.drafts)
    # a gap whose every core word one stored value holds is that value asked about again
    # ("the staging db host" in nine sessions): memory answers it, no skill is missing
    asked = [g for g in ranked if not any(set(g.core) <= value for value in seen.values)]
    return asked[: config.drafts.top_n]


def as_drafts(
    namespace: str, seen: Look, ranked: list[tuple[Gap, Written]], now: str
) -> list[store.SkillDraft]:
    """Each gap's draft under a name of its own: a waiting draft of the same gap keeps
    its name, a new one takes a name no skill or other draft has."""
    waiting = [d for d in seen.drafts if d.state == "draft"]
    taken = {s.name for s in seen.skills} | {d.name for d in seen.drafts}
    out = []
    for gap, written in ranked:
        before = next((d for d in waiting if same_gap(gap, d.gap_key, d.evidence)), None)
        name = before.name if before else slug(gap, taken)
        taken.add(name)
        out.append(
            store.SkillDraft(
                namespace=namespace,
                name=name,
                gap_key=gap.key,
                kind=gap.kind,
                state="draft",
                description=written.description,
                triggers=written.triggers,
                body=written.body,
                evidence=gap.evidence,
                sessions=gap.sessions,
                score=gap.score,
                written_by=written.by,
                created_at=before.created_at if before else now,
                updated_at=now,
            )
        )
    return out


def save(conn: sqlite3.Connection, made: list[store.SkillDraft], now: str) -> None:
    """Store the drafts (inside the curator's transaction), each audited."""
    for draft in made:
        known = store.get(conn, draft.namespace, draft.name)
        store.put(conn, draft)
        audit(
            conn,
            draft.namespace,
            draft.name,
            "draft",
            "DRAFTED" if known is None else "REDRAFTED",
            now,
            {"gap": draft.gap_key, "kind": draft.kind, "evidence": list(draft.evidence)},
            after={"body": draft.body, "written_by": draft.written_by},
        )


def project(projector: Projector, made: list[store.SkillDraft]) -> None:
    files = [(draft_dir(projector, d.namespace, d.name) / "SKILL.md", draft_file(d)) for d in made]

    def write() -> None:
        for path, text in files:
            atomic_write(path, text)

    projector.locked(write)


def unproject(projector: Projector, namespace: str, name: str) -> None:
    """The draft's file goes (its row stays: the draft can always be read back)."""
    folder = draft_dir(projector, namespace, name)
    projector.locked(lambda: shutil.rmtree(folder, ignore_errors=True))


def stale_skills(seen: Look, now: datetime, config: Config) -> list[StaleSkill]:
    days = config.drafts.stale_days
    before = iso(now - timedelta(days=days))
    return [StaleSkill(n, w, days) for n, w in stale(seen.skills, seen.said, before)]


def audit(
    conn: sqlite3.Connection,
    namespace: str,
    name: str,
    action: str,
    decision: str,
    now: str,
    detail: dict[str, Any],
    *,
    actor: str = "curator",
    after: Any = None,
) -> None:
    ledger.append(
        conn,
        LedgerRecord(
            ts=now,
            namespace=namespace,
            actor=actor,
            action=action,
            decision=decision,
            entry_id=f"draft:{name}",
            target="skill_draft",
            trace_id=trace_id_hex(),
            after=after,
            detail=json.loads(json.dumps(detail)),
        ),
    )
