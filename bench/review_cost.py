"""Review pass cost on a large namespace — 10 topics of N facts each, some corrected, a full
MEMORY.md — with every stage due, against the same pass when no stage is due (the
due-checks alone), both measured in this run.

    python -m bench.review_cost [PER_TOPIC=1000]
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio

import reverie
from bench._common import fact


async def main(per_topic: int) -> None:
    rng = random.Random(5)
    clock = reverie.ManualClock(datetime(2026, 1, 1, tzinfo=UTC))
    with tempfile.TemporaryDirectory() as tmp:
        async with reverie.open(Path(tmp) / "home", clock=clock) as rv:
            ns = rv.namespace("big")
            loaded = time.perf_counter()
            async with ns.session("load") as s:
                for i in range(per_topic * 10):
                    args = {"action": "save", "topic": f"t{i % 10}", "content": fact(i, rng)}
                    assert (await s.call_tool("topic", args))["decision"] == "ADD"
                for i in range(40):  # corrected facts: promotion candidates
                    topic = f"t{i % 10}"
                    for value in (10, 20):
                        args = {
                            "action": "save",
                            "topic": topic,
                            "content": f"The limit of service {i} is {value + i}",
                        }
                        await s.call_tool("topic", args)
                for i in range(60):
                    args = {
                        "action": "add",
                        "target": "memory",
                        "content": f"Lesson {i}: check service {i} logs before paging",
                    }
                    await s.call_tool("memory", args)
            load_s = time.perf_counter() - loaded
            clock.advance(timedelta(days=8))
            t0 = time.perf_counter()
            due = await rv.review(force=True)
            due_s = time.perf_counter() - t0
            rounds, idle_s = 20, 0.0
            for r in range(rounds):
                # something new (untimed), else the pass is skipped as quiet in one read
                async with rv.namespace("big").session(f"n{r}") as s:
                    note = f"Round {r}: the on-call rota is posted on Mondays"
                    args = {"action": "add", "target": "user", "content": note}
                    await s.call_tool("memory", args)
                await rv.wait_idle()
                t0 = time.perf_counter()
                idle = await rv.review(force=True)
                idle_s += (time.perf_counter() - t0) / rounds
            calls = await rv.model_calls("big")
    facts = per_topic * 10 + 80
    stages = {s["stage"]: s["status"] for s in due["namespaces"][0]["stages"]}
    quiet = {s["stage"]: s["status"] for s in idle["namespaces"][0]["stages"]}
    print(
        f"namespace: 10 topics, {facts} facts (40 corrected chains), 60 MEMORY.md entries; "
        f"loaded in {load_s:.1f} s"
    )
    print(f"pass with every stage due: {due_s * 1000:9.1f} ms  {stages}")
    print(f"pass with no stage due:    {idle_s * 1000:9.2f} ms  {quiet}")
    print(f"not-due / due ratio: {idle_s / due_s:.4f}")
    print(f"model calls in the due pass: {calls}")


if __name__ == "__main__":
    anyio.run(main, int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
