"""L6 promotion, the seed's six cases on the real store (rule gate, exclusion, end-to-end,
due gate, write budget, model degradation), plus the final-skip and deferred paths."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import reverie
from reverie import Config, ManualClock
from reverie.actors.promoter import DONE_IDS, Promoter
from reverie.bus.messages import PromotedFactChanged
from reverie.model.offline import OfflineModel
from reverie.model.seam import Answer, Deferred, Prompt, Usage
from reverie.stores import review_state
from tests.conftest import both_backends, review_stage

pytestmark = both_backends


async def corrected(rv: reverie.Reverie, topic: str, subject: str, old: str, new: str) -> str:
    """A fact corrected once: its live value has chain depth 2."""
    async with rv.namespace("a").session("setup") as s:
        await s.call_tool(
            "topic", {"action": "save", "topic": topic, "content": f"The {subject} is {old}"}
        )
        result = await s.call_tool(
            "topic", {"action": "save", "topic": topic, "content": f"The {subject} is {new}"}
        )
    assert result["decision"] == "SUPERSEDE", result
    return str(result["entry_id"])


def promoter_stage(report: dict[str, Any]) -> dict[str, Any]:
    return review_stage(report, "promoter")


def promotions(home: Path) -> list[dict[str, Any]]:
    path = home / "a" / "logs" / "wiki" / "promotions.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


async def gate(rv: reverie.Reverie) -> list[str]:
    promoter = rv.factories[Promoter]("a")
    now = rv.clock.now()
    return [f.id for f in await rv.services.db.read(lambda conn: promoter.candidates(conn, now))]


async def test_rule_gate(rv: reverie.Reverie, clock: ManualClock) -> None:
    """Live, chain depth >= 2, age >= 3 days, never decided, at most 8."""
    async with rv.namespace("a").session("s") as s:
        await s.call_tool(
            "topic", {"action": "save", "topic": "misc", "content": "The uncorrected port is 8080"}
        )
    old_enough = [await corrected(rv, f"t{i % 8}", f"limit {i}", "10", "20") for i in range(9)]
    clock.advance(timedelta(hours=71))
    assert await gate(rv) == []  # not yet 3 days
    young = await corrected(rv, "young", "fresh value", "1", "2")
    clock.advance(timedelta(hours=1))
    found = await gate(rv)
    assert len(found) == 8 and set(found) <= set(old_enough)  # capped at 8
    assert young not in found
    chain = await rv.namespace("a").chain(found[0])
    assert chain[0].id not in found  # the superseded link is never a candidate


async def test_exclusion(rv: reverie.Reverie, clock: ManualClock) -> None:
    """Decided facts and text reverie generated itself are never candidates."""
    from reverie.stores import generated

    decided = await corrected(rv, "deploy", "deploy timeout", "30s", "45s")
    fresh = await corrected(rv, "cache", "cache size", "1GB", "2GB")

    def mark(conn: Any) -> None:
        review_state.put(conn, "a", DONE_IDS, [decided], rv.services.now())
        generated.remember(conn, "a", "The nightly digest is v2", "distiller", rv.services.now())

    await rv.services.db.write(mark)
    clock.advance(timedelta(seconds=1))
    own = await corrected(rv, "report", "nightly digest", "v1", "v2")  # copies reverie's text
    clock.advance(timedelta(days=3))
    found = await gate(rv)
    assert found == [fresh] and own not in found and decided not in found


async def test_end_to_end(
    tmp_path: Path, clock: ManualClock, spans: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, exporter = spans
    async with reverie.open(tmp_path / "h", clock=clock, tracer_provider=provider) as rv:
        fact = await corrected(rv, "deploy", "deploy timeout for /srv/api", "30s", "45s")
        clock.advance(timedelta(days=3))
        stage = promoter_stage(await rv.review())
        assert stage["candidates"] == 1 and stage["promoted"] == 1
        [entry] = await rv.namespace("a").entries("memory")
        assert "45s" in entry.content and "/srv/api" in entry.content
        assert len(entry.content) <= 220 and entry.created_by == "promoter"
        memory_md = (tmp_path / "h" / "a" / "MEMORY.md").read_text()
        assert entry.content in memory_md
        ledger = [r for r in await rv.namespace("a").ledger() if r.actor == "promoter"]
        assert ("promote", "PROMOTED", fact) in [(r.action, r.decision, r.entry_id) for r in ledger]
        fifo = await rv.services.db.read(lambda conn: review_state.get(conn, "a", DONE_IDS))
        assert fifo == [fact]
        calls = await rv.model_calls("a")
    assert calls["promoter"]["calls"] == 1
    [record] = promotions(tmp_path / "h")
    assert record["verdict"] == "promoted" and record["fact_id"] == fact
    events = [
        e for sp in exporter.get_finished_spans() for e in sp.events if e.name == "memory.promotion"
    ]
    assert events[-1].attributes["reverie.promotion.promoted"] == 1


async def test_due_gate(rv: reverie.Reverie, clock: ManualClock) -> None:
    """Weekly: a pass before the week is out costs no model call and promotes nothing."""
    await corrected(rv, "deploy", "deploy timeout", "30s", "45s")
    assert promoter_stage(await rv.review())["candidates"] == 0  # too young; the week starts
    clock.advance(timedelta(days=4))
    assert promoter_stage(await rv.review())["status"] == "not_due"
    assert "promoter" not in await rv.model_calls("a")
    assert await rv.namespace("a").entries("memory") == []
    clock.advance(timedelta(days=3))
    assert promoter_stage(await rv.review())["promoted"] == 1
    assert (await rv.model_calls("a"))["promoter"]["calls"] == 1


async def test_write_budget(rv: reverie.Reverie, clock: ManualClock) -> None:
    """At most 2 writes a round; the rest are deferred_budget and re-queued next round."""
    for i, subject in enumerate(("api port", "queue depth", "pool size", "retry limit")):
        await corrected(rv, f"t{i}", subject, str(10 + i), str(20 + i))
    clock.advance(timedelta(days=3))
    first = promoter_stage(await rv.review())
    assert (first["promoted"], first["deferred_budget"]) == (2, 2)
    assert len(await rv.namespace("a").entries("memory")) == 2
    clock.advance(timedelta(days=7))
    second = promoter_stage(await rv.review())
    assert second["candidates"] == 2 and second["promoted"] == 2
    clock.advance(timedelta(days=7))
    assert promoter_stage(await rv.review())["candidates"] == 0  # every verdict final
    assert len(await rv.namespace("a").entries("memory")) == 4


class Flaky:
    """Defers the first promotion question, then answers like the offline rules."""

    name = "flaky"

    def __init__(self) -> None:
        self.offline = OfflineModel()
        self.calls = 0

    async def judge(self, prompt: Prompt) -> Answer | Deferred:
        if prompt.stage == "promote":
            self.calls += 1
            if self.calls == 1:
                return Deferred("the model did not answer in time", Usage(0, 0, 3))
        return await self.offline.judge(prompt)


async def test_model_degradation(tmp_path: Path, clock: ManualClock) -> None:
    """A deferred model answer writes nothing, decides nothing, and is retried next round."""
    async with reverie.open(tmp_path / "h", clock=clock, model=Flaky()) as rv:
        fact = await corrected(rv, "deploy", "deploy timeout", "30s", "45s")
        clock.advance(timedelta(days=3))
        stage = promoter_stage(await rv.review())
        assert stage["deferred"] == 1 and "promoted" not in stage
        assert await rv.namespace("a").entries("memory") == []
        fifo = await rv.services.db.read(lambda conn: review_state.get(conn, "a", DONE_IDS))
        assert fifo == []
        clock.advance(timedelta(days=7))
        assert promoter_stage(await rv.review())["promoted"] == 1
    assert [r["verdict"] for r in promotions(tmp_path / "h")] == ["deferred", "promoted"]
    assert promotions(tmp_path / "h")[1]["fact_id"] == fact


async def test_near_duplicate_is_a_final_skip_and_a_full_memory_defers(
    tmp_path: Path, clock: ManualClock
) -> None:
    config = Config().with_section("caps", memory=60)
    async with reverie.open(tmp_path / "h", clock=clock, config=config) as rv:
        dup = await corrected(rv, "deploy", "deploy timeout", "30s", "45s")
        full = await corrected(rv, "billing", "billing cutoff day of each month", "25", "28")
        async with rv.namespace("a").session("s") as s:
            await s.call_tool(
                "memory",
                {
                    "action": "add",
                    "target": "memory",
                    "content": "deploy: The deploy timeout is 45s",
                },
            )
        clock.advance(timedelta(days=3))
        stage = promoter_stage(await rv.review())
        by_fact = {o["fact_id"]: o["verdict"] for o in stage["outcomes"]}
        assert by_fact == {dup: "skip", full: "deferred"}
        clock.advance(timedelta(days=7))
        again = promoter_stage(await rv.review())
        assert [o["fact_id"] for o in again["outcomes"]] == [full]  # only the deferred one


async def test_kill_switch_promotion_enabled(tmp_path: Path, clock: ManualClock) -> None:
    config = Config().with_section("promoter", promotion_enabled=False)
    async with reverie.open(tmp_path / "h", clock=clock, config=config) as rv:
        await corrected(rv, "deploy", "deploy timeout", "30s", "45s")
        clock.advance(timedelta(days=3))
        assert promoter_stage(await rv.review())["status"] == "disabled"
        assert await rv.namespace("a").entries("memory") == []


async def test_a_corrected_promoted_fact_refreshes_its_rule(
    rv: reverie.Reverie, clock: ManualClock
) -> None:
    """MEMORY.md never keeps citing a value its topic has corrected: the correction rewrites
    the promoted rule (the promoter does, asked by the correction's own transaction), and
    the new value is not promoted twice."""
    await corrected(rv, "deploy", "deploy timeout for /srv/api", "30s", "45s")
    clock.advance(timedelta(days=3))
    assert promoter_stage(await rv.review())["promoted"] == 1
    [rule] = await rv.namespace("a").entries("memory")
    async with rv.namespace("a").session("s") as s:
        again = await s.call_tool(
            "topic",
            {
                "action": "save",
                "topic": "deploy",
                "content": "The deploy timeout for /srv/api is 60s",
            },
        )
    assert again["decision"] == "SUPERSEDE"
    await rv.wait_idle()
    [fresh] = await rv.namespace("a").entries("memory")
    assert "60s" in fresh.content and "/srv/api" in fresh.content and fresh.id != rule.id
    assert "60s" in (rv.home / "a" / "MEMORY.md").read_text()
    [refresh] = [r for r in await rv.namespace("a").ledger() if r.action == "refresh"]
    assert refresh.decision == "REPLACED" and refresh.before["entry_id"] == rule.id
    clock.advance(timedelta(days=7))
    assert promoter_stage(await rv.review())["candidates"] == 0
    assert len(await rv.namespace("a").entries("memory")) == 1
    assert (await rv.namespace("a").restore(rule.id))["decision"] == "RESTORED"  # undoable


async def test_a_refresh_whose_message_was_lost_runs_at_the_next_pass(
    rv: reverie.Reverie, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ask to refresh a promoted rule is a row of the correction's own transaction: a
    message lost after the commit (a crash, here dropped on purpose) only delays the
    refresh to the promoter's turn in the next review pass."""
    await corrected(rv, "deploy", "deploy timeout for /srv/api", "30s", "45s")
    clock.advance(timedelta(days=3))
    assert promoter_stage(await rv.review())["promoted"] == 1
    bus = rv.services.bus
    offer = bus.offer

    def lossy(message: Any, **kwargs: Any) -> int:
        return 0 if isinstance(message, PromotedFactChanged) else offer(message, **kwargs)

    monkeypatch.setattr(bus, "offer", lossy)
    async with rv.namespace("a").session("s") as s:
        content = "The deploy timeout for /srv/api is 60s"
        args = {"action": "save", "topic": "deploy", "content": content}
        assert (await s.call_tool("topic", args))["decision"] == "SUPERSEDE"
    await rv.wait_idle()
    assert "45s" in (rv.home / "a" / "MEMORY.md").read_text()  # the message never came
    monkeypatch.undo()
    await rv.review(force=True)
    [rule] = await rv.namespace("a").entries("memory")
    assert "60s" in rule.content and "60s" in (rv.home / "a" / "MEMORY.md").read_text()
    await rv.review(force=True)  # handled once: the outbox is empty
    assert len([r for r in await rv.namespace("a").ledger() if r.action == "refresh"]) == 1


async def test_promotion_switched_off_still_keeps_promoted_rules_current(
    tmp_path: Path, clock: ManualClock
) -> None:
    """``promotion_enabled = false`` stops new promotions, not the refresh of a rule
    promoted before: MEMORY.md never keeps a corrected value, and no ask is left over."""
    home = tmp_path / "home"
    async with reverie.open(home, clock=clock) as rv:
        await corrected(rv, "deploy", "deploy timeout for /srv/api", "30s", "45s")
        clock.advance(timedelta(days=3))
        assert promoter_stage(await rv.review())["promoted"] == 1
    off = Config().with_section("promoter", promotion_enabled=False)
    async with reverie.open(home, clock=clock, config=off) as rv:
        async with rv.namespace("a").session("s") as s:
            content = "The deploy timeout for /srv/api is 60s"
            args = {"action": "save", "topic": "deploy", "content": content}
            assert (await s.call_tool("topic", args))["decision"] == "SUPERSEDE"
        await rv.wait_idle()
        [rule] = await rv.namespace("a").entries("memory")
        assert "60s" in rule.content
        report = await rv.review(force=True)
        assert promoter_stage(report)["status"] == "disabled"
        pending = await rv.services.db.read(lambda conn: review_state.refreshes(conn, "a"))
        assert pending == {}


async def test_the_rule_gate_keeps_statements_of_their_moment_in_their_topic(
    rv: reverie.Reverie, clock: ManualClock
) -> None:
    """A corrected fact tied to a calendar day, a stance of the speaker or an aim of the
    day is not a candidate; a corrected standing fact is. The rule gate is free: nothing
    of the moment reaches the model."""
    durable = await corrected(rv, "deploy", "deploy timeout", "30s", "45s")
    async with rv.namespace("a").session("s") as s:
        for topic, old, new in [
            ("review", "The design review is on April 20", "The design review moved to May 3"),
            (
                "budget",
                "I'm kinda worried that my snack budget is $60",
                "I'm kinda worried that my snack budget is now $75",
            ),
            (
                "reading",
                "I'm trying to hit my reading goal of 10 books",
                "I'm trying to hit my reading goal, which increased to 12 books",
            ),
        ]:
            await s.call_tool("topic", {"action": "save", "topic": topic, "content": old})
            result = await s.call_tool("topic", {"action": "save", "topic": topic, "content": new})
            assert result["decision"] == "SUPERSEDE", result
    clock.advance(timedelta(days=4))
    assert await gate(rv) == [durable]


def test_statements_of_their_moment() -> None:
    from reverie.rules.consolidation import momentary

    for text in [
        "The design review moved to May 3",
        "The launch is on 3rd of June",
        "Cutover is 2025-01-14",
        "I'm kinda worried that the budget is too small",
        "I feel bad about missing the meeting with Matthew",
        "Honestly I'm curious, how can I speed this up",
        "I'm trying to cut my overtime by 50%",
        "I want to finish the draft first",
        "I'll set up automatic transfers to the emergency fund",
        "The payments API is down today",
    ]:
        assert momentary(text), text
    for text in [
        "The deploy timeout is 45s",
        "We use Postgres 15 on port 5433",
        "I'm allergic to peanuts",
        "The ratio is 3/4 of the budget",
        "Standup moved to 10:30",
        "I prefer terse answers",
    ]:
        assert not momentary(text), text
