"""The dream commands end to end, in real subprocesses over one home (issue 12): dream
(dry run, then for real), dream status, dream search, dream longterm, graph, report
dream|daily."""

from __future__ import annotations

from pathlib import Path

from tests.test_cli import cli, jcli


def test_dream_commands_round_trip(tmp_path: Path) -> None:
    jcli(tmp_path, "topic", "save", "deploy", "The deploy timeout is 45s")
    dry = jcli(tmp_path, "dream", "--dry-run")
    assert dry["dry_run"] and dry["files"] == []
    assert not (tmp_path / "default" / "dreams").exists()
    run = jcli(tmp_path, "dream")
    assert f"dreams/{run['date']}.md" in run["files"]
    status = jcli(tmp_path, "dream", "status")
    assert set(status["health"]["metrics"]) == {
        "freshness",
        "coverage",
        "coherence",
        "connectivity",
        "efficiency",
        "reachability",
    }
    assert status["graph"]["episodes"] >= 1 and status["next_due"] == run["next_due"]
    assert jcli(tmp_path, "dream", "longterm")["long_term"] == 0
    rebuilt = jcli(tmp_path, "graph", "--rebuild")
    assert rebuilt["counts"] == status["graph"] and rebuilt["changed"] > 0
    assert (tmp_path / "default" / "graph" / "index.json").is_file()
    [hit] = jcli(tmp_path, "dream", "search", "deploy timeout", "-k", "1")
    assert "45s" in hit["text"] and hit["path"]
    found = jcli(tmp_path, "search", "deploy timeout", "--mode", "bundle", "-k", "1")
    assert [h["id"] for h in found["hits"]] == [hit["id"]]
    assert "mode" in jcli(tmp_path, "search", "x", "--mode", "sideways", code=2)["error"]
    text = cli(tmp_path, "report", "dream")
    assert text.startswith(f"# 🌙 Dream Report — {run['date']}")
    assert "## 🫀 Health score" in text
    assert "health" in cli(tmp_path, "dream", "status")
    shown = jcli(tmp_path, "report", "dream", "--date", run["date"])
    assert shown["text"] == text


def test_a_missing_report_or_bad_date_exits_2(tmp_path: Path) -> None:
    jcli(tmp_path, "topic", "save", "deploy", "The deploy timeout is 45s")
    assert "no dream report" in jcli(tmp_path, "report", "dream", code=2)["error"]
    out = jcli(tmp_path, "report", "daily", "--date", "2020-01-01", code=2)
    assert "no daily report of 2020-01-01" in out["error"]
