"""A damaged home, diagnosed and repaired (``reverie doctor [--repair]``).

reverie.db is the truth and the files are its projections, but when the database is lost
(missing, 0 bytes, unreadable) or reduced (a damaged WAL, an old copy put back), the files
are what survives. ``diagnose`` says which; ``repair`` rebuilds the database from them:
entries from MEMORY.md / USER.md / SOUL.md, facts with their ids and supersede chains
from ``topics/<t>/history.jsonl``, skills from ``SKILL.md``, the promoter's final decisions
from ``logs/wiki/promotions.jsonl``; and says what no file holds.

What it recovers passes the write path's own checks first (a secret, text that could forge
the snapshot's framing, an instruction aimed at the agent, a cap): a file is only as
trustworthy as whoever last edited it. What is refused is not imported; it is listed in
``reverie.db.repair-refused-<stamp>.jsonl`` beside the database (a secret redacted, never
kept in plain text) and the files are rewritten to what the database now holds.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
from contextlib import closing
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from reverie.actors.context import new_id
from reverie.actors.promoter import DONE_IDS
from reverie.config import Config
from reverie.errors import HomeError, InputError, ToolInputError
from reverie.names import DATABASE_FILE, check_name
from reverie.rules.injection import instruction_kind
from reverie.rules.secrets import redact, secret_kind
from reverie.stores import entries, ledger, review_state, skills, topics
from reverie.stores.db import connect_migrated, transaction
from reverie.stores.projection import (
    FILES,
    Projector,
    atomic_write,
    history_events,
    history_events_of,
)
from reverie.stores.records import ENTRY_SEPARATOR, Entry, Fact, LedgerRecord, Skill
from reverie.tools import parse_call

ACTOR = "doctor"
_MARK = re.compile(r"\s*⟦×(\d+)⟧\Z")
# What no projection holds: lost with the database, whatever the repair does.
NOT_IN_FILES = (
    "the audit ledger and the episode log (turns) and their extracts",
    "user_settings and agent_profile entries",
    "review watermarks and cooldowns (the next review pass starts afresh)",
    "embeddings (made again on demand) and topic summaries (the distiller writes them again)",
    "entry ids of MEMORY.md, USER.md and SOUL.md entries (recovered entries get new ids)",
)


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """What is wrong with a home: ``database`` is ok, missing, empty, no schema,
    unreadable, reduced or no home; ``lost`` lists what the files hold that it lacks."""

    home: str
    database: str
    detail: str
    lost: list[str]
    projected: list[str]

    @property
    def healthy(self) -> bool:
        return self.database == "ok"

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "healthy": self.healthy}


@dataclass(frozen=True, slots=True)
class Refusal:
    """One thing a repair would not import: where it was, what it was, why; ``content`` is
    the text with any secret in it redacted."""

    source: str
    what: str
    reason: str
    content: str


@dataclass(slots=True)
class Repaired:
    """What a repair did: files moved aside, rows recovered, what could not be, and what
    the write path's checks refused (listed in the ``refused_report`` file)."""

    home: str
    before: str
    kept: list[str] = field(default_factory=list)
    entries: int = 0
    facts: int = 0
    skills: int = 0
    decisions: int = 0
    skipped: list[str] = field(default_factory=list)
    not_recovered: list[str] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)
    refused_report: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def diagnose(home: Path) -> Diagnosis:
    """Compare the database with the files, reading both and writing neither."""
    path, projector = home / DATABASE_FILE, Projector(home)
    if not home.is_dir():
        return Diagnosis(str(home), "no home", f"{home} is not a directory", [], [])
    projected = projector.projected()
    if not path.exists():
        return Diagnosis(str(home), "missing", f"{path} does not exist", [], projected)
    if path.stat().st_size == 0:
        return Diagnosis(str(home), "empty", f"{path} is 0 bytes", [], projected)
    try:
        conn = sqlite3.connect(path)
        try:
            conn.row_factory = sqlite3.Row
            if not conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
            ).fetchone():
                return Diagnosis(str(home), "no schema", f"{path} has no tables", [], projected)
            conn.execute("BEGIN")
            lost = projector.lost(conn)
            conn.execute("COMMIT")
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        return Diagnosis(str(home), "unreadable", f"{path}: {exc}", [], projected)
    if lost:
        detail = f"the database lacks {len(lost)} things its files hold"
        return Diagnosis(str(home), "reduced", detail, lost, projected)
    return Diagnosis(str(home), "ok", "the database holds everything its files show", [], projected)


