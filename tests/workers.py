"""Subprocess workers for the multi-process and crash tests: ``python -m tests.workers``.

Each acknowledged write is printed as ``ACK <decision> <entry_id>`` only after ``call_tool``
returned, so the parent knows exactly which writes were acknowledged.
"""

from __future__ import annotations

import os
import sys

import anyio

import reverie
from reverie import Config


def ack(result: dict[str, object]) -> None:
    if result["decision"] != "ERROR":
        sys.stdout.write(f"ACK {result['decision']} {result['entry_id']}\n")
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


def main() -> None:
    mode, home, worker = sys.argv[1:4]
    if mode == "shared":
        anyio.run(shared, home, worker, int(sys.argv[4]))
    elif mode == "storm":
        anyio.run(storm, home, worker)
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
