"""The loop across real processes: a flush killed between its writes and its watermark
neither loses nor duplicates anything after restart; two processes idling at once on one
home run one review pass, not two."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

import reverie
from tests.conftest import scalar
from tests.test_multiprocess import spawn
from tests.workers import TURNS

pytestmark = pytest.mark.slow


def count(home: Path, sql: str) -> int:
    return int(scalar(home, sql))


async def test_a_flush_killed_before_its_watermark_loses_and_duplicates_nothing(
    tmp_path: Path,
) -> None:
    home = tmp_path / "h"
    worker = spawn("flush_then_hang", str(home), "-")
    assert worker.stdout is not None
    line = worker.stdout.readline()
    assert line.strip() == "WRITTEN", worker.stderr.read() if worker.stderr else line
    worker.send_signal(signal.SIGKILL)
    worker.communicate(timeout=30)  # reaps it and closes its pipes
    assert worker.returncode == -signal.SIGKILL
    facts_written = count(home, "SELECT count(*) FROM facts WHERE namespace = 'crash'")
    entries_written = count(home, "SELECT count(*) FROM entries WHERE namespace = 'crash'")
    assert facts_written + entries_written == len(TURNS)  # the writes were committed
    assert count(home, "SELECT count(*) FROM review_state WHERE key = 'flush:watermark'") == 0

    async with reverie.open(home) as rv:  # restart: the next idle replays the same flush
        ns = rv.namespace("crash")
        async with ns.session("s2") as s:
            await s.idle()
            await rv.wait_idle()
        flushes = [r.detail for r in await ns.ledger() if r.action == "flush"]
    assert len(flushes) == 1 and flushes[0]["noops"] == len(TURNS)
    assert flushes[0]["topic_saves"] + flushes[0]["memory_adds"] == 0
    assert count(home, "SELECT count(*) FROM facts WHERE namespace = 'crash'") == facts_written
    assert count(home, "SELECT count(*) FROM entries WHERE namespace = 'crash'") == entries_written
    topics_dir = home / "crash" / "topics"
    lines = sum(len(p.read_text().splitlines()) for p in topics_dir.glob("*/history.jsonl"))
    assert lines == facts_written  # the projections agree with the database


def test_two_processes_idling_at_once_run_one_review_pass(tmp_path: Path) -> None:
    home, go = tmp_path / "h", tmp_path / "go"
    workers = [spawn("idle_together", str(home), str(i), str(go)) for i in (1, 2)]
    for worker in workers:  # both open, both recorded a turn, both waiting
        assert worker.stdout is not None
        line = worker.stdout.readline()
        assert line == "READY\n", worker.stderr.read() if worker.stderr else line
    go.touch()
    for worker in workers:
        out, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err
        assert "DONE" in out
    passes = count(home, "SELECT count(*) FROM ledger WHERE action = 'review_pass'")
    flushes = count(home, "SELECT count(*) FROM ledger WHERE action = 'flush'")
    assert flushes >= 1
    assert passes == 1
    assert count(home, "SELECT count(*) FROM leases") == 0  # released after the pass
