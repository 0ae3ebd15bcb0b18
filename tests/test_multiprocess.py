"""Several processes on one home, and a process killed mid-storm: no acknowledged write is
ever lost, caps hold, duplicates are caught across processes."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

import reverie

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
    with sqlite3.connect(home / "reverie.db") as conn:
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
        with sqlite3.connect(tmp_path / "reverie.db") as conn:
            n, dead = conn.execute(
                "SELECT count(*), count(invalid_at) FROM facts"
                " WHERE namespace = 'storm' AND topic = ?",
                (topic,),
            ).fetchone()
        assert len(history.read_text().splitlines()) == n + dead
