"""Projections: written after each commit, rebuilt from the database when they disagree."""

from __future__ import annotations

import json
from pathlib import Path

import reverie
from tests.conftest import ok


async def _populate(home: Path) -> None:
    async with reverie.open(home) as rv:
        async with rv.namespace("p").session("s") as s:
            ok(
                await s.call_tool(
                    "memory", {"action": "add", "target": "memory", "content": "Fact one"}
                ),
                "ADD",
            )
            ok(
                await s.call_tool(
                    "memory", {"action": "add", "target": "user", "content": "Likes tea"}
                ),
                "ADD",
            )
            ok(
                await s.call_tool(
                    "topic", {"action": "save", "topic": "t", "content": "Port is 8080"}
                ),
                "ADD",
            )
            ok(
                await s.call_tool(
                    "topic", {"action": "save", "topic": "t", "content": "Port is 9090"}
                ),
                "SUPERSEDE",
            )
            ok(
                await s.call_tool(
                    "skill_manage", {"action": "create", "name": "k", "content": "do it"}
                ),
                "CREATED",
            )


async def test_paths_and_contents(tmp_path: Path) -> None:
    await _populate(tmp_path)
    ns = tmp_path / "p"
    assert (ns / "MEMORY.md").read_text() == "Fact one\n"
    assert (ns / "USER.md").read_text() == "Likes tea\n"
    assert not (ns / "SOUL.md").exists()
    events = [json.loads(x) for x in (ns / "topics/t/history.jsonl").read_text().splitlines()]
    assert [e["event"] for e in events] == ["add", "add", "supersede"]
    assert (ns / "skills/k/SKILL.md").read_text().startswith("---\nname: k\n")
    leftovers = [p for p in tmp_path.rglob(".*") if p.name != ".projection.lock"]
    assert leftovers == [], "no temp files are left behind"


async def test_stale_or_torn_projections_are_rebuilt_on_open(tmp_path: Path) -> None:
    await _populate(tmp_path)
    ns = tmp_path / "p"
    good = {p: p.read_bytes() for p in ns.rglob("*") if p.is_file()}
    (ns / "MEMORY.md").write_text("somebody edited this\n")
    (ns / "USER.md").unlink()
    history = ns / "topics/t/history.jsonl"
    history.write_bytes(history.read_bytes()[:-20])  # a torn append
    (ns / "skills/k/SKILL.md").unlink()
    async with reverie.open(tmp_path):
        pass
    assert {p: p.read_bytes() for p in ns.rglob("*") if p.is_file()} == good


async def test_removing_the_last_entry_empties_the_file(tmp_path: Path) -> None:
    async with reverie.open(tmp_path) as rv:
        async with rv.namespace().session("s") as s:
            ok(
                await s.call_tool(
                    "memory", {"action": "add", "target": "soul", "content": "Warm tone"}
                ),
                "ADD",
            )
            ok(
                await s.call_tool(
                    "memory", {"action": "remove", "target": "soul", "old_text": "Warm"}
                ),
                "REMOVED",
            )
    assert (tmp_path / "default" / "SOUL.md").read_text() == ""


def test_an_atomic_write_leaves_the_file_private_and_no_temporary_behind(tmp_path: Path) -> None:
    """The temporary file is named for the writing process and thread: it is renamed over
    the file (mode 0600: memory files hold personal data), and a write that fails midway
    leaves the old file whole and no temporary file behind."""
    import os
    import stat

    import pytest

    from reverie.stores.projection import atomic_write

    path = tmp_path / "topics" / "deploy" / "summary.md"
    atomic_write(path, "port 8080\n")  # its folder made on the first write
    atomic_write(path, "port 9090\n")
    assert path.read_text(encoding="utf-8") == "port 9090\n"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    with pytest.raises(UnicodeEncodeError):
        atomic_write(path, "half \ud800 written")  # a lone surrogate cannot be encoded
    assert path.read_text(encoding="utf-8") == "port 9090\n"
    assert sorted(p.name for p in path.parent.iterdir()) == ["summary.md"]


def test_two_threads_writing_one_file_never_mix(tmp_path: Path) -> None:
    """Writers outside the projection lock (``doctor``) may write one file at once from two
    threads: each has a temporary file of its own, so every write lands whole."""
    from concurrent.futures import ThreadPoolExecutor

    from reverie.stores.projection import atomic_write

    path = tmp_path / "MEMORY.md"
    texts = [str(n) * (1000 + 4000 * (n % 2)) for n in range(2)]

    def write(n: int) -> None:
        for _ in range(300):
            atomic_write(path, texts[n])
            assert path.read_text(encoding="utf-8") in texts

    with ThreadPoolExecutor(2) as pool:
        for future in [pool.submit(write, n) for n in range(2)]:
            future.result()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["MEMORY.md"]
