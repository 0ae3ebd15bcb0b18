"""L2 and L3 on a real store: turns become tagged candidates, an idle session flushes them
to their one home within the budget, and the watermark in SQLite makes it exactly-once."""

from __future__ import annotations

import json
import sqlite3
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import reverie
from reverie import Config, ManualClock
from reverie.model.offline import OfflineModel
from reverie.model.seam import Answer, Deferred, Prompt, Usage
from tests.conftest import both_backends, rows, write_db

pytestmark = both_backends


async def test_turns_are_extracted_with_tags_weights_and_the_filters(
    rv: reverie.Reverie,
) -> None:
    async with rv.namespace("a").session("s") as s:
        await s.turn(user="hi!", assistant="Hello! How can I help?")
        await s.turn(user="Maybe the cache at 10.0.0.5 is stale?", assistant="I think so.")
        await s.turn(user="Actually, the deploy timeout is 45s now.")
        await s.turn(assistant="The build failed with exit code 137.")
        await s.turn(user=s.snapshot.text + "\nWe decided to use Postgres 16.")
        await rv.wait_idle()
    found = rows(rv.home, "SELECT text, tag, weight, speaker FROM extracts ORDER BY id")
    assert found == [
        ("Actually, the deploy timeout is 45s now.", "correction", "high", "user"),
        ("The build failed with exit code 137.", "error", "high", "assistant"),
        ("We decided to use Postgres 16.", "decision", "high", "user"),
    ]
    tags = rows(rv.home, "SELECT turn, tags, weight FROM episodes ORDER BY id")
    assert tags[0] == (0, "[]", "none")
    assert tags[1] == (1, "[]", "none")
    assert json.loads(tags[2][1]) == ["correction"] and tags[2][2] == "high"


async def test_idle_flush_routes_to_one_home_each(rv: reverie.Reverie) -> None:
    ns = rv.namespace("a")
    async with ns.session("s") as s:
        await s.turn(user="My name is Alice. The deploy timeout is 30s.")
        await s.turn(user="Please reply in short bullet points.")
        await s.turn(user="Maybe the deploy timeout is 60s?")
        await s.idle()
        await rv.wait_idle()
    assert [e.content for e in await ns.entries("user_settings")] == ["name: Alice"]
    assert [e.content for e in await ns.entries("soul")] == ["Please reply in short bullet points."]
    assert [f.content for f in await ns.facts("deploy")] == ["The deploy timeout is 30s."]
    flushed = [r for r in await ns.ledger() if r.actor == "flusher"]
    assert {r.action for r in flushed} == {"add", "save", "flush"}
    # hedged guesses never reach a store
    assert not [f for f in await ns.facts("deploy") if "60s" in f.content]


async def _seven_servers_and_three_lessons(s: reverie.Session) -> None:
    for i in range(7):
        await s.turn(user=f"Server web-{i} listens on port {8000 + i}.")
    for i in range(3):
        await s.turn(assistant=f"Lesson: always warm the {'xyz'[i]} cache first.")


async def _settle(s: reverie.Session, rv: reverie.Reverie) -> None:
    """The session goes idle and every actor finishes what that started."""
    await s.idle()
    await rv.wait_idle()


async def test_flush_budget_is_two_memory_adds_and_five_topic_saves(
    tmp_path: Path, clock: ManualClock
) -> None:
    config = Config().with_section("flusher", backlog_rounds=0)  # one flush per idle
    async with reverie.open(tmp_path / "h", clock=clock, config=config) as rv:
        ns = rv.namespace("a")
        async with ns.session("s") as s:
            await _seven_servers_and_three_lessons(s)
            await s.idle()
            await rv.wait_idle()
            facts = await ns.facts("server")
            memory = await ns.entries("memory")
            # HIGH weight first (the lessons), then in the order said: the two newest wait
            assert (len(facts), len(memory)) == (5, 2)
            assert not {"web-5", "web-6"} & {f.content.split()[1] for f in facts}
            await s.idle()
            await rv.wait_idle()
            assert len(await ns.facts("server")) == 7
            assert len(await ns.entries("memory")) == 3  # delayed, never lost
        reports = [r.detail for r in await ns.ledger() if r.action == "flush"]
    assert [(r["topic_saves"], r["memory_adds"]) for r in reports] == [(5, 2), (2, 1)]
    assert [(r["left_for_next"], r["over_budget"]) for r in reports] == [(3, 3), (0, 0)]


