"""A locked database, a full database, a database from the future: a clear error, nothing
written, nothing acknowledged that was not committed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import anyio
import pytest

import reverie
from reverie import Config
from tests.conftest import db_counts, ok, scalar, tree, write_db


async def test_locked_database_is_an_error_that_writes_nothing(tmp_path: Path) -> None:
    config = Config().with_section("store", busy_timeout_ms=200)
    async with reverie.open(tmp_path, config=config) as rv:
        async with rv.namespace().session("s") as s:
            ok(
                await s.call_tool(
                    "memory", {"action": "add", "target": "memory", "content": "first"}
                ),
                "ADD",
            )
            before = db_counts(tmp_path), tree(tmp_path)
            other = sqlite3.connect(tmp_path / "reverie.db", isolation_level=None)
            other.execute("BEGIN IMMEDIATE")
            try:
                result = await s.call_tool(
                    "memory", {"action": "add", "target": "memory", "content": "second"}
                )
                assert result["decision"] == "ERROR"
                assert "busy" in result["error"] and "nothing was written" in result["error"]
                with pytest.raises(reverie.StoreBusy):
                    await s.turn(user="this turn cannot be recorded now")
            finally:
                other.execute("ROLLBACK")
                other.close()
            assert (db_counts(tmp_path), tree(tmp_path)) == before
            ok(
                await s.call_tool(
                    "memory", {"action": "add", "target": "memory", "content": "second"}
                ),
                "ADD",
            )


async def test_full_database_is_an_error_that_writes_nothing(tmp_path: Path) -> None:
    async with reverie.open(tmp_path) as rv:
        async with rv.namespace().session("s") as s:
            ok(
                await s.call_tool(
                    "topic", {"action": "save", "topic": "t", "content": "seed fact"}
                ),
                "ADD",
            )
            db = rv.services.db

            def freeze(conn: sqlite3.Connection) -> None:
                pages = conn.execute("PRAGMA page_count").fetchone()[0]
                conn.execute(f"PRAGMA max_page_count = {pages}")

            await db.write(freeze)
            before = db_counts(tmp_path)
            refused = 0
            for i in range(200):
                result = await s.call_tool(
                    "topic",
                    {"action": "save", "topic": "t", "content": f"filler {i} " + "x" * 2000},
                )
                if result["decision"] == "ERROR":
                    assert "full" in result["error"] and "nothing was written" in result["error"]
                    refused += 1
                    break
            assert refused == 1
            await db.write(lambda c: c.execute("PRAGMA max_page_count = 1073741823"))
        facts = await rv.namespace().facts("t")
    assert scalar(tmp_path, "PRAGMA integrity_check") == "ok"
    assert len(facts) == db_counts(tmp_path)["facts"] >= before["facts"]


async def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    async with reverie.open(tmp_path):
        pass
    with write_db(tmp_path) as conn:
        conn.execute("INSERT INTO schema_version VALUES (99)")
    with pytest.raises(reverie.StoreError, match="schema version 99"):
        async with reverie.open(tmp_path):
            pass


async def test_reopen_keeps_everything(tmp_path: Path) -> None:
    async with reverie.open(tmp_path) as rv:
        async with rv.namespace().session("s") as s:
            a = ok(
                await s.call_tool(
                    "topic", {"action": "save", "topic": "t", "content": "Port is 1"}
                ),
                "ADD",
            )
    async with reverie.open(tmp_path) as rv:
        async with rv.namespace().session("s") as s:
            ok(
                await s.call_tool(
                    "topic", {"action": "save", "topic": "t", "content": "Port is 1"}
                ),
                "NOOP",
            )
            b = ok(
                await s.call_tool(
                    "topic", {"action": "save", "topic": "t", "content": "Port is 2"}
                ),
                "SUPERSEDE",
            )
        assert [f.id for f in await rv.namespace().chain(a["entry_id"])] == [
            a["entry_id"],
            b["entry_id"],
        ]


async def test_a_write_past_its_budget_is_still_reported_truthfully(tmp_path: Path) -> None:
    """A write that starts is never reported lost: the writer's budget runs out while the
    database is locked, the lock is released, the write commits, and the answer is ADD."""
    config = (
        Config().with_section("store", busy_timeout_ms=5000).with_section("writer", timeout_s=0.2)
    )
    async with reverie.open(tmp_path, config=config) as rv:
        async with rv.namespace().session("s") as s:
            other = sqlite3.connect(tmp_path / "reverie.db", isolation_level=None)
            other.execute("BEGIN IMMEDIATE")

            async def release() -> None:
                # the lock held past the writer's 0.2 s budget is the scenario, not a wait
                await anyio.sleep(0.6)
                other.execute("ROLLBACK")

            async with anyio.create_task_group() as tg:
                tg.start_soon(release)
                result = await s.call_tool(
                    "topic", {"action": "save", "topic": "t", "content": "Port is 1"}
                )
            other.close()
        facts = await rv.namespace().facts("t")
    assert result["decision"] == "ADD", result
    assert [f.id for f in facts] == [result["entry_id"]]


class _LockedAtFirst:
    """A connection whose switch to WAL SQLite reports locked ``times`` times at once (as it
    does, bypassing its busy handler, while another process creates the same new file)."""

    def __init__(self, times: int, message: str = "database is locked") -> None:
        self.left, self.message, self.tries = times, message, 0

    def execute(self, sql: str) -> None:
        self.tries += 1
        if self.left:
            self.left -= 1
            raise sqlite3.OperationalError(self.message)


def test_the_switch_to_wal_is_tried_again_while_the_new_file_is_locked() -> None:
    from reverie.stores.db import _to_wal

    conn = _LockedAtFirst(times=3)
    _to_wal(conn, patience_s=5.0)  # type: ignore[arg-type]
    assert conn.tries == 4


def test_the_switch_to_wal_gives_up_after_the_busy_timeout_and_on_other_errors() -> None:
    from reverie.stores.db import _to_wal

    with pytest.raises(sqlite3.OperationalError, match="locked"):
        _to_wal(_LockedAtFirst(times=1000), patience_s=0.05)  # type: ignore[arg-type]
    broken = _LockedAtFirst(times=1, message="file is not a database")
    with pytest.raises(sqlite3.OperationalError, match="not a database"):
        _to_wal(broken, patience_s=5.0)  # type: ignore[arg-type]
    assert broken.tries == 1
