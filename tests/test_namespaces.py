"""A namespace is the isolation boundary: nothing read or written in one shows in another."""

from __future__ import annotations

import reverie
from tests.conftest import both_backends, ok

pytestmark = both_backends


async def test_nothing_crosses_namespaces(rv: reverie.Reverie) -> None:
    alice, bob = rv.namespace("alice"), rv.namespace("bob")
    async with alice.session("s") as s:
        a = ok(
            await s.call_tool(
                "memory",
                {"action": "add", "target": "memory", "content": "Alice deploys with ansible"},
            ),
            "ADD",
        )
        f = ok(
            await s.call_tool(
                "topic",
                {"action": "save", "topic": "infra", "content": "The bastion is bastion.alice.dev"},
            ),
            "ADD",
        )
        await s.turn(user="ansible inventory lives in infra/hosts")
    async with bob.session("s") as s:
        assert "ansible" not in s.snapshot.text
        # the same text in bob's namespace is a fresh ADD, not a NOOP against alice
        b = ok(
            await s.call_tool(
                "memory",
                {"action": "add", "target": "memory", "content": "Alice deploys with ansible"},
            ),
            "ADD",
        )
        ok(
            await s.call_tool(
                "topic",
                {"action": "save", "topic": "infra", "content": "The bastion is bastion.bob.dev"},
            ),
            "ADD",
        )
        ok(
            await s.call_tool(
                "memory", {"action": "remove", "target": "memory", "old_text": "nothing of bob's"}
            ),
            "ERROR",
        )
        assert (await s.call_tool("topic", {"action": "list"}))["topics"][0]["facts"] == 1
    assert a["entry_id"] != b["entry_id"]
    assert [h.id for h in await bob.search("ansible inventory")] == [b["entry_id"]]
    assert await bob.chain(f["entry_id"]) == []
    assert {r.entry_id for r in await bob.ledger()}.isdisjoint(
        {r.entry_id for r in await alice.ledger()}
    )
    assert (rv.home / "alice" / "MEMORY.md").exists() and (rv.home / "bob" / "MEMORY.md").exists()
    assert [f.content for f in await alice.facts("infra")] == ["The bastion is bastion.alice.dev"]
    assert ok(await bob.restore(a["entry_id"]), "ERROR")
