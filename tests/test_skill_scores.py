"""Skill activity scores (issue 13, seed 004): calls × quality × decay on 0–100, five tiers,
each use with its outcome, history rows per scoring, and the curator's 180-day archive —
on a ManualClock and a real SQLite home."""

from __future__ import annotations

import asyncio
import math
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

import reverie
from reverie import Config, ManualClock
from reverie.errors import InputError
from reverie.skills import scores
from reverie.stores import skills
from reverie.stores.records import Skill
from tests.conftest import db_counts, ok, review_stage, rows

# ---- the pure function -----------------------------------------------------------------


def test_score_at_known_inputs() -> None:
    """100 × (1 − e^(−calls/10)) × (s + 3)/(s + f + 4) × decay, rounded to 0.1."""
    ten = scores.activity(10, 10, 0, 0)
    assert ten.calls_term == round(1 - math.exp(-1), 4) == 0.6321
    assert ten.quality == round(13 / 14, 4)
    assert ten.score == 58.7 and (ten.tier, ten.mark) == ("low", "💤")
    thirty = scores.activity(30, 30, 0, 0)
    assert thirty.score == 92.2 and (thirty.tier, thirty.mark) == ("active", "🔥")
    mixed = scores.activity(20, 10, 10, 0)  # half failed: quality 13/24
    assert mixed.score == round(100 * (1 - math.exp(-2)) * 13 / 24, 1) == 46.8
    assert scores.activity(0, 0, 0, 0).score == 0.0  # never used: nothing to show


def test_the_prior_rules_few_calls_and_unknown_outcomes_are_no_evidence() -> None:
    assert scores.quality(0, 0) == 0.75  # the prior alone: 3 / 4
    assert scores.quality(0, 1) == 0.6  # one failure is not quality 0
    assert scores.quality(1, 0) == 0.8
    assert scores.quality(100, 0) == pytest.approx(103 / 104)
    unknown = scores.activity(5, 0, 0, 0)  # five uses, the host said nothing of them
    assert unknown.quality == 0.75 and unknown.calls == 5
    assert scores.activity(5, 0, 0, 0).score < scores.activity(5, 5, 0, 0).score
    assert scores.activity(5, 0, 0, 0).score > scores.activity(5, 0, 5, 0).score


def test_the_calls_term_saturates() -> None:
    assert scores.calls_term(0) == 0.0
    assert scores.calls_term(10) == pytest.approx(1 - 1 / math.e)
    assert scores.calls_term(30) == pytest.approx(0.9502, abs=1e-4)
    assert scores.calls_term(1000) <= 1.0 and scores.calls_term(60) < 1.0
    steps = [scores.calls_term(n + 1) - scores.calls_term(n) for n in range(20)]
    assert steps == sorted(steps, reverse=True)  # each use adds less than the one before


@pytest.mark.parametrize(
    ("days", "factor"),
    [
        (0, 1.0),
        (29, 1.0),
        (29.999, 1.0),
        (30, 0.5),
        (89, 0.5),
        (89.999, 0.5),
        (90, 0.2),
        (400, 0.2),
    ],
)
def test_decay_steps(days: float, factor: float) -> None:
    assert scores.decay(days) == factor


@pytest.mark.parametrize(
    ("score", "tier", "mark"),
    [
        (100.0, "active", "🔥"),
        (80.0, "active", "🔥"),
        (79.9, "steady", "📈"),
        (60.0, "steady", "📈"),
        (59.9, "low", "💤"),
        (40.0, "low", "💤"),
        (39.9, "dormant", "🗄️"),
        (20.0, "dormant", "🗄️"),
        (19.9, "retired", "⚰️"),
        (0.0, "retired", "⚰️"),
    ],
)
def test_tier_boundaries(score: float, tier: str, mark: str) -> None:
    band = scores.tier(score)
    assert (band.name, band.mark) == (tier, mark)