def repair(home: Path, config: Config, now: str) -> Repaired:
    """Rebuild the database from the files. A lost database is moved aside (kept, never
    deleted) and a new one made; a reduced one is copied aside and completed in place.
    What the write path would refuse is reported, not imported. No other process may use
    the home meanwhile."""
    found = diagnose(home)
    if found.database == "no home":
        raise HomeError(f"no reverie home at {home}: {found.detail}")
    done = Repaired(str(home), found.database)
    if found.healthy:
        return done
    stamp = re.sub(r"[^0-9T]", "", now)[:15]  # 20260101T120000
    path = home / DATABASE_FILE
    if found.database == "reduced":
        copy = _free(home / f"{DATABASE_FILE}.before-repair-{stamp}")
        with closing(sqlite3.connect(path)) as source, closing(sqlite3.connect(copy)) as target:
            source.backup(target)
        done.kept.append(copy.name)
    else:
        for suffix in ("", "-wal", "-shm", "-journal"):
            old = home / f"{DATABASE_FILE}{suffix}"
            if old.exists():
                aside = _free(home / f"{DATABASE_FILE}.damaged-{stamp}{suffix}")
                shutil.move(old, aside)
                done.kept.append(aside.name)
    done.not_recovered = list(NOT_IN_FILES)
    if found.database == "reduced":
        done.not_recovered = [
            f"what was written after the database's last intact state to: {item}"
            for item in NOT_IN_FILES[:3]
        ]
    conn = connect_migrated(path, config.store)
    try:
        transaction(conn, lambda c: _recover(c, Projector(home), _Gate(c, config, now, done)))
        _write_refused(home, stamp, done)  # before any file is rewritten: nothing is lost
        _align(home, conn, done)
    finally:
        conn.close()
    return done


def _free(path: Path) -> Path:
    """``path``, or ``path-2``, ``path-3`` … when taken: a copy kept aside is never replaced."""
    candidate, n = path, 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}-{n}")
    return candidate


class _Gate:
    """The write path's checks, applied to what a repair reads from files: a refusal is
    recorded (redacted) and audited in the ledger, and the text is not imported."""

    def __init__(self, conn: sqlite3.Connection, config: Config, now: str, done: Repaired):
        self.conn, self.config, self.now, self.done = conn, config, now, done

    def passes(
        self, source: str, what: str, tool: str, arguments: dict[str, Any], content: str
    ) -> bool:
        reason = _refusal(tool, arguments, content, self.config)
        if reason is not None:
            self.refuse(source, what, content, reason)
        return reason is None

    def refuse(self, source: str, what: str, content: str, reason: str) -> None:
        kind = secret_kind(content)
        shown = redact(content)
        if kind is not None and shown == content:  # never kept in plain text
            shown = f"[redacted {kind}]"
        refusal = Refusal(source, what, redact(reason), shown)
        self.done.refused.append(refusal)
        ledger.append(
            self.conn,
            LedgerRecord(
                ts=self.now,
                namespace=source.split("/", 1)[0],
                actor=ACTOR,
                action="recover",
                decision="ERROR",
                entry_id=None,
                detail={"from": source, "what": what, "reason": refusal.reason},
            ),
        )


def _refusal(tool: str, arguments: dict[str, Any], content: str, config: Config) -> str | None:
    """Why the write path would refuse ``content`` (None: it would not): a secret, then the
    tool call's own checks (framing, control characters, length, a name), then an
    instruction aimed at the agent — every recovered entry and fact reaches the snapshot."""
    kind = secret_kind(content)
    if kind is not None:
        return (
            f"it carries a secret ({kind}); a secret is never stored — keep a reference to "
            "where it is kept instead"
        )
    try:
        parse_call(tool, arguments, config.writer)
    except ToolInputError as exc:
        return str(exc)
    aimed = instruction_kind(content) if tool != "skill_manage" else None
    if aimed is not None:
        return f"it is an instruction aimed at the agent ({aimed})"
    return None


def _write_refused(home: Path, stamp: str, done: Repaired) -> None:
    """The refused texts, one JSON object a line, beside the database (owner-only)."""
    if not done.refused:
        return
    path = _free(home / f"{DATABASE_FILE}.repair-refused-{stamp}.jsonl")
    lines = "".join(json.dumps(asdict(r), ensure_ascii=False) + "\n" for r in done.refused)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(lines)
    done.refused_report = path.name


