"""The ``reverie`` command, run as a real subprocess (it configures logging for itself)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow


def cli(home: Path, *args: str, code: int = 0, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "reverie", *args, "--home", str(home)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
    )
    assert proc.returncode == code, (proc.stdout, proc.stderr)
    return proc.stdout


def jcli(home: Path, *args: str, code: int = 0) -> Any:
    return json.loads(cli(home, *args, "--json", code=code))


def test_memory_topic_search_audit_restore_round_trip(tmp_path: Path) -> None:
    added = jcli(tmp_path, "memory", "add", "Builds run with make ci")
    assert added["decision"] == "ADD"
    assert jcli(tmp_path, "memory", "add", "builds run with make ci")["decision"] == "NOOP"
    assert jcli(tmp_path, "memory", "add", "x", "--target", "diary", code=1)["decision"] == "ERROR"
    first = jcli(tmp_path, "topic", "save", "deploy", "The deploy timeout is 30s")
    second = jcli(tmp_path, "topic", "save", "deploy", "The deploy timeout is 45s")
    assert second["decision"] == "SUPERSEDE"
    assert [f["content"] for f in jcli(tmp_path, "topic", "read", "deploy")["facts"]] == [
        "The deploy timeout is 45s"
    ]
    assert jcli(tmp_path, "topic", "list") == [{"topic": "deploy", "facts": 1, "superseded": 1}]
    found = jcli(tmp_path, "search", "deploy timeout")
    assert found["hidden_superseded"] == 1 and found["hits"][0]["id"] == second["entry_id"]
    chain = jcli(tmp_path, "audit", "chain", second["entry_id"])
    assert [f["id"] for f in chain] == [first["entry_id"], second["entry_id"]]
    removed = jcli(tmp_path, "memory", "remove", "make ci")
    assert removed["decision"] == "REMOVED"
    assert jcli(tmp_path, "memory", "list") == []
    assert jcli(tmp_path, "restore", added["entry_id"])["decision"] == "RESTORED"
    assert [e["content"] for e in jcli(tmp_path, "memory", "list")] == ["Builds run with make ci"]
    ledger = jcli(tmp_path, "audit", "ledger")
    assert [r["decision"] for r in ledger] == [
        "ADD",
        "NOOP",
        "ADD",
        "SUPERSEDE",
        "REMOVED",
        "RESTORED",
    ]
    show = jcli(tmp_path, "show")
    assert "Builds run with make ci" in show["text"]
    assert "Builds run with make ci" in cli(tmp_path, "show")


def test_namespace_option_and_environment(tmp_path: Path) -> None:
    jcli(tmp_path, "memory", "add", "Only in proj", "--namespace", "proj")
    assert jcli(tmp_path, "memory", "list") == []
    proc = subprocess.run(
        [sys.executable, "-m", "reverie", "memory", "list", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "REVERIE_HOME": str(tmp_path), "REVERIE_NAMESPACE": "proj"},
    )
    assert [e["content"] for e in json.loads(proc.stdout)] == ["Only in proj"]


def test_bad_settings_exit_2_with_a_clear_message(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "reverie", "show", "--home", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "REVERIE_CAPS_MEMORY": "lots"},
    )
    assert proc.returncode == 2
    assert "REVERIE_CAPS_MEMORY='lots'" in proc.stderr
    assert not (tmp_path / "reverie.db").exists()
