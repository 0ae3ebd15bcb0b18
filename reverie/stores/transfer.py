"""A namespace's learning records as rows to export, and the restore that writes them back.

:func:`dump` reads every record of a namespace — its ``records`` view fields, the columns
of the store that holds it (an entry's, a fact's chain, a skill's), the learning row's own
clock (``seen_session``) and its access history — in the order the records were made.
:func:`restore` writes such rows into an empty namespace in one transaction, so ids, chains,
tiers, access counts and times come back exactly (see docs/records.md, "Import and
export"). The checks of each row (secrets, fields) are the caller's; this module only
writes what it is given.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any, Final

from reverie.stores import entries, learning, ledger, search, skills, topics
from reverie.stores.db import fetchall, fetchone
from reverie.stores.records import Entry, Fact, LedgerRecord, Skill

ACTOR: Final = "import"
FORMAT: Final = "reverie.records"
VERSION: Final = 1
"""What the first line of an export says; a reader refuses another version whole."""
RECORD_FIELDS: Final = (
    "id",
    "namespace",
    "kind",
    "place",
    "content",
    "priority",
    "status",
    "tier",
    "access_count",
    "last_access_at",
    "session_id",
    "created_at",
    "updated_at",
)
_ENTRY: Final = "key, reinforce, status, replaced_by, created_by, created_at, updated_at, ended_at"
_FACT: Final = "chain_id, depth, supersedes, superseded_by, created_by, created_at, invalid_at"
_SKILL: Final = "created_by, pinned, created_at, updated_at, last_used_at, archived_at"


def _columns(names: str) -> list[str]:
    return [n.strip() for n in names.split(",")]


def is_empty(conn: sqlite3.Connection, namespace: str) -> bool:
    """Whether the namespace holds nothing a restore could collide with."""
    sql = """SELECT 1 FROM learning WHERE namespace = :ns UNION ALL
             SELECT 1 FROM entries WHERE namespace = :ns UNION ALL
             SELECT 1 FROM topics WHERE namespace = :ns UNION ALL
             SELECT 1 FROM skills WHERE namespace = :ns LIMIT 1"""
    return conn.execute(sql, {"ns": namespace}).fetchone() is None


def taken(conn: sqlite3.Connection, ids: Sequence[str]) -> list[str]:
    """Those of ``ids`` an entry or a fact of any namespace of this home already has (their
    ids are unique in the home, so a restore cannot reuse them)."""
    found: list[str] = []
    for start in range(0, len(ids), 400):
        chunk = list(ids[start : start + 400])
        marks = ",".join("?" * len(chunk))
        sql = (
            f"SELECT id FROM entries WHERE id IN ({marks})"
            f" UNION SELECT id FROM facts WHERE id IN ({marks})"
        )
        found += [row[0] for row in fetchall(conn, sql, (*chunk, *chunk))]
    return sorted(found)


def header(conn: sqlite3.Connection, namespace: str) -> dict[str, Any]:
    """The namespace's own line: the tiers' session clock and the last heartbeat."""
    row = fetchone(
        conn, "SELECT sessions, heartbeat_at FROM namespaces WHERE name = ?", (namespace,)
    )
    return {
        "format": FORMAT,
        "version": VERSION,
        "namespace": namespace,
        "sessions": int(row[0]) if row else 0,
        "heartbeat_at": row[1] if row else None,
    }


def dump(conn: sqlite3.Connection, namespace: str) -> list[dict[str, Any]]:
    """Every record of the namespace, oldest first, as the JSONL export writes it."""
    columns = ", ".join(f"r.{c}" for c in RECORD_FIELDS)
    rows = fetchall(
        conn,
        f"SELECT {columns}, l.hot_base, l.seen_session, l.updated_at FROM records r"
        " JOIN learning l ON l.rn = r.rn WHERE r.namespace = ? ORDER BY r.rn",
        (namespace,),
    )
    history: dict[str, list[dict[str, str]]] = {}
    for ts, how, rid, session in fetchall(
        conn,
        "SELECT ts, how, id, session_id FROM accesses WHERE namespace = ? ORDER BY ts, rowid",
        (namespace,),
    ):
        history.setdefault(rid, []).append(
            {"at": ts, "how": how, **({"session": session} if session else {})}
        )
    records = []
    for row in rows:
        record = dict(zip(RECORD_FIELDS, row[: len(RECORD_FIELDS)], strict=True))
        stored = {"seen_session": row[-2], "learning_updated_at": row[-1]}
        if row[-3]:  # the accesses it had when it last came back to HOT
            stored["hot_base"] = row[-3]
        stored.update(_held(conn, record["kind"], namespace, record["id"], record["place"]))
        if record["kind"] == "fact":
            record["chain"] = {k: stored.pop(k) for k in _columns(_FACT) if k != "created_by"}
        record["accesses"] = history.get(record["id"], [])
        record["stored"] = stored
        records.append(record)
    return records


def _held(
    conn: sqlite3.Connection, kind: str, namespace: str, record_id: str, place: str | None
) -> dict[str, Any]:
    """The columns of the store that holds the record (none for a log record)."""
    key: tuple[str | None, ...]
    if kind == "entry":
        sql, key = f"SELECT {_ENTRY} FROM entries WHERE id = ?", (record_id,)
        names = _columns(_ENTRY)
    elif kind == "fact":
        sql, key = f"SELECT {_FACT} FROM facts WHERE id = ?", (record_id,)
        names = _columns(_FACT)
        former = _former_text(conn, record_id)
    elif kind == "skill":
        sql = f"SELECT {_SKILL} FROM skills WHERE namespace = ? AND name = ?"
        key, names = (namespace, place), _columns(_SKILL)
    elif kind == "pattern":
        return _pattern_row(conn, namespace, record_id)
    else:
        return {}
    row = fetchone(conn, sql, key)
    assert row is not None  # the records view joined it
    held = dict(zip(names, row, strict=True))
    if kind == "skill":
        held["pinned"] = bool(held["pinned"])
    if kind == "fact" and former is not None:
        held["former_text"] = former
    return held


def _former_text(conn: sqlite3.Connection, fact_id: str) -> str | None:
    """A live fact's chain row in the search index (kind 0): its chain's former texts and
    what its session said and collapsed into it, which nothing else keeps."""
    row = fetchone(
        conn,
        "SELECT s.text FROM facts f JOIN search_index s ON s.rowid = f.rowid * 4"
        " WHERE f.id = ? AND f.invalid_at IS NULL",
        (fact_id,),
    )
    return None if row is None else str(row[0])


def _pattern_row(conn: sqlite3.Connection, namespace: str, record_id: str) -> dict[str, Any]:
    """A pattern's library row (its name, trigger, response, examples, facets)."""
    row = fetchone(
        conn,
        "SELECT name, trigger, response, examples, facets, sessions FROM patterns"
        " WHERE namespace = ? AND id = ?",
        (namespace, record_id),
    )
    if row is None:  # a pattern said by hand (ns.learn): a log record like any other
        return {}
    return {
        "name": row[0],
        "trigger": row[1],
        "response": row[2],
        "examples": json.loads(row[3]),
        "facets": json.loads(row[4]),
        "sessions": int(row[5]),
    }