def _align(home: Path, conn: sqlite3.Connection, done: Repaired) -> None:
    """Rewrite each file that held refused text to what the database now holds (the text
    is in the report), so the home is whole and a secret is no longer in it."""
    projector, targets = Projector(home), {name: t for t, name in FILES.items()}
    for source in dict.fromkeys(r.source for r in done.refused):
        path, parts = home / source, Path(source).parts
        if path.name in targets:
            projector.write_entries(conn, parts[0], targets[path.name])
        elif path.name == "history.jsonl":
            events = history_events(topics.all_facts(conn, parts[0], parts[2]))
            lines = (json.dumps(e, ensure_ascii=False, sort_keys=True) + "\n" for e in events)
            atomic_write(path, "".join(lines))
        elif path.name == "SKILL.md":
            path.unlink(missing_ok=True)


def _recover(conn: sqlite3.Connection, projector: Projector, gate: _Gate) -> None:
    """Every folder holding a namespace's files, into the open transaction."""
    done, now = gate.done, gate.now
    for namespace in projector.projected():
        try:
            check_name("namespace", namespace, home_level=True)
        except InputError as exc:  # a folder that is no namespace: left alone, reported
            done.skipped.append(f"{namespace}/: {exc}")
            continue
        folder = projector.namespace_dir(namespace)
        for target, name in FILES.items():
            _recover_entries(conn, namespace, target, folder / name, gate)
        for path in sorted((folder / "topics").glob("*/history.jsonl")):
            _recover_facts(conn, namespace, path, gate)
        for path in sorted((folder / "skills").glob("*/SKILL.md")):
            _recover_skill(conn, namespace, path, gate)
        promotions = projector.log_file(namespace, "promotions")
        keep = gate.config.promoter.decided_fifo
        _recover_decisions(conn, namespace, promotions, now, keep, done)


def _recover_entries(
    conn: sqlite3.Connection, namespace: str, target: str, path: Path, gate: _Gate
) -> None:
    """A file's entries, when the database holds none of its own for it (else the file is
    a stale or edited rendering of rows the database has); each passes the write path's
    checks, and the file's cap holds."""
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    if not text.strip() or entries.every(conn, namespace, target):
        return
    source, cap = f"{namespace}/{path.name}", int(getattr(gate.config.caps, target))
    kept: list[str] = []  # the rendered entries imported so far
    for piece in text.rstrip("\n").split(ENTRY_SEPARATOR):
        mark = _MARK.search(piece)
        content = _MARK.sub("", piece).strip()
        arguments = {"action": "add", "target": target, "content": content}
        if not content or not gate.passes(source, "entry", "memory", arguments, content):
            continue
        entry = Entry(
            id=new_id("ent"),
            namespace=namespace,
            target=target,
            content=content,
            key=None,
            reinforce=int(mark.group(1)) if mark else 1,
            status="live",
            replaced_by=None,
            created_by=ACTOR,
            session_id=None,
            created_at=gate.now,
            updated_at=gate.now,
            ended_at=None,
        )
        used = len(ENTRY_SEPARATOR.join([*kept, entry.rendered]))
        if used > cap:
            reason = f"{path.name} would hold {used} chars; its cap is {cap}"
            gate.refuse(source, "entry", content, reason)
            continue
        kept.append(entry.rendered)
        entries.insert(conn, entry)
        _audit(conn, namespace, entry.id, target, content, path, gate.now)
        gate.done.entries += 1


def _topic_refusal(conn: sqlite3.Connection, namespace: str, topic: str, gate: _Gate) -> str | None:
    """Why a topic the database lacks may not be made: its name, or the topic cap."""
    try:
        parse_call("topic", {"action": "read", "topic": topic}, gate.config.writer)
    except ToolInputError as exc:
        return str(exc)
    cap = gate.config.writer.max_topics
    if len(topics.names(conn, namespace)) >= cap:
        return f"the namespace already holds {cap} topics, the cap"
    return None


