"""What gets stored does not depend on Python's hash seed: one seeded conversation (facts,
restatements, corrections, preferences, settings, lessons, skills; flushes and review
passes over days) run in subprocesses under different ``PYTHONHASHSEED`` values stores
the same live facts, entries and settings. Decisions must never follow set or dict
iteration order."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest

import reverie
from reverie.clock import ManualClock
from reverie.stores.db import fetchall

ROOT = Path(__file__).resolve().parents[1]

TOOL = tuple[str, dict[str, Any]]
# (user, assistant, tool calls the agent makes in that turn); one list per session
CONVERSATION: list[list[tuple[str | None, str | None, list[TOOL]]]] = [
    [
        (
            "Hi! Let's set up the ingest project.",
            "Sure.",
            [
                (
                    "memory",
                    {
                        "action": "add",
                        "target": "user_settings",
                        "content": "timezone: Europe/Oslo",
                    },
                ),
                (
                    "memory",
                    {
                        "action": "add",
                        "target": "user",
                        "content": "Prefers short answers with code first.",
                    },
                ),
                (
                    "topic",
                    {
                        "action": "save",
                        "topic": "search",
                        "content": "Ingest pipeline workers drain batches nightly from kafka.",
                    },
                ),
                (
                    "topic",
                    {
                        "action": "save",
                        "topic": "search",
                        "content": "The search cluster"
                        " keeps three warm replicas behind the regional gateway balancer.",
                    },
                ),
            ],
        ),
        ("The deploy timeout is 30s.", "Noted.", []),
        ("The staging host is stage-2.internal.", None, []),
        ("Our API rate limit is 600 requests per minute.", "Got it.", []),
        ("thanks", "You're welcome.", []),
        ("I think maybe the cache is 5GB?", "I'll check.", []),
        ("The pipeline workers drain 512 batches per minute.", None, []),
        ("I prefer tabs over spaces in Python files.", None, []),
        ("We decided to use Postgres 16 for the ledger service.", "Good choice.", []),
        (None, "The build failed with exit code 137 on runner ci-3.", []),
        ("Lesson learned: always pin the base image digest.", None, []),
        ("The backup retention is 14 days.", None, []),
        ("Please reply in British English.", "Will do.", []),
        ("The grafana dashboard lives at https://grafana.example.com/d/ingest.", None, []),
        ("Kafka runs 6 partitions for the events topic.", None, []),
    ],
    [
        ("Actually, the deploy timeout is 45s now.", "Updated.", []),
        ("The staging host is stage-3.internal, not stage-2.internal.", None, []),
        (
            "My timezone changed.",
            "Noted.",
            [
                (
                    "memory",
                    {
                        "action": "add",
                        "target": "user_settings",
                        "content": "timezone: Europe/Berlin",
                    },
                ),
                (
                    "topic",
                    {"action": "save", "topic": "deploy", "content": "The deploy timeout is 60s."},
                ),
                (
                    "memory",
                    {
                        "action": "add",
                        "target": "memory",
                        "content": "The repo uses uv for dependency management.",
                    },
                ),
            ],
        ),
        ("Our API rate limit is 900 requests per minute.", None, []),
        ("The backup retention is 30 days.", "Okay.", []),
        ("ok", None, []),
        ("The pipeline workers drain 700 batches per minute.", None, []),
        ("We decided to keep 3 replicas for the search cluster.", None, []),
        (None, "Fixed the flaky test by raising the pytest timeout to 120s.", []),
        ("Kafka runs 12 partitions for the events topic.", None, []),
        ("I prefer small pull requests.", "Sure.", []),
        ("The ingest workers run on node pool np-ingest-2.", None, []),
    ],
    [
        ("Good morning!", "Morning!", []),
        ("The deploy timeout is 90s.", None, []),
        ("Backup retention is 30 days, as said.", None, []),
        ("The primary database is pg-main-1.internal on port 5432.", None, []),
        ("Actually the primary database port is 6432.", None, []),
        ("Lesson: run migrations before deploying the workers.", None, []),
        ("Maybe the queue is full?", None, []),
        ("The gateway balancer timeout is 75s.", "Noted.", []),
        ("Please keep replies under five lines.", None, []),
        ("The ledger service listens on port 8443.", None, []),
    ],
]


async def _run(home: Path) -> dict[str, Any]:
    """The conversation, idle after each session and a forced review pass each day; then
    what was stored, ordered."""
    clock = ManualClock(datetime(2026, 3, 2, 9, tzinfo=UTC))
    async with reverie.open(home, clock=clock) as rv:
        ns = rv.namespace("det")
        for number, session in enumerate(CONVERSATION):
            async with ns.session(f"s{number}") as s:
                for user, assistant, calls in session:
                    await s.turn(user=user, assistant=assistant)
                    for tool, args in calls:
                        await s.call_tool(tool, args)
                await s.idle()
            await rv.wait_idle()
            clock.advance(timedelta(days=1))
            await rv.review(force=True)
        return await rv.services.db.read(_dump)


def _dump(conn: Any) -> dict[str, Any]:
    facts = fetchall(
        conn,
        "SELECT namespace, topic, content FROM facts WHERE invalid_at IS NULL"
        " ORDER BY namespace, topic, content",
    )
    entries = fetchall(
        conn,
        "SELECT namespace, target, content, reinforce FROM entries WHERE status = 'live'"
        " ORDER BY namespace, target, content",
    )
    skills = fetchall(conn, "SELECT namespace, name, body FROM skills ORDER BY namespace, name")
    return {
        "facts": [list(r) for r in facts],
        "entries": [list(r) for r in entries],
        "skills": [list(r) for r in skills],
    }


def _stored_under(seed: str, home: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    done = subprocess.run(
        [sys.executable, "-m", "tests.test_determinism", str(home)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=100,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    stored: dict[str, Any] = json.loads(done.stdout)
    return stored


def _differences(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    return {
        kind: {
            "only_first": [r for r in a[kind] if r not in b[kind]],
            "only_second": [r for r in b[kind] if r not in a[kind]],
        }
        for kind in a
        if a[kind] != b[kind]
    }


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_same_conversation_stores_the_same_under_any_hash_seed(tmp_path: Path) -> None:
    """Invariant: stored memory is a function of the conversation, not of PYTHONHASHSEED."""
    runs = {seed: _stored_under(seed, tmp_path / f"home-{seed}") for seed in ("1", "2", "3")}
    first = runs["1"]
    assert first["facts"] and first["entries"]  # the scenario stored something to compare
    for seed, stored in runs.items():
        assert stored == first, f"PYTHONHASHSEED={seed}: {_differences(first, stored)}"


if __name__ == "__main__":
    print(json.dumps(anyio.run(_run, Path(sys.argv[1]))))
