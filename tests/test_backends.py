"""The runtime under any anyio backend: its task group is owned by ``reverie.open``'s
``async with`` (or by the host's own task group), and no task of it outlives that."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import reverie
from reverie.errors import InputError
from tests.conftest import asyncio_only, both_backends

NOTE = "Deploys go through the staging cluster first."


async def round_trip(rv: reverie.Reverie) -> dict[str, Any]:
    """A tool call, a turn, an idle and a forced review: every actor gets a message."""
    ns = rv.namespace("alice")
    async with ns.session("s-1") as s:
        added = await s.call_tool("memory", {"action": "add", "target": "memory", "content": NOTE})
        await s.turn(user="My dog is called Biscuit and I live in Lisbon.", assistant="Nice!")
        await s.idle()
    await rv.wait_idle()
    hits = await ns.search("Biscuit Lisbon")
    return {"added": added, "hits": [hit.text for hit in hits]}


def test_open_works_under_trio(tmp_path: Path) -> None:
    """``anyio.run(main, backend="trio")``: the whole loop runs, and every actor's span is
    there, named ``reverie.<actor>``."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    out: dict[str, Any] = {}

    async def main() -> None:
        async with reverie.open(tmp_path / "home", tracer_provider=provider) as rv:
            out.update(await round_trip(rv))
            out["review"] = await rv.review(force=True)

    anyio.run(main, backend="trio")
    assert out["added"]["decision"] == "ADD"
    assert any("Biscuit" in text for text in out["hits"])
    names = {span.name.split(" ")[0] for span in exporter.get_finished_spans()}
    assert {"reverie.writer", "reverie.extractor", "reverie.flusher"} <= names
    assert "reverie.reviewer" in names
    provider.shutdown()


@both_backends
async def test_no_task_outlives_the_runtime(tmp_path: Path) -> None:
    """Leaving ``async with`` ends every task the runtime started, cancelled or not."""
    before = len(anyio.get_running_tasks())
    async with reverie.open(tmp_path / "a") as rv:
        await round_trip(rv)
    assert len(anyio.get_running_tasks()) == before
    with anyio.move_on_after(0.05) as scope:
        async with reverie.open(tmp_path / "b") as rv:
            await round_trip(rv)
            await anyio.sleep_forever()  # the host's deadline, not a synchronisation
    assert scope.cancelled_caught
    assert len(anyio.get_running_tasks()) == before


@both_backends
async def test_actors_run_in_the_hosts_task_group(tmp_path: Path) -> None:
    """A host that passes its task group gets the actors under its own cancel scope, and
    may leave the runtime from another task of that group, on any backend."""
    async with anyio.create_task_group() as tg:
        rv = reverie.open(tmp_path / "home", task_group=tg)
        await rv.__aenter__()
        out = await round_trip(rv)
        done = anyio.Event()

        async def closer() -> None:
            await rv.__aexit__(None, None, None)
            done.set()

        tg.start_soon(closer)
        await done.wait()
    assert out["added"]["decision"] == "ADD"
    with pytest.raises(reverie.ClosedError):
        await rv.review()


@both_backends
async def test_the_hosts_cancel_scope_reaches_the_actors(tmp_path: Path) -> None:
    """Cancelling the host's group ends the runtime's tasks with it: they live inside it."""
    before = len(anyio.get_running_tasks())
    async with anyio.create_task_group() as tg:
        rv = reverie.open(tmp_path / "home", task_group=tg)
        await rv.__aenter__()
        await round_trip(rv)
        assert len(anyio.get_running_tasks()) > before  # the runtime's own task
        tg.cancel_scope.cancel()
    assert len(anyio.get_running_tasks()) == before
    await rv.__aexit__(None, None, None)  # still closes what it opened


@asyncio_only
async def test_runtime_can_close_from_another_task(tmp_path: Path) -> None:
    """Under asyncio the runtime may be entered and exited from different tasks
    (pytest-asyncio fixtures, lifespans); under trio that is what ``task_group=`` is for."""
    rv = reverie.open(tmp_path)
    await rv.__aenter__()
    done = anyio.Event()

    async def closer() -> None:
        await rv.__aexit__(None, None, None)
        done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(closer)
    assert done.is_set()


def test_a_task_group_that_is_not_one_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="task_group must be an anyio task group"):
        reverie.open(tmp_path, task_group="tg")  # type: ignore[arg-type]
    assert not (tmp_path / "reverie.db").exists()
