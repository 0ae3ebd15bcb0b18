"""The JSONL export: a namespace line, then one line per learning record, oldest first.

Reading it back checks every line on its own: a line that is not JSON, lacks a field,
names an unknown kind or status, or carries a secret is an ERROR naming its line number,
and only that line is skipped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from reverie.errors import InputError, check_text, quoted
from reverie.names import check_name
from reverie.rules.query import PRIORITIES, TIERS
from reverie.rules.secrets import refusal, secret_kind
from reverie.stores.transfer import FORMAT, VERSION, as_json
from reverie.tools import MEMORY_TARGETS

STORED_KINDS: Final = ("entry", "fact", "skill")
STATUSES: Final = {
    "entry": ("active", "superseded", "archived"),
    "fact": ("active", "superseded"),
    "skill": ("active", "archived"),
}
LOG_STATUSES: Final = ("active", "superseded", "archived", "resolved")
_TEXT: Final = ("id", "kind", "content", "created_at", "updated_at")
_MAYBE_TEXT: Final = ("last_access_at", "session_id")


class BadLine(ValueError):
    """Why one line of an import cannot be taken (its decision is ERROR)."""


@dataclass(frozen=True, slots=True)
class Lines:
    """A JSONL file read: its namespace line (empty when it has none), the records that
    passed their checks with their line numbers, and the lines refused with the reason."""

    head: dict[str, Any]
    records: tuple[tuple[int, dict[str, Any]], ...]
    refused: tuple[tuple[int, str, str | None], ...]


def render(head: dict[str, Any], records: list[dict[str, Any]]) -> str:
    return "".join(as_json(line) + "\n" for line in [head, *records])


def read(text: str) -> Lines:
    """Every line of an export, checked on its own."""
    head: dict[str, Any] = {}
    records: list[tuple[int, dict[str, Any]]] = []
    refused: list[tuple[int, str, str | None]] = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        value: Any = None
        try:
            value = _json(raw)
            if number == 1 and "format" in value and "kind" not in value:
                head = _head(value)
                continue
            record = check(value)
            if record["id"] in seen:
                raise BadLine(f"id {quoted(record['id'])} is already on line {seen[record['id']]}")
        except BadLine as exc:
            rid = value.get("id") if isinstance(value, dict) else None
            refused.append((number, str(exc), rid if isinstance(rid, str) else None))
            continue
        seen[record["id"]] = number
        records.append((number, record))
    return Lines(head, tuple(records), tuple(refused))


def _head(value: dict[str, Any]) -> dict[str, Any]:
    """The namespace line; an export this version cannot read is refused whole."""
    if value.get("format") != FORMAT or value.get("version") != VERSION:
        raise InputError(
            f"not a {FORMAT} export of version {VERSION}: its first line says format "
            f"{quoted(value.get('format'), 40)}, version {quoted(value.get('version'), 20)}"
        )
    sessions = value.get("sessions", 0)
    if not isinstance(sessions, int) or isinstance(sessions, bool) or sessions < 0:
        raise InputError("the first line's sessions must be a whole number, 0 or more")
    try:
        _time("heartbeat_at", value.get("heartbeat_at"), optional=True)
    except BadLine as exc:
        raise InputError(f"the first line's {exc}") from None
    return value


def _json(raw: str) -> dict[str, Any]:
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise BadLine(f"not JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise BadLine(f"a record is a JSON object, got {type(value).__name__}")
    return value


def check(value: dict[str, Any]) -> dict[str, Any]:
    """One record line's fields, or :class:`BadLine` naming the first that is wrong."""
    for name in _TEXT:
        if not isinstance(value.get(name), str) or not value[name].strip():
            raise BadLine(f"missing or empty field {name!r}")
    for name in _MAYBE_TEXT:
        if value.get(name) is not None and not isinstance(value[name], str):
            raise BadLine(f"field {name!r} must be text or null")
    kind = value["kind"]
    if kind not in STORED_KINDS and (
        not kind.isidentifier() or len(kind) > 40 or value.get("place") is not None
    ):  # a log record's kind is any word (ns.learn's), and it has no place
        raise BadLine(f"unknown kind {quoted(kind, 40)}: not entry, fact, skill or a log kind")
    if value.get("priority") not in PRIORITIES:
        raise BadLine(f"priority must be one of {', '.join(PRIORITIES)}")
    if value.get("tier") not in TIERS:
        raise BadLine(f"tier must be one of {', '.join(TIERS)}")
    if value.get("status") not in STATUSES.get(kind, LOG_STATUSES):
        raise BadLine(f"status {quoted(value.get('status'), 20)} is not one a {kind} can have")
    count = value.get("access_count")
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise BadLine("access_count must be a whole number, 0 or more")
    _place(kind, value.get("place"))
    if kind == "skill" and value["id"] != f"skill:{value['place']}":
        raise BadLine("a skill's id is 'skill:' and its name (its place)")
    _texts(value)
    for name in ("created_at", "updated_at"):
        _time(name, value[name])
    _time("last_access_at", value.get("last_access_at"), optional=True)
    record = dict(value)
    record["accesses"] = _accesses(value.get("accesses", []))
    record["stored"] = _stored(kind, value.get("stored"))
    if kind == "fact":
        record["chain"] = _chain(value.get("chain"))
    return record


def _place(kind: str, place: object) -> None:
    if kind in STORED_KINDS and (not isinstance(place, str) or not place.strip()):
        raise BadLine(f"a {kind} needs its place (its target, topic or name)")
    if kind == "entry" and place not in MEMORY_TARGETS:
        raise BadLine(f"an entry's place is one of {', '.join(MEMORY_TARGETS)}")
    if kind in ("fact", "skill"):  # a topic's or a skill's folder: the tools' name rules
        try:
            check_name(f"a {kind}'s place", place, slug=True)
        except InputError as exc:
            raise BadLine(str(exc)) from exc


