"""Projections: written after each commit, rebuilt from the database when they disagree."""

from __future__ import annotations

import json
from pathlib import Path

import reverie
from tests.conftest import ok


async def _populate(home: Path) -> None:
    async with reverie.open(home) as rv:
        async with rv.namespace("p").session("s") as s:
            ok(
                await s.call_tool(
                    "memory", {"action": "add", "target": "memory", "content": "Fact one"}
                ),
                "ADD",
            )
            ok(
                await s.call_tool(
                    "memory", {"action": "add", "target": "user", "content": "Likes tea"}
                ),
                "ADD",
            )
            ok(
                await s.call_tool(
                    "topic", {"action": "save", "topic": "t", "content": "Port is 8080"}
                ),
                "ADD",
            )
            ok(
                await s.call_tool(
                    "topic", {"action": "save", "topic": "t", "content": "Port is 9090"}
                ),
                "SUPERSEDE",
            )
            ok(
                await s.call_tool(
                    "skill_manage", {"action": "create", "name": "k", "content": "do it"}
                ),
                "CREATED",
            )


async def test_paths_and_contents(tmp_path: Path) -> None:
    await _populate(tmp_path)
    ns = tmp_path / "p"
    assert (ns / "MEMORY.md").read_text() == "Fact one\n"
    assert (ns / "USER.md").read_text() == "Likes tea\n"
    assert not (ns / "SOUL.md").exists()
    events = [json.loads(x) for x in (ns / "topics/t/history.jsonl").read_text().splitlines()]
    assert [e["event"] for e in events] == ["add", "add", "supersede"]
    assert (ns / "skills/k/SKILL.md").read_text().startswith("---\nname: k\n")
    leftovers = [p for p in tmp_path.rglob(".*") if p.name != ".projection.lock"]
    assert leftovers == [], "no temp files are left behind"


async def test_stale_or_torn_projections_are_rebuilt_on_open(tmp_path: Path) -> None:
    await _populate(tmp_path)
    ns = tmp_path / "p"
    good = {p: p.read_bytes() for p in ns.rglob("*") if p.is_file()}
    (ns / "MEMORY.md").write_text("somebody edited this\n")
    (ns / "USER.md").unlink()
    history = ns / "topics/t/history.jsonl"
    history.write_bytes(history.read_bytes()[:-20])  # a torn append
    (ns / "skills/k/SKILL.md").unlink()
    async with reverie.open(tmp_path):
        pass
    assert {p: p.read_bytes() for p in ns.rglob("*") if p.is_file()} == good


async def test_removing_the_last_entry_empties_the_file(tmp_path: Path) -> None:
    async with reverie.open(tmp_path) as rv:
        async with rv.namespace().session("s") as s:
            ok(
                await s.call_tool(
                    "memory", {"action": "add", "target": "soul", "content": "Warm tone"}
                ),
                "ADD",
            )
            ok(
                await s.call_tool(
                    "memory", {"action": "remove", "target": "soul", "old_text": "Warm"}
                ),
                "REMOVED",
            )
    assert (tmp_path / "default" / "SOUL.md").read_text() == ""
