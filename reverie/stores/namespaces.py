"""The namespaces table (migration 9): each namespace's tier clock, whether it is archived,
and its own settings (overrides of :data:`reverie.config.NAMESPACE_KEYS`, as JSON).

Archiving is reversible and deletes nothing: ``archived_at`` is set, and writes check it
in their own transaction (:func:`check_open`), so a write racing an archive is refused or
landed, never half done. Every change here is a ledger row (actor ``namespace``).
"""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from reverie.config import NAMESPACE_KEYS, Config, overridden
from reverie.errors import ConfigError, InputError, NamespaceArchived, quoted
from reverie.frozen import quick_init
from reverie.stores import entries, learning, ledger
from reverie.stores.db import fetchall, fetchone
from reverie.stores.records import LedgerRecord, _Mapping

ACTOR: Final = "namespace"


@quick_init
@dataclass(frozen=True, slots=True)
class NamespaceRow(_Mapping):
    """One namespace as the table keeps it; a namespace that holds data but was never
    created by hand has no row until its first session ends (then ``created_at`` is that)."""

    name: str
    sessions: int
    heartbeat_at: str | None
    archived_at: str | None
    settings: dict[str, Any]
    created_at: str | None


def get(conn: sqlite3.Connection, name: str) -> NamespaceRow | None:
    row = fetchone(
        conn,
        "SELECT name, sessions, heartbeat_at, archived_at, settings, created_at"
        " FROM namespaces WHERE name = ?",
        (name,),
    )
    if row is None:
        return None
    return NamespaceRow(row[0], int(row[1]), row[2], row[3], json.loads(row[4] or "{}"), row[5])


def known(conn: sqlite3.Connection, name: str) -> bool:
    """Created by hand, or holding anything (an entry, a topic, a skill, an episode, a
    learning record)."""
    return get(conn, name) is not None or name in entries.namespaces(conn)


def names(conn: sqlite3.Connection, include_archived: bool = False) -> list[str]:
    """Every namespace that holds data or was created, sorted; archived ones only when
    asked for."""
    rows = fetchall(conn, "SELECT name, archived_at FROM namespaces")
    archived = {r[0] for r in rows if r[1] is not None}
    every = set(entries.namespaces(conn)) | {r[0] for r in rows}
    return sorted(n for n in every if include_archived or n not in archived)


def is_archived(conn: sqlite3.Connection, name: str) -> bool:
    row = fetchone(conn, "SELECT archived_at FROM namespaces WHERE name = ?", (name,))
    return row is not None and row[0] is not None


def check_open(conn: sqlite3.Connection, name: str) -> None:
    """Refuse a write to an archived namespace (inside the write's own transaction)."""
    if is_archived(conn, name):
        raise NamespaceArchived(
            f"namespace {name!r} is archived: it can be read but not written; "
            "restore it first (reverie namespace restore)"
        )


def effective(conn: sqlite3.Connection, name: str, config: Config) -> Config:
    """``config`` with the namespace's own overrides applied (read each time: a change
    made by another process, or while an actor runs, takes effect at its next write)."""
    row = fetchone(conn, "SELECT settings FROM namespaces WHERE name = ?", (name,))
    if row is None or row[0] in (None, "", "{}"):
        return config
    return _applied(config, row[0])


def open_settings(conn: sqlite3.Connection, name: str, config: Config) -> Config | None:
    """The namespace's own settings (:func:`effective`), or None when it is archived: one
    read for the learner's bookkeeping and the accesses counted at close."""
    row = fetchone(conn, "SELECT archived_at, settings FROM namespaces WHERE name = ?", (name,))
    if row is None or row[1] in (None, "", "{}"):
        return None if row is not None and row[0] is not None else config
    return None if row[0] is not None else _applied(config, row[1])


@functools.lru_cache(maxsize=256)
def _applied(config: Config, settings: str) -> Config:
    return overridden(config, json.loads(settings))


def checked(config: Config, settings: Any, removing: bool = False) -> dict[str, Any]:
    """Overrides checked as the config file's values are (InputError naming the key);
    ``removing``: a None value (an override to remove) is allowed for a known key."""
    if not isinstance(settings, Mapping):
        raise InputError(f"settings must be a mapping, got {type(settings).__name__}")
    for key, value in settings.items():
        if value is None and not (removing and key in NAMESPACE_KEYS):
            raise InputError(
                f"{quoted(key, 60)} has no value (None removes the override of a key of "
                "config.NAMESPACE_KEYS, in set_namespace_settings only)"
            )
    try:
        overridden(config, {k: v for k, v in settings.items() if v is not None})
    except ConfigError as exc:
        raise InputError(str(exc)) from exc
    return dict(settings)


