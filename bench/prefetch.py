"""Next-round prefetch (issue 13): does ``s.prefetched`` hold the evidence for the next
question, and what does it cost a turn?

Each data set is stored as its bench does it — LoCoMo (../shared/data/locomo10.json): every
observation saved through the ``topic`` tool as ``bench.locomo`` does; BEAM 100K
(../shared/data/beam-100k/<n>/): each conversation fed turn by turn as ``bench.beam`` does.
Then every question with evidence is sent as the next user turn of a session:

- the hit pass (prefetch on, default settings): before the turn, the plain search at the
  same k (``ns.search(q, k)``: the reference, uncapped); the turn; then
  ``await s.wait_prefetch()`` and the block scored. A **hit**: the block shows a record that
  stands for at least one of the question's evidence turns (LoCoMo: a fact saved from an
  evidence observation; BEAM: a record that covers an evidence exchange as
  ``bench.beam``'s scorer says). Also the evidence recall of the block (the share of a
  question's evidence turns it shows). With ``--graph``, first the same on a copy of the
  fresh home with ``prefetch.graph = true`` (Bundle Search).
- two timed passes over the same home, each with two sessions per namespace, the
  prefetch on in one and off in the other (``ns.session(id, prefetch=False)``): paced (the
  two alternate question by question, each turn from a quiet runtime: the last fetch and
  the actors' work done, as a host's model call between turns would let them), then back
  to back (each namespace's questions as one block per session, on first and off first in
  turn; each turn arriving while the last one's fetch and the actors may still run — the
  worst case).

Prints hit rate and recall for the block and the reference, and p50 / p95 of ``s.turn``
wall time per pass with the ratios against ``off``. Skips a data set that is absent.

    python -m bench.prefetch [--locomo-limit N] [--beam-limit N] [--skip-beam]
                             [--skip-locomo] [--graph] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import reverie
from bench import beam, locomo
from reverie import Config

Score = Callable[[list[reverie.SearchHit]], set[str]]
"""The evidence turns a list of hits stands for."""


@dataclass(frozen=True)
class Probe:
    namespace: str
    question: str
    evidence: set[str]
    covers: Score


@dataclass
class Tally:
    """One data set's figures, summed over its questions."""

    n: int = 0
    hits: dict[str, int] = field(default_factory=dict)
    recall: dict[str, float] = field(default_factory=dict)
    shown: dict[str, int] = field(default_factory=dict)
    chars: dict[str, int] = field(default_factory=dict)
    turns: dict[str, list[float]] = field(default_factory=dict)
    fetch: dict[str, list[float]] = field(default_factory=dict)
    """How long after the turn returned its fetch was done (the hit pass)."""

    def score(self, kind: str, probe: Probe, hits: list[reverie.SearchHit], text: str) -> None:
        got = probe.covers(hits) & probe.evidence
        self.hits[kind] = self.hits.get(kind, 0) + bool(got)
        self.recall[kind] = self.recall.get(kind, 0.0) + len(got) / len(probe.evidence)
        self.shown[kind] = self.shown.get(kind, 0) + len(hits)
        self.chars[kind] = self.chars.get(kind, 0) + len(text)


def _config(**prefetch: Any) -> Config:
    return Config().with_section("prefetch", **prefetch)


async def _scored_pass(
    rv: reverie.Reverie, probes: list[Probe], tally: Tally, label: str, k: int
) -> None:
    """The hit pass: the reference search, the turn, then the block scored."""
    for name, mine in _by_namespace(probes).items():
        async with rv.namespace(name).session(f"probe-{label}") as s:
            for probe in mine:
                if label == "on":
                    reference = await rv.namespace(name).search(probe.question, k=k)
                    tally.score("reference", probe, list(reference), "")
                    tally.n += 1
                await s.turn(user=probe.question)
                t0 = time.perf_counter()
                await s.wait_prefetch()
                tally.fetch.setdefault(label, []).append(time.perf_counter() - t0)
                found = s.prefetch_result
                tally.score(label, probe, list(found.hits) if found else [], s.prefetched)
        await rv.wait_idle()


