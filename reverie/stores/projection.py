"""Markdown and JSONL files: projections of reverie.db, never read back as truth.

Markdown files are rewritten whole and atomically (temp file + rename) after each commit.
``history.jsonl`` is an append-only event stream, one line per event, appended in one write;
on open, any projection that disagrees with the database is rebuilt from it. A file lock
serialises projection writers across processes sharing a home, and each writer renders from
the database state read while it holds the lock, so the last writer always writes the latest.
"""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any, TypeVar

import yaml

from reverie.errors import HomeError
from reverie.rules.injection import as_line
from reverie.stores import entries, skills, summaries, topics
from reverie.stores.records import ENTRY_SEPARATOR, Entry, Fact, Skill

T = TypeVar("T")
FILES = {"memory": "MEMORY.md", "user": "USER.md", "soul": "SOUL.md"}


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so a reader sees the old or the new file, never a mix.

    The temporary file is named for this process and thread (``.summary.md.<pid>-<tid>``):
    no other writer can hold that name, so it needs no random one (``tempfile``'s name
    generator was a tenth of a summary's projection)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{threading.get_ident()}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)
    try:  # the folder is there but for a file's first write: no mkdir on the hot path
        fd = os.open(tmp, flags, 0o600)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, flags, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _opened(path: Path, mode: str) -> IO[Any]:
    """``path`` opened to append, its folder made first when missing (tried only then: no
    look at the folder on the hot path)."""
    encoding = None if "b" in mode else "utf-8"
    try:
        return open(path, mode, encoding=encoding)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        return open(path, mode, encoding=encoding)


def add_event(fact: Fact, formerly: Sequence[str] = ()) -> dict[str, Any]:
    """A fact's ``add`` event; ``formerly``: what its session said before it and the flush
    collapsed into it (indexed with it; kept here so a repair indexes it again)."""
    event = {
        "event": "add",
        "id": fact.id,
        "at": fact.created_at,
        "content": fact.content,
        "chain_id": fact.chain_id,
        "depth": fact.depth,
        "supersedes": fact.supersedes,
        "session_id": fact.session_id,
        "created_by": fact.created_by,
    }
    return {**event, "formerly": list(formerly)} if formerly else event


def supersede_event(old_id: str, new_id: str, when: str) -> dict[str, Any]:
    return {"event": "supersede", "id": old_id, "at": when, "superseded_by": new_id}


def history_events(facts: Iterable[Fact]) -> list[dict[str, Any]]:
    """The full event stream of a topic, rebuilt from its facts."""
    events = []
    for fact in facts:
        events.append(add_event(fact))
        if fact.invalid_at is not None and fact.superseded_by is not None:
            events.append(supersede_event(fact.id, fact.superseded_by, fact.invalid_at))
    return sorted(events, key=lambda e: (e["at"], e["event"] != "add"))


def entry_file_text(live: list[Entry]) -> str:
    """MEMORY.md / USER.md / SOUL.md: one line per entry (``as_line``: no content line
    can open a header, a turn or a separator), entries between '§' lines."""
    block = ENTRY_SEPARATOR.join(replace(e, content=as_line(e.content)).rendered for e in live)
    return block + "\n" if block else ""


def skill_markdown(skill: Skill) -> str:
    front = {
        "name": skill.name,
        "created_by": skill.created_by,
        "pinned": skill.pinned,
        "created_at": skill.created_at,
        "updated_at": skill.updated_at,
    }
    return "---\n" + yaml.safe_dump(front, sort_keys=False) + "---\n\n" + skill.body.rstrip() + "\n"


class Projector:
    """Writes one home's projections."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self._lock_path = home / ".projection.lock"

    def namespace_dir(self, namespace: str) -> Path:
        return self.home / namespace

    def entry_file(self, namespace: str, target: str) -> Path:
        return self.home.joinpath(namespace, FILES[target])

    def history_file(self, namespace: str, topic: str) -> Path:
        return self.home.joinpath(namespace, "topics", topic, "history.jsonl")

    def skill_file(self, namespace: str, name: str) -> Path:
        return self.home.joinpath(namespace, "skills", name, "SKILL.md")

    def write_entries(self, conn: sqlite3.Connection, namespace: str, target: str) -> None:
        """Re-render MEMORY.md / USER.md / SOUL.md from the live entries, reading them under
        the file lock so the last writer always writes the latest committed state."""
        if target not in FILES:
            return
        path = self.entry_file(namespace, target)

        def write() -> None:
            atomic_write(path, entry_file_text(entries.live(conn, namespace, target)))

        self._flocked(write)

    def append_history(self, namespace: str, topic: str, events: list[dict[str, Any]]) -> None:
        lines = "".join(json_line(e) for e in events)
        path = self.history_file(namespace, topic)

        def append() -> None:
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(lines)

        self._flocked(append)

    def log_file(self, namespace: str, name: str) -> Path:
        return self.home.joinpath(namespace, "logs", "wiki", f"{name}.jsonl")

    def summary_file(self, namespace: str, topic: str) -> Path:
        return self.home.joinpath(namespace, "topics", topic, "summary.md")

    def append_log(self, namespace: str, name: str, records: list[dict[str, Any]]) -> None:
        """Append records to one of the jsonl log family (distill, promotions, conflicts,
        curator) under ``logs/wiki/``, then sync them to disk. The sync (milliseconds for a
        new file) runs after the home's projection lock is released: holding it there
        stalled every other projection, and the database commits waiting on them."""
        if not records:
            return
        path = self.log_file(namespace, name)
        lines = "".join(json_line(r) for r in records)
        with _opened(path, "a") as handle:

            def append() -> None:
                handle.write(lines)
                handle.flush()

            self._flocked(append)
            os.fsync(handle.fileno())

    def write_summary(self, namespace: str, topic: str, summary: str) -> None:
        path = self.summary_file(namespace, topic)
        self._flocked(lambda: atomic_write(path, summary + "\n"))

    def refresh_summaries(
        self, conn: sqlite3.Connection, namespace: str, names: Iterable[str]
    ) -> None:
        """Each topic's ``summary.md`` as the database holds it now, read under the
        projection lock: written from a reader thread after a commit, it can never put back
        a summary that a later write's projection (which also takes the lock) replaced."""

        def run() -> None:
            for topic in names:
                text = summaries.current(conn, namespace, topic, separator="\n")
                if text:
                    atomic_write(self.summary_file(namespace, topic), text + "\n")

        self._flocked(run)

    def write_skill(self, skill: Skill) -> None:
        path = self.skill_file(skill.namespace, skill.name)
        text = skill_markdown(skill)
        self._flocked(lambda: atomic_write(path, text))

    def locked(self, write: Callable[[], T]) -> T:
        """Run ``write`` under the home's projection lock (other modules' projections)."""
        return self._flocked(write)

    def _flocked(self, write: Callable[[], T]) -> T:
        """Run one file write under the cross-process lock, all in the calling thread."""
        with _opened(self._lock_path, "a+b") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                return write()
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def rebuild(self, conn: sqlite3.Connection) -> Rebuilt:
        """Bring every projection in line with the database (a crash between a commit and
        its projection leaves one stale). Every namespace is visited even when one fails;
        a database holding less than the files show raises :class:`HomeError` first, so
        the files are never rewritten to a reduced database."""

        def run() -> Rebuilt:
            known, folders = entries.namespaces(conn), self.folders()
            lost = self._lost(conn, known, folders)
            if lost:
                raise HomeError(damaged(self.home, lost))
            files: list[str] = []
            failures: dict[str, str] = {}
            for namespace in known:
                try:
                    files.extend(self._rebuild_namespace(conn, namespace))
                except OSError as exc:  # this namespace's folder: the others still run
                    failures[namespace] = f"{type(exc).__name__}: {exc}"
            return Rebuilt(files, failures, known, folders)

        return self._flocked(run)

    def lost(self, conn: sqlite3.Connection) -> list[str]:
        """What the files hold that the database does not: empty when they agree."""
        return self._flocked(lambda: self._lost(conn, entries.namespaces(conn), self.folders()))

    def folders(self) -> list[str]:
        """The home's folders that may be namespaces (dot folders are never one)."""
        try:
            with os.scandir(self.home) as found:
                return sorted(
                    e.name
                    for e in found
                    if e.is_dir(follow_symlinks=False) and not e.name.startswith(".")
                )
        except FileNotFoundError:
            return []

    def holds_projections(self, namespace: str) -> bool:
        """Whether a folder holds anything a namespace writes (entries, facts, skills)."""
        folder = self.namespace_dir(namespace)
        if any(_size(folder / name) for name in FILES.values()):
            return True
        if any(_size(path) for path in (folder / "topics").glob("*/history.jsonl")):
            return True
        return any((folder / "skills").glob("*/SKILL.md"))

    def projected(self) -> list[str]:
        """The folders holding a namespace's files (what an empty database would lose)."""
        return [name for name in self.folders() if self.holds_projections(name)]

    def _lost(self, conn: sqlite3.Connection, known: list[str], folders: list[str]) -> list[str]:
        findings: list[str] = []
        names = set(known)
        for folder in folders:
            if folder in names:
                findings.extend(self._lost_in(conn, folder))
            elif self.holds_projections(folder):
                findings.append(f"{folder}/ holds the files of a namespace the database lacks")
        return findings

    def _lost_in(self, conn: sqlite3.Connection, namespace: str) -> list[str]:
        """Entries and facts of one namespace's files that its database rows lack. A fact
        carries its id, so a missing one is a loss; an entry file is a loss only when the
        database never held an entry of that file (a file that merely differs is stale or
        edited by hand, and files are never read back as truth)."""
        findings: list[str] = []
        for target, name in FILES.items():
            if _size(self.entry_file(namespace, target)) and not entries.every(
                conn, namespace, target
            ):
                findings.append(f"{namespace}/{name}: entries the database never held")
        known = set(topics.names(conn, namespace))
        for path in sorted(self.home.joinpath(namespace, "topics").glob("*/history.jsonl")):
            topic = path.parent.name
            if not _size(path):
                continue
            if topic not in known:
                findings.append(f"{namespace}/topics/{topic}: a topic the database lacks")
                continue
            if _line_count(path) <= _event_count(conn, namespace, topic):
                continue
            ids = {f.id for f in topics.all_facts(conn, namespace, topic)}
            missing_ids = history_ids(path) - ids
            if missing_ids:
                findings.append(
                    f"{namespace}/topics/{topic}: {len(missing_ids)} facts the database lacks"
                )
        return findings

    def _rebuild_namespace(self, conn: sqlite3.Connection, namespace: str) -> list[str]:
        rebuilt: list[str] = []
        for target in FILES:
            text = entry_file_text(entries.live(conn, namespace, target))
            path = self.entry_file(namespace, target)
            if (text or path.exists()) and _read(path) != text:
                atomic_write(path, text)
                rebuilt.append(str(path.relative_to(self.home)))
        for topic in topics.names(conn, namespace):
            events = history_events(topics.all_facts(conn, namespace, topic))
            path = self.history_file(namespace, topic)
            if not path.exists() or _line_count(path) != len(events) or not _whole(path):
                atomic_write(path, "".join(json_line(e) for e in events))
                rebuilt.append(str(path.relative_to(self.home)))
            summary = summaries.current(conn, namespace, topic, separator="\n")
            path = self.summary_file(namespace, topic)
            if summary and _read(path) != summary + "\n":
                atomic_write(path, summary + "\n")
                rebuilt.append(str(path.relative_to(self.home)))
        for skill in skills.registered(conn, namespace):
            path = self.skill_file(namespace, skill.name)
            text = skill_markdown(skill)
            if _read(path) != text:
                atomic_write(path, text)
                rebuilt.append(str(path.relative_to(self.home)))
        return rebuilt


@dataclass(frozen=True, slots=True)
class Rebuilt:
    """What a rebuild on open did: the files it rewrote, each namespace it could not bring
    in line (with the error), and the names in use (the database's and the folders')."""

    files: list[str]
    failures: dict[str, str]
    namespaces: list[str]
    folders: list[str]


def damaged(home: Path, lost: list[str]) -> str:
    """The message of a home refused because its database holds less than its files."""
    shown = "; ".join(lost[:3]) + (f"; and {len(lost) - 3} more" if len(lost) > 3 else "")
    return (
        f"the database of {home} holds less than its files show ({shown}); refusing to "
        "open it, so the files are not rewritten to the reduced database. Run `reverie "
        f"doctor --home {home}` to see what is wrong and `reverie doctor --repair` to "
        "rebuild the database from the files"
    )


def history_events_of(path: Path, key: str = "id") -> list[dict[str, Any]]:
    """The whole records of a jsonl file that name a ``key`` (a torn or foreign line is
    skipped): a topic's history events, or a log of the jsonl family."""
    events = []
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict) and isinstance(event.get(key), str):
                events.append(event)
    return events


