"""Seed 003's learning records (issue 11): every stored item is a record with a priority,
a tier and an access history; tiers move by the seed's rules, by accesses and by hand; the
correction, error, manual, session-end and heartbeat triggers; the query language."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import reverie
from reverie import Config, ManualClock
from reverie.errors import InputError
from reverie.rules.query import Query, QueryError, parse
from tests.conftest import ok, rows, write_db

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def save(topic: str, content: str) -> dict[str, Any]:
    return {"action": "save", "topic": topic, "content": content}


async def fact(ns: reverie.Namespace, content: str, topic: str = "deploy") -> str:
    async with ns.session("writing") as s:
        result = await s.call_tool("topic", save(topic, content))
    assert result["decision"] in ("ADD", "SUPERSEDE"), result
    return str(result["entry_id"])


async def sessions(rv: reverie.Reverie, ns: reverie.Namespace, n: int) -> None:
    """``n`` sessions of the namespace begin and end, touching nothing."""
    for i in range(n):
        async with ns.session(f"empty-{i}"):
            pass
    await rv.wait_idle()


async def searched(rv: reverie.Reverie, ns: reverie.Namespace, query: str, times: int) -> None:
    for _ in range(times):
        await ns.search(query, k=5)
    await sessions(rv, ns, 0)
    async with ns.session("flush") as s:  # an idle event writes the counted accesses
        await s.idle()
    await rv.wait_idle()


async def tier(ns: reverie.Namespace, record_id: str) -> str:
    record = await ns.record(record_id)
    assert record is not None
    return record.tier


# ---- every stored item is a record -------------------------------------------------------


async def test_entries_facts_and_skills_are_records_whose_status_follows_their_store(
    rv: reverie.Reverie,
) -> None:
    ns = rv.namespace("a")
    async with ns.session("s") as s:
        old = ok(await s.call_tool("topic", save("deploy", "The deploy timeout is 30s")), "ADD")
        new = await s.call_tool("topic", save("deploy", "The deploy timeout is 45s"))
        ok(new, "SUPERSEDE")
        entry = ok(
            await s.call_tool(
                "memory",
                {"action": "add", "target": "memory", "content": "Run the linter before pushing"},
            ),
            "ADD",
        )
        ok(
            await s.call_tool(
                "skill_manage",
                {"action": "create", "name": "triage", "content": "Read the log, then the config."},
            ),
            "CREATED",
        )
        ok(
            await s.call_tool(
                "memory", {"action": "remove", "target": "memory", "old_text": "linter before"}
            ),
            "REMOVED",
        )
        # read before the session ends: its end moves what is no longer active to COLD
        got = {r.id: r for r in await ns.query("limit:100")}
    assert got[old["entry_id"]].status == "superseded" and got[old["entry_id"]].kind == "fact"
    assert got[new["entry_id"]].status == "active" and got[new["entry_id"]].place == "deploy"
    assert got[entry["entry_id"]].status == "archived" and got[entry["entry_id"]].kind == "entry"
    assert got["skill:triage"].kind == "skill" and got["skill:triage"].status == "active"
    for record in got.values():
        assert (record.tier, record.priority, record.access_count) == ("hot", "medium", 0)
        assert record.namespace == "a" and record.created_at == "2026-01-01T00:00:00.000000+00:00"
    assert [r.id for r in await rv.namespace("b").query("limit:100")] == []


async def test_a_home_written_before_records_gains_them_when_opened(tmp_path: Path) -> None:
    home = tmp_path / "home"
    async with reverie.open(home) as rv:
        fid = await fact(rv.namespace("a"), "The deploy timeout is 30s")
    with write_db(home) as conn:  # back to schema 8: no records at all
        for name in ("records",):
            conn.execute(f"DROP VIEW {name}")
        for name in ("entries_learned", "facts_learned", "skills_learned", "learning_indexed"):
            conn.execute(f"DROP TRIGGER {name}")
        for name in ("learning", "accesses", "namespaces", "learning_text"):
            conn.execute(f"DROP TABLE {name}")
        conn.execute("DELETE FROM schema_version WHERE version >= 9")  # 10 runs again too
    async with reverie.open(home) as rv:
        record = await rv.namespace("a").record(fid)
        assert record is not None and record.tier == "hot" and record.content.endswith("30s")


# ---- accesses ------------------------------------------------------------------------------


async def test_a_search_hit_a_topic_read_and_a_snapshot_each_count_an_access(
    rv: reverie.Reverie, clock: ManualClock
) -> None:
    ns = rv.namespace("a")
    fid = await fact(ns, "The deploy timeout is 30s")
    async with ns.session("s") as s:
        entry = ok(
            await s.call_tool(
                "memory",
                {"action": "add", "target": "memory", "content": "Ask before touching production"},
            ),
            "ADD",
        )
    clock.advance(timedelta(minutes=5))
    await ns.search("deploy timeout", k=5)
    async with ns.session("reader") as s:  # the snapshot carries the entry
        clock.advance(timedelta(minutes=5))
        ok(await s.call_tool("topic", {"action": "read", "topic": "deploy"}), "NOOP")
        await s.idle()
    await rv.wait_idle()
    assert [how for _, how in await ns.access_history(fid)] == ["search", "topic read"]
    assert [how for _, how in await ns.access_history(entry["entry_id"])] == ["snapshot"]
    record = await ns.record(fid)
    assert record is not None and record.access_count == 2
    assert record.last_access_at == "2026-01-01T00:10:00.000000+00:00"


async def test_accesses_waiting_in_memory_are_written_when_the_runtime_closes(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    async with reverie.open(home) as rv:
        fid = await fact(rv.namespace("a"), "The deploy timeout is 30s")
        await rv.wait_idle()
        await rv.namespace("a").search("deploy timeout")  # no idle, no session end after
    assert rows(home, "SELECT access_count FROM learning WHERE id = ?", fid) == [(1,)]


async def test_a_full_batch_of_accesses_is_written_without_waiting_for_an_idle(
    tmp_path: Path, clock: ManualClock
) -> None:
    config = Config().with_section("records", access_batch=3)
    async with reverie.open(tmp_path / "h", config=config, clock=clock) as rv:
        ns = rv.namespace("a")
        fid = await fact(ns, "The deploy timeout is 30s")
        await rv.wait_idle()
        for _ in range(2):
            await ns.search("deploy timeout")
        await rv.wait_idle()
        assert (await ns.record(fid)).access_count == 0  # type: ignore[union-attr]
        await ns.search("deploy timeout")  # the third: the batch is full
        await rv.wait_idle()
        assert (await ns.record(fid)).access_count == 3  # type: ignore[union-attr]


async def test_a_restatement_counts_as_an_access_of_its_twin(rv: reverie.Reverie) -> None:
    ns = rv.namespace("a")
    fid = await fact(ns, "The deploy timeout is 30s")
    async with ns.session("again") as s:
        twin = ok(await s.call_tool("topic", save("deploy", "The deploy timeout is 30s.")), "NOOP")
        assert twin["entry_id"] == fid
    await rv.wait_idle()
    assert [how for _, how in await ns.access_history(fid)] == ["restated"]


# ---- tiers ---------------------------------------------------------------------------------


async def test_hot_becomes_warm_at_the_third_access_not_the_second(rv: reverie.Reverie) -> None:
    ns = rv.namespace("a")
    fid = await fact(ns, "The deploy timeout is 30s")
    await searched(rv, ns, "deploy timeout", 2)
    assert await tier(ns, fid) == "hot"
    await searched(rv, ns, "deploy timeout", 1)
    assert await tier(ns, fid) == "warm"
    [moved] = [r for r in await ns.ledger(fid) if r.action == "tier"]
    assert (moved.actor, moved.decision, moved.before, moved.after) == (
        "learner",
        "WARM",
        {"tier": "hot"},
        {"tier": "warm"},
    )
    assert moved.detail == {"why": "accessed 3 times"}


async def test_hot_becomes_warm_after_three_sessions_unreferenced(rv: reverie.Reverie) -> None:
    ns = rv.namespace("a")
    fid = await fact(ns, "The deploy timeout is 30s")  # its own session ended: 1
    await sessions(rv, ns, 1)
    assert await tier(ns, fid) == "hot"  # two sessions since it was made
    await sessions(rv, ns, 1)
    assert await tier(ns, fid) == "warm"


async def test_warm_becomes_cold_after_ten_sessions_without_an_access(
    rv: reverie.Reverie,
) -> None:
    ns = rv.namespace("a")
    fid = await fact(ns, "The deploy timeout is 30s")
    await ns.set_tier(fid, "warm")  # a move by hand restarts its clock
    await sessions(rv, ns, 9)
    assert await tier(ns, fid) == "warm"
    await sessions(rv, ns, 1)
    assert await tier(ns, fid) == "cold"


async def test_an_access_restarts_the_cold_clock(rv: reverie.Reverie) -> None:
    ns = rv.namespace("a")
    fid = await fact(ns, "The deploy timeout is 30s")
    await ns.set_tier(fid, "warm")
    await sessions(rv, ns, 6)
    await searched(rv, ns, "deploy timeout", 1)  # its idle session ends too: 8 so far
    await sessions(rv, ns, 8)
    assert await tier(ns, fid) == "warm"


async def test_the_long_term_rule_sends_a_record_unrecalled_for_30_days_to_cold(
    rv: reverie.Reverie, clock: ManualClock
) -> None:
    ns = rv.namespace("a")
    quiet = await fact(ns, "The deploy timeout is 30s")
    recalled = await fact(ns, "The release train leaves on Thursdays", topic="release")
    await searched(rv, ns, "release train thursdays", 3)  # three recalls: kept
    clock.advance(timedelta(days=30))
    await sessions(rv, ns, 1)
    assert await tier(ns, quiet) == "warm"  # exactly 30 days: not over
    clock.advance(timedelta(minutes=1))
    await sessions(rv, ns, 1)
    assert await tier(ns, quiet) == "cold"
    assert await tier(ns, recalled) == "warm"
    [moved] = [r for r in await ns.ledger(quiet) if r.decision == "COLD"]
    assert moved.detail == {"why": "not recalled for 30 days, 0 recalls"}


async def test_a_cold_record_referenced_again_is_hot(rv: reverie.Reverie) -> None:
    ns = rv.namespace("a")
    fid = await fact(ns, "The deploy timeout is 30s")
    await ns.set_tier(fid, "cold")
    await searched(rv, ns, "deploy timeout", 1)
    assert await tier(ns, fid) == "hot"
    assert [r.detail for r in await ns.ledger(fid) if r.decision == "HOT"] == [
        {"why": "referenced again"}
    ]


async def test_cold_entries_leave_the_snapshot_and_cold_facts_rank_below_warm_ones(
    rv: reverie.Reverie,
) -> None:
    """Of two hits of like relevance, the COLD one comes second, whichever it is; with
    ``include_cold=False`` it is gone. A COLD entry leaves the snapshot until recalled."""
    ns = rv.namespace("a")
    async with ns.session("s") as s:
        entry = await s.call_tool(
            "memory", {"action": "add", "target": "memory", "content": "Ask before prod changes"}
        )
    api = await fact(ns, "The billing export runs nightly at 02:00", topic="jobs")
    web = await fact(ns, "Billing export failures page the on-call engineer", topic="alerts")
    for frozen, other in ((api, web), (web, api)):
        await ns.set_tier(frozen, "cold")
        hits = [h.id for h in await ns.search("billing export", k=5) if h.kind == "fact"]
        assert hits[:2] == [other, frozen]
        left = [h.id for h in await ns.search("billing export", k=5, include_cold=False)]
        assert frozen not in left and other in left
        await ns.recall(frozen)
    await ns.set_tier(entry["entry_id"], "cold")
    assert "Ask before prod" not in (await ns.snapshot()).text
    await ns.recall(entry["entry_id"])
    assert "Ask before prod" in (await ns.snapshot()).text


async def test_a_cold_exact_match_still_beats_a_hot_remark_sharing_one_word(
    rv: reverie.Reverie, clock: ManualClock
) -> None:
    """COLD weighs a hit down (``ranking.cold_weight``), it does not bury it."""
    ns = rv.namespace("a")
    exact = await fact(ns, "The staging deploy timeout is 45s")
    clock.advance(timedelta(days=60))
    await sessions(rv, ns, 1)  # the long-term rule: unrecalled for 60 days
    assert await tier(ns, exact) == "cold"
    await fact(ns, "Staging was quiet all afternoon", topic="notes")
    hits = await ns.search("staging deploy timeout 45s", k=5)
    assert hits[0].id == exact


# ---- triggers ------------------------------------------------------------------------------


async def test_corrections_and_errors_said_in_turns_become_hot_log_records(
    rv: reverie.Reverie,
) -> None:
    ns = rv.namespace("a")
    async with ns.session("s1") as s:
        await s.turn(user="Actually the staging database is pg-stage-3, not pg-stage-2.")
        await s.turn(user="The nightly build failed with error: disk quota exceeded on runner-4.")
        await s.turn(user="Nightly build failed with error: disk quota exceeded on runner-4 again.")
        await rv.wait_idle()  # the error trigger: no idle, no session end needed
        logged = await ns.query("kind:correction,error sort:created:asc")
    assert [(r.kind, r.priority, r.tier, r.session_id) for r in logged] == [
        ("correction", "high", "hot", "s1"),
        ("error", "high", "hot", "s1"),
    ]
    assert [how for _, how in await ns.access_history(logged[1].id)] == ["restated"]
    [added] = [r for r in await ns.ledger(logged[0].id)]
    assert (added.actor, added.action, added.decision) == ("learner", "learn", "ADD")


async def test_learn_by_hand_adds_a_record_notes_a_twin_and_refuses_bad_input(
    rv: reverie.Reverie,
) -> None:
    ns = rv.namespace("a")
    added = ok(await ns.learn("Prefer small commits over big ones", "lesson", "high"), "ADD")
    twin = ok(await ns.learn("prefer small commits over big ones.", "lesson", "high"), "NOOP")
    assert twin["entry_id"] == added["entry_id"]
    record = await ns.record(added["entry_id"])
    assert record is not None and (record.kind, record.priority, record.tier) == (
        "lesson",
        "high",
        "hot",
    )
    bad: list[tuple[str, str, str]] = [
        ("", "insight", "medium"),
        ("x", "not a kind", "medium"),
        ("x", "fact", "medium"),
        ("x", "insight", "urgent"),
        ("the token is ghp_" + "a1B2" * 9, "insight", "medium"),
    ]
    for content, kind, priority in bad:
        with pytest.raises(InputError):
            await ns.learn(content, kind, priority)
    assert len(await ns.query("limit:100")) == 1


async def test_the_heartbeat_runs_the_rules_on_idle_at_most_once_an_interval(
    rv: reverie.Reverie, clock: ManualClock
) -> None:
    ns = rv.namespace("a")
    async with ns.session("s") as s:
        ok(await s.call_tool("topic", save("deploy", "The deploy timeout is 30s")), "ADD")
        await s.idle()
        await rv.wait_idle()
        beats = [r for r in rows(rv.home, "SELECT heartbeat_at FROM namespaces")]
        assert beats == [("2026-01-01T00:00:00.000000+00:00",)]
        clock.advance(timedelta(minutes=59))
        await s.idle()
        await rv.wait_idle()
        assert rows(rv.home, "SELECT heartbeat_at FROM namespaces") == beats
        clock.advance(timedelta(minutes=1))
        await s.idle()
        await rv.wait_idle()
    assert rows(rv.home, "SELECT heartbeat_at FROM namespaces") == [
        ("2026-01-01T01:00:00.000000+00:00",)
    ]


async def test_moves_by_hand_are_audited_and_refuse_what_is_not_there(rv: reverie.Reverie) -> None:
    ns = rv.namespace("a")
    fid = await fact(ns, "The deploy timeout is 30s")
    assert (await ns.promote(fid)).priority == "high"
    assert (await ns.promote(fid)).priority == "critical"
    assert (await ns.promote(fid)).priority == "critical"
    assert (await ns.set_tier(fid, "cold")).tier == "cold"
    assert (await ns.recall(fid)).tier == "hot"
    moves = [(r.action, r.decision) for r in await ns.ledger(fid) if r.actor == "learner"]
    assert moves == [
        ("priority", "HIGH"),
        ("priority", "CRITICAL"),
        ("tier", "COLD"),
        ("tier", "HOT"),
    ]
    for call in (ns.promote("fct-nope"), ns.set_tier("fct-nope", "hot"), ns.recall("nope")):
        with pytest.raises(InputError, match="no record"):
            await call
    with pytest.raises(InputError, match="tier is one of"):
        await ns.set_tier(fid, "lukewarm")


# ---- the query language --------------------------------------------------------------------


def test_a_query_reads_filters_times_text_sort_and_limit() -> None:
    q = parse(
        'priority:high,critical tier:warm kind:error since:7d "disk quota" runner '
        "sort:access:asc limit:20",
        NOW,
    )
    assert q == Query(
        filters={"priority": ("high", "critical"), "tier": ("warm",), "kind": ("error",)},
        since="2025-12-25T00:00:00.000000+00:00",
        text="disk quota runner",
        sort="access",
        descending=False,
        limit=20,
    )
    assert parse("", NOW) == Query()
    assert parse("deploy", NOW).sort == "relevance"
    assert parse("until:2026-01-01T12:00:00+02:00", NOW).until == (
        "2026-01-01T10:00:00.000000+00:00"
    )


@pytest.mark.parametrize(
    ("query", "filters", "text"),
    [
        ("don't deploy on fridays", {}, "don't deploy on fridays"),  # an apostrophe
        ('"kind:error" kind:lesson', {"kind": ("lesson",)}, "kind:error"),  # quoted: text
        ("see http://example.com/x", {}, "see http://example.com/x"),  # a URL is text
        ("kind:lesson,error kind:error,insight", {"kind": ("error",)}, ""),  # ANDed
        ("kind:lesson kind:error", {"kind": ()}, ""),  # nothing is both
    ],
)
def test_quotes_apostrophes_urls_and_repeated_fields(
    query: str, filters: dict[str, tuple[str, ...]], text: str
) -> None:
    q = parse(query, NOW)
    assert (q.filters, q.text) == (filters, text)


@pytest.mark.parametrize(
    ("query", "names"),
    [
        ("colour:red", "colour"),
        ("priority:urgent", "priority:urgent"),
        ("tier:", "tier:"),
        ("tier:hot,", "tier:hot,"),
        ("since:yesterday", "since:yesterday"),
        ("sort:size", "sort:size"),
        ("sort:created:sideways", "sort:created:sideways"),
        ("limit:0", "limit:0"),
        ("limit:1001", "limit:1001"),
        ("limit:ten", "limit:ten"),
        ('"unclosed', "unclosed"),
        ("sort:relevance", "relevance"),
        ("since:0001-01-01T00:00:00+01:00", "since:0001"),  # before UTC's year 1
    ],
)
def test_a_bad_query_token_is_named(query: str, names: str) -> None:
    with pytest.raises(QueryError, match=names):
        parse(query, NOW)


async def test_query_filters_are_anded_and_free_text_goes_through_the_index(
    rv: reverie.Reverie,
) -> None:
    ns = rv.namespace("a")
    deploy = await fact(ns, "The deploy timeout is 30s")
    await fact(ns, "The cache timeout is 5s", topic="cache")
    lesson = ok(await ns.learn("Deploy on Tuesdays, never Fridays", "lesson", "high"), "ADD")
    hits = await ns.query("deploy")
    assert {r.id for r in hits} == {deploy, lesson["entry_id"]}
    assert [r.id for r in await ns.query("deploy priority:high")] == [lesson["entry_id"]]
    assert [r.id for r in await ns.query("deploy kind:fact")] == [deploy]
    assert await ns.query("deploy kind:fact status:superseded") == []
    assert len(await ns.query("timeout limit:1")) == 1
    assert await ns.query("kind:fact kind:lesson") == []  # no record is both
    assert [r.id for r in await ns.query("kind:fact,lesson kind:lesson")] == [lesson["entry_id"]]
    with pytest.raises(QueryError):
        await ns.query("colour:red")


# ---- the learner's bookkeeping is no news to the loop ---------------------------------------


async def test_a_tier_move_after_a_turn_does_not_hold_back_the_turns_correction(
    rv: reverie.Reverie,
) -> None:
    """The flush skips a turn's value when a newer one was written after the turn; a
    fact's tier moving (a learner ledger row on it) is no newer value."""
    ns = rv.namespace("a")
    async with ns.session("s") as s:
        old = ok(await s.call_tool("topic", save("deploy", "The deploy timeout is 30s")), "ADD")
        await s.turn(user="Update: the deploy timeout is now 45s.", assistant="Noted.")
        await rv.wait_idle()
        await ns.set_tier(old["entry_id"], "warm")  # after the turn: a learner row on the fact
        await s.idle()
    await rv.wait_idle()
    assert [f.content for f in await ns.facts("deploy")] == [
        "Update: the deploy timeout is now 45s."
    ]


