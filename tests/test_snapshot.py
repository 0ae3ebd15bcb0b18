"""The frozen snapshot: taken at session start, never hot-updated, always within its caps."""

from __future__ import annotations

from pathlib import Path

import reverie
from reverie import Config
from tests.conftest import both_backends, ok

pytestmark = both_backends


async def test_snapshot_is_frozen_for_the_session(rv: reverie.Reverie) -> None:
    ns = rv.namespace()
    async with ns.session("a") as s:
        ok(
            await s.call_tool(
                "memory", {"action": "add", "target": "memory", "content": "Builds use make"}
            ),
            "ADD",
        )
    async with ns.session("b") as s:
        frozen = s.snapshot.text
        assert "Builds use make" in frozen
        ok(
            await s.call_tool(
                "memory", {"action": "add", "target": "memory", "content": "Deploys use helm"}
            ),
            "ADD",
        )
        ok(
            await s.call_tool("topic", {"action": "save", "topic": "x", "content": "A fact 1"}),
            "ADD",
        )
        assert s.snapshot.text == frozen and "helm" not in s.snapshot.text
    async with ns.session("c") as s:
        assert "Deploys use helm" in s.snapshot.text
        assert "- x: 1 facts" in s.snapshot.text


async def test_snapshot_never_exceeds_caps_even_after_a_cap_is_lowered(tmp_path: Path) -> None:
    async with reverie.open(tmp_path) as rv:
        async with rv.namespace().session("s") as s:
            for i in range(30):
                ok(
                    await s.call_tool(
                        "memory",
                        {
                            "action": "add",
                            "target": "memory",
                            "content": f"Lesson {i}: " + "word " * 15,
                        },
                    ),
                    "ADD",
                )
    small = Config().with_section("caps", memory=500)
    async with reverie.open(tmp_path, config=small) as rv:
        async with rv.namespace().session("s2") as s:
            block = s.snapshot.blocks["memory"]
            assert 0 < len(block) <= 500
            assert block.startswith("Lesson 0:")
            assert "older entries over the cap are not shown" in s.snapshot.text


async def test_snapshot_sections_and_marker(rv: reverie.Reverie) -> None:
    async with rv.namespace("bob").session("s") as s:
        for target, content in (
            ("user", "Prefers tables"),
            ("soul", "Be brief"),
            ("user_settings", "name: Bob"),
            ("agent_profile", "name: Rev"),
        ):
            ok(
                await s.call_tool(
                    "memory", {"action": "add", "target": target, "content": content}
                ),
                "ADD",
            )
    async with rv.namespace("bob").session("t") as s:
        text = s.snapshot.text
    assert text.startswith('<reverie-snapshot namespace="bob"')
    assert text.rstrip().endswith("</reverie-snapshot>")
    for needle in ("## USER", "Prefers tables", "## SOUL", "Be brief", "name: Bob", "name: Rev"):
        assert needle in text


async def test_tools_are_openai_function_schemas(rv: reverie.Reverie) -> None:
    async with rv.namespace().session("s") as s:
        tools = s.tools
    assert [t["function"]["name"] for t in tools] == ["memory", "topic", "skill_manage"]
    for tool in tools:
        assert tool["type"] == "function"
        params = tool["function"]["parameters"]
        assert params["type"] == "object" and params["additionalProperties"] is False
        assert set(params["required"]) <= set(params["properties"])
    memory = tools[0]["function"]["parameters"]["properties"]
    assert memory["action"]["enum"] == ["add", "replace", "remove", "reinforce"]
    assert {"memory", "user", "soul"} <= set(memory["target"]["enum"])
