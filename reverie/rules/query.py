"""The learning records' query language (seed 003's ``mulch query``), parsed without I/O.

A query is tokens separated by spaces. ``field:value`` filters (ANDed, a field given twice
too; ``a,b`` inside one token is either); anything else — bare words (an apostrophe is a
letter, a URL is text) or ``"a quoted phrase"`` (never a filter) — is free text, matched
through the search index. ``sort:`` and ``limit:`` shape the answer::

    priority:high status:active tier:warm,hot kind:error since:2026-01-01 "deploy timeout"
    sort:access limit:20        sort:created:asc        since:7d

A token that cannot be read is refused with a :class:`QueryError` naming it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Final

from reverie.clock import iso
from reverie.errors import InputError, quoted

PRIORITIES: Final = ("low", "medium", "high", "critical")
TIERS: Final = ("hot", "warm", "cold")
STATUSES: Final = ("active", "superseded", "archived", "resolved")
SORTS: Final = ("relevance", "created", "updated", "access", "priority")
MAX_LIMIT: Final = 1000
DEFAULT_LIMIT: Final = 50

_CHOICES: Final[dict[str, tuple[str, ...] | None]] = {
    "priority": PRIORITIES,
    "tier": TIERS,
    "status": STATUSES,
    "kind": None,  # any kind name: entry, fact, skill, correction, error, insight, …
    "id": None,
    "place": None,  # a fact's topic, an entry's target, a skill's name
}
_TIMES: Final = ("since", "until")
_FIELD = re.compile(r"^([a-z_]+):(.*)$", re.S)
_RELATIVE = re.compile(r"^(\d{1,5})([dhm])$")
_UNITS: Final = {"d": "days", "h": "hours", "m": "minutes"}


class QueryError(InputError):
    """A query that cannot be read; the message names the token."""


@dataclass(frozen=True, slots=True)
class Query:
    """A parsed query: ``filters`` maps a field to the values it may take."""

    filters: dict[str, tuple[str, ...]] = field(default_factory=dict)
    since: str | None = None
    until: str | None = None
    text: str = ""
    sort: str = "updated"
    descending: bool = True
    limit: int = DEFAULT_LIMIT


_TOKEN = re.compile(r'"([^"]*)"|(\S+)')


def _tokens(query: str) -> list[tuple[str, bool]]:
    """The query's tokens, each with whether it was quoted (a quoted one is always text;
    an apostrophe is a letter: "don't")."""
    found: list[tuple[str, bool]] = []
    for match in _TOKEN.finditer(query):
        quoted_text, bare = match.group(1), match.group(2)
        if quoted_text is not None:
            found.append((quoted_text, True))
        elif '"' in bare:
            raise QueryError(f"{quoted(bare, 80)} opens a quote it does not close")
        else:
            found.append((bare, False))
    return found


def parse(query: str, now: datetime) -> Query:
    """Read ``query`` (see the module's grammar); ``now`` anchors relative times."""
    filters: dict[str, tuple[str, ...]] = {}
    times: dict[str, str] = {}
    words: list[str] = []
    sort: tuple[str, bool] | None = None
    limit = DEFAULT_LIMIT
    for token, was_quoted in _tokens(query):
        found = None if was_quoted else _FIELD.match(token)
        if found is None or found.group(2).startswith("//"):  # text, or a URL's scheme
            words.append(token)
            continue
        name, value = found.group(1), found.group(2)
        if name in _CHOICES:  # a field said twice takes what both allow (ANDed)
            given = _values(name, value, token)
            had = filters.get(name)
            filters[name] = given if had is None else tuple(v for v in had if v in given)
        elif name in _TIMES:
            times[name] = _time(value, token, now)
        elif name == "sort":
            sort = _sort(value, token)
        elif name == "limit":
            limit = _limit(value, token)
        else:
            known = ", ".join([*_CHOICES, *_TIMES, "sort", "limit"])
            raise QueryError(f"unknown field {name!r} in {quoted(token, 80)}; fields: {known}")
    text = " ".join(words).strip()
    order, descending = sort or (("relevance", True) if text else ("updated", True))
    if order == "relevance" and not text:
        raise QueryError("sort:relevance needs free text to be relevant to")
    return Query(filters, times.get("since"), times.get("until"), text, order, descending, limit)


def _values(name: str, value: str, token: str) -> tuple[str, ...]:
    values = tuple(v.strip().lower() if name != "id" else v.strip() for v in value.split(","))
    if not value or not all(values):
        raise QueryError(f"{quoted(token, 80)} gives {name} no value")
    allowed = _CHOICES[name]
    for v in values:
        if allowed is not None and v not in allowed:
            raise QueryError(f"{quoted(token, 80)}: {name} is one of {', '.join(allowed)}")
    return values


def _time(value: str, token: str, now: datetime) -> str:
    """An ISO date or time (UTC unless it says otherwise), or ``7d`` / ``12h`` / ``30m``
    before now; answered as the stores write times, so they compare as text."""
    relative = _RELATIVE.match(value)
    when: datetime | None
    if relative:
        delta = timedelta(**{_UNITS[relative.group(2)]: int(relative.group(1))})
        when = now - delta
    else:
        try:
            when = datetime.fromisoformat(value)
        except ValueError:
            when = None
    try:
        if when is not None:
            return iso(when if when.tzinfo is not None else when.replace(tzinfo=UTC))
    except (OverflowError, ValueError):
        pass  # a time past what UTC can hold: year 1 with a positive offset
    raise QueryError(
        f"{quoted(token, 80)}: a time is an ISO date (2026-01-31), a date and time, "
        "or an age such as 7d, 12h, 30m"
    )


def _sort(value: str, token: str) -> tuple[str, bool]:
    order, _, direction = value.lower().partition(":")
    if order not in SORTS or direction not in ("", "asc", "desc"):
        raise QueryError(
            f"{quoted(token, 80)}: sort by one of {', '.join(SORTS)}, optionally :asc or :desc"
        )
    return order, direction != "asc"


def _limit(value: str, token: str) -> int:
    if not value.isdigit() or not 1 <= int(value) <= MAX_LIMIT:
        raise QueryError(f"{quoted(token, 80)}: limit is a whole number from 1 to {MAX_LIMIT}")
    return int(value)