async def _timed_pass(rv: reverie.Reverie, probes: list[Probe], tally: Tally, paced: bool) -> None:
    """The turns, timed, in two sessions of each namespace over the same home: one with
    the prefetch on, one with it off (``ns.session(id, prefetch=False)``). ``paced``: the
    two alternate question by question, each turn from a quiet runtime (its fetch and the
    actors' work done first, as a host's model call between turns would let them). Back
    to back: each namespace's questions run as one block per session, on first in one
    namespace and off first in the next (so the home's growth weighs on both alike), each
    turn arriving while the last one's fetch and the actors may still run."""
    mode = "paced" if paced else "b2b"
    for j, (name, mine) in enumerate(_by_namespace(probes).items()):
        ns = rv.namespace(name)
        async with (
            ns.session(f"probe-{mode}-on", prefetch=True) as on,
            ns.session(f"probe-{mode}-off", prefetch=False) as off,
        ):
            pair = [("on", on), ("off", off)]
            if paced:
                for i, probe in enumerate(mine):
                    for label, s in pair if i % 2 == 0 else pair[::-1]:
                        await _timed_turn(s, probe, tally, f"{label}-{mode}")
                        await s.wait_prefetch()
                        await rv.wait_idle()
            else:
                for label, s in pair if j % 2 == 0 else pair[::-1]:
                    for probe in mine:
                        await _timed_turn(s, probe, tally, f"{label}-{mode}")
                    await s.wait_prefetch()
                    await rv.wait_idle()
        await rv.wait_idle()


async def _timed_turn(s: reverie.Session, probe: Probe, tally: Tally, label: str) -> None:
    t0 = time.perf_counter()
    await s.turn(user=probe.question)
    tally.turns.setdefault(label, []).append(time.perf_counter() - t0)


def _by_namespace(probes: list[Probe]) -> dict[str, list[Probe]]:
    out: dict[str, list[Probe]] = {}
    for probe in probes:
        out.setdefault(probe.namespace, []).append(probe)
    return out


async def passes(
    home: Path, probes: list[Probe], graph: bool, clock: reverie.ManualClock | None = None
) -> Tally:
    """The graph pass on a copy of the fresh home (no probe turns in it), then the hit
    pass, then the timed passes."""
    tally = Tally()
    k = Config().prefetch.k
    if graph:
        copy = home.with_name(home.name + "-graph")
        shutil.copytree(home, copy)
        async with reverie.open(copy, config=_config(graph=True), clock=clock) as rv:
            await _scored_pass(rv, probes, tally, "graph", k)
    async with reverie.open(home, config=_config(), clock=clock) as rv:
        await _scored_pass(rv, probes, tally, "on", k)
        for paced in (True, False):
            await _timed_pass(rv, probes, tally, paced)
            print(f"  timed pass {'paced' if paced else 'back to back'} done", file=sys.stderr)
    return tally


# -- the data sets ---------------------------------------------------------------------------


async def locomo_run(limit: int | None, graph: bool, root: Path) -> Tally | None:
    if not locomo.DATA.exists():
        print(f"LoCoMo skipped: {locomo.DATA} is absent")
        return None
    data = json.loads(locomo.DATA.read_text())[:limit]
    home = root / "locomo"
    async with reverie.open(home) as rv:
        sources, _ = await locomo.ingest(rv, data)
        await rv.wait_idle()
    probes = []
    for sample in data:
        owned = sources[locomo.slug(sample["sample_id"])]

        def covers(hits: list[reverie.SearchHit], owned: dict[str, set[str]] = owned) -> set[str]:
            return set().union(*(owned.get(h.id, set()) for h in hits)) if hits else set()

        for qa in sample["qa"]:
            evidence = {str(e) for e in qa.get("evidence") or []}
            if evidence and qa.get("question"):
                probes.append(
                    Probe(locomo.slug(sample["sample_id"]), qa["question"], evidence, covers)
                )
    return await passes(home, probes, graph)


