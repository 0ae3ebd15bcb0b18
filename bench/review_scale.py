"""Scale of a review round (D15): ``rv.review(force=True)`` over many idle namespaces.

Three timings in one run: the sequential path (``reviewer.concurrency`` 1, as before) over a
sample of namespaces, scaled to the full count — the baseline; the first round over every
namespace with the default concurrency; and a second round, when nothing is new anywhere,
which one query answers.

    python -m bench.review_scale [NAMESPACES=10000] [SAMPLE=200]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import anyio

import reverie
from reverie import Config
from reverie.config import DEFAULT_REVIEW_CONCURRENCY

AIM_S = 60.0


async def populate(rv: reverie.Reverie, count: int) -> None:
    """One topic fact per namespace, written 64 sessions at a time (group commit)."""
    limiter = anyio.CapacityLimiter(64)

    async def one(i: int) -> None:
        async with limiter, rv.namespace(f"user-{i:05d}").session("s") as s:
            await s.call_tool(
                "topic",
                {"action": "save", "topic": "deploy", "content": f"Deploy port is {1000 + i}"},
            )

    async with anyio.create_task_group() as tg:
        for i in range(count):
            tg.start_soon(one, i)


async def timed_rounds(home: Path, count: int, concurrency: int, rounds: int) -> list[float]:
    config = Config().with_section("reviewer", concurrency=concurrency)
    async with reverie.open(home, config=config) as rv:
        await populate(rv, count)
        out = []
        for _ in range(rounds):
            start = time.perf_counter()
            report = await rv.review(force=True)
            out.append(time.perf_counter() - start)
            assert len(report["namespaces"]) == count
    return out


async def main(count: int, sample: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        [old] = await timed_rounds(Path(tmp) / "old", sample, 1, 1)
        first, second = await timed_rounds(Path(tmp) / "new", count, DEFAULT_REVIEW_CONCURRENCY, 2)
    baseline = old * count / sample
    print(
        f"baseline, one namespace at a time: {old:.2f} s for {sample} -> {baseline:.1f} s "
        f"for {count} (scaled)"
    )
    print(
        f"first round, {DEFAULT_REVIEW_CONCURRENCY} at a time: {first:.1f} s for {count} "
        f"namespaces ({first / count * 1000:.2f} ms each)"
    )
    print(f"second round, nothing new: {second:.2f} s for {count} namespaces")
    print(
        f"ratio first round / baseline: {first / baseline:.2f}; "
        f"second round / baseline: {second / baseline:.4f}"
    )
    for label, seconds in (("first round", first), ("second round", second)):
        if seconds > AIM_S:
            print(f"MISSED: {label} took {seconds:.1f} s, aim < {AIM_S:.0f} s")


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:3]]
    anyio.run(main, *(args + [10000, 200][len(args) :]))