def _recover_facts(conn: sqlite3.Connection, namespace: str, path: Path, gate: _Gate) -> None:
    """A topic's facts with their ids and chains, from its event stream; each fact passes
    the write path's checks (a refused one leaves its chain without it)."""
    topic, done, now = path.parent.name, gate.done, gate.now
    events = history_events_of(path)
    source = f"{namespace}/topics/{topic}/history.jsonl"
    barred = None
    if not topics.exists(conn, namespace, topic):
        barred = _topic_refusal(conn, namespace, topic, gate)
    have = {f.id for f in topics.all_facts(conn, namespace, topic)}
    for event in events:
        if event.get("event") != "add" or event["id"] in have:
            continue
        fact = _fact(namespace, topic, event, have)
        if fact is None:
            done.skipped.append(f"{namespace}/topics/{topic}: add event {event['id']} is torn")
            continue
        what, content = f"fact {fact.id}", fact.content
        if barred is not None:
            gate.refuse(source, what, content, barred)
            continue
        arguments = {"action": "save", "topic": topic, "content": content}
        if not gate.passes(source, what, "topic", arguments, content):
            continue
        if not topics.exists(conn, namespace, topic):
            topics.create(conn, namespace, topic, str(events[0].get("at") or now))
        topics.insert(conn, fact)
        have.add(fact.id)
        _audit(conn, namespace, fact.id, f"topic:{topic}", fact.content, path, now)
        done.facts += 1
    for event in events:
        successor = event.get("superseded_by")
        if event.get("event") != "supersede" or successor not in have:
            continue
        old = topics.get(conn, namespace, event["id"])
        if old is not None and old.invalid_at is None:
            topics.invalidate(conn, old.id, str(successor), str(event.get("at") or now))
    for event in events:  # after the chains: indexed with each chain's live fact
        if event.get("event") == "add" and event["id"] in have and event.get("formerly"):
            topics.index_formerly(conn, event["id"], [str(t) for t in event["formerly"]])


def _fact(namespace: str, topic: str, event: dict[str, Any], have: set[str]) -> Fact | None:
    content, chain_id, at = event.get("content"), event.get("chain_id"), event.get("at")
    if not (isinstance(content, str) and isinstance(chain_id, str) and isinstance(at, str)):
        return None
    supersedes = event.get("supersedes")
    session = event.get("session_id")
    return Fact(
        id=str(event["id"]),
        namespace=namespace,
        topic=topic,
        content=content,
        chain_id=chain_id,
        depth=int(event.get("depth") or 0),
        supersedes=supersedes if supersedes in have else None,
        superseded_by=None,
        created_by=str(event.get("created_by") or ACTOR),
        session_id=session if isinstance(session, str) else None,
        created_at=at,
        invalid_at=None,
    )


def _recover_skill(conn: sqlite3.Connection, namespace: str, path: Path, gate: _Gate) -> None:
    """A skill from its SKILL.md, when its body passes the skill tool's checks."""
    name, now, done = path.parent.name, gate.now, gate.done
    if skills.get(conn, namespace, name) is not None:
        return
    parts = path.read_text(encoding="utf-8").split("---\n", 2)
    try:
        front = yaml.safe_load(parts[1]) if len(parts) == 3 else None
    except yaml.YAMLError:
        front = None
    if not isinstance(front, dict):
        done.skipped.append(f"{namespace}/skills/{name}/SKILL.md: no front matter")
        return
    skill = Skill(
        namespace=namespace,
        name=name,
        body=parts[2].removeprefix("\n").rstrip(),
        created_by=str(front.get("created_by") or ACTOR),
        pinned=bool(front.get("pinned")),
        created_at=str(front.get("created_at") or now),
        updated_at=str(front.get("updated_at") or now),
        last_used_at=None,
        archived_at=None,
    )
    arguments = {"action": "create", "name": name, "content": skill.body}
    source = f"{namespace}/skills/{name}/SKILL.md"
    if not gate.passes(source, "skill", "skill_manage", arguments, skill.body):
        return
    skills.insert(conn, skill)
    _audit(conn, namespace, name, "skill", skill.body[:200], path, now)
    done.skills += 1


def _recover_decisions(
    conn: sqlite3.Connection, namespace: str, path: Path, now: str, keep: int, done: Repaired
) -> None:
    """The promoter's final verdicts, so a recovered chain is not judged twice."""
    if not path.is_file() or review_state.get(conn, namespace, DONE_IDS) is not None:
        return
    decided = [
        str(r["fact_id"])
        for r in history_events_of(path, key="fact_id")
        if r.get("verdict") in {"promoted", "skip"}
    ]
    if decided:
        review_state.put(conn, namespace, DONE_IDS, list(dict.fromkeys(decided))[-keep:], now)
        done.decisions += len(decided)


def _audit(
    conn: sqlite3.Connection,
    namespace: str,
    entry_id: str,
    target: str,
    content: str,
    path: Path,
    now: str,
) -> None:
    ledger.append(
        conn,
        LedgerRecord(
            ts=now,
            namespace=namespace,
            actor=ACTOR,
            action="recover",
            decision="ADD",
            entry_id=entry_id,
            target=target,
            after=content,
            detail={"from": f"{path.parent.name}/{path.name}"},
        ),
    )
