"""The topic tool: ADD / SUPERSEDE / NOOP / ERROR, the topic limit, chains, read and list."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

import reverie
from tests.conftest import both_backends, db_counts, ok, tree
from tests.data.supersede_pairs import NEGATIVE, POSITIVE

pytestmark = both_backends


def save(topic: str, content: str) -> dict[str, str]:
    return {"action": "save", "topic": topic, "content": content}


async def test_add_supersede_noop_and_the_chain(
    rv: reverie.Reverie, clock: reverie.ManualClock
) -> None:
    ns = rv.namespace()
    async with ns.session("s") as s:
        first = ok(await s.call_tool("topic", save("deploy", "The deploy timeout is 30s")), "ADD")
        clock.advance(timedelta(days=2))
        second = ok(
            await s.call_tool("topic", save("deploy", "The deploy timeout is 45s")), "SUPERSEDE"
        )
        clock.advance(timedelta(days=2))
        third = ok(
            await s.call_tool("topic", save("deploy", "Actually the deploy timeout is 60s")),
            "SUPERSEDE",
        )
        dup = ok(
            await s.call_tool("topic", save("deploy", "the deploy timeout is now 60s")), "NOOP"
        )
    assert dup["entry_id"] == third["entry_id"]
    assert second["superseded"] == first["entry_id"] and third["superseded"] == second["entry_id"]
    chain = await ns.chain(second["entry_id"])
    assert [f.id for f in chain] == [first["entry_id"], second["entry_id"], third["entry_id"]]
    assert [f.depth for f in chain] == [1, 2, 3]
    assert [f.live for f in chain] == [False, False, True]
    assert chain[0].superseded_by == second["entry_id"] and chain[0].invalid_at is not None
    assert chain[0].invalid_at == chain[1].created_at
    assert {f.chain_id for f in chain} == {first["entry_id"]}
    assert await ns.chain(first["entry_id"]) == chain
    assert await ns.chain("fct-unknown") == []
    # the history projection replays the same chain
    lines = [
        json.loads(line)
        for line in (rv.home / "default" / "topics" / "deploy" / "history.jsonl")
        .read_text()
        .splitlines()
    ]
    assert [(e["event"], e["id"]) for e in lines] == [
        ("add", first["entry_id"]),
        ("add", second["entry_id"]),
        ("supersede", first["entry_id"]),
        ("add", third["entry_id"]),
        ("supersede", second["entry_id"]),
    ]


async def test_supersede_acts_only_within_one_topic(rv: reverie.Reverie) -> None:
    async with rv.namespace().session("s") as s:
        ok(await s.call_tool("topic", save("staging", "The database host is db1.internal")), "ADD")
        ok(await s.call_tool("topic", save("prod", "The database host is db9.internal")), "ADD")
    assert len(await rv.namespace().facts("staging")) == 1
    assert len(await rv.namespace().facts("prod")) == 1


@pytest.mark.parametrize(("old", "new"), POSITIVE)
async def test_labelled_positive_pairs_through_the_store(
    rv: reverie.Reverie, old: str, new: str
) -> None:
    async with rv.namespace().session("s") as s:
        a = ok(await s.call_tool("topic", save("t", old)), "ADD")
        b = ok(await s.call_tool("topic", save("t", new)), "SUPERSEDE")
    assert b["superseded"] == a["entry_id"]
    assert [f.content for f in await rv.namespace().facts("t")] == [new]


@pytest.mark.parametrize(("old", "new"), NEGATIVE)
async def test_labelled_negative_pairs_through_the_store(
    rv: reverie.Reverie, old: str, new: str
) -> None:
    async with rv.namespace().session("s") as s:
        ok(await s.call_tool("topic", save("t", old)), "ADD")
        ok(await s.call_tool("topic", save("t", new)), "ADD")
    assert [f.content for f in await rv.namespace().facts("t")] == [old, new]


async def test_eleventh_topic_is_refused_and_writes_nothing(rv: reverie.Reverie) -> None:
    async with rv.namespace().session("s") as s:
        for i in range(10):
            ok(await s.call_tool("topic", save(f"topic-{i}", f"fact number {i}")), "ADD")
        before = db_counts(rv.home), tree(rv.home)
        refused = ok(await s.call_tool("topic", save("topic-10", "one too many")), "ERROR")
        assert "10 topics" in refused["error"] and "topic-3" in refused["error"]
        assert (db_counts(rv.home), tree(rv.home)) == before
        ok(await s.call_tool("topic", save("topic-3", "an existing topic still works")), "ADD")


async def test_read_and_list(rv: reverie.Reverie) -> None:
    async with rv.namespace().session("s") as s:
        ok(await s.call_tool("topic", save("deploy", "Deploy timeout is 30s")), "ADD")
        ok(await s.call_tool("topic", save("deploy", "Deploy timeout is 40s")), "SUPERSEDE")
        ok(await s.call_tool("topic", save("billing", "Invoices go out on the 1st")), "ADD")
        listing = await s.call_tool("topic", {"action": "list"})
        read = await s.call_tool("topic", {"action": "read", "topic": "deploy"})
        missing = await s.call_tool("topic", {"action": "read", "topic": "nope"})
    assert listing["topics"] == [
        {"topic": "billing", "facts": 1, "superseded": 0},
        {"topic": "deploy", "facts": 1, "superseded": 1},
    ]
    assert [f["content"] for f in read["facts"]] == ["Deploy timeout is 40s"]
    assert missing["decision"] == "ERROR"


async def test_restore_an_earlier_fact_value_extends_the_chain(rv: reverie.Reverie) -> None:
    ns = rv.namespace()
    async with ns.session("s") as s:
        a = ok(await s.call_tool("topic", save("d", "The retry limit = 3")), "ADD")
        ok(await s.call_tool("topic", save("d", "The retry limit = 5")), "SUPERSEDE")
    back = ok(await ns.restore(a["entry_id"]), "SUPERSEDE")
    chain = await ns.chain(a["entry_id"])
    assert [f.content for f in chain] == [
        "The retry limit = 3",
        "The retry limit = 5",
        "The retry limit = 3",
    ]
    assert chain[-1].id == back["entry_id"] and chain[-1].live
    ok(await ns.restore(back["entry_id"]), "ERROR")
