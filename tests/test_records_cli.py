"""The learning-record commands end to end, in real subprocesses over one home: learn,
query, promote, tier, recall, status, patterns and reindex (issue 11)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.test_cli import cli, jcli


def test_records_commands_round_trip(tmp_path: Path) -> None:
    added = jcli(
        tmp_path, "learn", "Pin the base image digest in every Dockerfile", "--kind", "lesson"
    )
    assert added["decision"] == "ADD"
    rid = added["entry_id"]
    twin = jcli(
        tmp_path, "learn", "pin the base image digest in every dockerfile.", "--kind", "lesson"
    )
    assert (twin["decision"], twin["entry_id"]) == ("NOOP", rid)
    [found] = jcli(tmp_path, "query", 'kind:lesson "base image"')
    assert (found["id"], found["tier"], found["priority"]) == (rid, "hot", "medium")
    assert jcli(tmp_path, "promote", rid)["priority"] == "high"
    assert jcli(tmp_path, "tier", rid, "--to", "cold")["tier"] == "cold"
    assert jcli(tmp_path, "recall", rid)["tier"] == "hot"
    status = jcli(tmp_path, "status")
    assert status["kind"] == {"lesson": 1} and status["tier"] == {"hot": 1}
    assert jcli(tmp_path, "patterns") == []
    (tmp_path / "default" / "memory" / "index.jsonl").unlink()  # files lost: reindex writes them
    done = jcli(tmp_path, "reindex")
    assert done["search_rows"] == 1 and "memory/index.jsonl" in done["files"]
    [line] = (tmp_path / "default" / "memory" / "index.jsonl").read_text().splitlines()
    assert json.loads(line)["priority"] == "high"
    assert "tier: hot 1" in cli(tmp_path, "status")


def test_a_bad_query_or_move_exits_2_naming_the_fault(tmp_path: Path) -> None:
    jcli(tmp_path, "learn", "Rotate the staging TLS certificate every 60 days")
    assert "lukewarm" in jcli(tmp_path, "query", "tier:lukewarm", code=2)["error"]
    assert "lrn-missing" in jcli(tmp_path, "recall", "lrn-missing", code=2)["error"]
