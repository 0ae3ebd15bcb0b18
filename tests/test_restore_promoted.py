"""Restore refreshes promoted rules, like a save does: MEMORY.md never keeps stating the
value that a restore just undid."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import reverie
from reverie import Config, ManualClock
from tests.conftest import both_backends, ok, review_stage

pytestmark = both_backends


async def promoted(rv: reverie.Reverie, clock: ManualClock) -> tuple[str, str]:
    """A fact corrected once (30s → 45s) and promoted into MEMORY.md; its two fact ids."""
    async with rv.namespace("a").session("setup") as s:
        first = ok(
            await s.call_tool(
                "topic",
                {
                    "action": "save",
                    "topic": "deploy",
                    "content": "The deploy timeout for /srv/api is 30s",
                },
            ),
            "ADD",
        )
        second = ok(
            await s.call_tool(
                "topic",
                {
                    "action": "save",
                    "topic": "deploy",
                    "content": "The deploy timeout for /srv/api is 45s",
                },
            ),
            "SUPERSEDE",
        )
    clock.advance(timedelta(days=3))
    assert review_stage(await rv.review(), "promoter")["promoted"] == 1
    [rule] = await rv.namespace("a").entries("memory")
    assert "45s" in rule.content and "45s" in (rv.home / "a" / "MEMORY.md").read_text()
    return first["entry_id"], second["entry_id"]


async def test_restore_refreshes_the_promoted_rule(rv: reverie.Reverie, clock: ManualClock) -> None:
    """The restored value replaces the undone one in the promoted rule, in the restore's own
    transaction (the old code left "45s" in MEMORY.md)."""
    first, _ = await promoted(rv, clock)
    back = ok(await rv.namespace("a").restore(first), "SUPERSEDE")
    await rv.wait_idle()  # the promoter's refresh, asked by the restore's transaction
    memory = (rv.home / "a" / "MEMORY.md").read_text()
    assert "45s" not in memory and "30s" in memory and "/srv/api" in memory
    [rule] = await rv.namespace("a").entries("memory")
    assert "30s" in rule.content
    [refresh] = [r for r in await rv.namespace("a").ledger() if r.action == "refresh"]
    assert refresh.detail["fact_id"] == back["entry_id"]
    summary = rv.home / "a" / "topics" / "deploy" / "summary.md"
    assert not summary.exists() or "45s" not in summary.read_text()


async def test_restore_retires_a_rule_it_cannot_rewrite(tmp_path: Path, clock: ManualClock) -> None:
    """When the restored value cannot be written as a rule (here: over a smaller rewrite
    limit), the rule stating the undone value is retired, reversibly, not kept."""
    home = tmp_path / "home"
    async with reverie.open(home, clock=clock) as rv:
        first, _ = await promoted(rv, clock)
        [rule] = await rv.namespace("a").entries("memory")
    tight = Config().with_section("promoter", rewrite_chars=30)
    async with reverie.open(home, clock=clock, config=tight) as rv:
        ok(await rv.namespace("a").restore(first), "SUPERSEDE")
        await rv.wait_idle()
        assert await rv.namespace("a").entries("memory") == []
        assert "45s" not in (home / "a" / "MEMORY.md").read_text()
        [retired] = [r for r in await rv.namespace("a").ledger() if r.action == "retire"]
        assert retired.entry_id == rule.id and retired.decision == "REMOVED"
        ok(await rv.namespace("a").restore(rule.id), "RESTORED")  # undoable
