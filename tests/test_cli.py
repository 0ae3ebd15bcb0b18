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
    moves = [r for r in ledger if r["actor"] == "learner"]  # seed 003's tier moves, audited
    assert moves and all(r["action"] == "tier" for r in moves)
    assert [r["decision"] for r in ledger if r["actor"] != "learner"] == [
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


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The command as a user types it (``--home`` where they put it)."""
    return subprocess.run(
        [sys.executable, "-m", "reverie", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
    )


def one_line_error(proc: subprocess.CompletedProcess[str], code: int, *, as_json: bool) -> str:
    """The error of a failed command: exit ``code``, no traceback, one line on stderr or
    ``{"error": …}`` alone on stdout."""
    assert proc.returncode == code, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr + proc.stdout
    if as_json:
        message = json.loads(proc.stdout)["error"]
        assert isinstance(message, str) and "\n" not in message
        return message
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0]


@pytest.mark.parametrize("as_json", [False, True])
@pytest.mark.parametrize(
    "command",
    [
        ("show",),
        ("search", "deploy"),
        ("memory", "list"),
        ("topic", "list"),
        ("audit", "ledger"),
        ("audit", "chain", "fct-x"),
        ("namespaces",),
        ("review",),
        ("doctor",),
    ],
)
def test_read_commands_never_create_a_home(
    tmp_path: Path, command: tuple[str, ...], as_json: bool
) -> None:
    missing = tmp_path / "no" / "such"
    flags = ["--json"] if as_json else []
    proc = run(*command, "--home", str(missing), "-n", "alice", *flags)
    if command[0] in {"namespaces", "review", "doctor"}:  # no --namespace option
        proc = run(*command, "--home", str(missing), *flags)
    assert "no reverie home" in one_line_error(proc, 2, as_json=as_json)
    assert not (tmp_path / "no").exists()


@pytest.mark.parametrize("as_json", [False, True])
def test_an_unknown_namespace_is_one_line_listing_the_known_ones(
    tmp_path: Path, as_json: bool
) -> None:
    jcli(tmp_path, "memory", "add", "Alice deploys on Fridays", "-n", "alice")
    jcli(tmp_path, "memory", "add", "Bob uses zsh", "-n", "bob")
    flags = ["--json"] if as_json else []
    proc = run("show", "--home", str(tmp_path), "-n", "alise", *flags)
    message = one_line_error(proc, 2, as_json=as_json)
    assert "no namespace 'alise'" in message and "known: alice, bob" in message
    assert jcli(tmp_path, "namespaces") == ["alice", "bob"]
    assert cli(tmp_path, "namespaces").split() == ["alice", "bob"]
    assert not (tmp_path / "alise").exists()


@pytest.mark.parametrize("as_json", [False, True])
@pytest.mark.parametrize(
    ("namespace", "says"),
    [
        ("../x", "namespace must be"),  # D17
        ("reverie.db-journal", "reserved"),  # D1
        ("alice\n", "namespace must be"),  # D9
    ],
)
def test_bad_names_are_one_line_errors(
    tmp_path: Path, namespace: str, says: str, as_json: bool
) -> None:
    jcli(tmp_path, "memory", "add", "Alice deploys on Fridays", "-n", "alice")
    flags = ["--json"] if as_json else []
    for command in (("show",), ("memory", "add", "x")):
        proc = run(*command, "--home", str(tmp_path), "-n", namespace, *flags)
        assert says in one_line_error(proc, 2, as_json=as_json)
    assert jcli(tmp_path, "namespaces") == ["alice"]


def test_a_missing_fact_is_a_json_error(tmp_path: Path) -> None:
    jcli(tmp_path, "memory", "add", "Builds run with make ci")
    proc = run("audit", "chain", "fct-x", "--json", "--home", str(tmp_path))
    assert "no fact 'fct-x'" in one_line_error(proc, 1, as_json=True)


@pytest.mark.parametrize("as_json", [False, True])
def test_a_bad_model_url_in_the_environment_is_one_line(tmp_path: Path, as_json: bool) -> None:
    jcli(tmp_path, "memory", "add", "Builds run with make ci")
    flags = ["--json"] if as_json else []
    for command in (("show",), ("review", "--force"), ("memory", "add", "y")):
        proc = run(
            *command, "--home", str(tmp_path), *flags, env={"REVERIE_MODEL_URL": "not-a-url"}
        )
        assert "not-a-url" in one_line_error(proc, 2, as_json=as_json)


def test_a_damaged_home_is_refused_by_every_command(tmp_path: Path) -> None:
    jcli(tmp_path, "memory", "add", "Builds run with make ci", "-n", "alice")
    (tmp_path / "reverie.db").write_bytes(b"")
    for command in (("show", "-n", "alice"), ("memory", "add", "y", "-n", "alice")):
        proc = run(*command, "--home", str(tmp_path), "--json")
        assert "reverie doctor --repair" in one_line_error(proc, 2, as_json=True)
    assert (tmp_path / "alice" / "MEMORY.md").read_text() == "Builds run with make ci\n"
    assert jcli(tmp_path, "doctor", "--repair")["healthy"]
    assert [e["content"] for e in jcli(tmp_path, "memory", "list", "-n", "alice")] == [
        "Builds run with make ci"
    ]


@pytest.mark.parametrize("as_json", [False, True])
@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("search", "x", "-k", "-3"), "Invalid value for '-k'"),  # a bad option value
        (("search", "x", "--bogus"), "No such option: --bogus"),  # an unknown option
        (("search",), "Missing argument"),  # a missing argument
        (("nosuch",), "No such command"),
    ],
)
def test_usage_errors_are_one_line_and_honour_json(
    tmp_path: Path, args: tuple[str, ...], says: str, as_json: bool
) -> None:
    """Finding 10: ``reverie search x -k -3 --json`` printed a rich usage box, not JSON."""
    flags = ["--json"] if as_json else []
    proc = run(*args, *flags, "--home", str(tmp_path))
    message = one_line_error(proc, 2, as_json=as_json)
    assert says in message and "--help" in message
    assert "╭" not in proc.stdout + proc.stderr  # no rich box
    if as_json:
        assert proc.stderr == ""
    assert not (tmp_path / "reverie.db").exists()


def test_help_and_a_bare_group_still_work(tmp_path: Path) -> None:
    assert run("search", "--help").returncode == 0
    assert "Ranked search" in run("search", "--help").stdout
    bare = run("memory")
    assert bare.returncode == 2 and "Usage" in bare.stdout + bare.stderr
