"""The memory tool: every action and decision, caps at the boundary, restore."""

from __future__ import annotations

from pathlib import Path

import reverie
from reverie import Config
from tests.conftest import both_backends, db_counts, ok, tree

pytestmark = both_backends


def add(content: str, target: str = "memory") -> dict[str, str]:
    return {"action": "add", "target": target, "content": content}


async def test_add_then_near_duplicate_is_noop_naming_the_twin(rv: reverie.Reverie) -> None:
    async with rv.namespace().session("s") as s:
        first = ok(await s.call_tool("memory", add("The repo installs with uv sync")), "ADD")
        again = ok(await s.call_tool("memory", add("the repo installs with UV sync.")), "NOOP")
        reworded = ok(await s.call_tool("memory", add("Repo now installs with uv sync")), "NOOP")
    assert again["entry_id"] == first["entry_id"] == reworded["entry_id"]
    assert again["tier"] == "exact" and reworded["tier"] == "jaccard"
    assert first["entry_id"] in again["message"]
    assert [e.content for e in await rv.namespace().entries()] == ["The repo installs with uv sync"]
    decisions = [r.decision for r in await rv.namespace().ledger()]
    assert decisions == ["ADD", "NOOP", "NOOP"]


async def test_replace_remove_reinforce_and_the_ledger(rv: reverie.Reverie) -> None:
    ns = rv.namespace()
    async with ns.session("s") as s:
        a = ok(await s.call_tool("memory", add("CI runs on Buildkite")), "ADD")
        b = ok(await s.call_tool("memory", add("Tests need Docker running")), "ADD")
        r = ok(
            await s.call_tool(
                "memory",
                {
                    "action": "replace",
                    "target": "memory",
                    "old_text": "buildkite",
                    "content": "CI runs on GitHub Actions",
                },
            ),
            "REPLACED",
        )
        assert r["replaced"] == a["entry_id"] and r["entry_id"] != a["entry_id"]
        f = ok(
            await s.call_tool(
                "memory", {"action": "reinforce", "target": "memory", "old_text": "Docker"}
            ),
            "REINFORCED",
        )
        assert f["entry_id"] == b["entry_id"] and f["reinforce"] == 2
        ok(
            await s.call_tool(
                "memory", {"action": "reinforce", "target": "memory", "old_text": "Docker"}
            ),
            "REINFORCED",
        )
        gone = ok(
            await s.call_tool(
                "memory", {"action": "remove", "target": "memory", "old_text": "GitHub"}
            ),
            "REMOVED",
        )
        assert gone["entry_id"] == r["entry_id"]
    memory_md = (rv.home / "default" / "MEMORY.md").read_text()
    assert memory_md == "Tests need Docker running ⟦×3⟧\n"
    # the writer's rows: at the session's end the learner may already have moved what is
    # no longer active (the replaced and the removed entry) to COLD, a row of its own
    ledger = [x for x in await ns.ledger() if x.actor != "learner"]
    assert [x.decision for x in ledger] == [
        "ADD",
        "ADD",
        "REPLACED",
        "REINFORCED",
        "REINFORCED",
        "REMOVED",
    ]
    assert ledger[2].before == {"entry_id": a["entry_id"], "content": "CI runs on Buildkite"}
    assert ledger[5].before == {"content": "CI runs on GitHub Actions"}
    assert all(x.ts and x.actor == "writer" and x.session_id == "s" for x in ledger)


async def test_restore_brings_back_removed_and_replaced(rv: reverie.Reverie) -> None:
    ns = rv.namespace()
    async with ns.session("s") as s:
        a = ok(await s.call_tool("memory", add("Staging is on k8s")), "ADD")
        ok(
            await s.call_tool(
                "memory", {"action": "remove", "target": "memory", "old_text": "Staging"}
            ),
            "REMOVED",
        )
    ok(await ns.restore(a["entry_id"]), "RESTORED")
    assert [e.id for e in await ns.entries()] == [a["entry_id"]]
    ok(await ns.restore(a["entry_id"]), "ERROR")  # live already
    async with ns.session("s2") as s:
        r = ok(
            await s.call_tool(
                "memory",
                {
                    "action": "replace",
                    "target": "memory",
                    "old_text": "k8s",
                    "content": "Staging is on ECS",
                },
            ),
            "REPLACED",
        )
    restored = ok(await ns.restore(a["entry_id"]), "RESTORED")
    assert r["entry_id"] in restored["message"]
    assert [e.content for e in await ns.entries()] == ["Staging is on k8s"]
    assert (rv.home / "default" / "MEMORY.md").read_text() == "Staging is on k8s\n"
    ok(await ns.restore("ent-nope"), "ERROR")


