"""L8 and its stages on a real store, with time moved by a ManualClock: the cooldown, each
stage's cadence, fail-silent stages, kill switches, and what each stage writes."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import reverie
from reverie import Config, ManualClock
from reverie.actors.curator import Curator
from reverie.actors.distiller import Distiller
from reverie.actors.linter import Linter
from reverie.actors.reviewer import NOTHING_NEW
from reverie.config import DEFAULT_MODEL_CONCURRENCY, DEFAULT_REVIEW_CONCURRENCY
from reverie.reports import CuratorDetails, DistillerDetails, LinterDetails
from tests.chat_server import HOLD, ChatServer
from tests.conftest import both_backends, review_stage
from tests.local_http import base_url, serving

pytestmark = both_backends


def statuses(report: dict[str, Any], namespace: str = "a") -> dict[str, str]:
    [ns] = [r for r in report["namespaces"] if r["namespace"] == namespace]
    return {s["stage"]: s["status"] for s in ns.get("stages", [])}


def jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture
def config() -> Config:
    """Every stage of the pass on, the weekly profile synthesis (off by default) too."""
    return Config().with_section("profiler", enabled=True)


async def save(rv: reverie.Reverie, topic: str, *contents: str, ns: str = "a") -> None:
    async with rv.namespace(ns).session("setup") as s:
        for content in contents:
            result = await s.call_tool(
                "topic", {"action": "save", "topic": topic, "content": content}
            )
            assert result["decision"] in {"ADD", "SUPERSEDE"}, result


async def test_cooldown_due_checks_and_order(rv: reverie.Reverie, clock: ManualClock) -> None:
    await save(rv, "deploy", "The deploy timeout is 30s")
    first = await rv.review()
    assert first["ran"] and list(statuses(first)) == [
        "linter",
        "distiller",
        "promoter",
        "curator",
        "profiler",
        "dreamer",
    ]
    assert set(statuses(first).values()) == {"ran"}
    await save(rv, "deploy", "The deploy region is eu-west-1")  # something new to review
    again = await rv.review()
    assert not again["ran"] and "cooling down" in again["namespaces"][0]["reason"]
    clock.advance(timedelta(hours=6))
    later = await rv.review()
    assert statuses(later) == {  # past the cooldown; no stage due yet: near-zero work
        "linter": "not_due",
        "distiller": "not_due",
        "promoter": "not_due",
        "curator": "not_due",
        "profiler": "not_due",
        "dreamer": "not_due",  # 06:00: the next dream is at 07:00
    }
    clock.advance(timedelta(hours=18))
    assert statuses(await rv.review()) == {
        "linter": "not_due",
        "distiller": "ran",
        "promoter": "not_due",
        "curator": "ran",
        "profiler": "not_due",
        "dreamer": "ran",
    }
    clock.advance(timedelta(days=6))
    assert set(statuses(await rv.review()).values()) == {"ran"}
    quiet = await rv.review(force=True)  # nothing new since that pass: skipped
    assert not quiet["ran"] and quiet["namespaces"][0]["reason"] == NOTHING_NEW
    await save(rv, "deploy", "The deploy owner is Dana")
    forced = await rv.review(force=True)  # force skips the cooldown, not the due-checks
    assert forced["ran"] and set(statuses(forced).values()) == {"not_due"}


async def test_idle_runs_the_review_after_the_flush(rv: reverie.Reverie) -> None:
    ns = rv.namespace("a")
    async with ns.session("s") as s:
        await s.turn(user="The deploy timeout is 30s.")
        await s.idle()
        await rv.wait_idle()
    actors = [r.actor for r in await ns.ledger() if r.action in {"flush", "review_pass"}]
    assert actors == ["flusher", "reviewer"]
    summary = (rv.home / "a" / "topics" / "deploy" / "summary.md").read_text()
    assert summary == "The deploy timeout is 30s\n"


async def test_a_stage_that_raises_does_not_stop_the_others(
    rv: reverie.Reverie,
    monkeypatch: pytest.MonkeyPatch,
    spans: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    async def boom(self: Distiller) -> DistillerDetails:
        raise RuntimeError("distiller exploded")

    monkeypatch.setattr(Distiller, "run", boom)
    await save(rv, "deploy", "The deploy timeout is 30s")
    report = await rv.review()
    assert statuses(report) == {
        "linter": "ran",
        "distiller": "failed",
        "promoter": "ran",
        "curator": "ran",
        "profiler": "ran",
        "dreamer": "ran",
    }
    distiller = review_stage(report, "distiller")
    assert "distiller exploded" in distiller["error"]
    monkeypatch.undo()
    report = await rv.review(force=True)  # the failed stage stamped nothing: due again
    assert statuses(report)["distiller"] == "ran"


async def test_a_stage_over_its_budget_is_cut_and_retried(
    tmp_path: Path, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    import anyio

    async def slow(self: Linter) -> LinterDetails:
        await anyio.sleep(5)  # the overrun is the point: a stage far over its 0.05 s budget
        return LinterDetails(0, 0, 0, False, None)

    monkeypatch.setattr(Linter, "budget_s", property(lambda self: 0.05))
    monkeypatch.setattr(Linter, "run", slow)
    async with reverie.open(tmp_path / "h", clock=clock) as rv:
        await save(rv, "deploy", "The deploy timeout is 30s")
        assert statuses(await rv.review())["linter"] == "over_budget"
        monkeypatch.undo()
        assert statuses(await rv.review(force=True))["linter"] == "ran"


@pytest.mark.parametrize(
    ("section", "key", "stage"),
    [
        ("linter", "enabled", "linter"),
        ("distiller", "enabled", "distiller"),
        ("promoter", "promotion_enabled", "promoter"),
        ("curator", "enabled", "curator"),
        ("profiler", "enabled", "profiler"),
    ],
)
async def test_kill_switches(
    tmp_path: Path, clock: ManualClock, section: str, key: str, stage: str
) -> None:
    config = Config().with_section("profiler", enabled=True).with_section(section, **{key: False})
    async with reverie.open(tmp_path / "h", clock=clock, config=config) as rv:
        await save(rv, "deploy", "The deploy timeout is 30s")
        got = statuses(await rv.review())
    assert got.pop(stage) == "disabled"
    assert set(got.values()) == {"ran"}


async def test_reviewer_kill_switch(tmp_path: Path, clock: ManualClock) -> None:
    config = Config().with_section("reviewer", enabled=False)
    async with reverie.open(tmp_path / "h", clock=clock, config=config) as rv:
        await save(rv, "deploy", "The deploy timeout is 30s")
        report = await rv.review(force=True)
    assert not report["ran"] and "disabled" in report["namespaces"][0]["reason"]


# -- L4 distill -------------------------------------------------------------------------


async def test_distiller_watermarks_budget_and_retry(
    tmp_path: Path, clock: ManualClock, spans: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, exporter = spans
    config = Config().with_section("distiller", max_topics=2, min_new_facts=1, ask_batch=1)
    async with reverie.open(
        tmp_path / "h", clock=clock, config=config, tracer_provider=provider
    ) as rv:
        for name in ("alpha", "beta", "gamma"):
            await save(rv, name, f"The {name} port is {len(name)}000")
        first = await rv.review()
        stage = review_stage(first, "distiller")
        assert stage["distilled"] == 2 and stage["retry_next_round"] == 1
        [left] = [t["topic"] for t in stage["topics"] if t["status"] == "over_budget"]
        clock.advance(timedelta(days=1))
        second = await rv.review()
        stage = review_stage(second, "distiller")
        assert [t["topic"] for t in stage["topics"]] == [left]  # only the one left over
        clock.advance(timedelta(days=1))
        await save(rv, "beta", "Actually, the beta port is 5001")
        third = await rv.review()
        stage = review_stage(third, "distiller")
        assert [t["topic"] for t in stage["topics"]] == ["beta"]  # per-topic watermark
        async with rv.namespace("a").session("s") as s:
            assert "The beta port is 5001" in s.snapshot.text
            assert "4000" not in s.snapshot.text  # the superseded value is not summarised
    log = jsonl(tmp_path / "h" / "a" / "logs" / "wiki" / "distill.jsonl")
    assert [r["status"] for r in log] == [
        "distilled",
        "distilled",
        "over_budget",
        "distilled",
        "distilled",
    ]
    assert log[2]["topic"] == log[3]["topic"] and log[4]["topic"] == "beta"
    assert (tmp_path / "h" / "a" / "topics" / "beta" / "summary.md").read_text() == (
        "The beta port is 5001\n"
    )
    events = [
        e for sp in exporter.get_finished_spans() for e in sp.events if e.name == "memory.distill"
    ]
    assert len(events) == 4


async def test_summary_never_exceeds_its_budget(tmp_path: Path, clock: ManualClock) -> None:
    config = Config().with_section("distiller", ask_batch=1)
    async with reverie.open(tmp_path / "home", config=config, clock=clock) as rv:
        hosts = [f"Host h{i} serves shard {i} of the cluster index" for i in range(60)]
        await save(rv, "hosts", *hosts)
        await rv.review()
        summary = (rv.home / "a" / "topics" / "hosts" / "summary.md").read_text().rstrip("\n")
    assert 0 < len(summary) <= 1000


# -- L5 lint ----------------------------------------------------------------------------


async def test_linter_records_rule_conflicts_once_and_changes_nothing(
    rv: reverie.Reverie, clock: ManualClock
) -> None:
    await save(rv, "deploy", "The deploy timeout is 30s", "Actually, the deploy timeout is 45s")
    await save(rv, "ops", "The deploy timeout is 60s")
    async with rv.namespace("a").session("s") as s:
        await s.call_tool(
            "memory",
            {"action": "add", "target": "memory", "content": "Remember the deploy timeout is 30s"},
        )
        await s.call_tool(
            "memory",
            {
                "action": "add",
                "target": "memory",
                "content": "Staging uses feature flags for billing",
            },
        )
    await save(rv, "staging", "Staging does not use feature flags for billing")
    before = [f.content for f in await rv.namespace("a").facts("deploy")]
    report = await rv.review()
    lint = review_stage(report, "linter")
    log = jsonl(rv.home / "a" / "logs" / "wiki" / "conflicts.jsonl")
    kinds = sorted(r["kind"] for r in log)
    assert "cross_topic" in kinds and "memory_vs_topic" in kinds
    assert any(r["by"] == "model" and "feature flags" in r["a"]["text"] for r in log)
    assert lint["new"] == len(log)
    assert [f.content for f in await rv.namespace("a").facts("deploy")] == before
    clock.advance(timedelta(days=7))
    await rv.review()
    assert len(jsonl(rv.home / "a" / "logs" / "wiki" / "conflicts.jsonl")) == len(log)


async def test_linter_finds_an_entry_citing_a_superseded_value(rv: reverie.Reverie) -> None:
    async with rv.namespace("a").session("s") as s:
        await s.call_tool(
            "memory",
            {
                "action": "add",
                "target": "memory",
                "content": "Backups go to bucket acme-bk-1 nightly",
            },
        )
    await save(rv, "backup", "Backups bucket is acme-bk-1", "Backups bucket is acme-bk-2")
    await rv.review()
    log = jsonl(rv.home / "a" / "logs" / "wiki" / "conflicts.jsonl")
    assert any(r["kind"] == "stale_citation" and "acme-bk-2" in r["b"]["text"] for r in log), log


async def test_linter_breaker_ends_a_long_round_and_retries_it(
    tmp_path: Path, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    config = Config().with_section("linter", breaker_s=0.05)
    real = Linter._scan

    def slow(self: Linter, conn: Any, deadline: float) -> Any:
        time.sleep(0.3)  # the point: a scan slow as a huge namespace's passes the deadline
        return real(self, conn, deadline)

    monkeypatch.setattr(Linter, "_scan", slow)
    async with reverie.open(tmp_path / "h", clock=clock, config=config) as rv:
        await save(rv, "deploy", "The deploy timeout is 30s")
        lint = review_stage(await rv.review(), "linter")
        assert lint["status"] == "breaker" and lint["breaker"] is True
        monkeypatch.undo()
        assert statuses(await rv.review(force=True))["linter"] == "ran"


# -- L7 curate --------------------------------------------------------------------------


async def test_curator_safety_model_dry_run_apply_and_restore(
    rv: reverie.Reverie, clock: ManualClock
) -> None:
    ns = rv.namespace("a")
    async with ns.session("s") as s:
        for name in ("old-helper", "pinned-helper", "used-helper", "no-dir-helper"):
            created = await s.call_tool(
                "skill_manage",
                {"action": "create", "name": name, "content": f"# {name}\nRun the {name} steps."},
            )
            assert created["decision"] == "CREATED"
    await rv.wait_idle()
    await _preinstalled(rv, "official")
    (rv.home / "a" / "skills" / "no-dir-helper" / "SKILL.md").unlink()
    (rv.home / "a" / "skills" / "no-dir-helper").rmdir()
    assert (await ns.pin_skill("pinned-helper"))["decision"] == "PATCHED"
    clock.advance(timedelta(days=60))
    async with ns.session("s2") as s:
        assert (await s.used_skill("used-helper"))["decision"] == "PATCHED"
        assert (await s.used_skill("nope"))["decision"] == "ERROR"
    clock.advance(timedelta(days=31))
    report = await rv.review()
    cur = review_stage(report, "curator")
    assert [c["name"] for c in cur["candidates"]] == ["old-helper"]
    assert (rv.home / "a" / "skills" / "old-helper" / "SKILL.md").exists()  # dry run
    log = jsonl(rv.home / "a" / "logs" / "wiki" / "curator.jsonl")
    assert [r["name"] for r in log if r["action"] == "candidate"] == ["old-helper"]

    applied = await ns.curate(apply=True)
    [item] = applied["archived"]
    assert item["name"] == "old-helper" and item["archive_dir"].startswith(
        "skills/.archive/old-helper__"
    )
    assert (rv.home / "a" / item["archive_dir"] / "SKILL.md").exists()
    assert not (rv.home / "a" / "skills" / "old-helper").exists()
    assert "old-helper" not in [k.name for k in await ns.skills()]
    async with ns.session("s3") as s:
        assert "old-helper" not in s.snapshot.skills

    restored = await ns.restore_skill("old-helper")
    assert restored["decision"] == "RESTORED"
    assert (rv.home / "a" / "skills" / "old-helper" / "SKILL.md").exists()
    assert not (rv.home / "a" / item["archive_dir"]).exists()
    assert "old-helper" in [k.name for k in await ns.skills()]
    assert (await ns.restore_skill("old-helper"))["decision"] == "ERROR"
    actions = [(r.actor, r.action) for r in await ns.ledger("skill:old-helper")]
    assert ("curator", "archive") in actions and ("curator", "restore") in actions


async def _preinstalled(rv: reverie.Reverie, name: str) -> None:
    """An official skill, registered by the host's installer (not by skill_manage)."""
    from reverie.stores import skills
    from reverie.stores.records import Skill

    now = rv.services.now()
    skill = Skill("a", name, "# official", "preinstalled", False, now, now, now, None)
    await rv.services.db.write(lambda conn: skills.insert(conn, skill))
    rv.services.projector.write_skill(skill)


