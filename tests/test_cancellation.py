"""Cancellation and lifecycle invariants."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path

import anyio
import pytest

import reverie
from tests.conftest import both_backends, db_counts, rows

pytestmark = both_backends


async def test_a_runtime_opens_once(tmp_path: Path) -> None:
    """A closed runtime refuses to be reopened and refuses calls."""
    rv = reverie.open(tmp_path)
    async with rv:
        ns = rv.namespace()
    with pytest.raises(reverie.ClosedError):
        async with rv:
            pass
    with pytest.raises(reverie.ClosedError):
        await ns.search("x")


async def test_closed_session_refuses_calls(rv: reverie.Reverie) -> None:
    """A session that ended answers ERROR to tool calls and raises for turns."""
    async with rv.namespace().session("s") as s:
        pass
    result = await s.call_tool("memory", {"action": "add", "target": "memory", "content": "x"})
    assert result["decision"] == "ERROR"
    with pytest.raises(reverie.ClosedError):
        await s.turn(user="late")


async def test_host_cancellation_during_a_write_storm_leaves_whole_writes(tmp_path: Path) -> None:
    """Cancelling the host's tasks mid-storm never leaves a half-written fact: every fact
    row has its ledger row and search row, and the runtime still closes cleanly."""
    async with reverie.open(tmp_path) as rv:
        with anyio.move_on_after(0.3):
            async with anyio.create_task_group() as tg:
                for n in range(6):

                    async def storm(n: int = n) -> None:
                        async with rv.namespace().session(f"s{n}") as s:
                            for j in range(10_000):
                                await s.call_tool(
                                    "topic",
                                    {
                                        "action": "save",
                                        "topic": "t",
                                        "content": f"storm {n} fact {j}",
                                    },
                                )

                    tg.start_soon(storm)
        await rv.wait_idle()
    counts = db_counts(tmp_path)
    assert counts["facts"] > 0
    assert counts["ledger"] == counts["facts"]
    assert counts["search_facts"] + counts["search_superseded"] == counts["facts"]
    assert counts["search_former"] == counts["corrected_heads"]


def landed_contents(home: Path) -> set[str]:
    """What the database holds, read with plain sqlite3 (not through reverie)."""
    return {row[0] for row in rows(home, "SELECT content FROM facts")}


def content(i: int) -> str:
    return f"Rack r{i:02d} sits in row {i + 100} of hall B"


async def test_host_learns_whether_each_cancelled_call_landed(tmp_path: Path) -> None:
    """Truthful cancellation: 40 calls cancelled at tiny deadlines (the old runtime committed
    35 of 40 and the host could not tell which). With a call id, ``ns.call_result`` says
    exactly which landed, a retry with the same id never writes twice, and the ledger rows
    of a landed call carry its id."""
    deadlines = [0.0, math.inf] + [0.001 * i for i in range(38)]  # 0-37 ms
    async with reverie.open(tmp_path) as rv:
        ns = rv.namespace()
        async with ns.session("s") as s:

            async def call(i: int) -> None:
                with anyio.move_on_after(deadlines[i]):
                    await s.call_tool(
                        "topic",
                        {"action": "save", "topic": "racks", "content": content(i)},
                        call_id=f"call-{i}",
                    )

            async with anyio.create_task_group() as tg:
                for i in range(40):
                    tg.start_soon(call, i)
            answers = [await ns.call_result(f"call-{i}") for i in range(40)]
            in_db = landed_contents(tmp_path)
            for i, answer in enumerate(answers):
                assert (answer is not None) == (content(i) in in_db), (i, answer)
                if answer is not None:
                    assert answer["decision"] == "ADD" and answer["call_id"] == f"call-{i}"
            assert answers[0] is None and answers[1] is not None  # cut at once; never cut
            retried = [
                await s.call_tool(
                    "topic",
                    {"action": "save", "topic": "racks", "content": content(i)},
                    call_id=f"call-{i}",
                )
                for i in range(40)
            ]
        ledger = await ns.ledger()
    assert len(landed_contents(tmp_path)) == 40  # each call landed exactly once in the end
    for i, (answer, again) in enumerate(zip(answers, retried, strict=True)):
        if answer is not None:  # a retry of a landed call replays its answer
            assert again == {**answer, "replayed": True}
        else:
            assert again["decision"] == "ADD" and "replayed" not in again, (i, again)
    by_call = {r.detail.get("call_id") for r in ledger if r.action == "save"}
    assert by_call == {f"call-{i}" for i in range(40)}


async def test_a_call_id_reused_for_another_call_is_refused(rv: reverie.Reverie) -> None:
    async with rv.namespace().session("s") as s:
        first = await s.call_tool(
            "topic", {"action": "save", "topic": "t", "content": content(1)}, call_id="k"
        )
        other = await s.call_tool(
            "topic", {"action": "save", "topic": "t", "content": content(2)}, call_id="k"
        )
        bad = await s.call_tool("topic", {"action": "list"}, call_id="x" * 201)
        longest = await s.call_tool(
            "topic", {"action": "save", "topic": "t", "content": content(3)}, call_id="y" * 200
        )
    assert first["decision"] == "ADD"
    assert other["decision"] == "ERROR" and "already used" in other["error"]
    assert bad["decision"] == "ERROR" and "call_id" in bad["error"]
    assert longest["decision"] == "ADD"  # 200 chars is the limit
    assert landed_contents(rv.home) == {content(1), content(3)}
    assert await rv.namespace().call_result("never-sent") is None


async def test_an_ask_that_times_out_says_whether_it_may_land(tmp_path: Path) -> None:
    """A call whose answer times out is truthful: the one the writer had taken up "may still
    be applied" (and did, once the lock was released); the ones queued behind it were
    withdrawn whole and never ran."""
    config = (
        reverie.Config()
        .with_section("actors", ask_timeout_s=0.2)
        .with_section("store", busy_timeout_ms=20_000)
    )
    async with reverie.open(tmp_path, config=config) as rv:
        ns = rv.namespace()
        lock = sqlite3.connect(tmp_path / "reverie.db", isolation_level=None)
        lock.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        results: dict[int, dict[str, object]] = {}
        async with ns.session("s") as s:

            async def call(i: int) -> None:
                results[i] = await s.call_tool(
                    "topic",
                    {"action": "save", "topic": "racks", "content": content(i)},
                    call_id=f"c{i}",
                )

            async with anyio.create_task_group() as tg:
                for i in range(3):
                    tg.start_soon(call, i)
            lock.rollback()
            lock.close()
            lookups = [await ns.call_result(f"c{i}") for i in range(3)]
    assert all(r["decision"] == "ERROR" for r in results.values())
    may = [i for i, r in results.items() if "may still be applied" in str(r["error"])]
    withdrawn = [i for i, r in results.items() if "withdrawn" in str(r["error"])]
    assert len(may) == 1 and len(withdrawn) == 2
    assert lookups[may[0]] is not None and all(lookups[i] is None for i in withdrawn)
    assert landed_contents(tmp_path) == {content(may[0])}


async def test_bus_timeouts_are_reverie_errors(tmp_path: Path) -> None:
    """F5c: a Bus.ask timeout reached the host as the builtin TimeoutError."""
    config = (
        reverie.Config()
        .with_section("actors", ask_timeout_s=0.05)
        .with_section("store", busy_timeout_ms=5_000)
    )
    async with reverie.open(tmp_path, config=config) as rv:
        lock = sqlite3.connect(tmp_path / "reverie.db", isolation_level=None)
        lock.execute("BEGIN IMMEDIATE")
        try:
            async with rv.namespace().session("s") as s:
                with pytest.raises(reverie.TimeoutError) as caught:
                    await s.turn(user="the build moved to make ci-all")
                restored = await rv.namespace().restore("fct-x")
        finally:
            lock.rollback()
            lock.close()
    assert caught.value.withdrawn is False and "may still be applied" in str(caught.value)
    assert restored["decision"] == "ERROR"
