"""``reverie simulate``: the generator is deterministic and its ground truth consistent; the
driver and the report run a real home end to end; and every quality measure can fail."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import reverie
from reverie import ManualClock
from reverie.rules.similarity import tokens
from reverie.simulation import driver, report
from reverie.simulation.driver import Ack, Run
from reverie.simulation.scenario import generate
from tests.chat_server import ChatServer
from tests.local_http import base_url, serving
from tests.test_cli import cli


def test_the_generator_is_deterministic_and_varied() -> None:
    a, b = generate(seed=3, sessions=12, days=5), generate(seed=3, sessions=12, days=5)
    assert a.sessions == b.sessions and [t.current for t in a.truths] == [
        t.current for t in b.truths
    ]
    assert generate(seed=4, sessions=12, days=5).sessions != a.sessions
    kinds = {turn.kind for s in generate(seed=1, sessions=60, days=14).sessions for turn in s.turns}
    assert kinds >= {
        "identity",
        "fact",
        "restatement",
        "correction",
        "greeting",
        "hedge",
        "lesson",
        "error",
        "decision",
        "preference",
        "style",
        "procedure",
    }
    with pytest.raises(ValueError):
        generate(sessions=0)


def test_ground_truth_is_the_last_value_said_in_time_order() -> None:
    scenario = generate(seed=5, sessions=60, days=14)
    plans = sorted(scenario.sessions, key=lambda p: (p.day, p.slot, p.session_id))
    for truth in scenario.truths:
        said = [
            turn.user
            for plan in plans
            if plan.namespace == truth.namespace
            for turn in plan.turns
            if turn.user
            and turn.kind in {"fact", "restatement", "correction"}
            and truth.subject.label.lower() in turn.user.lower()
        ]
        assert said and truth.current in tokens(said[-1]), (truth.subject.label, said[-1:])
        assert truth.current not in truth.replaced


async def run_small(home: Path, **model: object) -> dict[str, object]:
    scenario = generate(seed=2, sessions=12, days=8, turns=12, users=3)
    clock = ManualClock(driver.START)
    async with reverie.open(home, clock=clock, **model) as rv:  # type: ignore[arg-type]
        run = await driver.drive(rv, clock, scenario, concurrency=4)
        return await report.build(rv, scenario, run, {"seed": 2})


async def test_a_small_run_end_to_end(tmp_path: Path) -> None:
    result = await run_small(tmp_path / "h")
    assert result["lost_writes"] == 0
    assert result["turns"] == 12 * 12 and result["sessions"] == 12
    writes = result["writes"]
    assert isinstance(writes, dict) and writes["reconciled"] is True
    assert writes["acknowledged"].get("NOOP", 0) > 0  # restatements caught
    assert "flusher" in writes["background"]
    latency = result["latency"]
    assert isinstance(latency, dict)
    assert {"turn", "tool_call", "idle", "review_pass"} <= set(latency)
    assert latency["review_pass"]["n"] >= 3
    quality = result["quality"]
    assert isinstance(quality, dict)
    assert quality["junk_rate"] == 0 and quality["cap_violations"] == []
    assert quality["current_fact_recall"] >= 0.9
    assert {t["measure"] for t in result["targets"]} >= {"lost_writes", "stale_rate"}  # type: ignore[union-attr]


async def test_the_measures_can_fail(tmp_path: Path) -> None:
    """A lost write, a duplicate, junk and a stale best hit are each counted."""
    scenario = generate(seed=2, sessions=2, days=1, turns=1, users=1)
    [ns_name] = scenario.namespaces
    truth = scenario.truths[0] if scenario.truths else None
    async with reverie.open(tmp_path / "h", clock=ManualClock(driver.START)) as rv:
        ns = rv.namespace(ns_name)
        async with ns.session("bad") as s:
            await s.call_tool("memory", {"action": "add", "target": "memory", "content": "hi"})
            await s.call_tool(
                "topic", {"action": "save", "topic": "one", "content": "The deploy timeout is 30s"}
            )
            await s.call_tool(
                "topic", {"action": "save", "topic": "two", "content": "The deploy timeout is 30s"}
            )
        run = Run(acks=[Ack(ns_name, "topic", "deploy", "ADD", "fct-missing")])
        result = await report.build(rv, scenario, run, {})
    assert result["lost_writes"] == 1
    quality = result["quality"]
    assert isinstance(quality, dict)
    assert quality["junk"] == ["hi"] and quality["junk_rate"] > 0
    assert quality["duplicate_rate"] > 0 or truth is None
    failed = {t["measure"] for t in result["targets"] if not t["met"]}  # type: ignore[union-attr]
    assert {"lost_writes", "junk_rate"} <= failed


@pytest.fixture
def chat() -> Iterator[ChatServer]:
    with serving(ChatServer()) as server:
        yield server


@pytest.mark.slow
def test_the_cli_runs_the_defaults_shape_and_a_remote_model(
    tmp_path: Path, chat: ChatServer
) -> None:
    out = cli(
        tmp_path / "a",
        "simulate",
        "--sessions",
        "6",
        "--days",
        "3",
        "--turns",
        "6",
        "--users",
        "2",
        "--seed",
        "1",
        "--json",
    )
    result = json.loads(out)
    assert result["lost_writes"] == 0 and result["sessions"] == 6
    assert {"latency", "model_calls", "writes", "quality", "targets"} <= set(result)
    human = cli(tmp_path / "b", "simulate", "--sessions", "6", "--days", "3", "--turns", "6")
    assert "learning quality" in human and "lost: 0" in human
    before = (tmp_path / "b" / "reverie.db").stat().st_mtime_ns
    cli(tmp_path / "b", "simulate", code=2)  # an existing home is refused, untouched
    assert (tmp_path / "b" / "reverie.db").stat().st_mtime_ns == before
    remote = json.loads(
        cli(
            tmp_path / "c",
            "simulate",
            "--sessions",
            "6",
            "--days",
            "8",
            "--turns",
            "8",
            "--users",
            "2",
            "--json",
            "--model-url",
            f"{base_url(chat)}/v1",
            env={"REVERIE_FLUSHER_RULES_FIRST": "false"},  # ask about every candidate
        )
    )
    assert remote["settings"]["model"].startswith("http://127.0.0.1")
    assert remote["lost_writes"] == 0
    assert chat.seen, "the remote model was never asked"
    assert remote["tokens"]["input"] > 0
