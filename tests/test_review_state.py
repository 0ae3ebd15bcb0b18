"""Review state and the review lease: stored in SQLite, so a crash only delays work and
only one process of several holds the lease at a time."""

from __future__ import annotations

from pathlib import Path

from reverie.config import StoreConfig
from reverie.stores import review_state
from reverie.stores.db import Database


async def test_state_round_trips_and_survives_reopen(tmp_path: Path) -> None:
    db = await Database.open(tmp_path / "reverie.db", StoreConfig())
    await db.write(lambda c: review_state.put(c, "ns", "watermark:deploy", {"episode": 41}, "t1"))
    await db.write(lambda c: review_state.put(c, "ns", "watermark:deploy", {"episode": 42}, "t2"))
    await db.close()
    db = await Database.open(tmp_path / "reverie.db", StoreConfig())
    assert await db.read(lambda c: review_state.get(c, "ns", "watermark:deploy")) == {"episode": 42}
    assert await db.read(lambda c: review_state.get(c, "other", "watermark:deploy", "-")) == "-"
    await db.close()


async def test_lease_is_exclusive_until_released_or_expired(tmp_path: Path) -> None:
    a = await Database.open(tmp_path / "reverie.db", StoreConfig())
    b = await Database.open(tmp_path / "reverie.db", StoreConfig())

    def take(holder: str, now: str, until: str):  # type: ignore[no-untyped-def]
        return lambda c: review_state.acquire_lease(c, "review", holder, now, until)

    try:
        assert await a.write(take("A", "10:00", "10:10"))
        assert not await b.write(take("B", "10:05", "10:15"))
        assert await a.write(take("A", "10:06", "10:16"))  # the holder may renew
        assert await b.write(take("B", "10:20", "10:30"))  # an expired lease can be taken
        await b.write(lambda c: review_state.release_lease(c, "review", "B"))
        assert await a.write(take("A", "10:21", "10:31"))
    finally:
        await a.close()
        await b.close()


async def test_several_keys_are_read_put_and_dropped_within_their_namespace(
    tmp_path: Path,
) -> None:
    db = await Database.open(tmp_path / "reverie.db", StoreConfig())
    try:
        await db.write(lambda c: review_state.put_many(c, "ns", {"a": 1, "b": [2], "c": "3"}, "t"))
        await db.write(lambda c: review_state.put(c, "other", "a", "not ns's", "t"))
        read = await db.read(lambda c: review_state.values(c, "ns", ["c", "a", "never", "a"]))
        assert read == {"a": 1, "c": "3"}  # a key never stored is absent
        assert await db.read(lambda c: review_state.values(c, "ns", [])) == {}
        await db.write(lambda c: review_state.drop_many(c, "ns", ["a", "b", "never"]))
        assert await db.read(lambda c: review_state.values(c, "ns", ["a", "b", "c"])) == {"c": "3"}
        assert await db.read(lambda c: review_state.get(c, "other", "a")) == "not ns's"
        await db.write(lambda c: review_state.drop_many(c, "ns", []))  # nothing to drop
    finally:
        await db.close()
