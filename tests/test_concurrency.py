"""Races inside one process: the duplicate check and the cap check share the insert's
critical section, so concurrent identical writes leave one fact and caps never overflow."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

import reverie
from reverie import Config
from tests.conftest import both_backends, db_counts

pytestmark = both_backends


async def test_fifty_identical_concurrent_saves_leave_one_fact(rv: reverie.Reverie) -> None:
    results: list[dict[str, object]] = []

    async def save(i: int) -> None:
        async with rv.namespace().session(f"s{i}") as s:
            results.append(
                await s.call_tool(
                    "topic",
                    {"action": "save", "topic": "deploy", "content": "The deploy timeout is 30s"},
                )
            )

    async with anyio.create_task_group() as tg:
        for i in range(50):
            tg.start_soon(save, i)
    decisions = sorted(str(r["decision"]) for r in results)
    assert decisions == ["ADD"] + ["NOOP"] * 49
    assert len({r["entry_id"] for r in results}) == 1
    assert len(await rv.namespace().facts("deploy")) == 1


async def test_concurrent_adds_never_overflow_the_cap(tmp_path: Path) -> None:
    config = Config().with_section("caps", memory=200)
    async with reverie.open(tmp_path, config=config) as rv:
        results: list[dict[str, object]] = []

        async def add(i: int) -> None:
            async with rv.namespace().session(f"s{i}") as s:
                results.append(
                    await s.call_tool(
                        "memory",
                        {
                            "action": "add",
                            "target": "memory",
                            "content": f"distinct lesson {i:03d}",
                        },
                    )
                )

        async with anyio.create_task_group() as tg:
            for i in range(40):
                tg.start_soon(add, i)
        added = [r for r in results if r["decision"] == "ADD"]
        refused = [r for r in results if r["decision"] == "ERROR"]
        assert len(added) + len(refused) == 40 and added and refused
        assert all("full" in str(r["error"]) for r in refused)
        live = await rv.namespace().entries()
        assert len(live) == len(added)
        block = "\n§\n".join(e.content for e in live)
        assert len(block) <= 200
    assert (tmp_path / "default" / "MEMORY.md").read_text() == block + "\n"


@pytest.mark.parametrize("namespaces", [1, 4])
async def test_mixed_concurrent_writes_are_all_acknowledged(
    tmp_path: Path, namespaces: int
) -> None:
    async with reverie.open(tmp_path) as rv:
        acked: list[str] = []

        async def worker(n: int) -> None:
            ns = rv.namespace(f"ns{n % namespaces}")
            async with ns.session(f"w{n}") as s:
                for j in range(10):
                    r = await s.call_tool(
                        "topic",
                        {
                            "action": "save",
                            "topic": f"t{j % 3}",
                            "content": f"worker {n} item {j} is ok",
                        },
                    )
                    assert r["decision"] == "ADD", r
                    acked.append(str(r["entry_id"]))
                    await s.turn(user=f"turn {j} of worker {n}")

        async with anyio.create_task_group() as tg:
            for n in range(8):
                tg.start_soon(worker, n)
    counts = db_counts(tmp_path)
    assert counts["facts"] == len(acked) == 80
    assert counts["episodes"] == 80


@pytest.mark.parametrize("fair_wait", [True, False])
async def test_writes_land_with_or_without_the_writers_turn(
    tmp_path: Path, fair_wait: bool
) -> None:
    """Fair waiting only orders writers (SQLite's lock excludes them): with ``fair_wait`` off
    no ``reverie.db.lock`` is made, and a home whose lock file cannot be opened (here a
    folder of that name) still takes every write, ordered by SQLite's own waiting."""
    home = tmp_path / "home"
    config = Config().with_section("store", fair_wait=fair_wait)
    if fair_wait:
        (home / "reverie.db.lock").mkdir(parents=True)
    async with reverie.open(home, config=config) as rv:
        results: list[dict[str, object]] = []

        async def save(i: int) -> None:
            async with rv.namespace(f"n{i % 4}").session(f"s{i}") as s:
                results.append(
                    await s.call_tool(
                        "topic", {"action": "save", "topic": "t", "content": f"item {i} is ok"}
                    )
                )

        async with anyio.create_task_group() as tg:
            for i in range(16):
                tg.start_soon(save, i)
    assert [r["decision"] for r in results] == ["ADD"] * 16
    assert (home / "reverie.db.lock").exists() is fair_wait
