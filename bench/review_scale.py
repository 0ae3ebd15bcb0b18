"""Scale of a review round (D15): ``rv.review(force=True)`` over many idle namespaces.

Each namespace holds ordinary idle data, written through the public API and flushed: three
MEMORY.md / USER.md entries, a topic with a corrected fact (a supersede chain), a second
topic, and a turn that the forced flush (``pre_compact``) turned into a third topic. Nothing
is due but what a first pass naturally does: lint once, distil the three new topics, stamp
the promoter (no candidate is 3 days old) and the curator (no skills).

One home of NAMESPACES + SAMPLE namespaces. The baseline, in the same run and the same home:
SAMPLE namespaces reviewed one at a time (``Namespace.review``), scaled to NAMESPACES — for
the first round, and again for the second, when they have nothing new. Then the first round
(every stage runs in NAMESPACES namespaces) and the second (nothing new anywhere: one query
answers), each over the whole home with the default concurrency.

    python -m bench.review_scale [NAMESPACES=10000] [SAMPLE=200] [HOME]

HOME, when given, is a home populated before with at least NAMESPACES + SAMPLE namespaces
(``populate`` takes minutes at 10,000); it is copied, never changed. The copy is opened
once in a process of its own before the measurement: a home written by another version of
reverie is re-keyed at its first open, which fills the rules' caches (12,000 texts at
1,100 namespaces), and a heap that much bigger makes every full garbage collection of the
measured round dearer — the upgrade, not the round, would be measured.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

import reverie
from reverie.config import DEFAULT_REVIEW_CONCURRENCY

AIM_S = 60.0


def calls(i: int) -> list[tuple[str, dict[str, Any]]]:
    """One namespace's tool calls: entries, a corrected topic fact, a second topic."""
    entries = [
        ("memory", f"svc-{i} builds on the ubuntu-22.04 runner image"),
        ("memory", "Run make check before every push"),
        ("user", "Prefers short answers with the code first"),
    ]
    facts = [
        ("deploy", f"The deploy port is {1000 + i}"),
        ("deploy", f"Actually, the deploy port is {2000 + i}"),  # a supersede chain
        ("oncall", f"The escalation channel is #ops-{i}"),
    ]
    return [
        ("memory", {"action": "add", "target": target, "content": text}) for target, text in entries
    ] + [("topic", {"action": "save", "topic": topic, "content": text}) for topic, text in facts]


def name(i: int) -> str:
    return f"user-{i:05d}"


async def populate(rv: reverie.Reverie, count: int) -> None:
    """``count`` idle namespaces, 64 written at a time (group commit)."""
    limiter = anyio.CapacityLimiter(64)

    async def one(i: int) -> None:
        async with limiter, rv.namespace(name(i)).session("s") as s:
            for tool, args in calls(i):
                result = await s.call_tool(tool, args)
                assert result["decision"] in {"ADD", "SUPERSEDE"}, result
            await s.turn(user=f"The staging database for team {i} is db-stg-{i}.internal.")
            await s.pre_compact()  # flushed: nothing waits for the next idle

    async with anyio.create_task_group() as tg:
        for i in range(count):
            tg.start_soon(one, i)


async def one_at_a_time(rv: reverie.Reverie, names: list[str], ran: bool) -> float:
    start = time.perf_counter()
    for each in names:
        report = await rv.namespace(each).review(force=True)
        assert report["ran"] is ran, report
    return time.perf_counter() - start


async def measure(home: Path, count: int, sample: int) -> dict[str, float]:
    """The baseline on the sample, then the two rounds over the whole home."""
    async with reverie.open(home) as rv:
        names = sorted(await rv.namespaces())
        assert len(names) >= count + sample, f"{home} holds {len(names)} namespaces"
        sampled = names[count : count + sample]
        out = {"old_first": await one_at_a_time(rv, sampled, True)}
        out["old_second"] = await one_at_a_time(rv, sampled, False)
        for label, fresh in (("first", count), ("second", 0)):
            start = time.perf_counter()
            report = await rv.review(force=True)
            out[label] = time.perf_counter() - start
            assert sum(r["ran"] for r in report["namespaces"]) == fresh
    return out


async def main(count: int, sample: int, cached: str | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        if cached:
            await anyio.to_thread.run_sync(shutil.copytree, cached, home)
            await anyio.run_process([sys.executable, "-m", "bench.review_scale", "--settle", home])
        else:
            start = time.perf_counter()
            async with reverie.open(home) as rv:
                await populate(rv, count + sample)
            print(
                f"{count + sample} idle namespaces written and flushed in "
                f"{time.perf_counter() - start:.1f} s"
            )
        got = await measure(home, count, sample)
    scale = count / sample
    for label, key in (("first round", "first"), ("second round, nothing new", "second")):
        seconds, base = got[key], got[f"old_{key}"] * scale
        verdict = "met" if seconds < AIM_S else "MISSED"
        print(
            f"{label} over {count} namespaces, {DEFAULT_REVIEW_CONCURRENCY} at a time: "
            f"{seconds:.2f} s ({seconds / count * 1000:.2f} ms a namespace); baseline, one at "
            f"a time ({sample} measured, scaled): {base:.2f} s; ratio {seconds / base:.3f}; "
            f"aim < {AIM_S:.0f} s {verdict}"
        )


async def settle(home: str) -> None:
    """Open and close ``home`` (re-keyed if another version wrote it)."""
    async with reverie.open(home) as rv:
        await rv.namespaces()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--settle"]:
        anyio.run(settle, sys.argv[2])
        sys.exit(0)
    numbers = [int(a) for a in sys.argv[1:3]]
    count, sample = numbers + [10000, 200][len(numbers) :]
    anyio.run(main, count, sample, sys.argv[3] if len(sys.argv) > 3 else None)