def history_ids(path: Path) -> set[str]:
    """The ids of the facts a history.jsonl says were added."""
    return {str(e["id"]) for e in history_events_of(path) if e.get("event") == "add"}


def _event_count(conn: sqlite3.Connection, namespace: str, topic: str) -> int:
    """How many lines the topic's history has when whole: an add per fact, a supersede
    per superseded one."""
    row = conn.execute(
        "SELECT count(*) + count(invalid_at) FROM facts WHERE namespace = ? AND topic = ?",
        (namespace, topic),
    ).fetchone()
    return int(row[0])


def _size(path: Path) -> int:
    try:
        return path.stat().st_size if path.is_file() else 0
    except OSError:
        return 0


def json_line(event: dict[str, Any]) -> str:
    """One JSONL line (keys sorted: the same record is the same bytes)."""
    return json.dumps(event, ensure_ascii=False, sort_keys=True) + "\n"


def _read(path: Path) -> str | None:
    return path.read_text(encoding="utf-8") if path.exists() else None


def _line_count(path: Path) -> int:
    with open(path, "rb") as handle:
        return sum(1 for _ in handle)


def _whole(path: Path) -> bool:
    """A torn append leaves a last line without its newline."""
    with open(path, "rb") as handle:
        handle.seek(0, os.SEEK_END)
        if handle.tell() == 0:
            return True
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) == b"\n"