def _time(name: str, value: object, *, optional: bool = False) -> None:
    """An ISO time with its offset (they name files and are compared as text)."""
    if value is None and optional:
        return
    try:
        parsed = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        parsed = None
    if parsed is None or parsed.tzinfo is None:
        raise BadLine(
            f"field {name!r} must be an ISO time with its offset, got {quoted(value, 40)}"
        )


_STORED_INTS: Final = frozenset({"seen_session", "reinforce", "depth", "hot_base"})
_ENTRY_STATES: Final = frozenset({"live", "removed", "replaced"})


def _former(text: object) -> None:
    """A live fact's chain row in the search index: text, checked as content is."""
    if not isinstance(text, str):
        raise BadLine("stored 'former_text' must be text")
    try:
        check_text("former_text", text)
    except InputError as exc:
        raise BadLine(str(exc)) from exc
    found = secret_kind(text)
    if found is not None:
        raise BadLine(refusal(found, "former_text", text))


def _stored(kind: str, value: object) -> dict[str, Any]:
    """The holding store's own columns: each of the type its column takes."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise BadLine("field 'stored' must be an object")
    for key, item in value.items():
        if key in _STORED_INTS:
            if not isinstance(item, int) or isinstance(item, bool) or item < 0:
                raise BadLine(f"stored {key!r} must be a whole number, 0 or more")
        elif key == "pinned":
            if not isinstance(item, bool):
                raise BadLine("stored 'pinned' must be true or false")
        elif key == "status" and kind == "entry":
            if item not in _ENTRY_STATES:
                raise BadLine(
                    f"an entry's stored status is one of {', '.join(sorted(_ENTRY_STATES))}"
                )
        elif key.endswith("_at"):
            _time(f"stored {key}", item, optional=True)
        elif key == "former_text":
            _former(item)
        elif kind == "pattern" and key in ("examples", "facets"):
            if not isinstance(item, list) or not all(isinstance(i, str) for i in item):
                raise BadLine(f"a pattern's {key} is a list of text")
        elif kind == "pattern" and key == "sessions":
            if not isinstance(item, int) or isinstance(item, bool) or item < 0:
                raise BadLine("a pattern's sessions is a whole number")
        elif item is not None and not isinstance(item, str):
            raise BadLine(f"stored {key!r} must be text or null")
    if (
        kind == "pattern"
        and value
        and not all(isinstance(value.get(k), str) for k in ("name", "trigger", "response"))
    ):
        raise BadLine("a pattern's name, trigger and response are text")
    return dict(value)


def _texts(value: dict[str, Any]) -> None:
    for name in ("id", "content", "place"):
        if isinstance(value.get(name), str):
            try:
                check_text(name, value[name])
            except InputError as exc:
                raise BadLine(str(exc)) from exc
    found = secret_kind(value["content"])
    if found is not None:
        raise BadLine(refusal(found, "content", value["content"]))


def _accesses(value: object) -> list[dict[str, str]]:
    if not isinstance(value, list):
        raise BadLine("field 'accesses' must be a list")
    for one in value:
        if not (
            isinstance(one, dict)
            and isinstance(one.get("at"), str)
            and isinstance(one.get("how"), str)
            and (one.get("session") is None or isinstance(one["session"], str))
        ):
            raise BadLine('each access is {"at": time, "how": text[, "session": text]}')
        _time("an access's at", one["at"])
    return [
        {
            "at": one["at"],
            "how": one["how"],
            **({"session": one["session"]} if one.get("session") else {}),
        }
        for one in value
    ]


def _chain(value: object) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise BadLine("a fact needs its 'chain' (chain_id, depth, supersedes, superseded_by)")
    if not isinstance(value.get("chain_id"), str) or not isinstance(value.get("depth"), int):
        raise BadLine("a fact's chain needs chain_id (text) and depth (a number)")
    for name in ("supersedes", "superseded_by", "invalid_at", "created_at"):
        if value.get(name) is not None and not isinstance(value[name], str):
            raise BadLine(f"chain field {name!r} must be text or null")
    for name in ("invalid_at", "created_at"):
        _time(f"chain {name}", value.get(name), optional=True)
    if (value.get("invalid_at") is None) != (value.get("superseded_by") is None):
        raise BadLine("a fact's invalid_at and superseded_by are set together")
    return {
        "chain_id": value["chain_id"],
        "depth": value["depth"],
        "supersedes": value.get("supersedes"),
        "superseded_by": value.get("superseded_by"),
        "invalid_at": value.get("invalid_at"),
        **({"created_at": value["created_at"]} if value.get("created_at") else {}),
    }


def linked(records: list[tuple[int, dict[str, Any]]]) -> tuple[list[Any], list[Any]]:
    """The facts whose chain links all point at facts being restored, and the others
    refused (a successor that was refused leaves its predecessor nowhere to point); a
    link back to a refused fact is dropped. Repeated until nothing more falls out."""
    kept = list(records)
    refused: list[tuple[int, str, str | None]] = []
    while True:
        facts = {r["id"] for _, r in kept if r["kind"] == "fact"}
        out = [
            (n, r)
            for n, r in kept
            if r["kind"] == "fact" and r["chain"]["superseded_by"] not in (None, *facts)
        ]
        if not out:
            break
        for n, r in out:
            after = r["chain"]["superseded_by"]
            refused.append((n, f"superseded by {quoted(after)}, which is not imported", r["id"]))
        kept = [(n, r) for n, r in kept if (n, r) not in out]
    for _, r in kept:
        if r["kind"] == "fact" and r["chain"]["supersedes"] not in (None, *facts):
            r["chain"]["supersedes"] = None
    return kept, refused
