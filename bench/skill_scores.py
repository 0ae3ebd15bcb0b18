"""What the tier marks cost a snapshot: ``snapshot.take`` on a namespace of 300 skills with
20 uses each (6,000 use rows), against the same snapshot without the activity read (the
baseline, measured in the same run), and the curator's scoring of those skills.

    python -m bench.skill_scores [--skills 300] [--uses 20] [--repeat 50]
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bench._common import describe
from reverie.clock import iso
from reverie.config import Config
from reverie.stores import skill_activity, skills
from reverie.stores.db import connect_migrated, transaction
from reverie.stores.records import Skill

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def build(path: Path, n_skills: int, uses: int) -> sqlite3.Connection:
    conn = connect_migrated(path, Config().store)
    transaction(conn, lambda c: fill(c, n_skills, uses))
    return conn


def fill(conn: sqlite3.Connection, n_skills: int, uses: int) -> None:
    for i in range(n_skills):
        when = iso(NOW - timedelta(days=i % 120))
        skills.insert(
            conn,
            Skill(
                "a",
                f"skill-{i:03}",
                f"Step {i} of the runbook.",
                "skill_manage",
                False,
                when,
                when,
                when,
                None,
            ),
        )
        for u in range(uses):
            outcome = ("success", "failure", "unknown")[u % 3]
            at = iso(NOW - timedelta(days=i % 120, hours=u))
            skill_activity.record_use(conn, "a", f"skill-{i:03}", at, outcome, None)


def timed(body: object, repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        body()  # type: ignore[operator]
        samples.append(time.perf_counter() - t0)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--skills", type=int, default=300)
    parser.add_argument("--uses", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    from reverie import snapshot

    with tempfile.TemporaryDirectory() as tmp:
        conn = build(Path(tmp) / "reverie.db", args.skills, args.uses)
        config, when = Config(), iso(NOW)
        marked = timed(lambda: snapshot.take(conn, "a", config, when), args.repeat)
        real = skill_activity.activities
        skill_activity.activities = lambda *a, **k: {}  # type: ignore[assignment]
        try:
            plain = timed(lambda: snapshot.take(conn, "a", config, when), args.repeat)
        finally:
            skill_activity.activities = real  # type: ignore[assignment]
        scoring = timed(lambda: skill_activity.table(conn, "a", NOW), args.repeat)
        conn.close()
    ratio = sorted(marked)[len(marked) // 2] / sorted(plain)[len(plain) // 2]
    print(f"{args.skills} skills x {args.uses} uses")
    print(f"snapshot with tier marks:    {describe(marked)}")
    print(f"snapshot without (baseline): {describe(plain)}")
    print(f"ns.skill_scores() read:      {describe(scoring)}")
    print(f"ratio (p50, marks / baseline): {ratio:.2f}x")


if __name__ == "__main__":
    main()
