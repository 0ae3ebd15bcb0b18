"""Several processes on one home, and a process killed mid-storm: no acknowledged write is
ever lost, caps hold, duplicates are caught across processes."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import anyio
import pytest

import reverie
from reverie import Config
from tests.conftest import db_counts, read_db

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def spawn(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.workers", *args],
        cwd=ROOT,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONWARNINGS": "error", **(env or {})},
    )


def acks(output: str) -> list[tuple[str, str]]:
    return [
        (line.split()[1], line.split()[2])
        for line in output.splitlines()
        if line.startswith("ACK ")
    ]


def present(home: Path, namespace: str) -> tuple[set[str], set[str]]:
    with read_db(home) as conn:
        facts = {
            r[0] for r in conn.execute("SELECT id FROM facts WHERE namespace = ?", (namespace,))
        }
        entries = {
            r[0] for r in conn.execute("SELECT id FROM entries WHERE namespace = ?", (namespace,))
        }
    return facts, entries


async def test_three_processes_share_one_home(tmp_path: Path) -> None:
    cap = 400
    procs = [
        spawn("shared", str(tmp_path), str(n), "40", env={"REVERIE_CAPS_MEMORY": str(cap)})
        for n in range(3)
    ]
    outputs = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        outputs.append(out)
    all_acks = [a for out in outputs for a in acks(out)]
    facts, entries = present(tmp_path, "shared")
    for decision, entry_id in all_acks:
        assert entry_id in facts or entry_id in entries, (decision, entry_id)
    assert sum(1 for d, _ in all_acks if d == "ADD" and _.startswith("fct-")) == 120
    async with reverie.open(tmp_path) as rv:
        live = await rv.namespace("shared").entries()
        block = "\n§\n".join(e.rendered for e in live)
        assert len(block) <= cap
        contents = [e.content for e in live]
        assert len(contents) == len(set(contents)), "a duplicate slipped across processes"
        assert len(live) == sum(1 for d, i in all_acks if d == "ADD" and i.startswith("ent-"))
    assert (tmp_path / "shared" / "MEMORY.md").read_text() == block + "\n"
    refused = sum(out.count("REFUSED") for out in outputs)
    assert refused > 0  # the cap was really reached


async def test_sigkill_mid_storm_loses_no_acknowledged_write(tmp_path: Path) -> None:
    proc = spawn("storm", str(tmp_path), "k")
    assert proc.stdout is not None
    seen: list[tuple[str, str]] = []
    deadline = time.monotonic() + 60
    while len(seen) < 150 and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.startswith("ACK "):
            seen.append((line.split()[1], line.split()[2]))
    os.kill(proc.pid, signal.SIGKILL)
    rest, _ = proc.communicate(timeout=30)
    seen += acks(rest)
    assert proc.returncode == -signal.SIGKILL
    assert len(seen) >= 150
    facts, entries = present(tmp_path, "storm")
    missing = [a for a in seen if a[1] not in facts and a[1] not in entries]
    assert missing == []
    async with reverie.open(tmp_path) as rv:
        ns = rv.namespace("storm")
        ledger = {r.entry_id for r in await ns.ledger()}
        assert {i for _, i in seen} <= ledger
        removed = {i for d, i in seen if d == "REMOVED"}
        assert all(e.id not in removed for e in await ns.entries())
    # projections agree with the database after the crash
    for history in (tmp_path / "storm" / "topics").glob("*/history.jsonl"):
        topic = history.parent.name
        with read_db(tmp_path) as conn:
            n, dead = conn.execute(
                "SELECT count(*), count(invalid_at) FROM facts"
                " WHERE namespace = 'storm' AND topic = ?",
                (topic,),
            ).fetchone()
        assert len(history.read_text().splitlines()) == n + dead


def overtakes(calls: list[tuple[float, int]]) -> list[int]:
    """For each call (start, commit seq): how many calls that started later committed first."""
    return [sum(1 for s, q in calls if s > start and q < seq) for start, seq in calls]


async def test_writers_of_many_processes_are_served_in_arrival_order(tmp_path: Path) -> None:
    """Fair waiting (D16): served in arrival order, a call is overtaken only by the groups
    of the other P−1 processes queued before its own group, ≤ (P−1)·S later calls (S
    sessions each), and so are 95 % of the calls here. A call's start is taken before its
    process reaches the lock, so a process the scheduler stalls (4 writers on 2 cores) sees
    its waiting calls overtaken more: the worst call gets 4·(P−1)·S. Measured (2 cores):
    with turns, worst 7–13 and 95th percentile 2–8 (two CPU hogs beside them included; one
    CI run saw a worst of 42); without turns (SQLite's backoff polling), worst 70–108 and
    95th percentile 22–54 — the mutant `turns-off` fails both bounds."""
    procs, sessions, calls = 4, 4, 15
    home, go = tmp_path / "home", tmp_path / "go"
    async with reverie.open(home):
        pass  # the schema exists before the writers race
    workers = [
        spawn("timed", str(home), str(n), str(sessions), str(calls), str(go)) for n in range(procs)
    ]
    for worker in workers:
        assert worker.stdout is not None
        assert worker.stdout.readline() == "READY\n"
    go.touch()
    made: list[tuple[float, str]] = []
    for worker in workers:
        out, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err
        for line in out.splitlines():
            _, start, decision, entry_id = line.split()
            assert decision == "ADD", line
            made.append((float(start), entry_id))
    assert len(made) == procs * sessions * calls
    with read_db(home) as conn:
        seq = dict(conn.execute("SELECT entry_id, min(seq) FROM ledger GROUP BY entry_id"))
    ranked = sorted(overtakes([(start, seq[entry_id]) for start, entry_id in made]))
    assert ranked[int(0.95 * len(ranked))] <= (procs - 1) * sessions, ranked
    assert ranked[-1] <= 4 * (procs - 1) * sessions, ranked


HOLD_TURN = """import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_EX)
print("HELD", flush=True)
time.sleep(600)  # holds the turn until the test kills it: the hold is the scenario
"""


def hold_turn(lock: Path) -> subprocess.Popen[str]:
    """Another process that takes the writers' turn and keeps it until killed."""
    return subprocess.Popen(
        [sys.executable, "-c", HOLD_TURN, str(lock)], stdout=subprocess.PIPE, text=True
    )