def test_the_tier_is_read_from_the_rounded_score() -> None:
    """79.977… rounds to 80.0: the number shown and its mark agree."""
    raw = 100 * scores.calls_term(23) * scores.quality(5, 0)
    assert 79.95 <= raw < 80.0
    just = scores.activity(23, 5, 0, 0)
    assert (just.score, just.tier, just.mark) == (80.0, "active", "🔥")


@pytest.mark.parametrize(
    "args", [(-1, 0, 0, 0), (1, 2, 0, 0), (2, 1, 2, 0), (1, 1, 0, -1), (1, 1, 0, math.nan)]
)
def test_bad_counts_are_refused(args: tuple[int, int, int, float]) -> None:
    with pytest.raises(ValueError):
        scores.activity(*args)


# ---- uses with outcomes ----------------------------------------------------------------


async def create(ns: reverie.Namespace, *names: str) -> None:
    async with ns.session("make") as s:
        for name in names:
            args = {"action": "create", "name": name, "content": f"# {name}\nRun the {name} steps."}
            ok(await s.call_tool("skill_manage", args), "CREATED")


async def use(ns: reverie.Namespace, name: str, *outcomes: bool | None) -> None:
    async with ns.session("use") as s:
        for outcome in outcomes:
            ok(await s.used_skill(name, ok=outcome), "PATCHED")


def score_of(found: list[dict[str, Any]], name: str) -> dict[str, Any]:
    [row] = [r for r in found if r["name"] == name]
    return row


async def test_each_use_is_stored_with_its_outcome_and_audited(
    rv: reverie.Reverie, clock: ManualClock
) -> None:
    ns = rv.namespace("a")
    await create(ns, "release")
    await use(ns, "release", True, False, None)
    async with ns.session("old") as s:
        ok(await s.used_skill("release"), "PATCHED")  # the old call: outcome unknown
    assert rows(rv.home, "SELECT outcome, session_id FROM skill_uses ORDER BY id") == [
        ("success", "use"),
        ("failure", "use"),
        ("unknown", "use"),
        ("unknown", "old"),
    ]
    uses = [r for r in await ns.ledger("skill:release") if r.action == "use"]
    assert [r.detail["outcome"] for r in uses] == ["success", "failure", "unknown", "unknown"]
    [row] = await ns.skill_scores()
    assert (row["calls"], row["successes"], row["failures"]) == (4, 1, 1)
    assert row["quality"] == round(4 / 6, 4)
    assert row["score"] == scores.activity(4, 1, 1, 0).score
    assert row["pinned"] is False and row["created_by"] == "skill_manage"
    assert row["previous_score"] is None and row["previous_tier"] is None


async def test_bad_input_is_refused_and_writes_nothing(rv: reverie.Reverie) -> None:
    ns = rv.namespace("a")
    await create(ns, "release")
    before = db_counts(rv.home)
    uses = rows(rv.home, "SELECT count(*) FROM skill_uses")
    async with ns.session("s") as s:
        for bad in ("yes", 1, 0, "true"):
            with pytest.raises(InputError, match="ok must be True or False"):
                await s.used_skill("release", ok=bad)  # type: ignore[arg-type]
        ok(await s.used_skill("ghost", ok=True), "ERROR")
    assert db_counts(rv.home) == before
    assert rows(rv.home, "SELECT count(*) FROM skill_uses") == uses


async def test_uses_older_than_the_window_do_not_count(
    rv: reverie.Reverie, clock: ManualClock
) -> None:
    ns = rv.namespace("a")
    await create(ns, "release")
    await use(ns, "release", True, True)
    clock.advance(timedelta(days=364))
    await use(ns, "release", True)
    clock.advance(timedelta(days=1))  # the first two are 365 days old: still in
    assert score_of(await ns.skill_scores(), "release")["calls"] == 3
    clock.advance(timedelta(seconds=1))  # and now older than the 365-day window
    assert score_of(await ns.skill_scores(), "release")["calls"] == 1


