"""What the dream cycle costs a host: ``reverie simulate`` (four users, two weeks, every
stage of the loop) run twice in this process's machine, same seed — dreams off, then on —
and the wall time, review passes and dreams of each, with the ratio of the two walls.

    python -m bench.dream_cost [--seed 7] [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any


def simulate(seed: int, dreams: bool, home: Path) -> dict[str, Any]:
    env = {**os.environ, "REVERIE_DREAM_ENABLED": "true" if dreams else "false"}
    proc = subprocess.run(
        [sys.executable, "-m", "reverie", "simulate", "--seed", str(seed), "--home", str(home)]
        + ["--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=1800,
        check=True,
    )
    found: dict[str, Any] = json.loads(proc.stdout)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=2, help="alternating runs of each")
    args = parser.parse_args(argv)
    walls: dict[bool, list[float]] = {False: [], True: []}
    last: dict[bool, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="reverie-dream-cost-") as tmp:
        for n in range(args.rounds):
            for dreams in (False, True):
                report = simulate(args.seed, dreams, Path(tmp) / f"{n}-{dreams}")
                walls[dreams].append(report["wall_s"])
                last[dreams] = report
    for dreams in (False, True):
        r = last[dreams]
        print(
            f"dreams {'on ' if dreams else 'off'}: wall {min(walls[dreams]):.1f} s (best of"
            f" {len(walls[dreams])}), {r['review_passes']} review passes,"
            f" {r['dreams']['dreams']} dreams, health mean {r['dreams']['health_mean']}"
        )
    print(f"ratio on/off (best walls): {min(walls[True]) / min(walls[False]):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
