"""Subprocess workers for the multi-process and crash tests: ``python -m tests.workers``.

Each acknowledged write is printed as ``ACK <decision> <entry_id>`` only after ``call_tool``
returned, so the parent knows exactly which writes were acknowledged.
"""

from __future__ import annotations

import os
import sys
import time
from contextlib import AsyncExitStack

import anyio

import reverie
from reverie import Config


def ack(result: dict[str, object]) -> None:
    if result["decision"] != "ERROR":
        sys.stdout.write(f"ACK {result['decision']} {result.get('entry_id')}\n")
    else:
        sys.stdout.write(f"REFUSED {result['error']!r}\n")
    sys.stdout.flush()


async def shared(home: str, worker: str, count: int) -> None:
    """Distinct topic facts, plus memory adds that every worker attempts identically."""
    config = Config.load(None, os.environ)
    async with reverie.open(home, config=config) as rv:
        async with rv.namespace("shared").session(f"w-{worker}") as s:
            for i in range(count):
                ack(
                    await s.call_tool(
                        "topic",
                        {
                            "action": "save",
                            "topic": f"t{i % 4}",
                            "content": f"worker {worker} wrote item {i}",
                        },
                    )
                )
                ack(
                    await s.call_tool(
                        "memory",
                        {
                            "action": "add",
                            "target": "memory",
                            "content": f"shared lesson number {i:03d}",
                        },
                    )
                )


async def storm(home: str, worker: str) -> None:
    """Write until killed."""
    async with reverie.open(home) as rv:
        async with rv.namespace("storm").session(f"w-{worker}") as s:
            i = 0
            while True:
                ack(
                    await s.call_tool(
                        "topic",
                        {
                            "action": "save",
                            "topic": f"t{i % 5}",
                            "content": f"storm {worker} fact {i}",
                        },
                    )
                )
                if i % 3 == 0:
                    ack(
                        await s.call_tool(
                            "memory",
                            {
                                "action": "add",
                                "target": "memory",
                                "content": f"storm lesson {worker}-{i}",
                            },
                        )
                    )
                    ack(
                        await s.call_tool(
                            "memory",
                            {
                                "action": "remove",
                                "target": "memory",
                                "old_text": f"lesson {worker}-{i}",
                            },
                        )
                    )
                i += 1


TURNS = (
    "The deploy timeout is 30s.",
    "The staging database is pg-stage-2.",
    # a lesson as knowledge: the user's "always drain …" is an order to act, never learned
    "Lesson: the queue must be drained before workers restart.",
    "The backup bucket is s3://acme-backups/prod.",
)


async def wait_for_file(go: str) -> None:
    """A bounded poll for the go file the parent makes once every worker said READY (one
    file releases all workers at once, which a pipe per worker would not)."""
    with anyio.fail_after(60):
        while not os.path.exists(go):  # noqa: ASYNC110 - another process makes it
            await anyio.sleep(0.002)


async def flush_then_hang(home: str) -> None:
    """Flush, and hang between the writes and the watermark until the parent kills us."""
    from reverie.actors.flusher import Flusher

    async def hang(self: Flusher, mark: int, waiting: object, report: object) -> None:
        sys.stdout.write("WRITTEN\n")
        sys.stdout.flush()
        await anyio.sleep(3600)  # the hang is the point: the parent SIGKILLs us in it

    Flusher._advance = hang  # type: ignore[method-assign]
    async with reverie.open(home) as rv:
        async with rv.namespace("crash").session("s") as s:
            for text in TURNS:
                await s.turn(user=text)
            await s.idle()
            await rv.wait_idle()


async def idle_together(home: str, worker: str, go: str) -> None:
    """Record a turn, say READY, wait for the go file, then idle a session: both workers
    race for one review pass."""
    async with reverie.open(home) as rv:
        async with rv.namespace("shared").session(f"w-{worker}") as s:
            await s.turn(user=f"Worker {worker} uses port {9000 + int(worker)}.")
            sys.stdout.write("READY\n")
            sys.stdout.flush()
            await wait_for_file(go)
            await s.idle()
            await rv.wait_idle()
    sys.stdout.write("DONE\n")


async def timed(home: str, worker: str, sessions: int, calls: int, go: str) -> None:
    """Open every session, say READY, wait for the go file, then save topic facts from all
    sessions at once; each call is printed as ``CALL <monotonic start> <decision> <id>``."""
    async with reverie.open(home) as rv, AsyncExitStack() as stack:
        opened = [
            await stack.enter_async_context(rv.namespace(f"w{worker}-s{k}").session(f"s{k}"))
            for k in range(sessions)
        ]
        sys.stdout.write("READY\n")
        sys.stdout.flush()
        await wait_for_file(go)

        async def run(k: int, s: reverie.Session) -> None:
            for i in range(calls):
                content = f"worker {worker} session {k} wrote item {i}"
                start = time.monotonic()
                result = await s.call_tool(
                    "topic", {"action": "save", "topic": f"t{i % 3}", "content": content}
                )
                decision, entry_id = result["decision"], result.get("entry_id")
                sys.stdout.write(f"CALL {start!r} {decision} {entry_id}\n")

        async with anyio.create_task_group() as tg:
            for k, s in enumerate(opened):
                tg.start_soon(run, k, s)
    sys.stdout.flush()


async def review_force(home: str, namespace: str) -> None:
    """Force one review pass of a namespace (the model and its timeout from the
    environment) and print its outcome as ``REVIEW <json>``."""
    import json

    config = Config.load(None, os.environ)
    async with reverie.open(home, config=config) as rv:
        report = await rv.namespace(namespace).review(force=True)
    outcome = {"ran": report["ran"], "reason": report.get("reason")}
    sys.stdout.write(f"REVIEW {json.dumps(outcome)}\n")
    sys.stdout.flush()


def main() -> None:
    mode, home, worker = sys.argv[1:4]
    if mode == "shared":
        anyio.run(shared, home, worker, int(sys.argv[4]))
    elif mode == "storm":
        anyio.run(storm, home, worker)
    elif mode == "flush_then_hang":
        anyio.run(flush_then_hang, home)
    elif mode == "timed":
        sessions, calls, go = int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
        anyio.run(timed, home, worker, sessions, calls, go)
    elif mode == "review_force":
        anyio.run(review_force, home, worker)
    elif mode == "idle_together":
        anyio.run(idle_together, home, worker, sys.argv[4])
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
