"""Bundle Search (seed 004, ``ns.search(q, mode="bundle")``) against the default search, in
the same run, over the same homes:

- LoCoMo (../shared/data/locomo10.json, read in place): every observation saved through the
  ``topic`` tool as ``bench.locomo`` does; evidence recall@5 / @10 per question category
  (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial — the numbering of
  the LoCoMo release as it is commonly read);
- BEAM 100K (../shared/data/beam-100k/<n>/): each conversation fed turn by turn as
  ``bench.beam`` does; evidence recall@5 / @10 per probing-question category, a hit
  covering an exchange as ``bench.beam``'s scorer says.

Prints both modes' figures and the ratio bundle / default. The graph is built by the
grapher as the loop runs (each session's end) and brought up to date by the bundle search
itself. Skips a data set that is absent.

    python -m bench.bundle [--beam-limit N] [--skip-beam] [--skip-locomo]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import anyio

import reverie
from bench import beam, locomo

KS = (5, 10)
MODES: tuple[Literal["default", "bundle"], ...] = ("default", "bundle")
Totals = dict[str, dict[str, list[float]]]  # category → mode → [sum @5, sum @10, count]
SECONDS: dict[str, float] = dict.fromkeys(MODES, 0.0)
"""Time spent searching, per mode (the bundle's includes its grapher's ask)."""


async def timed(ns: reverie.Namespace, query: str, mode: Literal["default", "bundle"]) -> Any:
    t0 = time.perf_counter()
    hits = await ns.search(query, k=max(KS), mode=mode)
    SECONDS[mode] += time.perf_counter() - t0
    return hits


def _add(totals: Totals, category: str, mode: str, scores: tuple[float, ...]) -> None:
    row = totals.setdefault(category, {}).setdefault(mode, [0.0, 0.0, 0.0])
    row[0] += scores[0]
    row[1] += scores[1]
    row[2] += 1


async def locomo_run(data: list[dict[str, Any]], home: Path) -> Totals:
    totals: Totals = {}
    async with reverie.open(home) as rv:
        sources, _ = await locomo.ingest(rv, data)
        await rv.wait_idle()
        for sample in data:
            ns = rv.namespace(locomo.slug(sample["sample_id"]))
            owned = sources[ns.name]
            for qa in sample["qa"]:
                evidence = {str(e) for e in qa.get("evidence") or []}
                if not evidence:
                    continue
                for mode in MODES:
                    hits = await timed(ns, qa["question"], mode)
                    found = [owned.get(h.id, set()) for h in hits]
                    got = [len(set().union(*found[:k]) & evidence) / len(evidence) for k in KS]
                    _add(totals, str(qa.get("category")), mode, tuple(got))
    return totals


async def beam_conversation(conv: beam.Conversation, home: Path, totals: Totals) -> None:
    clock = reverie.ManualClock(conv.batches[0].anchor or datetime(2024, 1, 1, tzinfo=UTC))
    scorer = beam.Scorer(conv)
    settings = reverie.Config.load(environ=os.environ)
    async with reverie.open(home, clock=clock, config=settings) as rv:
        await beam.feed(rv, clock, conv)
        ns = rv.namespace(beam.namespace_of(conv))
        for q in conv.questions:
            evidence = scorer.evidence(q.evidence)
            if not evidence or not q.text:
                continue
            for mode in MODES:
                hits = await timed(ns, q.text, mode)
                found = [scorer.covers(h) for h in hits]
                got = tuple(beam.recall_at(found, evidence, k) for k in KS)
                _add(totals, q.category, mode, got)


async def beam_run(data: Path, limit: int | None, root: Path) -> Totals:
    totals: Totals = {}
    for folder in beam.conversation_dirs(data, limit):
        conv = beam.load_conversation(folder)
        print(f"BEAM {conv.name}: {len(conv.exchanges)} exchanges", file=sys.stderr)
        await beam_conversation(conv, root / conv.name, totals)
    return totals


def report(title: str, totals: Totals) -> dict[str, Any]:
    """Print one data set's table; the same figures as a mapping."""
    print(f"\n{title}: evidence recall @5 / @10, default vs bundle (ratio bundle/default)")
    out: dict[str, Any] = {}
    every: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for category in sorted(totals):
        modes = totals[category]
        for mode in MODES:
            for i in range(3):
                every[mode][i] += modes[mode][i]
        out[category] = _line(category, modes)
    out["all"] = _line("all", every)
    return out


def _line(category: str, modes: dict[str, list[float]]) -> dict[str, Any]:
    d, b = modes["default"], modes["bundle"]
    n = int(d[2])
    dr, br = (d[0] / n, d[1] / n), (b[0] / n, b[1] / n)
    ratio = tuple(x / y if y else float("nan") for x, y in zip(br, dr, strict=True))
    print(
        f"  {category:>24} (n={n:4}): default {dr[0]:.3f} / {dr[1]:.3f}   "
        f"bundle {br[0]:.3f} / {br[1]:.3f}   ratio {ratio[0]:.2f} / {ratio[1]:.2f}"
    )
    return {"n": n, "default": dr, "bundle": br, "ratio": ratio}


def _timing() -> dict[str, float]:
    """Print and reset the time each mode spent searching."""
    spent = dict(SECONDS)
    ratio = spent["bundle"] / spent["default"] if spent["default"] else float("nan")
    print(
        f"  search time: default {spent['default']:.1f} s, bundle {spent['bundle']:.1f} s"
        f" (ratio {ratio:.2f})"
    )
    for mode in MODES:
        SECONDS[mode] = 0.0
    return spent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("--beam-limit", type=int, default=None, help="BEAM conversations")
    parser.add_argument("--skip-beam", action="store_true")
    parser.add_argument("--skip-locomo", action="store_true")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    args = parser.parse_args(argv)
    figures: dict[str, Any] = {}
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bundle-") as tmp:
        if args.skip_locomo:
            pass
        elif not locomo.DATA.exists():
            print(f"LoCoMo skipped: {locomo.DATA} is absent")
        else:
            data = json.loads(locomo.DATA.read_text())
            totals = anyio.run(locomo_run, data, Path(tmp) / "locomo")
            figures["locomo"] = report("LoCoMo", totals)
            figures["locomo"]["seconds"] = _timing()
        if args.skip_beam:
            pass
        elif not beam.conversation_dirs(beam.DATA, args.beam_limit):
            print(f"BEAM skipped: no conversations under {beam.DATA}")
        else:
            totals = anyio.run(beam_run, beam.DATA, args.beam_limit, Path(tmp) / "beam")
            figures["beam"] = report("BEAM 100K", totals)
            figures["beam"]["seconds"] = _timing()
    print(f"\nwall time {time.perf_counter() - t0:.0f} s")
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
