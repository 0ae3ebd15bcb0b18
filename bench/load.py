"""Load: many sessions at once through the public API — sustained turns/s, p99 turn latency
and peak RSS — against the same sessions run one at a time, each run in a fresh subprocess
so its peak RSS is its own.

    python -m bench.load [SESSIONS=200] [TURNS=20]
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

import reverie
from bench._common import percentile
from reverie.simulation.scenario import generate


async def run(home: Path, sessions: int, turns: int, together: bool) -> dict[str, float]:
    users = max(1, sessions // 10)
    scenario = generate(seed=11, sessions=sessions, days=1, turns=turns, users=users)
    latencies: list[float] = []
    ready = anyio.Event()
    done = 0

    async with reverie.open(home) as rv:

        async def one(plan_index: int) -> None:
            nonlocal done
            plan = scenario.sessions[plan_index]
            async with rv.namespace(plan.namespace).session(plan.session_id) as s:
                await ready.wait()  # every session open before the first turn
                for turn in plan.turns:
                    t0 = time.perf_counter()
                    await s.turn(user=turn.user, assistant=turn.assistant)
                    for use in turn.tools:
                        await s.call_tool(use.tool, use.args)
                    latencies.append(time.perf_counter() - t0)
                await s.idle()
            done += 1

        if together:
            async with anyio.create_task_group() as tg:
                for i in range(sessions):
                    tg.start_soon(one, i)
                await anyio.sleep(0.2)
                start = time.perf_counter()
                ready.set()
        else:
            ready.set()
            start = time.perf_counter()
            for i in range(sessions):
                await one(i)
        await rv.wait_idle()
        elapsed = time.perf_counter() - start
    return {
        "sessions": sessions,
        "turns": len(latencies),
        "turns_per_s": len(latencies) / elapsed,
        "p50_ms": percentile(latencies, 50) * 1000,
        "p99_ms": percentile(latencies, 99) * 1000,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def child(sessions: int, turns: int, together: bool) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "bench.load",
                "--child",
                str(sessions),
                str(turns),
                "1" if together else "0",
            ],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(tmp),
            env={"PYTHONPATH": str(Path(__file__).resolve().parents[1])},
        ).stdout
    return json.loads(out)  # type: ignore[no-any-return]


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        sessions, turns, together = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
        with tempfile.TemporaryDirectory() as tmp:
            print(json.dumps(anyio.run(run, Path(tmp) / "home", sessions, turns, together)))
        return
    sessions = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    turns = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    alone = child(sessions, turns, together=False)
    many = child(sessions, turns, together=True)
    for label, r in (("one at a time", alone), (f"{sessions} at once", many)):
        print(
            f"{label:>14}: {r['turns']:6.0f} turns, {r['turns_per_s']:7.1f} turns/s, "
            f"p50 {r['p50_ms']:7.2f} ms, p99 {r['p99_ms']:8.2f} ms, "
            f"peak RSS {r['peak_rss_mb']:6.1f} MB"
        )
    print(
        f"throughput ratio, at once / one at a time: "
        f"{many['turns_per_s'] / alone['turns_per_s']:.2f}"
    )
    print(f"p99 latency ratio: {many['p99_ms'] / alone['p99_ms']:.1f}")
    print(f"peak RSS ratio: {many['peak_rss_mb'] / alone['peak_rss_mb']:.2f}")


if __name__ == "__main__":
    main()
