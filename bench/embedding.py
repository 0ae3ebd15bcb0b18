"""The embedding seam, measured in one run: what it costs and what it buys.

1. Install size of the ``embed`` extra: the files of every distribution that ``wordllama``
   brings and ``reverie`` itself does not need (read from the installed metadata).
2. Write path: topic saves with the seam off and on (on = an embedder is open; vectors are
   made lazily, so the write path should not change), and the lazy pass that embeds them.
3. LoCoMo evidence recall@5/10/25 (if ../shared/data/locomo10.json is present, loaded with
   bench.locomo's code): BM25 alone, BM25 + freshness, hybrid, hybrid + freshness. Each
   LoCoMo session is stamped one day after the previous one, so freshness has ages to read.

    python -m bench.embedding [N_WRITES]

Skips (exit 0) when the ``embed`` extra is not installed.
"""

from __future__ import annotations

import json
import random
import re
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from importlib import metadata
from pathlib import Path
from typing import Any

import anyio

import reverie
from bench import locomo
from bench._common import fact
from bench.write_path import through_reverie
from reverie.embedding import WordLlamaEmbedder, wordllama_installed

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _requires(name: str, seen: set[str]) -> set[str]:
    """``name`` and every distribution it needs (extras and markers that do not apply are
    left out)."""
    key = name.lower().replace("_", "-")
    if key in seen:
        return seen
    try:
        dist = metadata.distribution(key)
    except metadata.PackageNotFoundError:
        return seen
    seen.add(key)
    for req in dist.requires or []:
        if "extra ==" in req:
            continue
        match = re.match(r"[A-Za-z0-9_.\-]+", req)
        if match:
            _requires(match.group(0), seen)
    return seen


def extra_size() -> tuple[float, list[str]]:
    """MB on disk of what ``pip install 'reverie[embed]'`` adds to ``pip install reverie``."""
    added = sorted(_requires("wordllama", set()) - _requires("reverie", set()))
    total = 0
    for name in added:
        for file in metadata.distribution(name).files or []:
            path = Path(str(file.locate()))
            if path.is_file():
                total += path.stat().st_size
    return total / 1e6, added


async def embed_pass(home: Path, embedder: WordLlamaEmbedder, n: int) -> float:
    """Time for searches to embed every stored row (a bounded batch per search)."""
    async with reverie.open(home, embedder=embedder) as rv:
        assert rv.vectors is not None
        start = time.perf_counter()
        while await rv.vectors.embed_pending("bench", 512, "2026-01-01T00:00:00+00:00"):
            pass
        return time.perf_counter() - start


async def write_path(n: int, embedder: WordLlamaEmbedder) -> None:
    rng = random.Random(7)
    texts = [fact(i, rng) for i in range(n)]
    off, on = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(2):  # alternate, best of two: the machine is shared
            off.append(await through_reverie(Path(tmp) / f"off{r}", texts, None))
            on.append(await through_reverie(Path(tmp) / f"on{r}", texts, embedder))
        embed_s = await embed_pass(Path(tmp) / "on0", embedder, n)
    print(f"write path, {n} topic saves (best of 2):")
    print(f"  seam off: {n / min(off):7.0f} writes/s")
    print(f"  seam on:  {n / min(on):7.0f} writes/s   ratio on / off: {min(off) / min(on):.2f}")
    print(f"  lazy embedding pass: {n} rows in {embed_s:.2f} s ({n / embed_s:.0f} rows/s)")


def _session(dia_id: str) -> int:
    found = re.match(r"D(\d+):", dia_id)
    return int(found.group(1)) if found else 0


async def dated_ingest(
    rv: reverie.Reverie, clock: reverie.ManualClock, data: list[Any]
) -> dict[str, dict[str, set[str]]]:
    """bench.locomo's ingest, but each LoCoMo session written one day after the last."""
    sources: dict[str, dict[str, set[str]]] = {}
    for sample in data:
        ns = rv.namespace(locomo.slug(sample["sample_id"]))
        owned = sources.setdefault(ns.name, {})
        base = clock.now()
        async with ns.session("ingest") as s:
            for speaker, text, dia_id in locomo.observations(sample):
                day = base + timedelta(days=_session(dia_id))
                if day > clock.now():
                    clock.set(day)
                result = await s.call_tool(
                    "topic", {"action": "save", "topic": locomo.slug(speaker), "content": text}
                )
                if result.get("entry_id"):
                    owned.setdefault(str(result["entry_id"]), set()).add(dia_id)
    return sources


async def locomo_recall(embedder: WordLlamaEmbedder) -> None:
    if not locomo.DATA.exists():
        print(f"LoCoMo: skipped, {locomo.DATA} is absent")
        return
    data = json.loads(locomo.DATA.read_text())
    fresh = reverie.Config().with_section("embedder", max_embed_per_search=5000)
    stale = fresh.with_section("ranking", recency_weight=0.0, same_subject_newer_first=False)
    runs = [
        ("BM25 alone (before this change)", stale, None),
        ("BM25 + freshness (default)", fresh, None),
        ("hybrid (BM25 + wordllama, RRF)", stale, embedder),
        ("hybrid + freshness", fresh, embedder),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        home, clock = Path(tmp) / "home", reverie.ManualClock(T0)
        async with reverie.open(home, clock=clock) as rv:
            sources = await dated_ingest(rv, clock, data)
        print(f"LoCoMo evidence recall @{' / @'.join(map(str, locomo.KS))}:")
        for label, config, seam in runs:
            async with reverie.open(home, config=config, clock=clock, embedder=seam) as rv:
                start = time.perf_counter()
                scores, count = await locomo.evaluate(rv, data, sources, False)
                took = time.perf_counter() - start
            line = " / ".join(f"{s:.3f}" for s in scores)
            print(f"  {label:>34}: {line}   ({count} questions, {took:.1f} s)")


async def main(n: int) -> None:
    if not wordllama_installed():
        print("skipped: the embed extra is not installed (pip install -e '.[embed]')")
        return
    size, added = extra_size()
    print(f"embed extra: +{size:.0f} MB on disk ({len(added)} distributions: {', '.join(added)})")
    embedder = WordLlamaEmbedder()
    start = time.perf_counter()
    await embedder.embed(["warm up"])
    print(f"wordllama load + first embed: {time.perf_counter() - start:.2f} s")
    await write_path(n, embedder)
    await locomo_recall(embedder)


if __name__ == "__main__":
    anyio.run(main, int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
