"""Every malformed call returns ERROR with a clear message and writes nothing at all:
not to the database, not to the ledger, not to a file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import reverie
from reverie.config import DEFAULT_TOPIC_READ_CHARS, DEFAULT_TOPIC_READ_FACTS
from reverie.errors import MESSAGE_CHARS, QUOTE_CHARS
from reverie.stores import topics
from reverie.stores.records import Fact
from reverie.telemetry.tracing import NAME_CHARS
from tests.conftest import both_backends, db_counts, ok, tree, write_db

pytestmark = both_backends

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
    async with rv.namespace().session("s") as s:
        await rv.wait_idle()  # the setup session's end is written (its records' files)
        before = db_counts(rv.home), tree(rv.home)
        result = await s.call_tool(tool, arguments)
        await rv.wait_idle()
        after = db_counts(rv.home), tree(rv.home)
    assert result["decision"] == "ERROR" and result["ok"] is False
    assert message in result["error"], result["error"]
    assert result["entry_id"] is None
    assert after == before


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


# -- D8: text SQLite cannot store -----------------------------------------------------------


async def test_lone_surrogates_in_a_turn_are_a_clear_error(rv: reverie.Reverie) -> None:
    """D8: ``turn(user="caf\\udce9")`` raised a raw UnicodeEncodeError into the host."""
    before = db_counts(rv.home)
    async with rv.namespace().session("s") as s:
        for kwargs, field in (
            ({"user": "caf\udce9"}, "user"),
            ({"assistant": "\ud800x"}, "assistant"),
        ):
            with pytest.raises(reverie.InputError) as caught:
                await s.turn(**kwargs)
            assert str(caught.value).startswith(field) and "surrogate" in str(caught.value)
    with pytest.raises(reverie.InputError, match="query"):
        await rv.namespace().search("caf\udce9")
    assert db_counts(rv.home) == before


@pytest.mark.parametrize(
    ("tool", "arguments", "field"),
    [
        ("memory", {"action": "add", "target": "memory", "content": "caf\udce9"}, "'content'"),
        ("topic", {"action": "save", "topic": "deploy", "content": "\udce9"}, "'content'"),
        ("memory", {"action": "remove", "target": "memory", "old_text": "a\udce9"}, "'old_text'"),
        ("skill_manage", {"action": "create", "name": "s", "content": "x\ud800"}, "'content'"),
        ("memory", {"action": "add", "target": "memory", "content": "x", "\udce9": 1}, "argument"),
    ],
)
async def test_lone_surrogates_in_a_tool_call_are_a_clear_error(
    rv: reverie.Reverie, tool: str, arguments: dict[str, Any], field: str
) -> None:
    """D8 through call_tool: a clear ERROR naming the field, not "internal error"."""
    before = db_counts(rv.home), tree(rv.home)
    async with rv.namespace().session("s") as s:
        result = await s.call_tool(tool, arguments)
    assert result["decision"] == "ERROR" and "internal error" not in result["error"]
    assert field in result["error"] and "surrogate" in result["error"], result["error"]
    assert (db_counts(rv.home), tree(rv.home)) == before
    restored = await rv.namespace().restore("fct-\udce9")
    assert restored["decision"] == "ERROR" and "internal error" not in restored["error"]


# -- D7: bounded answers and spans ----------------------------------------------------------

HUGE_CALLS: list[tuple[str, Any]] = [
    ("memory", {"action": "x" * 5_000_000, "target": "memory", "content": "c"}),
    ("memory", {"action": "add", "target": "😀" * 2_500_000, "content": "c"}),
    ("memory", {"action": "add", "target": "memory", "content": "c", "k" * 5_000_000: 1}),
    ("memory", {"action": "add", "target": "memory", "content": "c" * 5_000_000}),
    ("topic", {"action": "save", "topic": "t" * 5_000_000, "content": "c"}),
    ("x" * 5_000_000, {"action": "add"}),
]


@pytest.mark.parametrize(("tool", "arguments"), HUGE_CALLS, ids=range(len(HUGE_CALLS)))
async def test_error_answers_and_span_status_are_bounded(
    tmp_path: Path, spans: Any, tool: str, arguments: Any
) -> None:
    """D7: a 5 MB action made a 5 MB error (30 MB of JSON for 2.5 M emoji), copied into the
    span status. An error quotes at most QUOTE_CHARS of any input; a span at most
    MESSAGE_CHARS."""
    provider, exporter = spans
    async with reverie.open(tmp_path, tracer_provider=provider) as rv:
        async with rv.namespace().session("s") as s:
            result = await s.call_tool(tool, arguments)
    assert result["decision"] == "ERROR"
    assert len(json.dumps(result)) < 3_000  # ensure_ascii: an emoji costs 12 bytes
    assert len(result["error"]) < QUOTE_CHARS + 300
    [span] = [x for x in exporter.get_finished_spans() if x.name.startswith("execute_tool")]
    assert len(span.name) < 200
    assert span.status.description is not None and len(span.status.description) <= MESSAGE_CHARS
    assert NAME_CHARS == 64  # a tool or action name on a span, at most
    for value in (span.attributes or {}).values():
        assert len(str(value)) <= NAME_CHARS + 30  # the cut name and its full length


# -- D14: a topic read is bounded -----------------------------------------------------------


async def test_topic_read_returns_the_newest_facts_and_counts_the_rest(tmp_path: Path) -> None:
    """D14: a topic of 1,500 facts answered a read with 207,644 chars. A read shows at most
    ``writer.topic_read_facts`` live facts, newest first, and counts the rest."""
    assert DEFAULT_TOPIC_READ_FACTS == 50  # the documented default
    total = DEFAULT_TOPIC_READ_FACTS + 7
    async with reverie.open(tmp_path) as rv:
        async with rv.namespace().session("s") as s:
            for i in range(total):
                ok(await s.call_tool("topic", save_item(i)), "ADD")
            read = await s.call_tool("topic", {"action": "read", "topic": "inventory"})
    assert len(read["facts"]) == DEFAULT_TOPIC_READ_FACTS and read["more"] == 7
    expected = [save_item(i)["content"] for i in range(total - 1, 6, -1)]
    assert [f["content"] for f in read["facts"]] == expected  # newest first
    assert str(total) in read["message"] and "7 older" in read["message"]


async def test_topic_read_cap_is_configured(tmp_path: Path) -> None:
    config = reverie.Config().with_section("writer", topic_read_facts=3)
    async with reverie.open(tmp_path, config=config) as rv:
        async with rv.namespace().session("s") as s:
            for i in range(5):
                ok(await s.call_tool("topic", save_item(i)), "ADD")
            read = await s.call_tool("topic", {"action": "read", "topic": "inventory"})
    assert [f["content"] for f in read["facts"]] == [save_item(i)["content"] for i in (4, 3, 2)]
    assert read["more"] == 2


async def test_topic_read_is_bounded_in_characters_too(tmp_path: Path) -> None:
    """Long facts: the answer stops at ``writer.topic_read_chars`` of fact text (always at
    least one fact), still newest first, still counting the rest."""
    assert DEFAULT_TOPIC_READ_CHARS == 8_000  # the documented default
    config = reverie.Config().with_section("writer", topic_read_chars=1_000)
    async with reverie.open(tmp_path, config=config) as rv:
        async with rv.namespace().session("s") as s:
            for i in range(12):
                item = save_item(i)
                item["content"] += ". " + f"Note {i}: " + "handle with care, " * 20
                ok(await s.call_tool("topic", item), "ADD")
            read = await s.call_tool("topic", {"action": "read", "topic": "inventory"})
            tiny = reverie.Config().with_section("writer", topic_read_chars=1)
    size = len(read["facts"][0]["content"])
    assert len(read["facts"]) == 1_000 // size and read["more"] == 12 - 1_000 // size
    assert sum(len(f["content"]) for f in read["facts"]) <= 1_000
    async with reverie.open(tmp_path, config=tiny) as rv:
        async with rv.namespace().session("s") as s:
            one = await s.call_tool("topic", {"action": "read", "topic": "inventory"})
    assert len(one["facts"]) == 1 and one["more"] == 11


async def test_a_topic_of_1500_facts_reads_small(tmp_path: Path) -> None:
    """D14 as reported: 1,500 facts answered a read with 207,644 chars of JSON."""
    async with reverie.open(tmp_path) as rv:
        async with rv.namespace().session("s") as s:
            first = ok(await s.call_tool("topic", save_item(0)), "ADD")
    # the other 1,499 through the store's own insert, in one transaction (saving each
    # through the tool is the same code, 1,500 fsyncs slower)
    with write_db(tmp_path) as conn:
        for i in range(1, 1_500):
            fact_id = f"fct-{i:06d}"
            when = f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}+00:00"
            topics.insert(
                conn,
                Fact(
                    fact_id,
                    "default",
                    "inventory",
                    save_item(i)["content"],
                    fact_id,
                    1,
                    None,
                    None,
                    "test",
                    "s",
                    when,
                    None,
                ),
            )
    async with reverie.open(tmp_path) as rv:
        async with rv.namespace().session("s") as s:
            read = await s.call_tool("topic", {"action": "read", "topic": "inventory"})
    since = [f["since"] for f in read["facts"]]
    assert since == sorted(since, reverse=True)  # newest first
    assert first["decision"] == "ADD"
    assert read["more"] == 1_500 - DEFAULT_TOPIC_READ_FACTS
    assert len(json.dumps(read)) < 10_000


def save_item(i: int) -> dict[str, str]:
    """Facts no rule merges or supersedes: each about its own item."""
    return {
        "action": "save",
        "topic": "inventory",
        "content": f"Shelf item-{i:04d} holds {i * 7 + 3} units of part P{i}",
    }
