"""``reverie simulate``'s prefetch hit rate: the block after the question's turn holds the
subject's current value (docs/simulate.md)."""

from __future__ import annotations

from pathlib import Path

import reverie
from reverie.clock import ManualClock
from reverie.simulation import driver, report
from reverie.simulation import prefetch as sim_prefetch
from reverie.simulation.driver import Run
from tests.test_simulation import tiny


async def test_the_current_value_in_the_block_is_a_hit(tmp_path: Path) -> None:
    """A stored fact carrying the current value is prefetched for the subject's question;
    the report carries the measure."""
    scenario, _ = tiny()  # one truth: priya-atlas's deploy timeout is 45s
    async with reverie.open(tmp_path / "h", clock=ManualClock(driver.START)) as rv:
        async with rv.namespace("priya-atlas").session("s") as s:
            args = {"action": "save", "topic": "deploy", "content": "The deploy timeout is 45s"}
            await s.call_tool("topic", args)
        result = await report.build(rv, scenario, Run(), {})
    found = result["prefetch"]
    assert found["enabled"] and found["questions"] == 1
    assert found["hit_rate"] == 1.0 and found["mean_hits_shown"] >= 1
    assert found["missed_examples"] == []


async def test_a_replaced_value_or_an_episode_is_not_a_hit(tmp_path: Path) -> None:
    """Only a fact or entry carrying the current value counts: the replaced value, or the
    current one said only in a turn, is a miss."""
    scenario, _ = tiny()
    config = reverie.Config().with_section("flusher", enabled=False)
    async with reverie.open(tmp_path / "h", config=config, clock=ManualClock(driver.START)) as rv:
        async with rv.namespace("priya-atlas").session("s") as s:
            args = {"action": "save", "topic": "deploy", "content": "The deploy timeout is 30s"}
            await s.call_tool("topic", args)
            await s.turn(user="the deploy timeout is 45s now", assistant="ok")
        found = await sim_prefetch.hit_rate(rv, scenario)
    assert found["hit_rate"] == 0.0 and found["mean_hits_shown"] >= 1
    assert found["missed_examples"] == ["priya-atlas deploy timeout: current 45s"]


async def test_prefetch_off_is_reported_as_off(tmp_path: Path) -> None:
    scenario, _ = tiny()
    config = reverie.Config().with_section("prefetch", enabled=False)
    async with reverie.open(tmp_path / "h", config=config, clock=ManualClock(driver.START)) as rv:
        found = await sim_prefetch.hit_rate(rv, scenario)
    assert found == {"enabled": False, "questions": 1}
