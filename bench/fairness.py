"""Fair waiting: PROCS processes × SESSIONS sessions writing to one home through the public
API, each session making CALLS tool writes (three topic saves to one memory add). Every
call's latency is recorded; p50 / p99 / max, throughput and the overtakes (calls that
arrived later but committed earlier, from the ledger's seq) are printed with the writers'
file-lock queue on (``store.fair_wait``, the default) and off (SQLite's own backoff
polling), alternated in the same run, each round on a fresh home.

    python -m bench.fairness [PROCS=8] [SESSIONS=8] [CALLS=30] [ROUNDS=4]
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack, closing
from pathlib import Path
from typing import Any

import anyio

import reverie
from bench._common import fact, percentile
from reverie import Config

ROOT = Path(__file__).resolve().parents[1]


async def child(home: str, proc: int, sessions: int, calls: int, go: str) -> None:
    """One process: open every session, say READY, wait for the go file, then write."""
    config = Config.load(None, os.environ)
    records: list[dict[str, Any]] = []
    async with reverie.open(home, config=config) as rv, AsyncExitStack() as stack:
        opened = [
            await stack.enter_async_context(rv.namespace(f"p{proc}-s{k}").session(f"s{k}"))
            for k in range(sessions)
        ]
        print("READY", flush=True)
        while not os.path.exists(go):  # noqa: ASYNC110 - the parent makes it
            await anyio.sleep(0.002)

        async def run(k: int, session: reverie.Session) -> None:
            rng = random.Random(proc * 1000 + k)
            for i in range(calls):
                if i % 4 == 3:
                    tool, args = "memory", {"action": "add", "target": "memory"}
                    args["content"] = f"Lesson {proc}.{k}.{i}: {fact(i, rng)}"
                else:
                    tool, args = "topic", {"action": "save", "topic": f"t{i % 3}"}
                    args["content"] = fact(proc * 10_000 + k * 100 + i, rng)
                start = time.monotonic()
                result = await session.call_tool(tool, args)
                end = time.monotonic()
                records.append(
                    {
                        "start": start,
                        "end": end,
                        "decision": result["decision"],
                        "entry_id": result.get("entry_id"),
                        "busy": bool(result.get("transient")),
                    }
                )

        async with anyio.create_task_group() as tg:
            for k, session in enumerate(opened):
                tg.start_soon(run, k, session)
    print(json.dumps(records), flush=True)


def round_of(procs: int, sessions: int, calls: int, fair: bool) -> dict[str, Any]:
    """One round on a fresh home; every process starts writing at the same moment."""
    with tempfile.TemporaryDirectory() as tmp:
        home, go = Path(tmp) / "home", Path(tmp) / "go"
        anyio.run(_create, home)  # the schema exists before the writers race
        env = {**os.environ, "REVERIE_STORE_FAIR_WAIT": "1" if fair else "0"}
        workers = [
            subprocess.Popen(
                [sys.executable, "-m", "bench.fairness", "--child", str(home), str(p)]
                + [str(sessions), str(calls), str(go)],
                cwd=ROOT,
                env=env,
                text=True,
                stdout=subprocess.PIPE,
            )
            for p in range(procs)
        ]
        for worker in workers:
            assert worker.stdout is not None
            assert worker.stdout.readline().strip() == "READY"
        go.touch()
        records = []
        for worker in workers:
            out, _ = worker.communicate(timeout=600)
            assert worker.returncode == 0, out
            records.extend(json.loads(out.strip().splitlines()[-1]))
        seqs = _ledger_seqs(home / "reverie.db")
    return _summary(records, seqs)


async def _create(home: Path) -> None:
    async with reverie.open(home):
        pass


def _ledger_seqs(path: Path) -> dict[str, int]:
    with closing(sqlite3.connect(path)) as conn:
        rows = conn.execute("SELECT entry_id, min(seq) FROM ledger GROUP BY entry_id").fetchall()
    return {entry_id: seq for entry_id, seq in rows if entry_id}


def _summary(records: list[dict[str, Any]], seqs: dict[str, int]) -> dict[str, Any]:
    latencies = [r["end"] - r["start"] for r in records]
    elapsed = max(r["end"] for r in records) - min(r["start"] for r in records)
    written = [r for r in records if r["entry_id"] in seqs and r["decision"] != "NOOP"]
    return {
        "latencies": latencies,
        "calls": len(records),
        "elapsed": elapsed,
        "busy": sum(r["busy"] for r in records),
        "errors": sum(r["decision"] == "ERROR" for r in records),
        "overtakes": overtakes([(r["start"], seqs[r["entry_id"]]) for r in written]),
    }


def overtakes(calls: list[tuple[float, int]]) -> list[int]:
    """For each call (start, commit seq): how many calls that started later committed
    before it. A Fenwick tree over commit ranks, walking the calls latest-started first."""
    ranks = {seq: n + 1 for n, seq in enumerate(sorted(seq for _, seq in calls))}
    tree = [0] * (len(ranks) + 1)
    counts = []
    for _, seq in sorted(calls, reverse=True):
        rank, before = ranks[seq], 0
        i = rank - 1
        while i > 0:
            before, i = before + tree[i], i - (i & -i)
        counts.append(before)
        while rank < len(tree):
            tree[rank], rank = tree[rank] + 1, rank + (rank & -rank)
    return counts


def line(label: str, runs: list[dict[str, Any]]) -> dict[str, float]:
    lat = [x for r in runs for x in r["latencies"]]
    over = [x for r in runs for x in r["overtakes"]]
    figures = {
        "p50": percentile(lat, 50) * 1000,
        "p99": percentile(lat, 99) * 1000,
        "max": max(lat) * 1000,
        "mean": statistics.fmean(lat) * 1000,
        "per_s": sum(r["calls"] for r in runs) / sum(r["elapsed"] for r in runs),
        "over_p99": percentile([float(x) for x in over], 99),
        "over_max": max(over),
    }
    print(
        f"{label:>9}: {len(lat):5d} calls, p50 {figures['p50']:7.1f} ms, "
        f"p99 {figures['p99']:7.1f} ms, max {figures['max']:8.1f} ms, "
        f"mean {figures['mean']:6.1f} ms, "
        f"{figures['per_s']:6.1f} calls/s, busy {sum(r['busy'] for r in runs)}, "
        f"errors {sum(r['errors'] for r in runs)}, overtaken by later calls: "
        f"p99 {figures['over_p99']:.0f}, max {figures['over_max']}, "
        f"mean {statistics.fmean(over):.1f}"
    )
    return figures


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        home, proc, sessions, calls, go = sys.argv[2:7]
        anyio.run(child, home, int(proc), int(sessions), int(calls), go)
        return
    given = [int(a) for a in sys.argv[1:5]]
    procs, sessions, calls, rounds = given + [8, 8, 30, 4][len(given) :]
    print(f"{procs} processes × {sessions} sessions × {calls} calls, {rounds} rounds each")
    old: list[dict[str, Any]] = []
    new: list[dict[str, Any]] = []
    for n in range(rounds):  # alternate, so drift on a shared machine hits both alike
        order = [(False, old), (True, new)]
        for fair, into in order if n % 2 == 0 else order[::-1]:
            into.append(round_of(procs, sessions, calls, fair))
    before = line("polling", old)
    after = line("fair", new)
    print(
        f"fair / polling: p99 {after['p99'] / before['p99']:.2f}, "
        f"max {after['max'] / before['max']:.2f}, "
        f"throughput {after['per_s'] / before['per_s']:.2f}"
    )


if __name__ == "__main__":
    main()
