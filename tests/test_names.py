"""One validator for namespace, session, topic and skill names (reverie.names): reserved
names, whitespace and control characters, and names that differ only in case."""

from __future__ import annotations

from pathlib import Path

import pytest

import reverie
from reverie.names import MAX_NAME_CHARS, check_name
from tests.conftest import db_counts, ok

HOME_FILES = ["reverie.db", "reverie.db-journal", "reverie.db-wal", "reverie.db-shm", "REVERIE.DB"]
DEVICES = [
    "CON",
    "con",
    "prn",
    "Aux",
    "nul",
    "COM1",
    "com9",
    "LPT1",
    "lpt9",
    "con.txt",
    "NUL.tar.gz",
]


async def _memory(ns: reverie.Namespace, content: str) -> dict[str, object]:
    async with ns.session("s") as s:
        return await s.call_tool(
            "memory", {"action": "add", "target": "memory", "content": content}
        )


@pytest.mark.parametrize("name", [*HOME_FILES, "logs", "topics", "skills", *DEVICES])
async def test_reserved_namespaces_are_refused_and_the_home_keeps_working(
    tmp_path: Path, name: str
) -> None:
    """D1: a namespace named like the home's own files never reaches the disk; the other
    namespaces keep working and their writes land in files, open after open."""
    async with reverie.open(tmp_path) as rv:
        ok(await _memory(rv.namespace("alice"), "Alice deploys on Fridays"), "ADD")
        before = db_counts(tmp_path)
        with pytest.raises(reverie.InputError, match="reserved"):
            rv.namespace(name)
        ok(await _memory(rv.namespace("bob"), "Bob uses zsh"), "ADD")
    assert db_counts(tmp_path)["entries"] == before["entries"] + 1
    assert not any(p.name == name and p.is_dir() for p in tmp_path.iterdir())
    async with reverie.open(tmp_path) as rv:  # the home still opens
        ok(await _memory(rv.namespace("carol"), "Carol reviews on Mondays"), "ADD")
        assert await rv.namespaces() == ["alice", "bob", "carol"]
    for who, text in (("alice", "Alice deploys"), ("bob", "Bob uses"), ("carol", "Carol")):
        assert text in (tmp_path / who / "MEMORY.md").read_text()


@pytest.mark.parametrize(
    "name", ["alice\n", "alice\r\n", " alice", "alice ", "al\tice", "al\x00ice", "al\x1bice"]
)
async def test_whitespace_and_control_characters_are_refused(
    rv: reverie.Reverie, name: str
) -> None:
    """D9: ``$`` let 'alice\\n' through, a second folder that looks like 'alice'."""
    with pytest.raises(reverie.InputError):
        rv.namespace(name)
    with pytest.raises(reverie.InputError):
        rv.namespace("alice").session(name)


@pytest.mark.parametrize("topic", ["deploy\n", "deploy ", " deploy", "con", "lpt1", "nul.md"])
async def test_bad_topic_and_skill_names_are_refused_with_nothing_written(
    rv: reverie.Reverie, topic: str
) -> None:
    ns = rv.namespace("alice")
    async with ns.session("s") as s:
        saved = await s.call_tool("topic", {"action": "save", "topic": topic, "content": "x is 1"})
        assert saved["decision"] == "ERROR", saved
        made = await s.call_tool(
            "skill_manage", {"action": "create", "name": topic, "content": "x"}
        )
        assert made["decision"] == "ERROR", made
    assert await ns.ledger() == []
    assert not (rv.home / "alice").exists()


async def test_a_topic_may_share_a_name_with_a_namespace_folder(rv: reverie.Reverie) -> None:
    """Topics live under topics/, so only device names are reserved for them."""
    async with rv.namespace("alice").session("s") as s:
        ok(
            await s.call_tool("topic", {"action": "save", "topic": "logs", "content": "x is 1"}),
            "ADD",
        )
    assert (rv.home / "alice" / "topics" / "logs" / "history.jsonl").exists()


async def test_a_name_differing_only_in_case_is_refused_naming_the_existing_one(
    tmp_path: Path,
) -> None:
    async with reverie.open(tmp_path) as rv:
        ok(await _memory(rv.namespace("alice"), "Alice deploys on Fridays"), "ADD")
        with pytest.raises(reverie.InputError, match="'alice'"):
            rv.namespace("Alice")
    async with reverie.open(tmp_path) as rv:  # known from the stored names, after reopening
        with pytest.raises(
            reverie.InputError, match="differs only in case from the existing 'alice'"
        ):
            rv.namespace("ALICE")
        assert rv.namespace("alice").name == "alice"
        assert rv.namespace("Bob").name == "Bob"  # a new name is fine …
        with pytest.raises(reverie.InputError, match="'Bob'"):
            rv.namespace("bob")  # … and claims its folder
    assert not (tmp_path / "Alice").exists()


def test_the_length_limit_and_the_shape() -> None:
    assert check_name("namespace", "a" * MAX_NAME_CHARS) == "a" * MAX_NAME_CHARS
    with pytest.raises(reverie.InputError, match="at most 64"):
        check_name("namespace", "a" * (MAX_NAME_CHARS + 1))
    for good in ("a", "a.b", "proj-1", "user_2", "conference", "console", "com10", "reverie"):
        assert check_name("namespace", good, home_level=True) == good
    for bad in (".hidden", "a..b", "-a", "a-", "a/b", "../x", "", "é"):
        with pytest.raises(reverie.InputError):
            check_name("namespace", bad, home_level=True)
    with pytest.raises(reverie.InputError, match="required and must be a string"):
        check_name("namespace", 7)
    assert check_name("topic", "logs", slug=True) == "logs"  # not beside the home's files
    with pytest.raises(reverie.InputError, match="lower-case slug"):
        check_name("topic", "Deploy", slug=True)
