"""What the weekly profile synthesis costs a review round: N namespaces, each with two
settings, two preferences, three topic facts and two lessons, reviewed once (every stage
due, the profiler writing both syntheses) and again a week later (sources unchanged, one
unrelated write each so no namespace is quiet) — the profiler off, then on, in this
process, same data — with the ratio of the walls.

    python -m bench.profile_cost [--namespaces 100] [--rounds 2]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio

import reverie


async def _seed(rv: reverie.Reverie, name: str, i: int) -> None:
    async with rv.namespace(name).session("setup") as s:
        for target, content in (
            ("user_settings", f"name: User{i}"),
            ("user_settings", "timezone: Europe/Oslo"),
            ("user", f"Prefers short answers with code first, case {i}"),
            ("user", f"Likes comparison tables for option set {i}"),
        ):
            await s.call_tool("memory", {"action": "add", "target": target, "content": content})
        for topic, content in (
            ("deploy", f"The deploy timeout of service {i} is 30s"),
            ("deploy", f"The deploy region of service {i} is eu-west-1"),
            ("billing", f"Invoices of account {i} go out on the 3rd"),
        ):
            await s.call_tool("topic", {"action": "save", "topic": topic, "content": content})
    await rv.namespace(name).learn(f"Do not suggest Docker to user {i}", kind="correction")
    await rv.namespace(name).learn(f"Check staging logs of service {i} first", kind="lesson")


async def _run(home: Path, namespaces: int, profiler: bool) -> tuple[float, float]:
    clock = reverie.ManualClock(datetime(2026, 1, 1, tzinfo=UTC))
    config = reverie.Config().with_section("profiler", enabled=profiler)
    config = config.with_section("dream", enabled=False)
    async with reverie.open(home, config=config, clock=clock) as rv:
        names = [f"u{i}" for i in range(namespaces)]
        for i, name in enumerate(names):
            await _seed(rv, name, i)
        started = time.perf_counter()
        await rv.review(force=True)
        first = time.perf_counter() - started
        for name in names:
            async with rv.namespace(name).session("news") as s:
                args = {"action": "add", "target": "memory", "content": f"CI runs on pool {name}"}
                await s.call_tool("memory", args)
        clock.advance(timedelta(days=7, minutes=1))
        started = time.perf_counter()
        await rv.review(force=True)
        return first, time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("--namespaces", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=2, help="alternating runs of each")
    args = parser.parse_args(argv)
    walls: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    with tempfile.TemporaryDirectory(prefix="reverie-profile-cost-") as tmp:
        for n in range(args.rounds):
            for on in (False, True):
                home = Path(tmp) / f"{n}-{on}"
                walls[on].append(anyio.run(_run, home, args.namespaces, on))
    best = {on: (min(w[0] for w in walls[on]), min(w[1] for w in walls[on])) for on in walls}
    for on in (False, True):
        first, week = best[on]
        print(
            f"profiler {'on ' if on else 'off'}: first round {first:.2f} s, a week later"
            f" (sources unchanged) {week:.2f} s, {args.namespaces} namespaces"
            f" (best of {args.rounds})"
        )
    print(
        f"ratio on/off, first round (the syntheses written): {best[True][0] / best[False][0]:.3f}"
    )
    print(
        f"ratio on/off, the week after (unchanged, no write): {best[True][1] / best[False][1]:.3f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
