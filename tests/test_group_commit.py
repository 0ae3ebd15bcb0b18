"""Group commit: writes that queue behind a commit are committed together, each in its own
savepoint — one failing write leaves the others whole, and nothing is acknowledged before
its commit."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import anyio
import pytest

from reverie.config import StoreConfig
from reverie.errors import ClosedError
from reverie.stores import db as db_module
from reverie.stores.db import Database


async def open_db(tmp_path: Path) -> Database:
    db = await Database.open(tmp_path / "g.db", StoreConfig())
    await db.write(lambda c: c.execute("CREATE TABLE t (n INTEGER PRIMARY KEY, tag TEXT)"))
    return db


async def test_a_failing_write_in_a_group_rolls_back_alone(tmp_path: Path) -> None:
    db = await open_db(tmp_path)
    results: dict[int, object] = {}

    def body(n: int):  # type: ignore[no-untyped-def]
        def run(conn: sqlite3.Connection) -> int:
            conn.execute("INSERT INTO t VALUES (?, 'x')", (n,))
            if n % 5 == 0:
                raise ValueError(f"write {n} refused after inserting")
            return n

        return run

    async def one(n: int) -> None:
        try:
            results[n] = await db.write(body(n))
        except ValueError as exc:
            results[n] = exc

    async with anyio.create_task_group() as tg:
        for n in range(1, 41):
            tg.start_soon(one, n)
    rows = await db.read(lambda c: [r[0] for r in c.execute("SELECT n FROM t ORDER BY n")])
    await db.close()
    assert rows == [n for n in range(1, 41) if n % 5]
    assert all(isinstance(results[n], ValueError) for n in range(5, 41, 5))
    assert all(results[n] == n for n in range(1, 41) if n % 5)


async def test_groups_form_under_concurrency(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = await open_db(tmp_path)
    sizes: list[int] = []
    real = db_module._group

    def spy(conn: sqlite3.Connection, group: list[object], *rest: object) -> None:
        sizes.append(len(group))
        real(conn, group, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(db_module, "_group", spy)

    async def one(n: int) -> None:
        await db.write(lambda c: c.execute("INSERT INTO t VALUES (?, 'y')", (n,)))

    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            for n in range(200):
                tg.start_soon(one, n)
    count = await db.read(lambda c: c.execute("SELECT count(*) FROM t").fetchone()[0])
    await db.close()
    assert count == 200 and sum(sizes) == 200
    assert max(sizes) > 1 and len(sizes) < 200  # fewer commits than writes
    assert max(sizes) <= db_module.MAX_GROUP


async def test_a_cancelled_waiting_write_never_runs(tmp_path: Path) -> None:
    db = await open_db(tmp_path)
    release = anyio.Event()

    def slow(conn: sqlite3.Connection) -> None:
        conn.execute("INSERT INTO t VALUES (1, 'slow')")

    async def blocker() -> None:
        async with db._write_lock:  # hold the writer: the next write must wait
            await release.wait()

    async with anyio.create_task_group() as tg:
        tg.start_soon(blocker)
        await anyio.sleep(0.01)
        with anyio.move_on_after(0.05):
            await db.write(slow)
        release.set()
    # the next write drains the queue: had the cancelled one stayed queued, it would run now
    await db.write(lambda c: c.execute("INSERT INTO t VALUES (2, 'later')"))
    rows = await db.read(lambda c: [r[0] for r in c.execute("SELECT n FROM t")])
    await db.close()
    assert rows == [2]
    with pytest.raises(ClosedError):
        await db.write(slow)  # closed: refused, not queued forever