async def beam_run(limit: int | None, graph: bool, root: Path) -> Tally | None:
    data = beam.DATA if hasattr(beam, "DATA") else None
    if data is None or not Path(data).exists():
        print(f"BEAM skipped: {data} is absent")
        return None
    total = Tally()
    for folder in beam.conversation_dirs(Path(data), limit):
        conv = beam.load_conversation(folder)
        print(f"BEAM {conv.name}: {len(conv.exchanges)} exchanges", file=sys.stderr)
        clock = reverie.ManualClock(conv.batches[0].anchor or datetime(2024, 1, 1, tzinfo=UTC))
        home = root / f"beam-{conv.name}"
        async with reverie.open(home, clock=clock) as rv:
            await beam.feed(rv, clock, conv)
        scorer = beam.Scorer(conv)

        def covers(hits: list[reverie.SearchHit], scorer: beam.Scorer = scorer) -> set[str]:
            return {str(i) for h in hits for i in scorer.covers(h)}

        probes = [
            Probe(
                beam.namespace_of(conv),
                q.text,
                {str(i) for i in scorer.evidence(q.evidence)},
                covers,
            )
            for q in conv.questions
            if q.text and scorer.evidence(q.evidence)
        ]
        _merge(total, await passes(home, probes, graph, clock))
    return total


def _merge(into: Tally, one: Tally) -> None:
    into.n += one.n
    for name in ("hits", "shown", "chars"):
        mine, theirs = getattr(into, name), getattr(one, name)
        for key, value in theirs.items():
            mine[key] = mine.get(key, 0) + value
    for key, value in one.recall.items():
        into.recall[key] = into.recall.get(key, 0.0) + value
    for key, samples in one.turns.items():
        into.turns.setdefault(key, []).extend(samples)
    for key, samples in one.fetch.items():
        into.fetch.setdefault(key, []).extend(samples)


# -- the report ------------------------------------------------------------------------------


def _percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))] * 1000


def report(title: str, tally: Tally) -> dict[str, Any]:
    n = max(1, tally.n)
    settings = Config().prefetch
    print(f"\n{title}: {tally.n} questions, k={settings.k}, max_chars={settings.max_chars}")
    out: dict[str, Any] = {"n": tally.n, "k": settings.k, "max_chars": settings.max_chars}
    for kind in [x for x in ("reference", "on", "graph") if x in tally.hits]:
        row = {
            "hit_rate": tally.hits[kind] / n,
            "recall": tally.recall[kind] / n,
            "mean_hits_shown": tally.shown[kind] / n,
            "mean_chars": tally.chars[kind] / n,
        }
        out[kind] = row
        print(
            f"  {kind:>12}: hit rate {row['hit_rate']:.3f}  evidence recall {row['recall']:.3f}"
            f"  hits shown {row['mean_hits_shown']:.2f}  chars {row['mean_chars']:.0f}"
        )
    for label, base_label in (
        ("off-paced", "off-paced"),
        ("on-paced", "off-paced"),
        ("off-b2b", "off-b2b"),
        ("on-b2b", "off-b2b"),
    ):
        samples, base = tally.turns.get(label, []), tally.turns.get(base_label, [])
        if not samples or not base:
            continue
        p50, p95 = _percentile(samples, 50), _percentile(samples, 95)
        b50, b95 = _percentile(base, 50), _percentile(base, 95)
        out[f"turn_{label}"] = {"p50_ms": p50, "p95_ms": p95, "ratio": (p50 / b50, p95 / b95)}
        print(
            f"  s.turn {label:>9}: p50 {p50:.2f} ms  p95 {p95:.2f} ms"
            f"  (ratio to {base_label}: p50 {p50 / b50:.2f}, p95 {p95 / b95:.2f})"
        )
    for label, samples in tally.fetch.items():
        p50, p95 = _percentile(samples, 50), _percentile(samples, 95)
        out[f"fetch_{label}"] = {"p50_ms": p50, "p95_ms": p95}
        print(f"  fetch {label:>6} done after the turn: p50 {p50:.2f} ms  p95 {p95:.2f} ms")
    return out


async def run(args: argparse.Namespace) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_locomo:
            tally = await locomo_run(args.locomo_limit, args.graph, Path(tmp))
            if tally is not None:
                figures["locomo"] = report("LoCoMo", tally)
        if not args.skip_beam:
            tally = await beam_run(args.beam_limit, args.graph, Path(tmp))
            if tally is not None:
                figures["beam"] = report("BEAM 100K", tally)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("--locomo-limit", type=int, default=None, help="LoCoMo conversations")
    parser.add_argument("--beam-limit", type=int, default=None, help="BEAM conversations")
    parser.add_argument("--skip-beam", action="store_true")
    parser.add_argument("--skip-locomo", action="store_true")
    parser.add_argument("--graph", action="store_true", help="also a pass with prefetch.graph")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    args = parser.parse_args(argv)
    import anyio

    figures = anyio.run(run, args)
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