def turn_is_free(lock: Path) -> bool:
    fd = os.open(lock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True


async def test_a_writer_waits_for_its_turn_only_until_the_busy_timeout(tmp_path: Path) -> None:
    """Fair waiting keeps StoreBusy: while another process holds the writers' turn, a call
    answers a transient ERROR after the busy timeout and writes nothing; once that process
    dies the kernel frees the turn, and the next call lands (a crashed writer never blocks
    the home, and the helper that waited for the abandoned turn lets go of it)."""
    save = {"action": "save", "topic": "deploy", "content": "The deploy timeout is 30s"}
    config = Config().with_section("store", busy_timeout_ms=300)
    async with reverie.open(tmp_path, config=config) as rv:
        async with rv.namespace("a").session("s") as s:
            before = db_counts(tmp_path)
            holder = hold_turn(tmp_path / "reverie.db.lock")
            try:
                assert holder.stdout is not None and holder.stdout.readline() == "HELD\n"
                busy = await s.call_tool("topic", save)
                assert busy["decision"] == "ERROR" and busy["transient"] is True, busy
                assert "busy" in busy["error"]
                assert db_counts(tmp_path) == before
            finally:
                holder.kill()
                holder.communicate()
            landed = await s.call_tool("topic", save)
            assert landed["decision"] == "ADD", landed
            for helper in [t for t in threading.enumerate() if t.name == "reverie-turn"]:
                await anyio.to_thread.run_sync(helper.join)  # it waited for the abandoned turn
            assert turn_is_free(tmp_path / "reverie.db.lock")
