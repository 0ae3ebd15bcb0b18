"""The snapshot never shows a superseded value: a topic summary distilled before a correction
gives way to the topic's live facts until the next distill catches up."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

import reverie
from reverie import Config, ManualClock
from tests.conftest import ok, review_stage


@pytest.fixture
def config() -> Config:
    return Config().with_section("distiller", min_new_facts=1)  # re-distil on any change


async def save(rv: reverie.Reverie, session: str, topic: str, content: str, decision: str) -> None:
    async with rv.namespace().session(session) as s:
        args = {"action": "save", "topic": topic, "content": content}
        ok(await s.call_tool("topic", args), decision)


def topic_line(snapshot: reverie.Snapshot, topic: str) -> str:
    [line] = [x for x in snapshot.text.splitlines() if x.startswith(f"- {topic}: ")]
    return line


async def test_a_summary_older_than_a_correction_is_not_shown(
    rv: reverie.Reverie, clock: ManualClock
) -> None:
    """Invariant: a new session's snapshot never carries a value a correction replaced."""
    await save(rv, "a", "deploy", "The deploy timeout is 30s", "ADD")
    await save(rv, "a2", "deploy", "Deploys run from the main branch", "ADD")
    distill = review_stage(await rv.review(force=True), "distiller")
    assert distill["status"] == "ran"
    async with rv.namespace().session("b") as s:
        assert "30s" in topic_line(s.snapshot, "deploy")  # the summary, while it is current
    await save(rv, "c", "deploy", "The deploy timeout is 45s", "SUPERSEDE")
    async with rv.namespace().session("d") as s:
        line = topic_line(s.snapshot, "deploy")
    assert "45s" in line and "30s" not in line and "main branch" in line
    assert line.startswith("- deploy: 2 facts (1 superseded) — The deploy timeout is 45s")
    clock.advance(timedelta(days=1))  # the next distill: its summary is shown again
    assert review_stage(await rv.review(force=True), "distiller")["status"] == "ran"
    summary = (rv.home / "default" / "topics" / "deploy" / "summary.md").read_text().strip()
    async with rv.namespace().session("e") as s:
        assert topic_line(s.snapshot, "deploy").endswith(f" — {summary}")
    assert "45s" in summary and "30s" not in summary


async def test_the_live_facts_fit_the_topic_line(rv: reverie.Reverie) -> None:
    await save(rv, "a", "hosts", "The staging host is stage-1.internal", "ADD")
    await rv.review(force=True)
    for i in range(12):
        await save(rv, f"s{i}", "hosts", f"Worker {i} runs on node np-{i:02d}-" + "x" * 20, "ADD")
    await save(rv, "b", "hosts", "The staging host is stage-2.internal", "SUPERSEDE")
    async with rv.namespace().session("c") as s:
        line = topic_line(s.snapshot, "hosts")
    assert len(line) <= 240 and "stage-1" not in line
    assert line.split(" — ", 1)[1].startswith("The staging host is stage-2.internal; Worker 11")


async def test_summary_md_never_shows_a_superseded_value(
    tmp_path: Path, clock: ManualClock
) -> None:
    """Invariant: after a correction, summary.md holds the live facts until the next
    distill — also when the projections are rebuilt on open."""
    home = tmp_path / "h"
    config = Config().with_section("distiller", min_new_facts=1)
    async with reverie.open(home, clock=clock, config=config) as rv:
        await save(rv, "a", "deploy", "The deploy timeout is 30s", "ADD")
        await rv.review(force=True)
        path = rv.home / "default" / "topics" / "deploy" / "summary.md"
        assert "30s" in path.read_text()
        await save(rv, "b", "deploy", "The deploy timeout is 45s", "SUPERSEDE")
        assert "45s" in path.read_text() and "30s" not in path.read_text()
    path.write_text("The deploy timeout is 30s\n")  # a stale file, as an older reverie left it
    async with reverie.open(home, clock=clock, config=config):
        pass
    assert "45s" in path.read_text() and "30s" not in path.read_text()
