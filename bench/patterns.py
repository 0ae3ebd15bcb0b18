"""Pattern detection (seed 003, issue 11) on conversation sets written by someone who has
not read the rules: does the same lesson, correction or error said in three sessions
become one pattern, and does anything else?

    python -m bench.patterns FILE.json [FILE.json ...]

Each file is a list of users: ``{"namespace", "sessions": [{"id", "turns": [{"user",
"assistant"}]}], "recurring": [{"lesson", "sightings": [{"session", "turn"}]}],
"one_offs": [...]}``. Every session is run through ``ns.session`` / ``s.turn`` and ended,
a day apart on a ManualClock; then each log record is traced to the turn that said it,
and each pattern to the items its examples came from.

Printed per file: sightings logged (a log record made from the turn that carries it),
recurring items found (a pattern with two or more examples from that item), patterns
right (every example traced to an item comes from one recurring item), patterns wrong.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio

import reverie
from reverie import ManualClock

LOGGED = "kind:correction,error,lesson,insight limit:1000"


async def _run_user(rv: reverie.Reverie, clock: ManualClock, user: dict[str, Any]) -> None:
    ns = rv.namespace(user["namespace"])
    for session in user["sessions"]:
        async with ns.session(session["id"]) as s:
            for turn in session["turns"]:
                await s.turn(user=turn["user"], assistant=turn.get("assistant"))
                clock.advance(timedelta(minutes=3))
        await rv.wait_idle()
        clock.advance(timedelta(days=1))


def _items(user: dict[str, Any]) -> dict[tuple[str, int], str]:
    """Each sighting's (session, turn) → its item's name (``r0``…, ``o0``…)."""
    found: dict[tuple[str, int], str] = {}
    for prefix, key in (("r", "recurring"), ("o", "one_offs")):
        for i, item in enumerate(user.get(key, [])):
            for seen in item["sightings"]:
                found[(seen["session"], int(seen["turn"]))] = f"{prefix}{i}"
    return found


def _turn_of(user: dict[str, Any], session: str | None, content: str) -> int | None:
    for s in user["sessions"]:
        if s["id"] != session:
            continue
        for i, turn in enumerate(s["turns"]):
            said = " ".join(turn["user"].split())
            if " ".join(content.split()).rstrip(".!") in said:
                return i
    return None


async def _score_user(rv: reverie.Reverie, user: dict[str, Any]) -> Counter[str]:
    ns = rv.namespace(user["namespace"])
    items = _items(user)
    traced: dict[str, str | None] = {}
    logged: set[tuple[str | None, int]] = set()
    for record in await ns.query(LOGGED):
        turn = _turn_of(user, record.session_id, record.content)
        item = None if turn is None else items.get((str(record.session_id), turn))
        traced[record.id] = item
        if item is not None and item.startswith("r") and turn is not None:
            logged.add((record.session_id, turn))
    counts: Counter[str] = Counter()
    counts["sightings"] += sum(len(i["sightings"]) for i in user.get("recurring", []))
    counts["logged"] += len(logged)
    counts["recurring"] += len(user.get("recurring", []))
    found: set[str] = set()
    for pattern in await ns.patterns():
        sources = Counter(traced.get(e) for e in pattern.examples)
        named = {k: n for k, n in sources.items() if k is not None}
        if len(named) == 1 and next(iter(named)).startswith("r"):
            counts["right"] += 1
            [(item, n)] = named.items()
            if n >= 2:
                found.add(item)
        else:
            counts["wrong"] += 1
            print(f"  wrong pattern in {user['namespace']}: {pattern.name} from {dict(sources)}")
    counts["found"] += len(found)
    return counts


async def measure(path: Path) -> Counter[str]:
    users = json.loads(path.read_text(encoding="utf-8"))
    clock = ManualClock(datetime(2026, 3, 1, 9, tzinfo=UTC))
    total: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as home:
        async with reverie.open(Path(home), clock=clock) as rv:
            for user in users:
                await _run_user(rv, clock, user)
            for user in users:
                total += await _score_user(rv, user)
    return total


async def main(paths: list[str]) -> None:
    for name in paths:
        c = await measure(Path(name))
        print(
            f"{name}: sightings logged {c['logged']}/{c['sightings']}, recurring found "
            f"{c['found']}/{c['recurring']}, patterns right {c['right']}, wrong {c['wrong']}"
        )


if __name__ == "__main__":
    anyio.run(main, sys.argv[1:])
