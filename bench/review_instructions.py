"""The instructions a review round costs, counted, against an older tree in the same run.

Wall time on this machine swings by ±20 % a run, more than a change worth measuring; the
instructions a process executes do not (cachegrind counts them; two runs of one tree agree
within 0.01 %). One home of N idle namespaces is populated by the BASE tree (the same data
as ``bench.review_scale``); each tree gets a copy in steady state for it (opened once by
that tree, as ``bench.review_scale HOME`` does), then runs, under ``valgrind
--tool=cachegrind``, once opening the home and forcing a review round and once only opening
it. The difference is the round's instructions; the ratio now / base is printed.

    python -m bench.review_instructions [BASE=802739a] [N=300]

Needs git and valgrind (skipped with a message when either is missing). It counts work,
not waiting: threads, locks and disk are what the wall-clock benches (``bench.review_scale``)
measure.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench._common import REPO

POPULATE = """
import sys, anyio, reverie
from bench.review_scale import populate
async def main(home, n):
    async with reverie.open(home) as rv:
        await populate(rv, n)
anyio.run(main, sys.argv[1], int(sys.argv[2]))
"""

ROUND = """
import sys, anyio, reverie
async def main(home, review):
    async with reverie.open(home) as rv:
        await rv.namespaces()
        if review:
            await rv.review(force=True)
anyio.run(main, sys.argv[1], sys.argv[2] == "review")
"""


def python(tree: Path, code: str, *args: str, valgrind: bool = False) -> str:
    """Run ``code`` with ``tree``'s reverie first on the path; its stderr when counted."""
    command = [sys.executable, "-c", code, *args]
    if valgrind:
        command = ["valgrind", "--tool=cachegrind", "--cache-sim=no"]
        command += ["--cachegrind-out-file=/dev/null", sys.executable, "-c", code, *args]
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONMALLOC": "malloc"}
    done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, check=True)
    return done.stderr


def counted(tree: Path, home: Path, scratch: Path, mode: str) -> int:
    """Instructions of one process over a fresh copy of ``home``."""
    run = scratch / "run"
    shutil.rmtree(run, ignore_errors=True)
    shutil.copytree(home, run)
    found = re.search(r"I\s+refs:\s+([\d,]+)", python(tree, ROUND, str(run), mode, valgrind=True))
    if found is None:
        raise RuntimeError("cachegrind printed no instruction count")
    return int(found.group(1).replace(",", ""))


def round_cost(tree: Path, home: Path, scratch: Path) -> int:
    return counted(tree, home, scratch, "review") - counted(tree, home, scratch, "open")


def main(base: str, count: int) -> None:
    if shutil.which("valgrind") is None or shutil.which("git") is None:
        print("bench.review_instructions needs valgrind and git; skipped")
        return
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        tree = scratch / "base"
        git = ["git", "-C", str(REPO)]
        subprocess.run([*git, "worktree", "add", "-f", "--detach", str(tree), base], check=True)
        try:
            homes = {"base": scratch / "home-base", "now": scratch / "home-now"}
            python(tree, POPULATE, str(homes["base"]), str(count))
            shutil.copytree(homes["base"], homes["now"])
            python(REPO, ROUND, str(homes["now"]), "open")  # in steady state for this tree
            costs = {
                "base": round_cost(tree, homes["base"], scratch),
                "now": round_cost(REPO, homes["now"], scratch),
            }
        finally:
            subprocess.run([*git, "worktree", "remove", "--force", str(tree)], check=False)
    for label, cost in costs.items():
        print(
            f"{label:4}: {cost:,} instructions for a round of {count} namespaces "
            f"({cost / count:,.0f} a pass)"
        )
    print(f"ratio now / base ({base}): {costs['now'] / costs['base']:.3f}")


if __name__ == "__main__":
    args = sys.argv[1:]
    main(args[0] if args else "802739a", int(args[1]) if len(args) > 1 else 300)
