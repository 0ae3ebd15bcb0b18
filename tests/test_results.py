"""Tool results are typed inside (frozen :class:`reverie.ToolResult`) and a JSON-able dict
at the host's edge, in the exact shape the agent has always seen."""

from __future__ import annotations

import dataclasses
import json
from datetime import timedelta
from typing import Any

import pytest

import reverie
from reverie.results import Archived, Decision, FactView, ToolResult, TopicListing, Usage
from tests.conftest import both_backends

pytestmark = both_backends

HEAD = {"ok", "decision", "entry_id"}


def keys(answer: dict[str, Any]) -> set[str]:
    return set(answer) - HEAD


def same_when_read_back(answer: dict[str, Any]) -> ToolResult:
    """The dict is the typed result's own: read back, it gives the same dict (and JSON)."""
    typed = ToolResult.from_dict(json.loads(json.dumps(answer)))
    assert typed.to_dict() == answer
    return typed


async def test_memory_answers_have_their_shapes(rv: reverie.Reverie) -> None:
    async with rv.namespace("a").session("s") as s:
        add = await s.call_tool(
            "memory", {"action": "add", "target": "memory", "content": "Run make check first"}
        )
        assert add["ok"] is True and add["decision"] == "ADD"
        assert keys(add) == {"message", "usage"}
        assert add["usage"]["target"] == "memory" and add["usage"]["used"] > 0
        assert same_when_read_back(add).usage == Usage(
            "memory", *[add["usage"][k] for k in ("used", "cap")]
        )
        twin = await s.call_tool(
            "memory", {"action": "add", "target": "memory", "content": "Run make check first"}
        )
        assert twin["decision"] in {"NOOP", "REINFORCED"}
        same_when_read_back(twin)
        replaced = await s.call_tool(
            "memory",
            {
                "action": "replace",
                "target": "memory",
                "old_text": "make check",
                "content": "Run make lint first",
            },
        )
        assert replaced["decision"] == "REPLACED"
        assert keys(replaced) == {"message", "usage", "replaced"}
        assert replaced["replaced"] == add["entry_id"]
        same_when_read_back(replaced)
        gone = await s.call_tool(
            "memory", {"action": "remove", "target": "memory", "old_text": "make lint"}
        )
        assert gone["decision"] == "REMOVED" and keys(gone) == {"message", "usage"}
        same_when_read_back(gone)


async def test_topic_answers_have_their_shapes(rv: reverie.Reverie) -> None:
    async with rv.namespace("a").session("s") as s:
        save = {"action": "save", "topic": "deploy", "content": "The deploy port is 8080"}
        first = await s.call_tool("topic", save)
        assert first["decision"] == "ADD"
        assert keys(first) == {"message", "topic", "chain_id", "depth"}
        noop = await s.call_tool("topic", save)
        assert noop["decision"] == "NOOP"
        assert keys(noop) == {"message", "duplicate_of", "tier", "similarity"}
        assert noop["duplicate_of"] == first["entry_id"] == noop["entry_id"]
        newer = dict(save, content="The deploy port is now 9090")
        sup = await s.call_tool("topic", newer)
        assert sup["decision"] == "SUPERSEDE" and sup["superseded"] == first["entry_id"]
        assert sup["depth"] == 2 and sup["chain_id"] == first["chain_id"]
        listing = await s.call_tool("topic", {"action": "list"})
        assert listing["topics"] == [{"topic": "deploy", "facts": 1, "superseded": 1}]
        assert same_when_read_back(listing).topics == (TopicListing("deploy", 1, 1),)
        read = await s.call_tool("topic", {"action": "read", "topic": "deploy"})
        assert keys(read) == {"message", "topic", "facts", "more"}
        assert read["more"] == 0 and [f["entry_id"] for f in read["facts"]] == [sup["entry_id"]]
        typed = same_when_read_back(read)
        assert typed.facts is not None and isinstance(typed.facts[0], FactView)
        for answer in (first, noop, sup):
            same_when_read_back(answer)


async def test_an_error_says_error_not_message_and_is_never_flagged_by_default(
    rv: reverie.Reverie,
) -> None:
    async with rv.namespace("a").session("s") as s:
        bad = await s.call_tool("memory", {"action": "nope"})
    assert bad["ok"] is False and bad["decision"] == "ERROR" and bad["entry_id"] is None
    assert keys(bad) == {"error"}  # transient and replayed are said only when true
    assert same_when_read_back(bad).ok is False


async def test_a_named_call_stores_replays_and_looks_up_the_same_answer(
    rv: reverie.Reverie,
) -> None:
    ns = rv.namespace("a")
    args = {"action": "save", "topic": "t", "content": "The pager channel is #ops-7"}
    async with ns.session("s") as s:
        first = await s.call_tool("topic", args, call_id="c-1")
        again = await s.call_tool("topic", args, call_id="c-1")
    assert first["call_id"] == "c-1" and "replayed" not in first
    assert again == {**first, "replayed": True}
    assert await ns.call_result("c-1") == first
    assert await ns.call_result("c-2") is None


async def test_skill_and_curator_answers(rv: reverie.Reverie, clock: reverie.ManualClock) -> None:
    ns = rv.namespace("a")
    async with ns.session("s") as s:
        made = await s.call_tool(
            "skill_manage", {"action": "create", "name": "release", "content": "1. Tag"}
        )
    assert made["decision"] == "CREATED" and keys(made) == {"message", "name"}
    clock.advance(timedelta(days=120))
    dry = await ns.curate()
    assert dry["dry_run"] is True and dry["archived"] == []
    assert [c["name"] for c in dry["candidates"]] == ["release"]
    applied = await ns.curate(apply=True)
    assert applied["decision"] == "ARCHIVED" and applied["dry_run"] is False  # False is said
    typed = same_when_read_back(applied)
    assert typed.archived is not None and isinstance(typed.archived[0], Archived)
    back = await ns.restore_skill("release")
    assert (
        back["decision"] == "RESTORED"
        and back["archive_dir"] == applied["archived"][0]["archive_dir"]
    )
    same_when_read_back(back)


def test_results_are_frozen_and_flags_only_when_true() -> None:
    result = ToolResult(Decision.ADD, "fct-1", "saved")
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.entry_id = "fct-2"  # type: ignore[misc]
    assert result.to_dict() == {
        "ok": True,
        "decision": "ADD",
        "entry_id": "fct-1",
        "message": "saved",
    }
    flagged = ToolResult(Decision.ERROR, error="busy", transient=True)
    assert flagged.to_dict() == {
        "ok": False,
        "decision": "ERROR",
        "entry_id": None,
        "error": "busy",
        "transient": True,
    }
    assert result.replay().to_dict()["replayed"] is True
    assert ToolResult.from_dict({**result.to_dict(), "from_a_newer_version": 1}) == result