async def test_decay_steps_on_the_clock(rv: reverie.Reverie, clock: ManualClock) -> None:
    """Days since the last use: ×1 up to 29, ×0.5 from 30, ×0.2 from 90."""
    ns = rv.namespace("a")
    await create(ns, "release")
    await use(ns, "release", *([True] * 30))
    fresh = score_of(await ns.skill_scores(), "release")
    assert (fresh["decay"], fresh["score"], fresh["mark"]) == (1.0, 92.2, "🔥")
    seen = {}
    for day in (29, 30, 89, 90):
        clock.advance(timedelta(days=day) - timedelta(days=seen and max(seen) or 0))
        seen[day] = score_of(await ns.skill_scores(), "release")
    assert [seen[d]["decay"] for d in (29, 30, 89, 90)] == [1.0, 0.5, 0.5, 0.2]
    assert [seen[d]["score"] for d in (29, 30, 90)] == [92.2, 46.1, 18.4]
    assert [seen[d]["tier"] for d in (29, 30, 90)] == ["active", "low", "retired"]
    assert seen[90]["idle_days"] == 90.0


# ---- the curator's scoring, history and 180-day archive --------------------------------


async def preinstalled(rv: reverie.Reverie, namespace: str, name: str) -> None:
    """An official skill, registered by the host's installer (not by skill_manage)."""
    now = rv.services.now()
    skill = Skill(namespace, name, "# official", "preinstalled", False, now, now, now, None)
    await rv.services.db.write(lambda conn: skills.insert(conn, skill))
    rv.services.projector.write_skill(skill)


async def test_each_scoring_keeps_a_history_row_and_the_previous_tier(
    rv: reverie.Reverie, clock: ManualClock
) -> None:
    ns = rv.namespace("a")
    await create(ns, "release", "idle")
    await use(ns, "release", *([True] * 30))
    review_stage(await rv.review(force=True), "curator")
    first = await ns.skill_scores()
    assert score_of(first, "release")["previous_tier"] == "active"
    assert score_of(first, "release")["previous_score"] == 92.2
    clock.advance(timedelta(days=31))
    assert review_stage(await rv.review(force=True), "curator")["status"] == "ran"
    history = rows(
        rv.home,
        "SELECT name, score, tier, calls, successes, failures, decay FROM skill_scores ORDER BY id",
    )
    assert history == [
        ("idle", 0.0, "retired", 0, 0, 0, 1.0),
        ("release", 92.2, "active", 30, 30, 0, 1.0),
        ("idle", 0.0, "retired", 0, 0, 0, 0.5),
        ("release", 46.1, "low", 30, 30, 0, 0.5),
    ]
    now = score_of(await ns.skill_scores(), "release")
    assert (now["tier"], now["previous_tier"], now["previous_score"]) == ("low", "low", 46.1)


async def test_the_pass_archives_skills_idle_180_days_reversibly(
    rv: reverie.Reverie, clock: ManualClock
) -> None:
    ns = rv.namespace("a")
    await create(ns, "stale", "pinned", "recent")
    await preinstalled(rv, "a", "official")
    ok(await ns.pin_skill("pinned"), "PATCHED")
    clock.advance(timedelta(days=100))
    await use(ns, "recent", True)
    clock.advance(timedelta(days=79, hours=23))  # stale: 179 days 23 h idle
    curator = review_stage(await rv.review(force=True), "curator")
    assert [c["name"] for c in curator["candidates"]] == ["stale"]  # the 90-day dry run
    assert "archived" not in curator
    assert "stale" in [s.name for s in await ns.skills()]
    clock.advance(timedelta(days=1))  # 180 days 23 h, and the curator is due again
    curator = review_stage(await rv.review(force=True), "curator")
    [archived] = curator["archived"]
    assert archived["name"] == "stale"
    assert archived["archive_dir"].startswith("skills/.archive/stale__")
    names = [s.name for s in await ns.skills()]
    assert names == ["official", "pinned", "recent"]  # pinned and preinstalled exempt
    assert not (rv.home / "a" / "skills" / "stale").exists()
    assert (rv.home / "a" / archived["archive_dir"] / "SKILL.md").exists()
    [audit] = [r for r in await ns.ledger("skill:stale") if r.action == "archive"]
    assert (audit.actor, audit.decision) == ("curator", "ARCHIVED")
    # its last scoring stays in the history; the restore brings it back whole
    assert rows(rv.home, "SELECT count(*) FROM skill_scores WHERE name = 'stale'") == [(2,)]
    ok(await ns.restore_skill("stale"), "RESTORED")
    assert (rv.home / "a" / "skills" / "stale" / "SKILL.md").exists()
    assert "stale" in [r["name"] for r in await ns.skill_scores()]


