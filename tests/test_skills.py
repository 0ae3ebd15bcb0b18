"""skill_manage: create and patch, SKILL.md with front matter, ledger rows."""

from __future__ import annotations

import yaml

import reverie
from tests.conftest import both_backends, db_counts, ok

pytestmark = both_backends


async def test_create_and_patch(rv: reverie.Reverie) -> None:
    async with rv.namespace().session("s") as s:
        ok(
            await s.call_tool(
                "skill_manage",
                {"action": "create", "name": "release", "content": "1. Tag\n2. Push the tag"},
            ),
            "CREATED",
        )
        ok(
            await s.call_tool(
                "skill_manage", {"action": "create", "name": "release", "content": "again"}
            ),
            "ERROR",
        )
        ok(
            await s.call_tool(
                "skill_manage",
                {
                    "action": "patch",
                    "name": "release",
                    "old_text": "Push the tag",
                    "content": "Push with --follow-tags",
                },
            ),
            "PATCHED",
        )
        before = db_counts(rv.home)
        ok(
            await s.call_tool(
                "skill_manage",
                {"action": "patch", "name": "release", "old_text": "not there", "content": "x"},
            ),
            "ERROR",
        )
        ok(
            await s.call_tool(
                "skill_manage",
                {"action": "patch", "name": "ghost", "old_text": "a", "content": "b"},
            ),
            "ERROR",
        )
        assert db_counts(rv.home) == before
    text = (rv.home / "default" / "skills" / "release" / "SKILL.md").read_text()
    _, front, body = text.split("---", 2)
    meta = yaml.safe_load(front)
    assert meta["created_by"] == "skill_manage" and meta["name"] == "release"
    assert meta["pinned"] is False
    assert body.strip() == "1. Tag\n2. Push with --follow-tags"
    ledger = await rv.namespace().ledger()
    assert [(r.decision, r.entry_id) for r in ledger] == [
        ("CREATED", "skill:release"),
        ("PATCHED", "skill:release"),
    ]
    assert ledger[1].before == {"body": "1. Tag\n2. Push the tag"}


async def test_patch_must_match_exactly_once(rv: reverie.Reverie) -> None:
    async with rv.namespace().session("s") as s:
        ok(
            await s.call_tool(
                "skill_manage", {"action": "create", "name": "x", "content": "run a; run a"}
            ),
            "CREATED",
        )
        twice = ok(
            await s.call_tool(
                "skill_manage",
                {"action": "patch", "name": "x", "old_text": "run a", "content": "b"},
            ),
            "ERROR",
        )
    assert "2 times" in twice["error"]


async def test_snapshot_lists_skills(rv: reverie.Reverie) -> None:
    async with rv.namespace().session("s") as s:
        ok(
            await s.call_tool(
                "skill_manage",
                {"action": "create", "name": "triage", "content": "Read the logs first"},
            ),
            "CREATED",
        )
    async with rv.namespace().session("s2") as s:
        assert "- triage: Read the logs first" in s.snapshot.text
        assert s.snapshot.skills == ("triage",)