async def test_a_flush_its_budget_left_waiting_is_followed_by_one_more(
    rv: reverie.Reverie,
) -> None:
    """One idle, two flushes: the second (``FlushBacklog``, the flusher's own next
    message) writes what the first one's budget left, with a budget of its own."""
    ns = rv.namespace("a")
    async with ns.session("s") as s:
        await _seven_servers_and_three_lessons(s)
        await s.idle()
        await rv.wait_idle()
        assert len(await ns.facts("server")) == 7
        assert len(await ns.entries("memory")) == 3
    reports = [r.detail for r in await ns.ledger() if r.action == "flush"]
    assert [(r["trigger"], r["topic_saves"], r["memory_adds"]) for r in reports] == [
        ("idle", 5, 2),
        ("backlog", 2, 1),
    ]
    assert len([r for r in await ns.ledger() if r.actor == "reviewer"]) >= 1  # once per idle


async def test_the_flushes_after_an_idle_are_bounded(tmp_path: Path, clock: ManualClock) -> None:
    config = Config().with_section("flusher", max_topic_saves=1, backlog_rounds=1)
    async with reverie.open(tmp_path / "h", clock=clock, config=config) as rv:
        ns = rv.namespace("a")
        async with ns.session("s") as s:
            for i in range(4):
                await s.turn(user=f"Server web-{i} listens on port {8000 + i}.")
            await s.idle()
            await rv.wait_idle()
            # the idle's flush and one more: two of four, the rest wait for the next idle
            assert [f.content for f in await ns.facts("server")] == [
                "Server web-0 listens on port 8000.",
                "Server web-1 listens on port 8001.",
            ]
        flushes = [r.detail for r in await ns.ledger() if r.action == "flush"]
    assert [(f["trigger"], f["left_for_next"]) for f in flushes] == [("idle", 3), ("backlog", 2)]


async def test_what_waited_is_written_before_a_weightier_newcomer(
    tmp_path: Path, clock: ManualClock
) -> None:
    """A NORMAL statement the budget left waiting goes before a HIGH one said after it:
    otherwise a talkative user's HIGH statements could keep it waiting for ever."""
    config = Config().with_section("flusher", max_topic_saves=1, backlog_rounds=0)
    async with reverie.open(tmp_path / "h", clock=clock, config=config) as rv:
        ns = rv.namespace("a")
        async with ns.session("s") as s:
            await s.turn(user="Server web-0 listens on port 8000.")
            await s.turn(user="Server web-1 listens on port 8001.")
            await _settle(s, rv)
            await s.turn(user="Actually, the deploy timeout is 45s now.")
            await _settle(s, rv)
            assert [f.content for f in await ns.facts("server")] == [
                "Server web-0 listens on port 8000.",
                "Server web-1 listens on port 8001.",
            ]
            assert await ns.facts("deploy") == []  # it waits its turn
            await _settle(s, rv)
            assert [f.content for f in await ns.facts("deploy")] == [
                "Actually, the deploy timeout is 45s now."
            ]


async def test_pre_compact_forces_a_flush_and_awaits_it(rv: reverie.Reverie) -> None:
    ns = rv.namespace("a")
    async with ns.session("s") as s:
        await s.turn(user="The release branch is release/2.4.")
        await s.pre_compact()  # no wait_idle: pre_compact itself awaits the flush
        assert [f.content for f in await ns.facts("release")] == [
            "The release branch is release/2.4."
        ]
    # a forced flush does not start a review pass
    assert not [r for r in await ns.ledger() if r.actor == "reviewer"]