async def test_cap_boundary_exact_fit_then_refusal(tmp_path: Path) -> None:
    config = Config().with_section("caps", memory=50)
    async with reverie.open(tmp_path, config=config) as rv:
        async with rv.namespace().session("s") as s:
            ok(await s.call_tool("memory", add("a" * 20)), "ADD")
            # 20 + len("\n§\n") + 27 == 50: exactly at the cap is allowed
            ok(await s.call_tool("memory", add("b" * 27)), "ADD")
            before = db_counts(tmp_path), tree(tmp_path)
            full = ok(await s.call_tool("memory", add("c")), "ERROR")
            assert "50/50 chars used" in full["error"]
            assert "replace" in full["error"] and "remove" in full["error"]
            assert "topic" in full["error"]
            assert (db_counts(tmp_path), tree(tmp_path)) == before
            # reinforcing grows the rendered entry: refused at the cap as well
            ok(
                await s.call_tool(
                    "memory", {"action": "reinforce", "target": "memory", "old_text": "aaa"}
                ),
                "ERROR",
            )
            # a shorter replacement fits
            ok(
                await s.call_tool(
                    "memory",
                    {
                        "action": "replace",
                        "target": "memory",
                        "old_text": "bbb",
                        "content": "short",
                    },
                ),
                "REPLACED",
            )
            assert len((tmp_path / "default" / "MEMORY.md").read_text()) - 1 <= 50


async def test_each_target_has_its_own_cap_and_file(tmp_path: Path) -> None:
    config = Config().with_section("caps", user=30, soul=30)
    async with reverie.open(tmp_path, config=config) as rv:
        async with rv.namespace().session("s") as s:
            ok(await s.call_tool("memory", add("Likes terse replies", "user")), "ADD")
            ok(await s.call_tool("memory", add("Answer in a calm voice", "soul")), "ADD")
            ok(await s.call_tool("memory", add("Another long user preference", "user")), "ERROR")
            ok(await s.call_tool("memory", add("Long memory fact is fine here")), "ADD")
    home = tmp_path / "default"
    assert (home / "USER.md").read_text() == "Likes terse replies\n"
    assert (home / "SOUL.md").read_text() == "Answer in a calm voice\n"
    assert (home / "MEMORY.md").read_text() == "Long memory fact is fine here\n"


async def test_keyed_settings_change_in_place(rv: reverie.Reverie) -> None:
    ns = rv.namespace()
    async with ns.session("s") as s:
        ok(await s.call_tool("memory", add("name: Alice", "user_settings")), "ADD")
        tz = ok(await s.call_tool("memory", add("Timezone: Europe/Oslo", "user_settings")), "ADD")
        moved = ok(
            await s.call_tool("memory", add("timezone: America/New_York", "user_settings")),
            "REPLACED",
        )
        assert moved["replaced"] == tz["entry_id"]
        ok(await s.call_tool("memory", add("timezone: America/New_York", "user_settings")), "NOOP")
        ok(await s.call_tool("memory", add("I am Reverie-bot", "agent_profile")), "ERROR")
        ok(await s.call_tool("memory", add("role: release engineer", "agent_profile")), "ADD")
    settings = [e.content for e in await ns.entries("user_settings")]
    assert settings == ["name: Alice", "timezone: America/New_York"]


async def test_replace_into_an_existing_twin_is_noop(rv: reverie.Reverie) -> None:
    async with rv.namespace().session("s") as s:
        a = ok(await s.call_tool("memory", add("Use pnpm for the frontend")), "ADD")
        ok(await s.call_tool("memory", add("Backend uses poetry")), "ADD")
        noop = ok(
            await s.call_tool(
                "memory",
                {
                    "action": "replace",
                    "target": "memory",
                    "old_text": "poetry",
                    "content": "use pnpm for the frontend",
                },
            ),
            "NOOP",
        )
        assert noop["entry_id"] == a["entry_id"]
        same = ok(
            await s.call_tool(
                "memory",
                {
                    "action": "replace",
                    "target": "memory",
                    "old_text": "poetry",
                    "content": "Backend uses poetry",
                },
            ),
            "NOOP",
        )
        assert same["duplicate_of"] != a["entry_id"]
