"""Typed review reports (``reverie.reports``) on a real home: the dicts ``Reverie.review`` and
``Namespace.review`` return are the ``to_dict()`` of the typed reports the reviewer and its
stages pass around, in the shape they had before they were typed (the expected dicts below
were taken from the untyped code running the same passes); every report is frozen, and
JSON gives back what it was given."""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
import time
import uuid
from datetime import timedelta
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import pytest

import reverie
from reverie import Config, ManualClock, reports
from reverie.actors import context
from reverie.actors.curator import Curator
from reverie.actors.distiller import Distiller
from reverie.actors.linter import Linter
from reverie.actors.reviewer import NOTHING_NEW, Reviewer
from reverie.bus.messages import LintDue, PreCompact
from reverie.bus.replies import StageOutcome
from reverie.model.offline import OfflineModel
from reverie.model.seam import Answer, Deferred, Prompt, Usage
from reverie.reports import (
    BloatIssue,
    CuratorArchived,
    CuratorCandidate,
    CuratorDetails,
    DistillerDetails,
    DreamDetails,
    FlushOutcome,
    LinterDetails,
    NamespaceReport,
    OverlapIssue,
    ProfilerDetails,
    PromoterDetails,
    PromotionOutcome,
    RoundReport,
    StageReport,
    SynthesisOutcome,
    TopicResult,
)

ID = re.compile(r"\b([a-z]+)-[0-9a-f]{16}\b")
DAY91 = "2026-04-02T00:00:00.000000+00:00"
IDLE = "2026-01-01T00:00:00.000000+00:00"


def plain(value: Any) -> Any:
    """``value`` through JSON, its ids (random) replaced by ``<kind>-ID``."""
    return json.loads(ID.sub(r"\1-ID", json.dumps(value)))


def exactly(actual: dict[str, Any], expected: dict[str, Any]) -> None:
    """The same keys and values, in the same order (the report's text follows that order)."""
    assert json.dumps(plain(actual)) == json.dumps(expected)


def round_trips(report: dict[str, Any]) -> None:
    """JSON gives back the report it was given: every value is JSON's own (no tuple)."""
    assert json.loads(json.dumps(report)) == report