def restore(
    conn: sqlite3.Connection, namespace: str, head: dict[str, Any], records: Sequence[Any], now: str
) -> None:
    """Write checked records into an empty namespace, as they were: the store rows (which
    make their learning rows by trigger), then each learning row's fields, the chains'
    links (oldest first, as the writer made them) and the access history. One ledger row
    says what was restored."""
    for record in records:
        _insert(conn, namespace, record)
    for record in records:
        if record["kind"] == "fact" and record["chain"]["superseded_by"] is not None:
            conn.execute(
                "UPDATE facts SET superseded_by = ?, invalid_at = ? WHERE id = ?",
                (record["chain"]["superseded_by"], record["chain"]["invalid_at"], record["id"]),
            )
        _learning_row(conn, namespace, record)
    for record in records:  # the chain rows as exported (the links above made their own)
        former = (record.get("stored") or {}).get("former_text")
        if record["kind"] == "fact" and former is not None:
            _restore_former(conn, namespace, record["id"], former)
    conn.executemany(
        "INSERT INTO accesses (namespace, id, ts, how, session_id) VALUES (?, ?, ?, ?, ?)",
        [
            (namespace, r["id"], a["at"], a["how"], a.get("session"))
            for r in records
            for a in r["accesses"]
        ],
    )
    conn.execute(
        "INSERT INTO namespaces (name, sessions, heartbeat_at, created_at) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (name) DO UPDATE SET sessions = excluded.sessions,"
        " heartbeat_at = excluded.heartbeat_at",
        (namespace, int(head.get("sessions") or 0), head.get("heartbeat_at"), now),
    )
    ledger.append(
        conn,
        LedgerRecord(
            ts=now,
            namespace=namespace,
            actor=ACTOR,
            action="import",
            decision="ADD",
            entry_id=None,
            detail={"restored": len(records), "from": head.get("namespace")},
        ),
    )


