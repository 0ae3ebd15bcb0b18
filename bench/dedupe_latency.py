"""Near-duplicate check latency at 1k and 10k facts in one topic.

Each size gets a fresh home filled through the writer; then the latency of a save that is
a near-duplicate (NOOP: exact and Jaccard tiers) and of a fresh fact (ADD: every tier and
the supersede lookup miss) is measured. The 1k figures are the baseline for the 10k ones.

    python -m bench.dedupe_latency
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

import anyio

import reverie
from bench._common import describe, fact, percentile


async def measure(size: int, probes: int) -> dict[str, list[float]]:
    rng = random.Random(size)
    texts = [fact(i, rng) for i in range(size)]
    samples: dict[str, list[float]] = {"noop": [], "add": []}
    with tempfile.TemporaryDirectory() as tmp:
        async with reverie.open(Path(tmp)) as rv:
            async with rv.namespace("bench").session("fill") as s:
                for text in texts:
                    await s.call_tool("topic", {"action": "save", "topic": "big", "content": text})
                for i in range(probes):
                    twin = texts[rng.randrange(size)]
                    reworded = "Now " + twin.lower().rstrip(".")
                    start = time.perf_counter()
                    result = await s.call_tool(
                        "topic", {"action": "save", "topic": "big", "content": reworded}
                    )
                    samples["noop"].append(time.perf_counter() - start)
                    assert result["decision"] == "NOOP", result
                    start = time.perf_counter()
                    result = await s.call_tool(
                        "topic", {"action": "save", "topic": "big", "content": fact(size + i, rng)}
                    )
                    samples["add"].append(time.perf_counter() - start)
                    assert result["decision"] == "ADD", result
    return samples


async def main(probes: int) -> None:
    small = await measure(1_000, probes)
    large = await measure(10_000, probes)
    for kind in ("noop", "add"):
        print(f"{kind:4}  1k facts: {describe(small[kind])}")
        print(f"{kind:4} 10k facts: {describe(large[kind])}")
        ratio = percentile(large[kind], 50) / percentile(small[kind], 50)
        print(f"{kind:4} ratio p50 10k / 1k: {ratio:.2f}  (1.0 = no growth with topic size)")


if __name__ == "__main__":
    anyio.run(main, int(sys.argv[1]) if len(sys.argv) > 1 else 200)
