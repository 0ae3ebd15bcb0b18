"""Review state and the review lease: stored in SQLite, so a crash only delays work and
only one process of several holds the lease at a time."""

from __future__ import annotations

from pathlib import Path

from reverie.config import StoreConfig
from reverie.stores import review_state
from reverie.stores.db import Database


async def test_state_round_trips_and_survives_reopen(tmp_path: Path) -> None:
    db = await Database.open(tmp_path / "reverie.db", StoreConfig())
    async with db.transaction() as conn:
        await review_state.put(conn, "ns", "watermark:deploy", {"episode": 41}, "t1")
        await review_state.put(conn, "ns", "watermark:deploy", {"episode": 42}, "t2")
    await db.close()
    db = await Database.open(tmp_path / "reverie.db", StoreConfig())
    async with db.reading() as conn:
        assert await review_state.get(conn, "ns", "watermark:deploy") == {"episode": 42}
        assert await review_state.get(conn, "other", "watermark:deploy", "none") == "none"
    await db.close()


async def test_lease_is_exclusive_until_released_or_expired(tmp_path: Path) -> None:
    a = await Database.open(tmp_path / "reverie.db", StoreConfig())
    b = await Database.open(tmp_path / "reverie.db", StoreConfig())
    try:
        async with a.transaction() as conn:
            assert await review_state.acquire_lease(conn, "review", "A", "10:00", "10:10")
        async with b.transaction() as conn:
            assert not await review_state.acquire_lease(conn, "review", "B", "10:05", "10:15")
        async with a.transaction() as conn:  # the holder may renew
            assert await review_state.acquire_lease(conn, "review", "A", "10:06", "10:16")
        async with b.transaction() as conn:  # an expired lease can be taken
            assert await review_state.acquire_lease(conn, "review", "B", "10:20", "10:30")
        async with b.transaction() as conn:
            await review_state.release_lease(conn, "review", "B")
        async with a.transaction() as conn:
            assert await review_state.acquire_lease(conn, "review", "A", "10:21", "10:31")
    finally:
        await a.close()
        await b.close()
