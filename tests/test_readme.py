"""The README's tour runs as written (docs that rot are worse than none)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def run_example(index: int, where: Path) -> list[str]:
    """Run the README's ``index``-th python block in ``where``; its output lines."""
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)
    proc = subprocess.run(
        [sys.executable, "-c", blocks[index]],
        cwd=where,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_the_tour_runs(tmp_path: Path) -> None:
    lines = run_example(0, tmp_path)
    assert lines[0].startswith("SUPERSEDE fct-")
    assert lines[1] == "Actually the deploy timeout is 45s 1"
    assert (tmp_path / "memory" / "reverie.db").exists()


def test_the_loop_example_runs(tmp_path: Path) -> None:
    lines = run_example(1, tmp_path)
    assert lines[0] == "['name: Alice']"
    assert lines[1] == "['linter', 'distiller', 'promoter', 'curator', 'profiler', 'dreamer']"
    assert "'flusher'" in lines[2]  # one question: a durable lesson? (the rest by rules)


def test_readme_opens_with_the_two_commands() -> None:
    head = (ROOT / "README.md").read_text()[:1500]
    assert "reverie simulate" in head and "pytest" in head
    ci = (ROOT / ".ci" / "run").read_text()
    assert "\npytest\n" in ci
