"""``pip install reverie`` is the library alone: without the ``cli`` extra (typer, rich,
the OpenTelemetry SDK and its OTLP exporter) the whole library API works, and the
``reverie`` command says in one line how to get the extra.

Each test runs a fresh interpreter whose ``sys.meta_path`` refuses those packages and
records every attempt with the file that made it, so an import of them from ``reverie/``
(eager or lazy, caught or not) fails. Third-party optional imports are no concern of ours:
structlog tries ``rich`` for its console renderer and does without.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow

BLOCK = textwrap.dedent(
    """
    import os
    import sys

    BLOCKED = ("typer", "rich", "opentelemetry.sdk", "opentelemetry.exporter")
    ATTEMPTS = []

    def importer():
        frame = sys._getframe(2)
        while frame is not None and frame.f_code.co_filename.startswith("<frozen"):
            frame = frame.f_back
        return frame.f_code.co_filename if frame is not None else "?"

    class NoCliExtra:
        def find_spec(self, name, path=None, target=None):
            if any(name == b or name.startswith(b + ".") for b in BLOCKED):
                ATTEMPTS.append((name, importer()))
                raise ImportError(f"blocked for this test: {name}", name=name)
            return None

    assert not [m for m in sys.modules if m.split(".")[0] in ("typer", "rich", "reverie")]
    sys.meta_path.insert(0, NoCliExtra())
    """
)

ROUND_TRIP = textwrap.dedent(
    """
    import anyio
    import reverie

    async def main(home):
        async with reverie.open(home) as rv:
            ns = rv.namespace("alice")
            async with ns.session("s-1") as s:
                added = await s.call_tool(
                    "memory",
                    {"action": "add", "target": "memory", "content": "Builds run with make ci"},
                )
                assert added["decision"] == "ADD", added
                await s.turn(user="The staging DB is pg-stage-2 on port 5433.")
                await s.idle()
                await rv.wait_idle()
            hits = await ns.search("make ci", k=5)
            assert [h.text for h in hits] == ["Builds run with make ci"], list(hits)

    anyio.run(main, sys.argv[1])
    leaked = sorted(
        m for m in sys.modules if any(m == b or m.startswith(b + ".") for b in BLOCKED)
    )
    ours = [a for a in ATTEMPTS if f"{os.sep}reverie{os.sep}" in a[1]]
    assert not ours and not leaked, (ours, leaked)
    print("ok")
    """
)


def run(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", BLOCK + code, *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_library_round_trip_needs_no_cli_extra(tmp_path: Path) -> None:
    proc = run(ROUND_TRIP, str(tmp_path / "home"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["ok"]
    assert (tmp_path / "home" / "reverie.db").exists()


def test_the_blocker_catches_an_import_of_the_extra() -> None:
    """The finder really refuses (so the tests above and below can fail)."""
    proc = run("import reverie.cli.app\n")
    assert proc.returncode == 1
    assert "blocked for this test" in proc.stderr


def test_the_command_without_the_extra_is_one_line_and_exit_1() -> None:
    target = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]["reverie"]
    module, _, function = target.partition(":")
    entry = f"import {module}\nsys.argv = ['reverie', 'show']\n{module}.{function}()\n"
    proc = run(entry)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert proc.stdout == ""
    assert proc.stderr.splitlines() == [
        "reverie: the command needs the cli extra: pip install 'reverie[cli]'"
    ]
