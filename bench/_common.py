"""Shared helpers for the benchmarks: where the shared data is, timing and a text corpus that
does not repeat."""

from __future__ import annotations

import os
import random
import statistics
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def data_dir() -> Path:
    """The shared benchmark data (LoCoMo ``locomo10.json``, ``beam-100k/``), read in place,
    never copied: ``$REVERIE_DATA`` when set, else ``<repo>/../shared/data``. The one place
    that says where it is: the benches call this, the tests' ``shared_data`` fixture too."""
    override = os.environ.get("REVERIE_DATA")
    return Path(override).expanduser() if override else REPO.parent / "shared" / "data"


WORDS = """alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november
oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu kafka redis
postgres nginx deploy build cache queue worker shard replica index backup cluster region
tenant invoice ledger metric alert budget latency timeout retry schema migration""".split()


def fact(i: int, rng: random.Random) -> str:
    """A distinct, realistic-looking fact: unique words and a unique value."""
    words = rng.sample(WORDS, 6)
    return (
        f"The {words[0]} {words[1]} of {words[2]} {i} uses {words[3]} {words[4]} on port {i + 1000}"
    )


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def describe(samples: list[float]) -> str:
    return (
        f"p50 {percentile(samples, 50) * 1000:.2f} ms, p99 {percentile(samples, 99) * 1000:.2f}"
        f" ms, mean {statistics.fmean(samples) * 1000:.2f} ms"
    )