def _insert(conn: sqlite3.Connection, namespace: str, r: dict[str, Any]) -> None:
    held = r.get("stored") or {}
    if r["kind"] == "entry":
        _insert_entry(conn, namespace, r, held)
    elif r["kind"] == "fact":
        _insert_fact(conn, namespace, r, held)
    elif r["kind"] == "skill":
        archived = r["updated_at"] if r["status"] == "archived" else None
        skill = Skill(
            namespace=namespace,
            name=r["place"],
            body=r["content"],
            created_by=held.get("created_by", ACTOR),
            pinned=bool(held.get("pinned", False)),
            created_at=held.get("created_at", r["created_at"]),
            updated_at=held.get("updated_at", r["updated_at"]),
            last_used_at=held.get("last_used_at"),
            archived_at=held.get("archived_at", archived),
        )
        skills.insert(conn, skill)
    else:
        said = (r["id"], r["kind"], r["content"], r["priority"])
        learning.add_log(conn, namespace, said, None, r["created_at"])
        if r["kind"] == "pattern" and held.get("name"):
            conn.execute(
                "INSERT INTO patterns VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    namespace,
                    r["id"],
                    held["name"],
                    held["trigger"],
                    held["response"],
                    json.dumps(held.get("examples", [])),
                    json.dumps(held.get("facets", [])),
                    int(held.get("sessions", 0)),
                ),
            )


def _insert_entry(
    conn: sqlite3.Connection, namespace: str, r: dict[str, Any], held: dict[str, Any]
) -> None:
    entry = Entry(
        id=r["id"],
        namespace=namespace,
        target=r["place"],
        content=r["content"],
        key=held.get("key"),
        reinforce=int(held.get("reinforce", 1)),
        status="live",
        replaced_by=held.get("replaced_by"),
        created_by=held.get("created_by", ACTOR),
        session_id=r["session_id"],
        created_at=held.get("created_at", r["created_at"]),
        updated_at=held.get("updated_at", r["updated_at"]),
        ended_at=held.get("ended_at"),
    )
    entries.insert(conn, entry)
    status = held.get("status", _ENTRY_STATUS.get(r["status"], "live"))
    if status != "live":  # ended after the insert, so the search index follows
        conn.execute("UPDATE entries SET status = ? WHERE id = ?", (status, r["id"]))


def _restore_former(conn: sqlite3.Connection, namespace: str, fact_id: str, text: str) -> None:
    row = fetchone(conn, "SELECT rowid FROM facts WHERE id = ?", (fact_id,))
    if row is None:
        return
    search.put_row(conn, "search_index", int(row[0]) * 4, text, namespace)  # kind 0


def _insert_fact(
    conn: sqlite3.Connection, namespace: str, r: dict[str, Any], held: dict[str, Any]
) -> None:
    chain = r["chain"]
    if not topics.exists(conn, namespace, r["place"]):
        topics.create(conn, namespace, r["place"], r["created_at"])
    fact = Fact(
        id=r["id"],
        namespace=namespace,
        topic=r["place"],
        content=r["content"],
        chain_id=chain["chain_id"],
        depth=int(chain["depth"]),
        supersedes=chain["supersedes"],
        superseded_by=None,  # linked once every fact of the chain is in
        created_by=held.get("created_by", ACTOR),
        session_id=r["session_id"],
        created_at=chain.get("created_at", r["created_at"]),
        invalid_at=None,
    )
    topics.insert(conn, fact)


_ENTRY_STATUS: Final = {"active": "live", "superseded": "replaced", "archived": "removed"}


def _learning_row(conn: sqlite3.Connection, namespace: str, r: dict[str, Any]) -> None:
    held = r.get("stored") or {}
    log = r["kind"] not in ("entry", "fact", "skill")
    conn.execute(
        """UPDATE learning SET priority = ?, tier = ?, access_count = ?, last_access_at = ?,
               hot_base = ?, seen_session = ?, session_id = ?, created_at = ?, updated_at = ?,
               status = iif(content IS NULL, NULL, ?)
           WHERE namespace = ? AND id = ?""",
        (
            r["priority"],
            r["tier"],
            int(r["access_count"]),
            r["last_access_at"],
            int(held.get("hot_base", 0)),
            int(held.get("seen_session", 0)),
            r["session_id"],
            r["created_at"],
            held.get("learning_updated_at", r["updated_at"]),
            r["status"] if log else None,
            namespace,
            r["id"],
        ),
    )


def as_json(value: Any) -> str:
    """One JSONL line: keys in a fixed order, no ASCII escaping, no spaces."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
