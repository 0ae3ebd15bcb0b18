"""``reverie skill drafts|accept|reject`` as real subprocesses, on a home a scripted month
left with one draft."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import reverie
from reverie import ManualClock
from tests.test_cli import cli, jcli
from tests.test_skill_drafts import START, month, reviewed

pytestmark = pytest.mark.slow


def seeded(home: Path) -> None:
    async def main() -> None:
        clock = ManualClock(START)
        async with reverie.open(home, clock=clock) as rv:
            ns = rv.namespace("alice")
            await month(ns, clock)
            await reviewed(rv, ns, clock)

    asyncio.run(main())


def test_drafts_are_listed_accepted_and_refused_by_name(tmp_path: Path) -> None:
    seeded(tmp_path)
    listed = jcli(tmp_path, "skill", "drafts", "--namespace", "alice")
    [draft] = listed["drafts"]
    assert draft["state"] == "draft" and draft["sessions"] == 3 and listed["stale"] == []
    name = draft["name"]
    assert name in cli(tmp_path, "skill", "drafts", "--namespace", "alice")
    accepted = jcli(tmp_path, "skill", "accept", name, "--namespace", "alice")
    assert accepted["decision"] == "CREATED" and accepted["draft"] == name
    skills = jcli(tmp_path, "skill", "list", "--namespace", "alice")
    assert name in [s["name"] for s in skills]
    assert jcli(tmp_path, "skill", "drafts", "--namespace", "alice")["drafts"] == []
    everything = jcli(tmp_path, "skill", "drafts", "--all", "--namespace", "alice")
    assert [d["state"] for d in everything["drafts"]] == ["accepted"]
    again = jcli(tmp_path, "skill", "reject", name, "--namespace", "alice", code=1)
    assert again["decision"] == "ERROR" and "already accepted" in again["error"]
    missing = jcli(tmp_path, "skill", "accept", "no-such", "--namespace", "alice", code=1)
    assert "no draft" in missing["error"]
