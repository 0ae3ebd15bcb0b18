"""The review lease across processes: two processes forcing a pass of one namespace at once
on one home never both run it. The first holds its pass open on a model call that a local
chat server keeps waiting (an event, not a timer); the second, started meanwhile, is
refused by the lease and runs nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

import reverie
from tests.chat_server import HOLD, ChatServer
from tests.conftest import scalar
from tests.local_http import base_url, serving

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def reviewer(home: Path, chat: ChatServer) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "PYTHONWARNINGS": "error",
        "REVERIE_MODEL_URL": f"{base_url(chat)}/v1",
        "REVERIE_MODEL_NAME": "tiny-judge",
        "REVERIE_MODEL_TIMEOUT_S": "60",
        "REVERIE_DISTILLER_RULES_FIRST": "false",  # the distiller asks the model
    }
    return subprocess.Popen(
        [sys.executable, "-m", "tests.workers", "review_force", str(home), "a"],
        cwd=ROOT,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )


def outcome(proc: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = proc.communicate(timeout=90)
    assert proc.returncode == 0, err
    [line] = [line for line in out.splitlines() if line.startswith("REVIEW ")]
    return json.loads(line.removeprefix("REVIEW "))  # type: ignore[no-any-return]


def count(home: Path, sql: str) -> int:
    return int(scalar(home, sql))


async def seed(home: Path) -> None:
    async with reverie.open(home) as rv:
        async with rv.namespace("a").session("s") as s:
            saved = await s.call_tool(
                "topic",
                {"action": "save", "topic": "deploy", "content": "The deploy timeout is 30s"},
            )
    assert saved["decision"] == "ADD", saved


def test_two_processes_forcing_a_pass_at_once_run_one(tmp_path: Path) -> None:
    home = tmp_path / "h"
    anyio.run(seed, home)
    with serving(ChatServer()) as chat:
        chat.script = {"distill": [HOLD]}  # the first pass's distill waits for release
        first = reviewer(home, chat)
        try:
            assert chat.held.wait(60), "the first pass never reached its model call"
            assert count(home, "SELECT count(*) FROM leases") == 1  # held, mid-pass
            second = outcome(reviewer(home, chat))
        finally:
            chat.release.set()
        done = outcome(first)
    assert done == {"ran": True, "reason": None}
    assert second["ran"] is False
    assert "another process is running a review pass" in second["reason"]
    assert count(home, "SELECT count(*) FROM ledger WHERE action = 'review_pass'") == 1
    assert count(home, "SELECT count(*) FROM leases") == 0  # released after the pass
    assert [stage for stage, _ in chat.seen] == ["distill"]  # the refused pass asked nothing