async def test_auto_archive_can_be_switched_off(tmp_path: Path, clock: ManualClock) -> None:
    config = Config().with_section("skill_scores", auto_archive=False)
    async with reverie.open(tmp_path / "h", config=config, clock=clock) as rv:
        ns = rv.namespace("a")
        await create(ns, "stale")
        clock.advance(timedelta(days=400))
        curator = review_stage(await rv.review(force=True), "curator")
        assert [c["name"] for c in curator["candidates"]] == ["stale"]
        assert "archived" not in curator and [s.name for s in await ns.skills()] == ["stale"]


def test_archive_days_below_the_curators_idle_days_is_refused() -> None:
    with pytest.raises(reverie.ConfigError, match="archive_days"):
        Config().with_section("skill_scores", archive_days=60.0)


# ---- where the scores show -------------------------------------------------------------


async def test_the_snapshot_marks_each_skill_with_its_tier(
    rv: reverie.Reverie, clock: ManualClock
) -> None:
    ns = rv.namespace("a")
    await create(ns, "release", "idle", "failing", "new")
    await use(ns, "release", *([True] * 30))
    await use(ns, "idle", True)
    await use(ns, "failing", *([False] * 20))
    clock.advance(timedelta(days=30))
    await use(ns, "release", True)
    async with ns.session("s") as s:
        index = s.snapshot.text.split("## SKILLS\n", 1)[1].split("\n\n", 1)[0]
    assert sorted(index.split("\n")) == [
        "- failing: ⚰️ # failing Run the failing steps.",  # 20 failures, idle 30 days: 5.4
        "- idle: ⚰️ # idle Run the idle steps.",
        "- new: # new Run the new steps.",  # never used: no score to show yet
        "- release: 🔥 # release Run the release steps.",
    ]


async def test_the_snapshot_reads_marks_only_for_what_it_can_show_and_shows_the_same(
    rv: reverie.Reverie, clock: ManualClock
) -> None:
    """300 used skills: the index, its marks read for the skills that can fit, is the index
    marked from every skill's score (and it is full, never over its cap)."""
    from reverie.snapshot import may_show, skills_index
    from reverie.stores import skill_activity

    def fill(conn: Any) -> None:
        for i in range(300):
            when = rv.services.now()
            body = f"Workflow {i}: check the runbook, then page the owner of service {i}."
            skills.insert(
                conn, Skill("a", f"k{i:03}", body, "skill_manage", False, when, when, when, None)
            )
            for _ in range(i % 40):
                skill_activity.record_use(conn, "a", f"k{i:03}", when, "success", None)

    await rv.services.db.write(fill)
    ns = rv.namespace("a")
    snapshot = await ns.snapshot()
    index = snapshot.text.split("## SKILLS\n", 1)[1].split("\n\n", 1)[0]

    def expected(conn: Any) -> tuple[str, int, int]:
        registered = skills.registered(conn, "a")
        found = skill_activity.activities(conn, "a", registered, clock.now())
        marks = {name: a.mark for name, a in found.items() if a.calls}
        cap = Config().caps.skills
        return skills_index(registered, cap, marks)[0], len(may_show(registered, cap)), cap

    full, read, cap = await rv.services.db.read(expected)
    assert index == full and cap - 160 < len(index) <= cap
    shown = index.count("\n")  # lines less the "… more" line
    assert shown <= read < 300 and "🔥" in index and "💤" in index