async def test_flush_repeats_nothing_and_telemetry_names_it(
    tmp_path: Path,
    clock: ManualClock,
    spans: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    provider, exporter = spans
    config = Config().with_section("flusher", ask_batch=1)  # ask about one unsure candidate
    async with reverie.open(
        tmp_path / "h", clock=clock, tracer_provider=provider, config=config
    ) as rv:
        ns = rv.namespace("a")
        async with ns.session("s") as s:
            await s.turn(user="The staging database is pg-stage-2.")
            await s.turn(user="The deploys broke when the proxy cache was cold.")
            await s.idle()
            await rv.wait_idle()
            await s.idle()
            await rv.wait_idle()
        saves = [r for r in await ns.ledger() if r.actor == "flusher" and r.action == "save"]
        assert len(saves) == 1
    events = [
        e for sp in exporter.get_finished_spans() for e in sp.events if e.name == "memory.flush"
    ]
    assert [e.attributes["reverie.flush.topic_saves"] for e in events] == [1, 0]
    assert [e.attributes["reverie.flush.asked_model"] for e in events] == [1, 0]
    chats = [sp for sp in exporter.get_finished_spans() if sp.name == "chat offline"]
    assert chats and chats[0].attributes["reverie.stage"] == "flush"


class Scripted:
    """A model whose answers the test chooses: deferred first, then an invention."""

    name = "scripted"

    def __init__(self, answers: list[dict[str, Any] | None]) -> None:
        self.answers = answers
        self.prompts: list[Prompt] = []

    async def judge(self, prompt: Prompt) -> Answer | Deferred:
        self.prompts.append(prompt)
        answer = self.answers.pop(0) if self.answers else None
        if answer is None:
            return Deferred("scripted deferral", Usage(5, 0, 1))
        return Answer(prompt.schema.validate(answer), Usage(100, 20, 1), self.name)


async def test_a_deferred_flush_writes_nothing_and_is_retried(
    tmp_path: Path, clock: ManualClock
) -> None:
    invented = {
        "reasoning": "r",
        "routes": [
            {
                "id": 1,
                "home": "topic",
                "topic": "db",
                "content": "The database is pg-9 on 5433",
                "reason": "made up",
            },
        ],
    }
    model = Scripted([None, invented, None])
    config = Config().with_section("flusher", rules_first=False, ask_batch=1)  # all asked
    async with reverie.open(tmp_path / "h", clock=clock, model=model, config=config) as rv:
        ns = rv.namespace("a")
        async with ns.session("s") as s:
            await s.turn(user="The database is pg-1 on port 5432.")
            await s.idle()
            await rv.wait_idle()
            assert await ns.facts("db") == []
            await s.idle()  # the model invents a value: refused, never stored
            await rv.wait_idle()
            assert await ns.facts("db") == []
        calls = await rv.model_calls("a")
        flushes = [r.detail for r in await ns.ledger() if r.action == "flush"]
    assert calls["flusher"] == {"calls": 2, "deferred": 1, "input_tokens": 105, "output_tokens": 20}
    # the deferral wrote nothing and left its candidate waiting; the retry refused the invention
    assert [(f["left_for_next"], f["skipped"]) for f in flushes] == [(1, 0), (0, 1)]
    assert flushes[0]["deferred"]
    assert len(model.prompts) == 2
    assert model.prompts[0].payload == model.prompts[1].payload  # the same work, retried


async def test_flusher_kill_switch(tmp_path: Path, clock: ManualClock) -> None:
    config = Config().with_section("flusher", enabled=False)
    async with reverie.open(tmp_path / "h", clock=clock, config=config) as rv:
        async with rv.namespace("a").session("s") as s:
            await s.turn(user="The staging database is pg-stage-2.")
            await s.idle()
            await rv.wait_idle()
        assert await rv.namespace("a").facts("staging") == []


@pytest.mark.parametrize("min_chars", [20])
async def test_text_reverie_generated_is_not_extracted_again(
    rv: reverie.Reverie, clock: ManualClock, min_chars: int
) -> None:
    ns = rv.namespace("a")
    async with ns.session("s") as s:
        await s.turn(user="The deploy timeout is 30s.")
        await s.turn(user="The deploy region is eu-west-1.")
        await s.idle()
        await rv.wait_idle()
    await rv.review(force=True)
    async with ns.session("s2") as s:
        summary = s.snapshot.text.split("— ")[1].split("\n")[0]
        assert "eu-west-1" in summary
        await s.turn(assistant=f"Summary of deploy: {summary}")
        await rv.wait_idle()
    texts = [r[0] for r in rows(rv.home, "SELECT text FROM extracts")]
    assert not any("Summary of deploy" in t or t == summary for t in texts), texts


async def test_rules_first_asks_the_model_only_where_the_rules_are_unsure(
    tmp_path: Path, clock: ManualClock
) -> None:
    model = Scripted([])  # would defer anything it is asked
    config = Config().with_section("flusher", ask_batch=1)
    async with reverie.open(tmp_path / "h", clock=clock, model=model, config=config) as rv:
        ns = rv.namespace("a")
        async with ns.session("s") as s:
            await s.turn(user="My name is Alice. The staging database is pg-stage-2.")
            await s.turn(user="Please reply in plain text.")
            await s.turn(assistant="Lesson: always drain the queue before restarting workers.")
            await s.idle()
            await rv.wait_idle()
            # names, style, specific facts, lessons said as lessons: the rules are sure
            assert model.prompts == []
            # identity first, then HIGH weight: the name and the lesson spend the memory budget
            assert len(await ns.entries("user_settings")) == 1
            assert [e.content for e in await ns.entries("memory")] == [
                "Lesson: always drain the queue before restarting workers."
            ]
            assert [f.content for f in await ns.facts("staging")] == [
                "The staging database is pg-stage-2."
            ]
            await s.turn(user="The deploys broke when the proxy cache was cold.")
            await s.idle()
            await rv.wait_idle()
        [prompt] = model.prompts  # a lesson, or a one-off? worth one question
        assert [c["text"] for c in prompt.payload["candidates"]] == [
            "The deploys broke when the proxy cache was cold."
        ]
        # the reply style waited for the second flush; the question is deferred
        assert [e.content for e in await ns.entries("soul")] == ["Please reply in plain text."]
        assert len(await ns.entries("memory")) == 1


async def test_an_old_value_said_again_after_its_summary_changed_is_extracted(
    rv: reverie.Reverie, clock: ManualClock
) -> None:
    """Only reverie's current text is its own: once the summary has moved on, a user going
    back to an earlier value is saying something new."""

    ns = rv.namespace("a")
    async with ns.session("s1") as s:
        await s.turn(user="The deploy timeout is 30s.")
        await s.idle()
        await rv.wait_idle()  # distilled: "The deploy timeout is 30s"
    clock.advance(timedelta(days=1))
    async with ns.session("s2") as s:
        await s.turn(user="Actually, the deploy timeout is 45s now.")
        await s.idle()
        await rv.wait_idle()  # re-distilled around 45s
    clock.advance(timedelta(days=1))
    async with ns.session("s3") as s:
        await s.turn(user="The deploy timeout is 30s.")
        await s.idle()
        await rv.wait_idle()
    assert [f.content for f in await ns.facts("deploy")] == ["The deploy timeout is 30s."]


async def test_the_flush_ledger_says_why_a_candidate_was_not_stored(rv: reverie.Reverie) -> None:
    ns = rv.namespace("a")
    async with ns.session("s") as s:
        await s.turn(assistant="I saved that for you in the deploy notes.")  # not a candidate
        await s.turn(user="The team had a long chat about the weather and lunch plans.")
        await s.turn(user="To release, first tag the commit, then run the deploy job.")
        await s.idle()
        await rv.wait_idle()
    [flush] = [r.detail for r in await ns.ledger() if r.action == "flush"]
    assert flush["candidates"] == 2
    assert flush["skipped_because"] == {
        "a workflow: left to the agent's skill_manage": 1,
        "a plain event with no specific value": 1,
    }


async def test_a_write_that_fails_for_a_passing_reason_waits_for_the_next_flush(
    rv: reverie.Reverie,
) -> None:
    """F5a: a writer answer of ERROR from a store failure (the database refused the
    transaction) is not counted as refused, the candidate is kept behind the watermark,
    and the next flush stores it."""
    with write_db(rv.home) as conn:  # the database refuses fact rows
        conn.execute(
            "CREATE TRIGGER refuse_facts BEFORE INSERT ON facts"
            " BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END"
        )
    ns = rv.namespace("a")
    async with ns.session("s") as s:
        await s.turn(user="The deploy timeout is 30s.")
        await s.idle()
        await rv.wait_idle()
        assert await ns.facts("deploy") == []
        [first] = [r for r in await ns.ledger() if r.action == "flush"]
        assert first.detail["refused"] == 0 and first.detail["left_for_next"] == 1
        with write_db(rv.home) as conn:
            conn.execute("DROP TRIGGER refuse_facts")
        await s.idle()
        await rv.wait_idle()
    assert [f.content for f in await ns.facts("deploy")] == ["The deploy timeout is 30s."]


async def test_a_busy_database_is_a_transient_error(tmp_path: Path, clock: ManualClock) -> None:
    """F5a: the writer marks a busy answer ``transient``, which is what the flush reads."""
    config = Config().with_section("store", busy_timeout_ms=50)
    async with reverie.open(tmp_path / "h", config=config, clock=clock) as rv:
        async with rv.namespace("a").session("s") as s:
            other = sqlite3.connect(tmp_path / "h" / "reverie.db", isolation_level=None)
            try:
                other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
                result = await s.call_tool(
                    "topic", {"action": "save", "topic": "deploy", "content": "Port is 8080"}
                )
            finally:
                other.close()
    assert result["decision"] == "ERROR" and result["transient"] is True


def test_the_offline_model_leaves_a_guessed_lesson_in_the_log() -> None:
    """The rules only guess that a failure or a bare correction is a lesson for MEMORY.md;
    the offline model, asked, keeps such a guess out of what is injected every turn, while
    a topic route stands."""
    candidates = [
        {"id": 1, "text": "nightly export failed again, disk full on the batch host"},
        {"id": 2, "text": "actually oskar, not kenji"},
        {"id": 3, "text": "The staging database is pg-stage-2."},
    ]
    tags = [("error", "high"), ("correction", "high"), ("event", "normal")]
    payload = {
        "candidates": [
            {**c, "tag": tag, "weight": weight, "speaker": "user"}
            for c, (tag, weight) in zip(candidates, tags, strict=True)
        ],
        "topics": [],
        "max_topics": 8,
    }
    answer = OfflineModel().answer("flush", payload)
    assert answer is not None
    assert [r["home"] for r in answer["routes"]] == ["skip", "skip", "topic"]
