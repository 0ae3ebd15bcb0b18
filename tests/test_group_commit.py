"""Group commit: writes that queue behind a commit are committed together, each in its own
savepoint — one failing write leaves the others whole, and nothing is acknowledged before
its commit. Group read: reads that queue behind a read share one snapshot and one hop,
each with its own result or error."""

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


async def test_reads_that_queue_share_a_snapshot_each_with_its_own_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Queued reads run together (fewer snapshots than reads, never more than MAX_GROUP
    in one); a read that raises fails alone, and each read gets its own answer."""
    db = await open_db(tmp_path)
    await db.write(
        lambda c: c.executemany("INSERT INTO t VALUES (?, 'r')", [(n,) for n in range(50)])
    )
    sizes: list[int] = []
    real = db_module._read_group

    def spy(conn: sqlite3.Connection, group: list[object]) -> None:
        sizes.append(len(group))
        real(conn, group)  # type: ignore[arg-type]

    monkeypatch.setattr(db_module, "_read_group", spy)
    results: dict[int, object] = {}

    def body(n: int):  # type: ignore[no-untyped-def]
        def run(conn: sqlite3.Connection) -> object:
            if n % 7 == 0:
                raise ValueError(f"read {n} broke")
            return conn.execute("SELECT tag || n FROM t WHERE n = ?", (n,)).fetchone()[0]

        return run

    async def one(n: int) -> None:
        try:
            results[n] = await db.read(body(n))
        except ValueError as exc:
            results[n] = exc

    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            for n in range(200):
                tg.start_soon(one, n % 50)
    await db.close()
    assert sum(sizes) == 200 and len(sizes) < 200 and max(sizes) <= db_module.MAX_GROUP
    for n in range(50):
        assert isinstance(results[n], ValueError) if n % 7 == 0 else results[n] == f"r{n}"


async def test_a_read_sees_every_write_acknowledged_before_it_was_asked(tmp_path: Path) -> None:
    """A write acknowledged while reads wait in the queue is seen by each read asked after
    it: a group's snapshot begins when the group runs, never earlier."""
    db = await open_db(tmp_path)
    seen: list[tuple[int, int]] = []

    async def writer_then_reader(n: int) -> None:
        await db.write(lambda c: c.execute("INSERT INTO t VALUES (?, 'w')", (n,)))
        count = await db.read(lambda c: c.execute("SELECT max(n) FROM t").fetchone()[0])
        seen.append((n, count))

    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            for n in range(1, 101):
                tg.start_soon(writer_then_reader, n)
    await db.close()
    assert len(seen) == 100 and all(top >= n for n, top in seen)


@pytest.mark.parametrize("kind", ["write", "read"])
async def test_a_cancelled_waiting_job_never_runs(tmp_path: Path, kind: str) -> None:
    """A write or read cancelled while it waits for its turn is taken out of the queue:
    the next group, which drains the queue, does not run it."""
    db = await open_db(tmp_path)
    lock, run = (db._write_lock, db.write) if kind == "write" else (db._read_lock, db.read)
    release, ran = anyio.Event(), []

    async def blocker() -> None:
        async with lock:  # hold the connection: the next job must wait
            await release.wait()

    async with anyio.create_task_group() as tg:
        tg.start_soon(blocker)
        await anyio.wait_all_tasks_blocked()  # the blocker holds the connection
        async with anyio.create_task_group() as waiting:
            waiting.start_soon(run, lambda c: ran.append("cancelled"))
            await anyio.wait_all_tasks_blocked()  # the job waits for its turn
            waiting.cancel_scope.cancel()
        release.set()
    await run(lambda c: ran.append("later"))
    await db.close()
    assert ran == ["later"]
    with pytest.raises(ClosedError):
        await run(lambda c: None)  # closed: refused, not queued forever
