"""Every malformed call returns ERROR with a clear message and writes nothing at all:
not to the database, not to the ledger, not to a file."""

from __future__ import annotations

from typing import Any

import pytest

import reverie
from tests.conftest import db_counts, tree

BIG = "x" * 4001
CASES: list[tuple[str, Any, str]] = [
    ("nonsense", {"action": "add"}, "unknown tool"),
    ("memory", "not json {", "not valid JSON"),
    ("memory", ["add"], "JSON object"),
    ("memory", {"action": "drop", "target": "memory", "content": "x"}, "action must be one of"),
    ("memory", {"action": "add", "target": "diary", "content": "x"}, "target must be one of"),
    ("memory", {"action": "add", "target": "memory"}, "'content' is required"),
    ("memory", {"action": "add", "target": "memory", "content": 42}, "must be a string"),
    ("memory", {"action": "add", "target": "memory", "content": "   "}, "must not be empty"),
    ("memory", {"action": "add", "target": "memory", "content": "a\x00b"}, "control characters"),
    ("memory", {"action": "add", "target": "memory", "content": "bell\x07"}, "control"),
    ("memory", {"action": "add", "target": "memory", "content": BIG}, "the limit is 4000"),
    ("memory", {"action": "add", "target": "memory", "content": "x", "extra": 1}, "unexpected"),
    ("memory", {"action": "add", "target": "memory", "content": "x ⟦×3⟧"}, "reinforcement mark"),
    (
        "memory",
        {"action": "add", "target": "memory", "content": '<reverie-snapshot namespace="x">'},
        "snapshot",
    ),
    (
        "memory",
        {"action": "add", "target": "memory", "content": "x", "old_text": "y"},
        "content only",
    ),
    ("memory", {"action": "replace", "target": "memory", "content": "x"}, "'old_text' is required"),
    (
        "memory",
        {"action": "remove", "target": "memory", "old_text": "zzz-no-match"},
        "no live MEMORY.md entry contains",
    ),
    ("memory", {"action": "remove", "target": "memory", "old_text": "shared"}, "matches 2"),
    (
        "memory",
        {"action": "reinforce", "target": "memory", "old_text": "nothing like it"},
        "no live",
    ),
    (
        "memory",
        {"action": "remove", "target": "memory", "old_text": "x", "content": "y"},
        "takes old_text",
    ),
    (
        "memory",
        {"action": "add", "target": "user_settings", "content": "no key here"},
        "key: value",
    ),
    ("topic", {"action": "save", "topic": "deploy"}, "'content' is required"),
    ("topic", {"action": "save", "topic": "../escape", "content": "x"}, "slug"),
    ("topic", {"action": "save", "topic": "/etc/passwd", "content": "x"}, "slug"),
    ("topic", {"action": "save", "topic": "Deploy", "content": "x"}, "lower-case slug"),
    ("topic", {"action": "save", "topic": "a" * 65, "content": "x"}, "at most 64"),
    ("topic", {"action": "save", "topic": "", "content": "x"}, "slug"),
    ("topic", {"action": "save", "topic": 7, "content": "x"}, "must be a string"),
    ("topic", {"action": "save", "topic": "ok", "content": ["x"]}, "must be a string"),
    ("topic", {"action": "list", "topic": "x"}, "unexpected"),
    ("topic", {"action": "delete", "topic": "x"}, "action must be one of"),
    ("skill_manage", {"action": "create", "name": "../../x", "content": "x"}, "slug"),
    ("skill_manage", {"action": "create", "name": "ok", "content": "x" * 20001}, "limit"),
    (
        "skill_manage",
        {"action": "create", "name": "ok", "content": "---\nname: x\n---\n"},
        "front matter",
    ),
    ("skill_manage", {"action": "patch", "name": "ok", "content": "x"}, "'old_text' is required"),
    ("skill_manage", {"action": "create", "name": ".hidden", "content": "x"}, "slug"),
]


@pytest.mark.parametrize(
    ("tool", "arguments", "message"), CASES, ids=[f"{i}-{c[0]}" for i, c in enumerate(CASES)]
)
async def test_bad_call_is_an_error_and_writes_nothing(
    rv: reverie.Reverie, tool: str, arguments: Any, message: str
) -> None:
    async with rv.namespace().session("setup") as s:
        for content in ("shared one", "shared two"):
            await s.call_tool("memory", {"action": "add", "target": "memory", "content": content})
    before = db_counts(rv.home), tree(rv.home)
    async with rv.namespace().session("s") as s:
        result = await s.call_tool(tool, arguments)
    assert result["decision"] == "ERROR" and result["ok"] is False
    assert message in result["error"], result["error"]
    assert result["entry_id"] is None
    assert (db_counts(rv.home), tree(rv.home)) == before


async def test_bad_namespace_and_session_names_raise(rv: reverie.Reverie) -> None:
    for bad in ("", "../x", "a/b", "x" * 65, ".hidden", None):
        with pytest.raises(reverie.ReverieError):
            rv.namespace(bad)  # type: ignore[arg-type]
        with pytest.raises(reverie.ReverieError):
            rv.namespace().session(bad)  # type: ignore[arg-type]


async def test_bad_turns_raise_and_write_nothing(rv: reverie.Reverie) -> None:
    before = db_counts(rv.home)
    async with rv.namespace().session("s") as s:
        for kwargs in (
            {},
            {"user": ""},
            {"user": "a\x00b"},
            {"assistant": 5},
            {"user": "x" * 100_001},
        ):
            with pytest.raises(reverie.ReverieError):
                await s.turn(**kwargs)
    assert db_counts(rv.home) == before


async def test_writer_kill_switch_refuses_writes(tmp_path: object) -> None:
    from pathlib import Path

    home = Path(str(tmp_path))
    config = reverie.Config().with_section("writer", enabled=False)
    async with reverie.open(home, config=config) as rv:
        async with rv.namespace().session("s") as s:
            result = await s.call_tool(
                "memory", {"action": "add", "target": "memory", "content": "x"}
            )
    assert result["decision"] == "ERROR" and "disabled" in result["error"]
    assert db_counts(home)["entries"] == 0 and db_counts(home)["ledger"] == 0