def info(conn: sqlite3.Connection, name: str, config: Config) -> dict[str, Any]:
    """What ``reverie namespace show`` shows of one namespace."""
    row = get(conn, name)
    if row is None and not known(conn, name):
        raise InputError(f"no namespace {name!r}; create it first (reverie namespace create)")
    settings = row.settings if row is not None else {}
    changed = {}
    for key in NAMESPACE_KEYS:
        if key in settings:
            section, _, field = key.partition(".")
            home = getattr(getattr(config, section), field)
            changed[key] = {"value": settings[key], "home": home}
    return {
        "namespace": name,
        "created_at": row.created_at if row is not None else None,
        "archived_at": row.archived_at if row is not None else None,
        "archived": row is not None and row.archived_at is not None,
        "sessions": row.sessions if row is not None else 0,
        "last_heartbeat": row.heartbeat_at if row is not None else None,
        "settings": changed,
        "records": learning.counts(conn, name),
    }


def create(
    conn: sqlite3.Connection, name: str, settings: Mapping[str, Any], now: str
) -> NamespaceRow:
    """A new namespace with its own settings (already checked by the caller)."""
    if known(conn, name):
        raise InputError(f"namespace {name!r} exists already")
    conn.execute(
        "INSERT INTO namespaces (name, settings, created_at) VALUES (?, ?, ?)",
        (name, _dumps(settings), now),
    )
    _audit(conn, name, "CREATE", None, {"settings": dict(settings)}, now)
    found = get(conn, name)
    assert found is not None
    return found


def archive(conn: sqlite3.Connection, name: str, now: str) -> NamespaceRow:
    """Mark the namespace archived (read-only); nothing else changes."""
    row = _existing(conn, name, now)
    if row.archived_at is not None:
        raise InputError(f"namespace {name!r} is archived already (since {row.archived_at})")
    conn.execute("UPDATE namespaces SET archived_at = ? WHERE name = ?", (now, name))
    _audit(conn, name, "ARCHIVE", {"archived_at": None}, {"archived_at": now}, now)
    return _existing(conn, name, now)


def restore(conn: sqlite3.Connection, name: str, now: str) -> NamespaceRow:
    """Undo :func:`archive`: the namespace takes writes again."""
    row = _existing(conn, name, now)
    if row.archived_at is None:
        raise InputError(f"namespace {name!r} is not archived")
    conn.execute("UPDATE namespaces SET archived_at = NULL WHERE name = ?", (name,))
    _audit(conn, name, "RESTORE", {"archived_at": row.archived_at}, {"archived_at": None}, now)
    return _existing(conn, name, now)


def set_settings(
    conn: sqlite3.Connection, name: str, changes: Mapping[str, Any], now: str
) -> NamespaceRow:
    """Merge ``changes`` (already checked by the caller, key by key) into the namespace's
    settings; a None value removes that override."""
    row = _existing(conn, name, now)
    merged = {**row.settings, **changes}
    merged = {k: v for k, v in sorted(merged.items()) if v is not None}
    conn.execute("UPDATE namespaces SET settings = ? WHERE name = ?", (_dumps(merged), name))
    _audit(conn, name, "SETTINGS", {"settings": row.settings}, {"settings": merged}, now)
    return _existing(conn, name, now)


def _existing(conn: sqlite3.Connection, name: str, now: str) -> NamespaceRow:
    """The namespace's row, made for one that holds data but has none yet."""
    row = get(conn, name)
    if row is not None:
        return row
    if not known(conn, name):
        raise InputError(f"no namespace {name!r}; create it first (reverie namespace create)")
    conn.execute(
        "INSERT INTO namespaces (name, created_at) VALUES (?, ?)",
        (name, _first_seen(conn, name) or now),
    )
    made = get(conn, name)
    assert made is not None
    return made


def _first_seen(conn: sqlite3.Connection, name: str) -> str | None:
    row = fetchone(
        conn,
        "SELECT min(at) FROM (SELECT created_at AS at FROM learning WHERE namespace = ?"
        " UNION ALL SELECT ts FROM episodes WHERE namespace = ?)",
        (name, name),
    )
    return None if row is None or row[0] is None else str(row[0])


def _dumps(settings: Mapping[str, Any]) -> str:
    return json.dumps(dict(sorted(settings.items())), separators=(",", ":"))


def _audit(
    conn: sqlite3.Connection, name: str, decision: str, before: Any, after: Any, now: str
) -> None:
    ledger.append(
        conn,
        LedgerRecord(
            ts=now,
            namespace=name,
            actor=ACTOR,
            action="namespace",
            decision=decision,
            entry_id=None,
            target=name,
            before=before,
            after=after,
        ),
    )
