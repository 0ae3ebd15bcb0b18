"""Cancellation and lifecycle invariants."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

import reverie
from tests.conftest import db_counts


async def test_a_runtime_opens_once(tmp_path: Path) -> None:
    """A closed runtime refuses to be reopened and refuses calls."""
    rv = reverie.open(tmp_path)
    async with rv:
        ns = rv.namespace()
    with pytest.raises(reverie.ClosedError):
        async with rv:
            pass
    with pytest.raises(reverie.ClosedError):
        await ns.search("x")


async def test_closed_session_refuses_calls(rv: reverie.Reverie) -> None:
    """A session that ended answers ERROR to tool calls and raises for turns."""
    async with rv.namespace().session("s") as s:
        pass
    result = await s.call_tool("memory", {"action": "add", "target": "memory", "content": "x"})
    assert result["decision"] == "ERROR"
    with pytest.raises(reverie.ClosedError):
        await s.turn(user="late")


async def test_host_cancellation_during_a_write_storm_leaves_whole_writes(tmp_path: Path) -> None:
    """Cancelling the host's tasks mid-storm never leaves a half-written fact: every fact
    row has its ledger row and search row, and the runtime still closes cleanly."""
    async with reverie.open(tmp_path) as rv:
        with anyio.move_on_after(0.3):
            async with anyio.create_task_group() as tg:
                for n in range(6):

                    async def storm(n: int = n) -> None:
                        async with rv.namespace().session(f"s{n}") as s:
                            for j in range(10_000):
                                await s.call_tool(
                                    "topic",
                                    {
                                        "action": "save",
                                        "topic": "t",
                                        "content": f"storm {n} fact {j}",
                                    },
                                )

                    tg.start_soon(storm)
        await rv.wait_idle()
    counts = db_counts(tmp_path)
    assert counts["facts"] > 0
    assert counts["ledger"] == counts["facts"]
    assert counts["search_index"] + counts["search_superseded"] == counts["facts"]


async def test_runtime_can_close_from_another_task(tmp_path: Path) -> None:
    """The runtime may be entered and exited from different tasks (fixtures, lifespans)."""
    rv = reverie.open(tmp_path)
    await rv.__aenter__()
    done = anyio.Event()

    async def closer() -> None:
        await rv.__aexit__(None, None, None)
        done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(closer)
    assert done.is_set()