async def test_a_tier_move_leaves_a_quiet_namespace_quiet(rv: reverie.Reverie) -> None:
    ns = rv.namespace("a")
    rid = await fact(ns, "The deploy timeout is 45s")
    assert (await ns.review(force=True))["ran"]
    assert (await ns.review(force=True))["reason"] == "nothing new since the last pass"
    await ns.set_tier(rid, "cold")
    ok(await ns.learn("Drain the queue before a deploy", "lesson"), "ADD")
    assert (await ns.review(force=True))["reason"] == "nothing new since the last pass"
    await fact(ns, "The deploy window is Tuesday 10:00", "window")  # a write: news
    assert (await ns.review(force=True))["ran"]


async def test_a_recalled_record_is_hot_however_often_it_was_read_before(
    rv: reverie.Reverie,
) -> None:
    """HOT → WARM counts the accesses since the record came back to HOT, not its life's."""
    ns = rv.namespace("a")
    fid = await fact(ns, "The deploy timeout is 30s")
    await searched(rv, ns, "deploy timeout", 2)
    await ns.set_tier(fid, "cold")
    assert (await ns.recall(fid)).tier == "hot"  # its third access, its first since
    await searched(rv, ns, "deploy timeout", 1)
    assert await tier(ns, fid) == "hot"
    await searched(rv, ns, "deploy timeout", 1)
    assert await tier(ns, fid) == "warm"  # three since it came back