async def test_curator_scan_reports_overlap_and_bloat(tmp_path: Path, clock: ManualClock) -> None:
    config = Config().with_section("curator", bloat_chars=200)
    async with reverie.open(tmp_path / "h", clock=clock, config=config) as rv:
        async with rv.namespace("a").session("s") as s:
            body = "Release: tag the commit, build the wheel, upload to the index, announce."
            await s.call_tool(
                "skill_manage", {"action": "create", "name": "release", "content": body}
            )
            await s.call_tool(
                "skill_manage",
                {"action": "create", "name": "release-2", "content": body + " Then rest."},
            )
            await s.call_tool(
                "skill_manage", {"action": "create", "name": "huge", "content": "step. " * 100}
            )
        report = await rv.review()
    cur = review_stage(report, "curator")
    kinds = {(i["kind"], tuple(i.get("names", [i.get("name")]))) for i in cur["issues"]}
    assert ("overlap", ("release", "release-2")) in kinds
    assert ("bloat", ("huge",)) in kinds
    assert cur["candidates"] == []


async def test_an_interrupted_archive_move_is_finished_by_the_next_apply(
    rv: reverie.Reverie, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The row is archived first and the directory moved after the commit; a crash in
    between leaves the directory in place, and the next apply moves it."""
    from reverie.actors import curator as curator_module

    ns = rv.namespace("a")
    async with ns.session("s") as s:
        await s.call_tool(
            "skill_manage", {"action": "create", "name": "helper", "content": "# helper\nDo it."}
        )
    clock.advance(timedelta(days=91))
    monkeypatch.setattr(curator_module, "move_archived", lambda *args: None)
    [item] = (await ns.curate(apply=True))["archived"]
    monkeypatch.undo()
    assert (rv.home / "a" / "skills" / "helper").is_dir()
    assert (await ns.curate(apply=True))["archived"] == []
    assert not (rv.home / "a" / "skills" / "helper").exists()
    assert (rv.home / "a" / item["archive_dir"] / "SKILL.md").exists()


class LintDefers:
    """Defers the lint question once, then answers like the offline rules."""

    name = "lint-defers"

    def __init__(self) -> None:
        from reverie.model.offline import OfflineModel

        self.offline = OfflineModel()
        self.lint_calls = 0

    async def judge(self, prompt: Any) -> Any:
        from reverie.model.seam import Deferred

        if prompt.stage == "lint":
            self.lint_calls += 1
            if self.lint_calls == 1:
                return Deferred("HTTP 500")
        return await self.offline.judge(prompt)


async def test_a_deferred_lint_answer_retries_the_round(tmp_path: Path, clock: ManualClock) -> None:
    model = LintDefers()
    async with reverie.open(tmp_path / "h", clock=clock, model=model) as rv:
        async with rv.namespace("a").session("s") as s:
            await s.call_tool(
                "memory",
                {
                    "action": "add",
                    "target": "memory",
                    "content": "Staging uses feature flags for billing",
                },
            )
        await save(rv, "staging", "Staging does not use feature flags for billing")
        first = await rv.review()
        lint = review_stage(first, "linter")
        assert lint["status"] == "deferred" and lint["deferred"] == "HTTP 500"
        assert not (tmp_path / "h" / "a" / "logs" / "wiki" / "conflicts.jsonl").exists()
        clock.advance(timedelta(hours=6))  # not stamped: due again at the next pass
        second = await rv.review()
        lint = review_stage(second, "linter")
        assert lint["status"] == "ran" and lint["new"] == 1
    assert model.lint_calls == 2


async def test_the_report_text_is_marked_and_never_extracted(rv: reverie.Reverie) -> None:
    await save(rv, "deploy", "The deploy timeout is 30s")
    report = (await rv.review())["namespaces"][0]
    assert report["text"].startswith('<reverie-report namespace="a">')
    async with rv.namespace("a").session("s") as s:
        await s.turn(user=report["text"] + "\nThe build host is ci-7.internal.")
        await s.pre_compact()
    facts = [f.content for f in await rv.namespace("a").facts("build")]
    assert facts == ["The build host is ci-7.internal."]
    assert not [f for f in await rv.namespace("a").facts("deploy") if "linter" in f.content]


async def test_a_summarised_topic_waits_for_enough_new_facts(
    tmp_path: Path, clock: ManualClock
) -> None:
    """Invariant: a summarised topic is distilled again only after ``min_new_facts`` new
    facts (its snapshot line is rendered from live facts meanwhile)."""
    config = Config().with_section("distiller", min_new_facts=3, ask_batch=1)
    async with reverie.open(tmp_path / "h", clock=clock, config=config) as rv:
        await save(rv, "alpha", "The alpha port is 1000")
        assert review_stage(await rv.review(), "distiller")["distilled"] == 1
        for day, port in enumerate((1001, 1002, 1003), start=1):
            clock.advance(timedelta(days=1))
            await save(rv, "alpha", f"The alpha host {day} listens on {port}")
            distilled = review_stage(await rv.review(force=True), "distiller")["distilled"]
            assert distilled == (1 if day == 3 else 0), day


_SERVICES = (
    "billing",
    "search",
    "ledger",
    "mailer",
    "gateway",
    "scheduler",
    "archive",
    "metrics",
    "uploads",
    "payments",
    "reports",
    "invoices",
    "catalog",
    "profiles",
    "exports",
    "tickets",
    "alerts",
    "backups",
    "imports",
    "sessions",
    "webhooks",
    "pricing",
    "routing",
    "audits",
)


def service_facts(start: int, count: int) -> list[str]:
    """Distinct facts of about 62 chars, none a correction of another."""
    return [
        f"The {name} service runs {i + 2} workers on host {name}-{i:02d}.internal"
        for i, name in enumerate(_SERVICES[start : start + count], start=start)
    ]


def distill_round(report: dict[str, Any]) -> list[tuple[str, str | None]]:
    return [(t["status"], t.get("by")) for t in review_stage(report, "distiller")["topics"]]


async def distill_calls(rv: reverie.Reverie) -> int:
    return int((await rv.model_calls("a")).get("distiller", {}).get("calls", 0))


async def test_the_rules_summarise_a_topic_while_they_keep_half_of_it(
    tmp_path: Path, clock: ManualClock
) -> None:
    """Invariant: a topic too long to show whole is summarised by the rules, with no call,
    while its deepest and newest whole facts keep ``rules_keep`` (half) of its live text;
    past that, the model summarises it."""
    config = Config().with_section("distiller", summary_chars=300, min_new_facts=1, ask_batch=1)
    async with reverie.open(tmp_path / "h", clock=clock, config=config) as rv:
        await save(rv, "services", *service_facts(0, 5))  # 312 chars: 4 of 5 kept
        assert distill_round(await rv.review()) == [("distilled", "rules")]
        assert await distill_calls(rv) == 0
        clock.advance(timedelta(days=1))
        await save(rv, "services", *service_facts(5, 5))  # 640 chars: 4 of 10 kept
        assert distill_round(await rv.review(force=True)) == [("distilled", "offline")]
        assert await distill_calls(rv) == 1


async def test_a_topic_the_model_summarised_waits_until_its_text_doubles(
    tmp_path: Path, clock: ManualClock
) -> None:
    """Invariant: the model is asked about a topic again only once its live text is
    ``regrow`` (twice) what its last model summary came from; meanwhile the topic waits
    (no call) and its snapshot line shows its newest live facts."""
    config = Config().with_section("distiller", summary_chars=300, min_new_facts=1, ask_batch=1)
    async with reverie.open(tmp_path / "h", clock=clock, config=config) as rv:
        await save(rv, "services", *service_facts(0, 10))  # 640 chars
        assert distill_round(await rv.review()) == [("distilled", "offline")]
        for start in (10, 14):  # 904, then 1162 chars: under twice 640
            clock.advance(timedelta(days=1))
            await save(rv, "services", *service_facts(start, 4))
            assert distill_round(await rv.review(force=True)) == []
            assert await distill_calls(rv) == 1
        snapshot = (await rv.namespace("a").snapshot()).text
        assert "backups-17.internal" in snapshot  # the newest fact, not the old summary
        clock.advance(timedelta(days=1))
        await save(rv, "services", *service_facts(18, 3))  # 1361 chars: twice 640 and more
        assert distill_round(await rv.review(force=True)) == [("distilled", "offline")]
        assert await distill_calls(rv) == 2


async def test_a_lone_topic_that_needs_the_model_waits_for_a_second_one(
    tmp_path: Path, clock: ManualClock
) -> None:
    """Invariant: the model is asked only once ``ask_batch`` (two) due topics need it, in
    one call for both; meanwhile a lone one keeps its watermark (deferred, no call)."""
    config = Config().with_section("distiller", summary_chars=300, min_new_facts=1)
    async with reverie.open(tmp_path / "h", clock=clock, config=config) as rv:
        await save(rv, "services", *service_facts(0, 10))  # 640 chars: the model's
        assert distill_round(await rv.review()) == [("deferred", None)]
        clock.advance(timedelta(days=2))
        await save(rv, "services", *service_facts(10, 1))
        assert distill_round(await rv.review(force=True)) == [("deferred", None)]
        assert await distill_calls(rv) == 0
        clock.advance(timedelta(days=1))
        await save(rv, "backends", *service_facts(11, 10))
        done = distill_round(await rv.review(force=True))
        assert done == [("distilled", "offline"), ("distilled", "offline")]
        assert await distill_calls(rv) == 1


async def test_a_lone_topic_is_asked_about_once_it_has_waited_a_week(
    tmp_path: Path, clock: ManualClock
) -> None:
    """Invariant: a topic that waits for a fuller batch is asked about alone once it has
    waited ``ask_wait_h`` (a week) since its first wait, and not before."""
    config = Config().with_section("distiller", summary_chars=300, min_new_facts=1)
    async with reverie.open(tmp_path / "h", clock=clock, config=config) as rv:
        await save(rv, "services", *service_facts(0, 10))
        assert distill_round(await rv.review()) == [("deferred", None)]
        clock.advance(timedelta(hours=144))  # six days: still waiting
        await save(rv, "services", *service_facts(10, 1))
        assert distill_round(await rv.review(force=True)) == [("deferred", None)]
        clock.advance(timedelta(hours=25))  # a week and an hour since its first wait
        await save(rv, "services", *service_facts(11, 1))
        assert distill_round(await rv.review(force=True)) == [("distilled", "offline")]
        assert await distill_calls(rv) == 1
        # once asked, its wait is over: regrown, it waits a fresh week from now
        clock.advance(timedelta(days=1))
        await save(rv, "services", *service_facts(12, 14))
        assert distill_round(await rv.review(force=True)) == [("deferred", None)]
        assert await distill_calls(rv) == 1


async def test_a_summary_by_the_rules_ends_the_wait_to_regrow(
    tmp_path: Path, clock: ManualClock
) -> None:
    """Once corrections shrank a topic the model had summarised and the rules summarised it
    again, the model is asked as soon as the rules cannot keep half of it (the wait to
    double is from the model's last summary, which is no longer shown)."""
    config = Config().with_section("distiller", summary_chars=300, min_new_facts=1, ask_batch=1)
    async with reverie.open(tmp_path / "h", clock=clock, config=config) as rv:
        await save(rv, "services", *service_facts(0, 10))  # 640 chars
        assert distill_round(await rv.review()) == [("distilled", "offline")]
        clock.advance(timedelta(days=1))
        shorter = [
            f"The {name} service now runs {i + 20} workers" for i, name in enumerate(_SERVICES[:8])
        ]
        await save(rv, "services", *shorter)  # each corrects one: 457 chars, 62 % kept
        assert distill_round(await rv.review(force=True)) == [("distilled", "rules")]
        clock.advance(timedelta(days=1))
        await save(rv, "services", *service_facts(10, 6))  # 851 chars, 35 % kept: under twice 640
        assert distill_round(await rv.review(force=True)) == [("distilled", "offline")]
        assert await distill_calls(rv) == 2


# -- a failing model, scale, fairness between namespaces ----------------------------------


def chat_config(server: ChatServer, **model: str) -> Config:
    return Config.load(
        None,
        {
            "REVERIE_MODEL_URL": f"{base_url(server)}/v1",
            "REVERIE_MODEL_NAME": "tiny-judge",
            "REVERIE_MODEL_RETRIES": "2",
            "REVERIE_MODEL_BACKOFF_S": "0.01",
            "REVERIE_DISTILLER_RULES_FIRST": "false",  # every distill asks the model
            **{f"REVERIE_MODEL_{k.upper()}": v for k, v in model.items()},
        },
    )


def distilled(report: dict[str, Any]) -> dict[str, list[str]]:
    return {
        ns["namespace"]: [t["status"] for t in stage["topics"]]
        for ns in report["namespaces"]
        for stage in ns.get("stages", [])
        if stage["stage"] == "distiller"
    }


async def test_a_hung_model_is_asked_once_per_round_not_once_per_namespace(
    tmp_path: Path, clock: ManualClock
) -> None:
    """D13: five namespaces against a hung server cost one request (one timeout); every
    distillation is deferred, and the next round asks again and does them."""
    names = [f"n{i}" for i in range(5)]
    with serving(ChatServer()) as chat:
        chat.script = {"distill": [HOLD]}
        async with reverie.open(
            tmp_path / "h", config=chat_config(chat, timeout_s="0.3"), clock=clock
        ) as rv:
            for name in names:
                await save(rv, "deploy", f"The {name} deploy timeout is 30s", ns=name)
            first = await rv.review(force=True)
            assert len(chat.seen) == 1
            assert distilled(first) == {name: ["deferred"] for name in names}
            clock.advance(timedelta(hours=25))  # the distiller is due again
            second = await rv.review(force=True)
    assert distilled(second) == {name: ["distilled"] for name in names}
    assert len(chat.seen) == 1 + len(names)


@pytest.mark.parametrize("limit", [3, 8])
async def test_namespaces_are_reviewed_concurrently_within_the_bound(
    tmp_path: Path, clock: ManualClock, limit: int
) -> None:
    """D15: a round reviews ``reviewer.concurrency`` namespaces at once, never more (the
    server holds each request until that many are in flight, and counts them; the model's
    own bound is set above it here)."""
    names = [f"n{i}" for i in range(2 * limit + 1)]
    with serving(ChatServer()) as chat:
        config = chat_config(chat, timeout_s="10").with_section("reviewer", concurrency=limit)
        config = config.with_section("model", concurrency=limit + 5)
        async with reverie.open(tmp_path / "h", config=config, clock=clock) as rv:
            for name in names:
                await save(rv, "deploy", f"The {name} deploy timeout is 30s", ns=name)
            await rv.namespace(names[0]).review(force=True)  # the model is known healthy
            chat.together = limit
            report = await rv.review(force=True)
    assert chat.max_inflight == limit
    assert distilled(report) == {name: ["distilled"] for name in names[1:]}


async def test_the_model_sees_at_most_its_own_bound_whatever_the_review_concurrency(
    tmp_path: Path, clock: ManualClock
) -> None:
    """A round runs more passes at once than the model takes (by default too); the server
    never holds more than ``model.concurrency`` requests. It holds each request until
    one more than the bound is in flight, which never happens: each is let go after the
    server's 5 s wait instead, and no more than two were ever there."""
    assert DEFAULT_REVIEW_CONCURRENCY > DEFAULT_MODEL_CONCURRENCY
    names = [f"n{i}" for i in range(5)]
    with serving(ChatServer()) as chat:
        config = chat_config(chat, timeout_s="10").with_section("reviewer", concurrency=4)
        config = config.with_section("model", concurrency=2)
        async with reverie.open(tmp_path / "h", config=config, clock=clock) as rv:
            for name in names:
                await save(rv, "deploy", f"The {name} deploy timeout is 30s", ns=name)
            await rv.namespace(names[0]).review(force=True)  # the model is known healthy
            chat.together = 3
            report = await rv.review(force=True)
    assert chat.max_inflight == 2
    assert distilled(report) == {name: ["distilled"] for name in names[1:]}


async def test_a_quiet_namespace_is_skipped_until_something_new(
    rv: reverie.Reverie, clock: ManualClock
) -> None:
    """D15: after a pass that left nothing for later, a namespace with no new write is
    skipped with one indexed read (no pass, no ledger row), forced or not; a new write, or
    a stage whose candidates ripen with age falling due, ends the skip."""
    await save(rv, "deploy", "The deploy timeout is 30s")
    assert (await rv.review(force=True))["ran"]
    ledger_before = await rv.namespace("a").ledger()
    for force in (True, False):
        skipped = await rv.review(force=force)
        assert skipped["namespaces"][0]["reason"] == NOTHING_NEW
        assert (await rv.namespace("a").review(force=force))["reason"] == NOTHING_NEW
    assert await rv.namespace("a").ledger() == ledger_before
    await save(rv, "deploy", "The deploy region is eu-west-1")
    assert (await rv.review(force=True))["ran"]
    assert (await rv.review(force=True))["namespaces"][0]["reason"] == NOTHING_NEW
    clock.advance(timedelta(hours=24))  # the curator is due: its candidates age
    assert statuses(await rv.review(force=True))["curator"] == "ran"


async def test_pre_compact_waits_for_its_own_namespace_only(
    tmp_path: Path, clock: ManualClock
) -> None:
    """F5b: pre_compact in b returns while a's review still waits on the model (the server
    holds a's request open); a's pass has not ended when b's flush is done."""
    with serving(ChatServer()) as chat:
        chat.script = {"distill": [HOLD]}
        async with reverie.open(
            tmp_path / "h", config=chat_config(chat, timeout_s="20"), clock=clock
        ) as rv:
            await save(rv, "deploy", "The deploy timeout is 30s", ns="a")
            async with anyio.create_task_group() as tg:
                tg.start_soon(rv.namespace("a").review, True)
                await anyio.to_thread.run_sync(chat.held.wait, 10.0)
                async with rv.namespace("b").session("s") as s:
                    await s.turn(user="The build cache lives at /var/cache/ci.")
                    await s.pre_compact()
                    assert not chat.release.is_set() and chat.inflight == 1
                    passes = [
                        r for r in await rv.namespace("a").ledger() if r.action == "review_pass"
                    ]
                    assert passes == []  # a's pass is still waiting on the model
                    assert await rv.namespace("b").ledger()  # b's flush ran
                    flushes = [r for r in await rv.namespace("b").ledger() if r.action == "flush"]
                    assert flushes and flushes[0].detail["trigger"] == "pre_compact"
                chat.release.set()


async def test_a_write_that_lands_during_a_pass_keeps_the_namespace_unquiet(
    rv: reverie.Reverie, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pass whose stages looked before a write landed does not mark the namespace quiet
    (the stages never saw that write): the next pass runs instead of being skipped."""
    await save(rv, "deploy", "The deploy region is eu-west-1")
    await rv.wait_idle()
    entered, release = anyio.Event(), anyio.Event()
    curate = Curator.run

    async def held(self: Curator) -> CuratorDetails:
        entered.set()
        await release.wait()
        return await curate(self)

    monkeypatch.setattr(Curator, "run", held)
    async with anyio.create_task_group() as tg:
        tg.start_soon(rv.review, True)
        await entered.wait()  # the linter and distiller have looked already
        await save(rv, "oncall", "The pager rotation changes on Mondays")
        release.set()
    monkeypatch.undo()
    again = await rv.namespace("a").review(force=True)
    assert again["ran"], again.get("reason")
    assert again.get("reason") != NOTHING_NEW


async def test_a_pair_the_model_judged_is_not_asked_again(
    tmp_path: Path, clock: ManualClock
) -> None:
    """Facts never change (a change is a new fact), so a verdict on a pair holds: the
    weekly lint asks the model about a pair once, not every week."""
    model = LintDefers()
    model.lint_calls = 1  # answers from the first question on
    entry = {"action": "add", "target": "memory"}
    async with reverie.open(tmp_path / "h", clock=clock, model=model) as rv:
        async with rv.namespace("a").session("s") as s:
            await s.call_tool(
                "memory", {**entry, "content": "Staging uses feature flags for billing"}
            )
        await save(rv, "staging", "Staging does not use feature flags for billing")
        for _ in range(3):
            lint = review_stage(await rv.review(), "linter")
            assert lint["status"] == "ran" and lint["unclear"] == 1
            clock.advance(timedelta(days=8))
        assert model.lint_calls == 1 + 1
        async with rv.namespace("a").session("s2") as s:
            await s.call_tool("memory", {**entry, "content": "Prod uses feature flags for billing"})
        await save(rv, "prod", "Prod does not use feature flags for billing")
        assert review_stage(await rv.review(), "linter")["unclear"] == 2
    assert model.lint_calls == 1 + 2  # the first pair once, then the new one alone
