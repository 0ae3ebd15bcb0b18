"""``reverie simulate``: the generator is deterministic, speaks every phrasing class and
its ground truth is consistent; the driver and the report run a real home end to end;
and every quality measure is computed as documented and can fail."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import reverie
from reverie import ManualClock
from reverie.simulation import driver, report
from reverie.simulation.driver import Ack, Run
from reverie.simulation.report import Item
from reverie.simulation.scenario import (
    SUBJECTS,
    Identity,
    Never,
    Scenario,
    SessionPlan,
    Truth,
    generate,
    paste_lines,
)
from tests.chat_server import ChatServer
from tests.local_http import base_url, serving
from tests.test_cli import cli

ALL_KINDS = {
    "identity",
    "fact",
    "restatement",
    "correction",
    "tool_report",
    "greeting",
    "fragment",
    "hedge",
    "paste",
    "secret",
    "lesson",
    "error",
    "decision",
    "preference",
    "style",
    "procedure",
    "question",
}


def _texts(scenario: Scenario, kind: str | None = None, side: str = "both") -> list[str]:
    out = []
    for plan in scenario.sessions:
        for turn in plan.turns:
            if kind is not None and turn.kind != kind:
                continue
            if side in {"both", "user"} and turn.user:
                out.append(turn.user)
            if side in {"both", "assistant"} and turn.assistant:
                out.append(turn.assistant)
    return out


def test_the_generator_is_deterministic_and_varied() -> None:
    a, b = generate(seed=3, sessions=12, days=5), generate(seed=3, sessions=12, days=5)
    assert a.sessions == b.sessions and a.never == b.never and a.identities == b.identities
    assert [(t.current, t.stale) for t in a.truths] == [(t.current, t.stale) for t in b.truths]
    assert generate(seed=4, sessions=12, days=5).sessions != a.sessions
    kinds = {turn.kind for s in generate(seed=1, sessions=60, days=14).sessions for turn in s.turns}
    assert kinds >= ALL_KINDS
    with pytest.raises(ValueError):
        generate(sessions=0)


def test_every_phrasing_class_appears_in_many_surface_forms() -> None:
    scenario = generate(seed=1)
    said = "\n".join(_texts(scenario))
    # pastes, from the user and from the assistant: tracebacks, logs, code, shell, diffs, tables
    for shape in (
        r"Traceback \(most recent call last\):",
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ (ERROR|WARN|INFO)",
        r"```(python|js|sql|yaml|json)\n",
        r"\$ kubectl get pods",
        r"\n--- a/.*\n\+\+\+ b/",
        r"\|---\|---\|",
    ):
        assert re.search(shape, said), shape
    assert any("```" in t for t in _texts(scenario, "paste", "assistant"))
    assert any("\n" in t for t in _texts(scenario, "paste", "user"))
    # casual hedges, names and timezones in chat form, tool reports, acknowledgements
    assert len(set(_texts(scenario, "hedge", "user"))) >= 15
    identity = _texts(scenario, "identity", "user")
    assert not any("my name is" in t.lower() for t in identity)
    assert len(set(identity)) >= 6
    reports = _texts(scenario, "tool_report", "assistant")
    assert any(t.startswith("Ran `") for t in reports) and any("checked" in t for t in reports)
    assert "Got it, I'll remember that." in said
    # corrections: days later in many forms, and in the very next message without the subject
    corrections = _texts(scenario, "correction", "user")
    assert len(set(corrections)) >= 15
    nouns = [s.noun for s in SUBJECTS]
    assert any(not any(n in t for n in nouns) for t in corrections)  # "scratch that, it's 45s"
    # restatements in other words: one value said in several surface forms
    by_value: dict[tuple[str, str | None, str | None], set[str]] = {}
    for plan in scenario.sessions:
        for turn in plan.turns:
            if turn.kind == "restatement" and turn.user:
                by_value.setdefault((plan.namespace, turn.subject, turn.value), set()).add(
                    turn.user
                )
    assert max(len(v) for v in by_value.values()) >= 3
    # secrets said in passing, greetings and fragments
    for shape in (r"AKIA[0-9A-Z]{16}", r"ghp_\w{36}", r"xoxb-", r"eyJ\w+\.eyJ", r"BEGIN RSA", "pw"):
        assert re.search(shape, said), shape
    assert {"lol", "ty!"} & set(_texts(scenario, "fragment", "user"))


def test_the_agent_saves_only_a_minority_of_facts() -> None:
    turns = [
        t
        for p in generate(seed=1).sessions
        for t in p.turns
        if t.kind in {"fact", "restatement", "correction", "tool_report"}
    ]
    saved = sum(bool(t.tools) for t in turns)
    assert 0 < saved < 0.5 * len(turns)


def test_ground_truth_is_the_last_value_said_in_time_order() -> None:
    scenario = generate(seed=5, sessions=60, days=14)
    plans = sorted(scenario.sessions, key=lambda p: (p.day, p.slot, p.session_id))
    for truth in scenario.truths:
        said = [
            turn
            for plan in plans
            if plan.namespace == truth.namespace
            for turn in plan.turns
            if turn.subject == truth.subject.topic and turn.value is not None
        ]
        assert said and said[-1].value == truth.current
        for turn in said:  # every fact turn really carries its value
            text = turn.assistant if turn.kind == "tool_report" else turn.user
            assert text and truth.subject.carries(text, str(turn.value)), text
        assert truth.current not in truth.replaced


def test_ground_truth_marks_pastes_secrets_and_hedges_as_never_stored() -> None:
    scenario = generate(seed=2)
    never = {(n.kind, n.namespace, n.text) for n in scenario.never}
    for plan in scenario.sessions:
        for turn in plan.turns:
            if turn.kind == "paste":
                text = "\n".join(t for t in (turn.user, turn.assistant) if t)
                lines = [ln.strip() for ln in text.splitlines()]
                marked = [n for n in never if n[0] == "paste" and n[1] == plan.namespace]
                assert sum(m[2] in lines for m in marked) >= 3
    secrets = scenario.never_of("secret")
    assert secrets and all(any(s.text in t for t in _texts(scenario, "secret")) for s in secrets)
    hedges = scenario.never_of("hedge")
    assert hedges and any(h.subject for h in hedges) and any(h.subject is None for h in hedges)
    values = {form for s in SUBJECTS for v in s.values for form in v}
    assert not values & {h.text for h in hedges}  # a hedged value is never a true one
    assert all(t.current not in {h.text for h in hedges} for t in scenario.truths)
    kinds = {n.kind for n in scenario.never}
    assert kinds == {"paste", "secret", "hedge", "greeting", "fragment", "ack"}
    assert paste_lines("```\nok\nTraceback (most recent call last):\n```") == [
        "Traceback (most recent call last):"
    ]


def tiny() -> tuple[Scenario, list[Item]]:
    """A hand-built scenario and store: one of every kind of mistake."""
    ns = "priya-atlas"
    deploy = next(s for s in SUBJECTS if s.topic == "deploy")
    scenario = Scenario(
        seed=0,
        sessions=[SessionPlan(ns, "s1", 0, 0, ())],
        truths=[Truth(ns, deploy, "45s", ["30s"])],
        never=[
            Never("paste", ns, "Traceback (most recent call last):"),
            Never("paste", ns, 'File "/srv/ingest/worker.py", line 212, in handle_worker'),
            Never("secret", ns, "hunter2xyz"),
            Never("hedge", ns, "75s", "deploy"),
            Never("hedge", ns, "worker-34"),
            Never("fragment", ns, "lol"),
            Never("ack", ns, "Got it, I'll remember that."),
        ],
        identities=[Identity(ns, "Priya", ("Asia/Kolkata", "IST"))],
    )
    items = [
        Item(ns, "fact", "deploy", "f1", "The deploy timeout is 45s"),
        Item(ns, "fact", "deploy", "f2", "deploy timeout: 45 seconds"),  # a duplicate
        Item(ns, "fact", "deploy", "f3", "deploy timeout might be 75s"),  # a hedge
        Item(ns, "fact", "ops", "f4", "it's the worker-34 box"),  # a hedge without subject
        Item(ns, "entry", "memory", "e1", "Traceback (most recent call last):"),  # a paste
        Item(ns, "entry", "memory", "e2", "the db pw is hunter2xyz"),  # a secret
        Item(ns, "entry", "memory", "e3", "ci uses AKIAABCDEFGHIJKLMNOP"),  # shaped like one
        Item(ns, "entry", "memory", "e4", "lol"),
        Item(ns, "entry", "memory", "e5", "Got it, I'll remember that."),
        Item(ns, "entry", "memory", "e6", "Prefers terse answers."),  # wrong home
        Item(ns, "entry", "user_settings", "e7", "name: Priya"),
        Item(ns, "entry", "user_settings", "e8", "timezone: Asia/Kolkata"),
    ]
    return scenario, items


def test_the_new_measures_on_a_tiny_hand_built_store() -> None:
    scenario, items = tiny()
    junk = report._junk(items, scenario)
    assert junk["by_kind"] == {"paste": 1, "hedge": 2, "greeting": 0, "fragment": 1, "ack": 1}
    assert junk["pasted_lines"] == 1 and len(junk["items"]) == 5
    assert len(report._secrets(items, {}, scenario)) == 2
    assert len(report._secrets(items[:1], {"priya-atlas": ["pw=hunter2xyz"]}, scenario)) == 1
    assert report._secrets(items[:2], {}, scenario) == []
    assert report._duplicates(items, scenario) == [
        "(deploy=45s) priya-atlas fact deploy: deploy timeout: 45 seconds"
    ]
    assert report._identities(items, scenario.identities) == {
        "names_learned": 1.0,
        "identity": {"name": 1.0, "timezone": 1.0, "in_user_settings": 1.0},
    }
    assert report._identities(items[:8], scenario.identities)["names_learned"] == 0.0
    misrouted = report._misrouted(items, scenario)
    assert misrouted["count"] == 1 and "Prefers terse" in misrouted["examples"][0]
    assert [report._single_word(t) for t in ("the", "x", "sorry", "of-the", "deploy")] == [
        True,
        True,
        True,
        True,
        False,
    ]


async def test_a_value_only_in_the_episode_log_is_not_learned(tmp_path: Path) -> None:
    scenario, _ = tiny()
    config = reverie.Config().with_section("flusher", enabled=False)
    async with reverie.open(tmp_path / "h", config=config, clock=ManualClock(driver.START)) as rv:
        async with rv.namespace("priya-atlas").session("s1") as s:
            await s.turn(user="the deploy timeout is 45s", assistant="ok")
        await rv.wait_idle()
        hits = await rv.namespace("priya-atlas").search("What is the deploy timeout?", k=5)
        assert any(h.kind == "episode" for h in hits)
        result = await report.build(rv, scenario, Run(), {})
    assert result["quality"]["current_fact_recall"] == 0.0
    assert result["quality"]["names_learned"] == 0.0


async def run_small(home: Path, **model: Any) -> dict[str, Any]:
    scenario = generate(seed=2, sessions=12, days=8, turns=12, users=3)
    clock = ManualClock(driver.START)
    async with reverie.open(home, clock=clock, **model) as rv:
        run = await driver.drive(rv, clock, scenario, concurrency=4)
        return await report.build(rv, scenario, run, {"seed": 2})


async def test_a_small_run_end_to_end(tmp_path: Path) -> None:
    result = await run_small(tmp_path / "h")
    assert result["lost_writes"] == 0
    assert result["turns"] == 12 * 12 and result["sessions"] == 12
    writes = result["writes"]
    assert isinstance(writes, dict) and writes["reconciled"] is True
    assert "flusher" in writes["background"]
    latency = result["latency"]
    assert isinstance(latency, dict)
    assert {"turn", "tool_call", "idle", "review_pass"} <= set(latency)
    assert latency["review_pass"]["n"] >= 3
    quality = result["quality"]
    assert isinstance(quality, dict)
    assert quality["questions"] > 0 and quality["stored_items"] > 0
    assert set(quality["junk_stored"]) == {"paste", "hedge", "greeting", "fragment", "ack"}
    for measure in ("secrets_stored", "pasted_lines_stored", "single_word_topics"):
        assert isinstance(quality[measure], int)
    assert 0 <= quality["names_learned"] <= 1
    records = result["records"]  # seed 003: every stored item is a record with a tier
    assert records["sessions_ended"] >= 12 and set(records["tiers"]) == {"hot", "warm", "cold"}
    assert sum(records["tiers"].values()) == sum(records["kinds"].values()) > 0
    assert isinstance(records["patterns"], int)
    skills = result["skills"]  # seed 004: every registered skill in one of the five tiers
    assert list(skills["tiers"]) == ["active", "steady", "low", "dormant", "retired"]
    assert sum(skills["tiers"].values()) == skills["registered"]
    assert set(skills["uses"]) <= {"PATCHED"}  # each reported use landed
    measures = {t["measure"] for t in result["targets"]}
    assert measures == {
        "lost_writes",
        "model_calls_per_1000_turns",
        "current_fact_recall",
        "stale_rate",
        "duplicate_rate",
        "junk_rate",
        "pasted_lines_stored",
        "secrets_stored",
        "single_word_topics",
        "cap_violations",
    }


async def test_the_measures_can_fail(tmp_path: Path) -> None:
    """A lost write, a duplicate, junk, a secret and a stale best hit are each counted,
    through the public API (each as far as the writer accepted it: the rules may refuse)."""
    scenario, _ = tiny()
    decisions = []
    async with reverie.open(tmp_path / "h", clock=ManualClock(driver.START)) as rv:
        ns = rv.namespace("priya-atlas")
        async with ns.session("bad") as s:
            for topic, content in (
                ("one", "The deploy timeout is 30s"),
                ("two", "The deploy timeout is 30s"),
                ("three", "The db pw is hunter2xyz"),
            ):
                args = {"action": "save", "topic": topic, "content": content}
                decisions.append((await s.call_tool("topic", args))["decision"])
            args = {"action": "add", "target": "memory", "content": "lol"}
            decisions.append((await s.call_tool("memory", args))["decision"])
        run = Run(acks=[Ack("priya-atlas", "topic", "deploy", "ADD", "fct-missing")])
        result = await report.build(rv, scenario, run, {})
    assert result["lost_writes"] == 1
    quality = result["quality"]
    assert isinstance(quality, dict)
    assert decisions[0] == "ADD" and quality["current_fact_recall"] == 0.0
    assert quality["stale_rate"] == 1.0  # the best hit about the subject is the replaced 30s
    assert (quality["duplicate_rate"] > 0) == (decisions[1] == "ADD")
    assert quality["secrets_stored"] == (decisions[2] == "ADD")
    assert quality["junk_stored"]["fragment"] == (decisions[3] == "ADD")
    assert (quality["junk_rate"] > 0) == (decisions[3] == "ADD")
    failed = {t["measure"] for t in result["targets"] if not t["met"]}
    assert {"lost_writes", "current_fact_recall", "stale_rate"} <= failed
    assert ("secrets_stored" in failed) == (decisions[2] == "ADD")


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
            # ask about every candidate, one at a time
            env={"REVERIE_FLUSHER_RULES_FIRST": "false", "REVERIE_FLUSHER_ASK_BATCH": "1"},
        )
    )
    assert remote["settings"]["model"].startswith("http://127.0.0.1")
    assert remote["lost_writes"] == 0
    assert chat.seen, "the remote model was never asked"
    assert remote["tokens"]["input"] > 0