async def test_a_superseded_fact_leaves_hot_at_the_next_session_end(rv: reverie.Reverie) -> None:
    ns = rv.namespace("a")
    old = await fact(ns, "The deploy timeout is 30s")
    new = await fact(ns, "The deploy timeout is 45s")
    await rv.wait_idle()  # its session's end is handled
    assert (await ns.record(old)).status == "superseded"  # type: ignore[union-attr]
    assert await tier(ns, old) == "cold" and await tier(ns, new) == "hot"
    [moved] = [r for r in await ns.ledger(old) if r.action == "tier"]
    assert moved.detail["why"] == "superseded, no longer active"


async def test_a_move_by_hand_is_not_undone_by_the_rules_at_the_next_session_end(
    rv: reverie.Reverie,
) -> None:
    ns = rv.namespace("a")
    fid = await fact(ns, "The deploy timeout is 30s")
    await sessions(rv, ns, 12)
    assert await tier(ns, fid) == "cold"
    await ns.set_tier(fid, "warm")
    await sessions(rv, ns, 1)
    assert await tier(ns, fid) == "warm"


async def test_a_restored_entry_is_hot_and_back_in_the_snapshot(rv: reverie.Reverie) -> None:
    ns = rv.namespace("a")
    async with ns.session("s") as s:
        added = await s.call_tool(
            "memory", {"action": "add", "target": "memory", "content": "Ask before prod changes"}
        )
        await s.call_tool(
            "memory", {"action": "remove", "target": "memory", "old_text": "before prod"}
        )
    await rv.wait_idle()
    assert await tier(ns, added["entry_id"]) == "cold"  # removed: no longer active
    ok(await ns.restore(added["entry_id"]), "RESTORED")
    assert await tier(ns, added["entry_id"]) == "hot"
    assert "Ask before prod" in (await ns.snapshot()).text
