"""Re-keying: the rule outputs frozen into the database brought up to this reverie's rules.

``norm`` and the subject / role / skeleton keys of facts, and ``norm`` and a setting's
``key`` of entries, are computed at insert and serve indexed lookups; under keys from older
rules a correction finds no match and becomes an ADD. So the home records the rules version
it was keyed under, and a home at another version is re-keyed on open:

- in batches of ``BATCH`` rows, oldest first, each batch one write transaction that also
  records how far it got, so a kill mid-way resumes at the last committed batch, and
  several processes opening the home at once share the work rather than repeat it;
- rows whose keys already agree are not written, so a second run changes nothing;
- the version is written last, with the counts, so ``reverie show`` can say what ran.

The version is ``RULES_VERSION`` (bumped by hand) joined to a fingerprint: a hash of what
the rules answer for fixed probe sentences. A rule change that alters a stored key alters
some probe's answer, so it is caught even when nobody bumps the number (add a probe when a
rule gains a case the probes do not exercise).

Home-level state lives in ``review_state`` under the namespace ``~home``: no user namespace
can take that name (names start with a letter or digit), nothing lists namespaces from that
table, and it needs no migration.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from functools import cache
from typing import Any, Final

from reverie.errors import ToolInputError
from reverie.rules import similarity, supersede
from reverie.rules.version import RULES_VERSION
from reverie.stores import review_state
from reverie.stores.db import Database, fetchall
from reverie.tools import KEYED_TARGETS, keyed

HOME: Final = "~home"
VERSION_KEY: Final = "rules:version"
PROGRESS_KEY: Final = "rules:rekey_progress"
LAST_KEY: Final = "rules:rekeyed"
BATCH: Final = 2000

# Each exercises a rule whose output is stored: relation words, corrections, definite roles,
# values and skeletons, events, pronouns, negation, the reinforce mark, unicode, settings.
PROBES: Final = (
    "The deploy timeout is 30s",
    "Actually, the deploy timeout is 45s now.",
    "Deploy timeout: 30s",
    "The staging host is stage-3.internal, not stage-2.internal.",
    "Use port 6432 instead of 5432",
    "Commit abc123 is the last good build",
    "Postgres 15 on port 5432",
    "The API rate limit is set to 600 requests per minute",
    "The service has moved to eu-west-1",
    "Alice lives in Oslo",
    "The worker runs on node pool np-ingest-2",
    "We decided to use Postgres 16 for the ledger service.",
    "The build failed with exit code 137 on runner ci-3.",
    "Fixed the flaky test by raising the timeout to 120s",
    "It is 42",
    "The cache is not enabled",
    "Logs go to /var/log/app.log and alerts to ops@example.com",
    "Python is 3.11 ⟦×3⟧",
    "ＦＵＬＬＷＩＤＴＨ Ｔｅｘｔ is Café Ⅻ",
    "The dashboards are at https://grafana.example.com/d/ingest",
    "Joanna is researching adoption agencies",
    "timezone: Europe/Oslo",
    "Preferred Name : Al",
)


def _answers(probe: str) -> list[Any]:
    k = supersede.keys(probe)
    try:
        setting = keyed(probe)[0]
    except ToolInputError:
        setting = None
    return [similarity.normalise(probe), k.subject, k.role, k.skeleton, setting]


def fingerprint() -> str:
    """A short hash of the stored-key rules' answers on the probes (deterministic)."""
    blob = json.dumps([_answers(p) for p in PROBES], ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


@cache
def current_version() -> str:
    """This reverie's rules version: the hand-bumped number and the probes' fingerprint."""
    return f"{RULES_VERSION}.{fingerprint()}"


@dataclass(frozen=True, slots=True)
class Rekeyed:
    """The last re-keying of a home: how many rows changed, and under which rules."""

    version: str
    previous: str | None
    facts: int
    entries: int
    checked: int
    at: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        return (
            f"rekeyed {self.facts} facts / {self.entries} entries under rules "
            f"v{self.version} at {self.at}"
        )


def stored_version(conn: sqlite3.Connection) -> str | None:
    value = review_state.get(conn, HOME, VERSION_KEY)
    return str(value) if value is not None else None


def last(conn: sqlite3.Connection) -> Rekeyed | None:
    """The home's last re-keying, if one ever changed or checked a row."""
    value = review_state.get(conn, HOME, LAST_KEY)
    if not isinstance(value, dict):
        return None
    known = {f.name for f in fields(Rekeyed)}  # a newer reverie may record more
    return Rekeyed(**{k: v for k, v in value.items() if k in known})


def fact_keys(content: str) -> tuple[str, str | None, str | None, str | None]:
    k = supersede.keys(content)
    return similarity.normalise(content), k.subject, k.role, k.skeleton


def entry_keys(target: str, content: str, stored: str | None) -> tuple[str, str | None]:
    if target not in KEYED_TARGETS:
        return similarity.normalise(content), stored
    try:
        key: str | None = keyed(content)[0]
    except ToolInputError:  # not 'key: value' (never written so): keep what is stored
        key = stored
    return similarity.normalise(content), key


def _facts_batch(conn: sqlite3.Connection, after: int, size: int) -> tuple[int, int, int]:
    """Re-key up to ``size`` facts past rowid ``after``: (last rowid, rows read, changed)."""
    rows = fetchall(
        conn,
        "SELECT rowid, content, norm, subject_key, role_key, skeleton_key FROM facts"
        " WHERE rowid > ? ORDER BY rowid LIMIT ?",
        (after, size),
    )
    changed = [
        (*fresh, row[0])
        for row in rows
        if (fresh := fact_keys(row[1])) != (row[2], row[3], row[4], row[5])
    ]
    conn.executemany(
        "UPDATE facts SET norm = ?, subject_key = ?, role_key = ?, skeleton_key = ?"
        " WHERE rowid = ?",
        changed,
    )
    return (rows[-1][0] if rows else after), len(rows), len(changed)


def _entries_batch(conn: sqlite3.Connection, after: int, size: int) -> tuple[int, int, int]:
    """Re-key up to ``size`` entries past rowid ``after``: (last rowid, rows read, changed)."""
    rows = fetchall(
        conn,
        "SELECT rowid, target, content, norm, key FROM entries WHERE rowid > ?"
        " ORDER BY rowid LIMIT ?",
        (after, size),
    )
    changed = [
        (*fresh, row[0])
        for row in rows
        if (fresh := entry_keys(row[1], row[2], row[4])) != (row[3], row[4])
    ]
    conn.executemany("UPDATE entries SET norm = ?, key = ? WHERE rowid = ?", changed)
    return (rows[-1][0] if rows else after), len(rows), len(changed)


def step(conn: sqlite3.Connection, version: str, when: str, size: int = BATCH) -> bool:
    """One batch of the re-keying to ``version`` (call inside a write transaction); True
    once the home is at ``version``. Progress is committed with the batch it describes."""
    previous = stored_version(conn)
    if previous == version:
        return True  # another process finished it
    progress = review_state.get(conn, HOME, PROGRESS_KEY)
    if not isinstance(progress, dict) or progress.get("to") != version:
        # the first batch, or the rules changed again since a run was cut short
        progress = dict.fromkeys(("facts_after", "entries_after", "facts", "entries", "checked"), 0)
        progress["to"] = version
    table = "facts" if progress["facts_after"] >= 0 else "entries"
    batch = _facts_batch if table == "facts" else _entries_batch
    after, read, changed = batch(conn, progress[f"{table}_after"], size)
    progress[table] += changed
    progress["checked"] += read
    progress[f"{table}_after"] = after if read == size else -1  # -1: this table is done
    if table == "facts" or progress["entries_after"] >= 0:
        review_state.put(conn, HOME, PROGRESS_KEY, progress, when)
        return False
    _finish(conn, version, previous, progress, when)
    return True


def _finish(
    conn: sqlite3.Connection,
    version: str,
    previous: str | None,
    progress: dict[str, Any],
    when: str,
) -> None:
    """The version is written last; a home with nothing stored gets no report."""
    if progress["checked"]:
        record = Rekeyed(
            version, previous, progress["facts"], progress["entries"], progress["checked"], when
        )
        review_state.put(conn, HOME, LAST_KEY, record.to_dict(), when)
    conn.execute("DELETE FROM review_state WHERE namespace = ? AND key = ?", (HOME, PROGRESS_KEY))
    review_state.put(conn, HOME, VERSION_KEY, version, when)


async def bring_up_to_date(db: Database, now: Callable[[], str]) -> tuple[Rekeyed, float] | None:
    """Re-key the home if its rules version is not this reverie's: the record and the
    seconds it took, or None when the home was current (one small read) or empty."""
    version = current_version()
    if await db.read(stored_version) == version:
        return None
    began = time.perf_counter()
    while not await db.write(lambda conn: step(conn, version, now())):
        pass
    record = await db.read(last)
    if record is None or record.version != version:
        return None  # nothing was stored: no report
    return record, time.perf_counter() - began
