"""What the consolidate / patch proposals add to the curator's look in a review pass (no
create checks there, as in the pass): N
agent-made skills (a third in overlapping pairs, a tenth bloated), the look with the
proposals against the overlap / bloat scan alone, both measured in this run; then one
consolidate apply and the unmerge of every merge.

    python -m bench.skill_proposals [N=200]
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import anyio

import reverie
from reverie.actors import skill_reshape
from reverie.actors.curator import scan
from reverie.stores import skills


def words(seed: int, k: int) -> list[str]:
    """k made-up words of one skill's topic: topics share none of them."""
    rng = random.Random(seed)
    return [
        "".join(rng.choice("bcdfgklmnprstvz") + rng.choice("aeiou") for _ in range(3))
        for _ in range(k)
    ]


def body(i: int) -> str:
    """Skills 3k and 3k+1 are two versions of one runbook; every tenth one is bloated."""
    topic = i // 3 if i % 3 < 2 else 100_000 + i
    vocab = words(topic, 24)
    steps = [f"{n + 1}. Run {' '.join(vocab[n * 4 : n * 4 + 4])} first." for n in range(5)]
    lines = [f"# Runbook {topic}", "", "## Steps", "", *steps, "", "## Notes", ""]
    lines.append(f"Version {i}: ask {vocab[20]} before {vocab[21]}.")
    if i % 10 == 0:
        prose = " ".join(f"Then {w} again with care." for w in vocab)
        lines += ["", prose, "", "## Steps", "", *steps]  # a repeated section
        lines += ["", "## Background", ""] + [f"Note {n}. {prose}" for n in range(20)]
    return "\n".join(lines)


async def timed(rv: reverie.Reverie, read: object, rounds: int) -> float:
    start = time.perf_counter()
    for _ in range(rounds):
        await rv.services.db.read(read)  # type: ignore[arg-type]
    return (time.perf_counter() - start) / rounds


async def main(n: int) -> None:
    clock = reverie.ManualClock(datetime(2026, 1, 1, tzinfo=UTC))
    with tempfile.TemporaryDirectory() as tmp:
        async with reverie.open(Path(tmp) / "home", clock=clock) as rv:
            ns = rv.namespace()
            async with ns.session("load") as s:
                for i in range(n):
                    args = {"action": "create", "name": f"skill-{i}", "content": body(i)}
                    assert (await s.call_tool("skill_manage", args))["decision"] == "CREATED"
            cfg = rv.config

            def scan_only(conn: object) -> object:
                found = skills.registered(conn, "default")  # type: ignore[arg-type]
                return scan(found, cfg.curator.overlap_threshold, cfg.curator.bloat_chars)

            def with_proposals(conn: object) -> object:
                scan_only(conn)
                return [
                    skill_reshape.proposals(conn, "default", cfg, kind, checked=False)  # type: ignore[arg-type]
                    for kind in skill_reshape.KINDS
                ]

            base = await timed(rv, scan_only, 5)
            full = await timed(rv, with_proposals, 5)
            merges, trims = await rv.services.db.read(with_proposals)  # type: ignore[misc]
            start = time.perf_counter()
            applied = await ns.consolidate_skills(apply=True)
            apply_s = time.perf_counter() - start
            start = time.perf_counter()
            for name in applied["applied"]:
                assert (await ns.unmerge_skill(name))["decision"] == "RESTORED"
            undo_s = time.perf_counter() - start
            assert len(await ns.skills()) == n
    print(f"{n} skills: {len(merges)} merge proposals, {len(trims)} trim proposals")
    print(f"scan alone      {base * 1000:8.1f} ms")
    print(f"scan+proposals  {full * 1000:8.1f} ms   ratio {full / base:.2f}x")
    print(
        f"apply {len(applied['applied'])} merges {apply_s * 1000:8.1f} ms, unmerge all "
        f"{undo_s * 1000:8.1f} ms"
    )


if __name__ == "__main__":
    anyio.run(main, int(sys.argv[1]) if len(sys.argv) > 1 else 200)