@pytest.fixture
def ids(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ids in the order things are written, so candidates tied on time come in that order."""
    count = itertools.count(1)
    fake = SimpleNamespace(uuid4=lambda: uuid.UUID(int=next(count) << 64))
    monkeypatch.setattr(context, "uuid", fake)


@pytest.fixture
def typed(monkeypatch: pytest.MonkeyPatch) -> list[NamespaceReport]:
    """The typed report of every pass the reviewer runs (the public API hands out dicts)."""
    seen: list[NamespaceReport] = []
    review = Reviewer.review

    async def spy(self: Reviewer, force: bool = False) -> NamespaceReport:
        report = await review(self, force)
        seen.append(report)
        return report

    monkeypatch.setattr(Reviewer, "review", spy)
    return seen


async def save(rv: reverie.Reverie, topic: str, *contents: str) -> None:
    async with rv.namespace("a").session("setup") as s:
        for content in contents:
            await s.call_tool("topic", {"action": "save", "topic": topic, "content": content})


async def memory(rv: reverie.Reverie, *contents: str) -> None:
    async with rv.namespace("a").session("setup") as s:
        for content in contents:
            await s.call_tool("memory", {"action": "add", "target": "memory", "content": content})


async def corrections(rv: reverie.Reverie) -> None:
    """Two topics at odds, four facts corrected once (promotion candidates once 3 days old),
    and a memory entry a topic contradicts."""
    await save(rv, "deploy", "The deploy timeout is 30s", "Actually, the deploy timeout is 45s")
    await save(rv, "ops", "The deploy timeout is 60s")
    for i, subject in enumerate(("api port", "queue depth", "pool size")):
        await save(rv, f"t{i}", f"The {subject} is {10 + i}", f"The {subject} is {20 + i}")


async def skills(rv: reverie.Reverie) -> None:
    body = "Release: tag the commit, build the wheel, upload to the index, announce."
    async with rv.namespace("a").session("setup") as s:
        for name, content in (
            ("release", body),
            ("release-2", body + " Then rest."),
            ("huge", "step. " * 100),
        ):
            await s.call_tool(
                "skill_manage", {"action": "create", "name": name, "content": content}
            )


def outcome(topic: str, content: str, verdict: str, **extra: Any) -> dict[str, Any]:
    head = {"fact_id": "fct-ID", "chain_id": "fct-ID", "topic": topic, "content": content}
    return {**head, "depth": extra.pop("depth", 2), "verdict": verdict, **extra}


def distilled(topic: str, chars: int, watermark: int, ts: str = DAY91) -> dict[str, Any]:
    return {
        "ts": ts,
        "topic": topic,
        "status": "distilled",
        "facts": 1,
        "chars": chars,
        "watermark": watermark,
        "by": "rules",
        "input_tokens": 0,
        "output_tokens": 0,
    }


async def test_a_round_is_the_dict_of_its_typed_reports(
    tmp_path: Path, clock: ManualClock, ids: None, typed: list[NamespaceReport]
) -> None:
    config = Config().with_section("curator", bloat_chars=200)
    config = config.with_section("distiller", max_topics=2)
    async with reverie.open(tmp_path / "h", clock=clock, config=config) as rv:
        empty = await rv.review(force=True)
        await corrections(rv)
        await memory(
            rv, "Remember the deploy timeout is 30s", "Staging uses feature flags for billing"
        )
        await skills(rv)
        await save(rv, "staging", "Staging does not use feature flags for billing")
        await rv.wait_idle()
        clock.advance(timedelta(days=91))
        done = await rv.review(force=True)
    assert empty == {"ran": False, "force": True, "namespaces": [], "reason": "nothing stored yet"}
    assert empty == RoundReport(False, True, (), "nothing stored yet").to_dict()
    report = typed_of(done["namespaces"][0], typed)
    assert json.dumps(done) == json.dumps(RoundReport(True, True, (report,)).to_dict())
    round_trips(done)
    [ns] = done["namespaces"]
    assert list(ns) == ["namespace", "ran", "force", "stages", "duration_ms", "text"]
    assert ns["duration_ms"] == report.duration_ms and isinstance(ns["duration_ms"], float)
    assert ns["text"] == (
        '<reverie-report namespace="a">\n'
        "linter: ran (conflicts=4, new=4, unclear=1, breaker=False)\n"
        "distiller: ran (distilled=2, retry_next_round=4)\n"
        "promoter: ran (candidates=4, promoted=2, deferred_budget=2)\n"
        "curator: ran (dry_run=True)\n"
        "profiler: disabled\n"
        "dreamer: ran (date=2026-04-01, slot=22:00, timezone=UTC, evening=True,"
        " next_due=2026-04-02T07:00:00.000000+00:00, dry_run=False, insights=2, actions=0,"
        " recalled=0)\n"
        "</reverie-report>"
    )
    linter, distiller, promoter, curator, _profiler, _dreamer = ns["stages"]
    exactly(
        linter,
        {
            "stage": "linter",
            "status": "ran",
            "conflicts": 4,
            "new": 4,
            "unclear": 1,
            "breaker": False,
            "deferred": None,
        },
    )
    over = [{"topic": t, "status": "over_budget"} for t in ("staging", "t0", "t1", "t2")]
    exactly(
        distiller,
        {
            "stage": "distiller",
            "distilled": 2,
            "retry_next_round": 4,
            "topics": [distilled("deploy", 25, 2), distilled("ops", 25, 3), *over],
            "status": "ran",
        },
    )
    budget = {"reason": "over 2 writes"}
    exactly(
        promoter,
        {
            "stage": "promoter",
            "candidates": 4,
            "promoted": 2,
            "deferred_budget": 2,
            "outcomes": [
                outcome(
                    "deploy",
                    "Actually, the deploy timeout is 45s",
                    "promoted",
                    rewrite="The deploy timeout is 45s",
                    entry_id="ent-ID",
                ),
                outcome(
                    "t0",
                    "The api port is 20",
                    "promoted",
                    rewrite="t0: The api port is 20",
                    entry_id="ent-ID",
                ),
                outcome(
                    "t1",
                    "The queue depth is 21",
                    "deferred_budget",
                    rewrite="t1: The queue depth is 21",
                    **budget,
                ),
                outcome(
                    "t2",
                    "The pool size is 22",
                    "deferred_budget",
                    rewrite="t2: The pool size is 22",
                    **budget,
                ),
            ],
            "status": "ran",
        },
    )
    exactly(
        curator,
        {
            "stage": "curator",
            "candidates": [
                {"name": name, "idle_since": IDLE} for name in ("huge", "release", "release-2")
            ],
            "issues": [
                {"kind": "bloat", "name": "huge", "chars": 599, "limit": 200},
                {"kind": "overlap", "names": ["release", "release-2"], "similarity": 0.889},
            ],
            "dry_run": True,
            "status": "ran",
        },
    )
    # the typed side of the same pass, read by attribute
    assert report.stage("linter") == StageReport(
        "linter", "ran", LinterDetails(4, 4, 1, False, None)
    )
    distill = report.stage("distiller").details
    assert isinstance(distill, DistillerDetails)
    assert (distill.distilled, distill.retry_next_round) == (2, 4)
    assert distill.topics[0] == TopicResult(
        "deploy", "distilled", DAY91, None, None, 1, 25, 2, "rules", 0, 0
    )
    assert [t.status for t in distill.topics[1:]] == ["distilled"] + ["over_budget"] * 4
    promote = report.stage("promoter").details
    assert isinstance(promote, PromoterDetails)
    assert promote.counts == (("promoted", 2), ("deferred_budget", 2))
    assert [o.topic for o in promote.outcomes if o.entry_id is not None] == ["deploy", "t0"]
    curate = report.stage("curator").details
    assert curate == CuratorDetails(
        tuple(CuratorCandidate(n, IDLE) for n in ("huge", "release", "release-2")),
        (BloatIssue("huge", 599, 200), OverlapIssue(("release", "release-2"), 0.889)),
    )


class Picky:
    """Defers every lint question, rejects summaries, then defers them; refuses, skips,
    forgets and promotes one promotion candidate each (by its place in the question)."""

    name = "picky"

    def __init__(self) -> None:
        self.offline = OfflineModel()
        self.distills = 0

    async def judge(self, prompt: Prompt) -> Answer | Deferred:
        payload = prompt.payload
        if prompt.stage == "lint":
            return Deferred("lint model away", Usage(5, 0, 1))
        if prompt.stage == "distill":
            self.distills += 1
            if self.distills > 1:
                return Deferred("distill model away", Usage(8, 0, 1))
            first = payload["topic_facts"][0]["topic"]
            summary = "The value is 999999"
            data = {"reasoning": "r", "summaries": [{"topic": first, "summary": summary}]}
            return Answer(prompt.schema.validate(data), Usage(10, 4, 1), self.name)
        if prompt.stage == "promote":
            data = self._verdicts(payload)
            return Answer(prompt.schema.validate(data), Usage(10, 4, 1), self.name)
        return await self.offline.judge(prompt)

    @staticmethod
    def _verdicts(payload: dict[str, Any]) -> dict[str, Any]:
        verdicts = []
        for candidate in payload["candidates"]:
            i = candidate["id"]
            if i == 0:  # a rewrite the rules refuse (it drops the fact's value)
                rewrite = "a rule with no numbers at all"
                verdicts.append({"id": i, "verdict": "promote", "rewrite": rewrite, "reason": "r"})
            elif i == 1:
                verdicts.append(
                    {"id": i, "verdict": "skip", "rewrite": "", "reason": "topic-local"}
                )
            elif i == 3:
                rewrite = candidate["content"]
                verdicts.append({"id": i, "verdict": "promote", "rewrite": rewrite, "reason": "r"})
        return {"reasoning": "r", "verdicts": verdicts}


def typed_of(public: dict[str, Any], typed: list[NamespaceReport]) -> NamespaceReport:
    """The typed report whose ``to_dict()`` is the namespace report the public API gave."""
    [found] = [report for report in typed if report.to_dict() == public]
    assert json.dumps(found.to_dict()) == json.dumps(public)
    return found


def stages(report: dict[str, Any]) -> list[dict[str, Any]]:
    [ns] = report["namespaces"]
    round_trips(report)
    return list(ns["stages"])


async def test_deferred_rejected_skipped_and_not_due_keep_their_shape(
    tmp_path: Path, clock: ManualClock, ids: None, typed: list[NamespaceReport]
) -> None:
    config = Config().with_section("distiller", rules_first=False)
    async with reverie.open(tmp_path / "h", clock=clock, config=config, model=Picky()) as rv:
        await corrections(rv)
        await memory(rv, "Staging uses feature flags for billing")
        await save(rv, "staging", "Staging does not use feature flags for billing")
        await rv.wait_idle()
        clock.advance(timedelta(days=4))
        first = await rv.review(force=True)
        await save(rv, "deploy", "The deploy timeout is 50s")
        clock.advance(timedelta(hours=7))
        later = await rv.review()
        clock.advance(timedelta(days=8))
        third = await rv.review(force=True)
    linter, distiller, promoter, _, _, _ = stages(first)
    passes = [typed_of(r["namespaces"][0], typed) for r in (first, later, third)]
    lint = {"stage": "linter", "status": "deferred", "conflicts": 1, "new": 1, "unclear": 1}
    exactly(linter, {**lint, "breaker": False, "deferred": "lint model away"})
    assert passes[0].stage("linter").details == LinterDetails(1, 1, 1, False, "lint model away")
    empty = {"status": "rejected", "reason": "the summary is empty"}
    tokens = {"input_tokens": 2, "output_tokens": 0}
    exactly(
        distiller,
        {
            "stage": "distiller",
            "distilled": 0,
            "retry_next_round": 6,
            "topics": [
                {
                    "topic": "deploy",
                    "status": "rejected",
                    "reason": "the summary carries values no live fact carries: ['999999']",
                    **tokens,
                },
                *({"topic": t, **empty, **tokens} for t in ("ops", "staging", "t0", "t1")),
                {"topic": "t2", "status": "over_budget"},
            ],
            "status": "ran",
        },
    )
    refused = "rewrite refused: the rewrite drops the fact's values ['45s']"
    exactly(
        promoter,
        {
            "stage": "promoter",
            "candidates": 4,
            "skip": 2,
            "deferred": 1,
            "promoted": 1,
            "outcomes": [
                # the untyped code put this one's reason before its rewrite: same keys, values
                outcome(
                    "deploy",
                    "Actually, the deploy timeout is 45s",
                    "skip",
                    rewrite="a rule with no numbers at all",
                    reason=refused,
                ),
                outcome("t0", "The api port is 20", "skip", reason="topic-local"),
                outcome("t1", "The queue depth is 21", "deferred", reason="no verdict given"),
                outcome(
                    "t2",
                    "The pool size is 22",
                    "promoted",
                    rewrite="The pool size is 22",
                    entry_id="ent-ID",
                ),
            ],
            "status": "ran",
        },
    )
    promote = passes[0].stage("promoter").details
    assert isinstance(promote, PromoterDetails)
    assert [(o.verdict, o.reason) for o in promote.outcomes][:3] == [
        ("skip", refused),
        ("skip", "topic-local"),
        ("deferred", "no verdict given"),
    ]
    due = {"distiller": "2026-01-06", "promoter": "2026-01-12", "curator": "2026-01-06"}
    for stage, day in due.items():
        when = f"{day}T00:00:00.000000+00:00"
        [found] = [s for s in stages(later) if s["stage"] == stage]
        exactly(found, {"stage": stage, "status": "not_due", "next_due": when})
        assert passes[1].stage(stage) == StageReport(stage, "not_due", next_due=when)
    line = "distiller: not_due (next_due=2026-01-06T00:00:00.000000+00:00)"
    assert passes[1].text.splitlines()[2] == line
    away = {"status": "deferred", "reason": "distill model away"}
    topics = stages(third)[1]["topics"]
    assert topics[:5] == [
        {"topic": t, **away, "input_tokens": 1, "output_tokens": 0}
        for t in ("deploy", "ops", "staging", "t0", "t1")
    ]
    deferred = partial(TopicResult, status="deferred", reason=away["reason"])
    assert passes[2].stage("distiller").details == DistillerDetails(
        0,
        6,
        tuple(
            deferred(t, input_tokens=1, output_tokens=0)
            for t in ("deploy", "ops", "staging", "t0", "t1")
        )
        + (TopicResult("t2", "over_budget"),),
    )


async def test_failed_and_over_budget_stages_keep_their_shape(
    rv: reverie.Reverie,
    clock: ManualClock,
    monkeypatch: pytest.MonkeyPatch,
    typed: list[NamespaceReport],
) -> None:
    """A stage that raises, one over its budget, and one whose deferred write fails in the
    closing transaction (reported failed, its details kept)."""

    async def boom(self: Distiller) -> DistillerDetails:
        raise RuntimeError("distiller exploded")

    async def slow(self: Linter) -> LinterDetails:
        await anyio.sleep(5)  # far over the 0.05 s budget: cut
        return LinterDetails(0, 0, 0, False, None)

    curate = Curator.run

    async def broken(self: Curator) -> CuratorDetails:
        def finish(conn: Any) -> None:
            self.done(conn, {})
            raise RuntimeError("curator bookkeeping broke")

        await self.commit(finish, "curator", [{"ts": "x"}], defer=True)
        return await curate(self)

    monkeypatch.setattr(Distiller, "run", boom)
    monkeypatch.setattr(Linter, "run", slow)
    monkeypatch.setattr(Linter, "budget_s", property(lambda self: 0.05))
    monkeypatch.setattr(Curator, "run", broken)
    await save(rv, "t9", "The port is 1")
    report = await rv.review(force=True)
    linter, distiller, promoter, curator, _, _ = stages(report)
    exactly(linter, {"stage": "linter", "status": "over_budget"})
    error = "RuntimeError('distiller exploded')"
    exactly(distiller, {"stage": "distiller", "status": "failed", "error": error})
    exactly(promoter, {"stage": "promoter", "candidates": 0, "outcomes": [], "status": "ran"})
    broke = "RuntimeError('curator bookkeeping broke')"
    exactly(
        curator,
        {
            "stage": "curator",
            "candidates": [],
            "issues": [],
            "dry_run": True,
            "status": "failed",
            "error": broke,
        },
    )
    assert typed_of(report["namespaces"][0], typed).stages[:4] == (
        StageReport("linter", "over_budget"),
        StageReport("distiller", "failed", error=error),
        StageReport("promoter", "ran", PromoterDetails(0, (), ())),
        StageReport("curator", "failed", CuratorDetails((), ()), error=broke),
    )
    assert report["namespaces"][0]["text"] == (
        '<reverie-report namespace="a">\n'
        "linter: over_budget\n"
        f"distiller: failed (error={error})\n"
        "promoter: ran (candidates=0)\n"
        f"curator: failed (dry_run=True, error={broke})\n"
        "profiler: disabled\n"
        "dreamer: ran (date=2025-12-31, slot=22:00, timezone=UTC, evening=True,"
        " next_due=2026-01-01T07:00:00.000000+00:00, dry_run=False, insights=1, actions=0,"
        " recalled=0)\n"
        "</reverie-report>"
    )


async def test_the_breaker_keeps_its_shape(
    tmp_path: Path, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    scan = Linter._scan

    def slow(self: Linter, conn: Any, deadline: float) -> Any:
        time.sleep(0.3)  # past the 0.05 s breaker
        return scan(self, conn, deadline)

    monkeypatch.setattr(Linter, "_scan", slow)
    config = Config().with_section("linter", breaker_s=0.05)
    async with reverie.open(tmp_path / "h", clock=clock, config=config) as rv:
        await save(rv, "deploy", "The deploy timeout is 30s")
        report = await rv.review(force=True)
    linter = stages(report)[0]
    exactly(
        linter,
        {
            "stage": "linter",
            "status": "breaker",
            "conflicts": 0,
            "new": 0,
            "unclear": 0,
            "breaker": True,
            "deferred": None,
        },
    )
    assert report["namespaces"][0]["text"].splitlines()[1] == (
        "linter: breaker (conflicts=0, new=0, unclear=0, breaker=True)"
    )


async def test_passes_that_did_not_run_and_disabled_stages(
    tmp_path: Path, clock: ManualClock, typed: list[NamespaceReport]
) -> None:
    async with reverie.open(tmp_path / "h", clock=clock) as rv:
        await save(rv, "deploy", "The deploy timeout is 30s")
        await rv.review(force=True)
        quiet = await rv.review(force=True)
        await save(rv, "deploy", "The deploy region is eu-west-1")
        cooling = await rv.review()
        clock.advance(timedelta(days=8))  # the linter is due again: its turn, asked directly
        outcome = await rv.services.bus.ask(LintDue("a", in_pass=False))
    assert quiet == {
        "ran": False,
        "force": True,
        "namespaces": [{"namespace": "a", "ran": False, "force": True, "reason": NOTHING_NEW}],
    }
    until = "cooling down until 2026-01-01T06:00:00.000000+00:00"
    exactly(
        cooling["namespaces"][0], {"namespace": "a", "ran": False, "force": False, "reason": until}
    )
    assert typed_of(cooling["namespaces"][0], typed) == NamespaceReport(
        "a", ran=False, force=False, reason=until
    )
    assert isinstance(outcome, StageOutcome) and outcome.status == "ran"
    assert outcome.report == StageReport("linter", "ran", LinterDetails(0, 0, 0, False, None))
    assert outcome.retry_next_round is False

    off = (
        Config()
        .with_section("linter", enabled=False)
        .with_section("distiller", enabled=False)
        .with_section("promoter", promotion_enabled=False)
        .with_section("curator", enabled=False)
        .with_section("profiler", enabled=False)
        .with_section("dream", enabled=False)
    )
    async with reverie.open(tmp_path / "h2", clock=clock, config=off) as rv:
        await save(rv, "deploy", "The deploy timeout is 30s")
        report = await rv.namespace("a").review(force=True)
    names = ("linter", "distiller", "promoter", "curator", "profiler", "dreamer")
    assert report["stages"] == [{"stage": name, "status": "disabled"} for name in names]
    assert report["text"].splitlines()[1:7] == [f"{name}: disabled" for name in names]
    disabled = tuple(StageReport(name, "disabled") for name in names)
    assert typed_of(report, typed).stages == disabled

    async with reverie.open(
        tmp_path / "h3", clock=clock, config=Config().with_section("reviewer", enabled=False)
    ) as rv:
        await save(rv, "deploy", "The deploy timeout is 30s")
        report = await rv.namespace("a").review(force=True)
    assert list(report) == ["namespace", "ran", "force", "reason"]
    assert report["ran"] is False and "disabled" in report["reason"]


SAMPLES: list[Any] = [
    LinterDetails(1, 1, 0, False, None),
    TopicResult("deploy", "over_budget"),
    DistillerDetails(0, 1, (TopicResult("deploy", "over_budget"),)),
    PromotionOutcome("fct-1", "fct-0", "deploy", "The port is 1", 2, "skip", reason="local"),
    PromoterDetails(1, (("skip", 1),), ()),
    DreamDetails({"date": "2026-01-01", "learnt": {"insights": []}}, ("dreams/2026-01-01.md",)),
    CuratorCandidate("helper", IDLE),
    CuratorArchived("stale", "skills/.archive/stale__20260101T000000Z", IDLE),
    BloatIssue("huge", 599, 200),
    OverlapIssue(("a", "b"), 0.9),
    CuratorDetails((CuratorCandidate("helper", IDLE),), (BloatIssue("huge", 599, 200),)),
    SynthesisOutcome("user", "written", "ent-1", 120, 3),
    ProfilerDetails((SynthesisOutcome("soul", "no_room", reason="40 chars free"),)),
    StageReport("linter", "not_due", next_due=IDLE),
    NamespaceReport("a", ran=True, force=False, stages=(StageReport("linter", "disabled"),)),
    RoundReport(False, False, (), "nothing stored yet"),
    FlushOutcome("idle", 3, 1, 1, 0, 0, 1, 0, None, 0, 7, (("a paraphrase", 1),), 0),
]


async def test_a_flush_answers_a_frozen_outcome_its_ledger_row_agrees_with(
    rv: reverie.Reverie,
) -> None:
    async with rv.namespace("a").session("s") as s:
        await s.turn(user="The staging database is db-stg-4.internal.")
        await s.turn(user="Our deploy window is Tuesdays at 14:00 UTC.")
    outcome = await rv.services.bus.ask(PreCompact("a", "s"))
    assert isinstance(outcome, FlushOutcome) and outcome.trigger == "pre_compact"
    assert outcome.candidates == 2 and outcome.topic_saves + outcome.memory_adds >= 1
    row = [r for r in await rv.namespace("a").ledger() if r.action == "flush"][-1]
    assert row.detail == {**outcome.to_dict(), "watermark": row.detail["watermark"]}
    with pytest.raises(dataclasses.FrozenInstanceError):
        outcome.candidates = 0  # type: ignore[misc]


def test_every_report_type_is_sampled() -> None:
    types = {
        t for t in vars(reports).values() if isinstance(t, type) and dataclasses.is_dataclass(t)
    }
    assert types == {type(sample) for sample in SAMPLES}


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: type(s).__name__)
def test_reports_are_frozen_slotted_and_json_round_trips(sample: Any) -> None:
    first = dataclasses.fields(sample)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(sample, first, None)
    assert not hasattr(sample, "__dict__")  # slots: no attribute can be added either
    as_dict = sample.to_dict()
    assert json.loads(json.dumps(as_dict)) == as_dict
    assert sample.to_dict() == as_dict  # to_dict hands out a new dict each time
    as_dict.clear()
    assert sample.to_dict() != {}