async def test_the_dream_report_ranks_skills_by_activity_with_tier_changes(
    rv: reverie.Reverie, clock: ManualClock
) -> None:
    ns = rv.namespace("a")
    await create(ns, "release", "deploy")
    await use(ns, "release", *([True] * 30))
    await use(ns, "deploy", *([True] * 30))
    await rv.review(force=True)  # the curator's scoring: both active
    clock.advance(timedelta(days=10))
    await use(ns, "deploy", True)
    clock.advance(timedelta(days=21))  # release idle 31 days: active → low
    run = await ns.dream()
    board = run["skills"]
    assert board["release"]["tier_before"] == "active" and board["release"]["tier"] == "low"
    report = await ns.dream_report("dream")
    section = report.split("## 🏆 Skill leaderboard\n\n", 1)[1].split("\n\n", 1)[0]
    assert section.strip().split("\n") == [
        "1. 🔥 deploy: 92.8 (active); 31 uses (+31 today)",
        "2. 💤 release: 46.1 (low); 30 uses (+30 today) — active → low",
    ]


def test_the_simulated_agent_follows_its_skill_with_every_outcome() -> None:
    """``reverie simulate`` drives skill uses through ``used_skill`` with success, failure
    and unknown outcomes, so its skill tiers come from real uses."""
    from reverie.simulation.scenario import USED_SKILL, generate

    reported = [
        use.args
        for plan in generate(seed=7).sessions
        for turn in plan.turns
        for use in turn.tools
        if use.tool == USED_SKILL
    ]
    assert {args["name"] for args in reported} == {"release"}
    outcomes = [args["ok"] for args in reported]
    assert {True, False, None} <= set(outcomes) and outcomes.count(True) > len(outcomes) / 2


@pytest.mark.slow
def test_the_cli_records_outcomes_and_prints_the_scores(tmp_path: Path) -> None:
    from tests.test_cli import cli, jcli

    async def seed() -> None:
        async with reverie.open(tmp_path) as rv:
            await create(rv.namespace("default"), "release")

    asyncio.run(seed())
    assert jcli(tmp_path, "skill", "use", "ghost", "--ok", code=1)["decision"] == "ERROR"
    for flag in ("--ok", "--ok", "--failed", None):
        extra = () if flag is None else (flag,)
        assert jcli(tmp_path, "skill", "use", "release", *extra)["decision"] == "PATCHED"
    [row] = jcli(tmp_path, "skill", "scores")
    assert (row["name"], row["calls"], row["successes"], row["failures"]) == ("release", 4, 2, 1)
    assert row["score"] == scores.activity(4, 2, 1, 0).score == 23.5 and row["mark"] == "🗄️"
    human = cli(tmp_path, "skill", "scores")
    assert "release" in human and "🗄️" in human and "dormant" in human
    assert rows(tmp_path, "SELECT outcome FROM skill_uses ORDER BY id") == [
        ("success",),
        ("success",),
        ("failure",),
        ("unknown",),
    ]


async def test_a_home_from_before_scores_gets_its_past_uses_from_the_ledger(
    tmp_path: Path, clock: ManualClock
) -> None:
    """The migration takes the ledger's earlier ``use`` rows once, as outcome unknown."""
    from reverie.stores.schema import MIGRATIONS
    from tests.conftest import write_db

    home = tmp_path / "h"
    async with reverie.open(home, clock=clock) as rv:
        ns = rv.namespace("a")
        await create(ns, "release")
        await use(ns, "release", True, False)
    mine = next(i for i, m in enumerate(MIGRATIONS) if "CREATE TABLE IF NOT EXISTS skill_uses" in m)
    with write_db(home) as conn:  # the home as it was before the migration
        conn.execute("DROP TABLE skill_uses")
        conn.execute("DROP TABLE skill_scores")
        conn.execute("DELETE FROM schema_version WHERE version > ?", (mine,))
    async with reverie.open(home, clock=clock) as rv:
        [row] = await rv.namespace("a").skill_scores()
        assert (row["calls"], row["successes"], row["failures"]) == (2, 0, 0)
    assert rows(home, "SELECT namespace, name, outcome, session_id FROM skill_uses") == [
        ("a", "release", "unknown", "use"),
        ("a", "release", "unknown", "use"),
    ]
