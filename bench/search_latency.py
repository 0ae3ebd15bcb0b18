"""Search latency at 10k facts: ``ns.search`` (BM25 over facts, entries and episodes, live
filter, hidden count) against a bare FTS5 MATCH + bm25 query on a plain table holding the
same 10k texts, both measured in this run. Then a search whose best hit is a turn, which
brings the facts learned from it: with the ``facts_session`` index (migration 8) against
the same home without it. Last, seed 003's access counting (each hit an access, counted
in memory and written by the learner in batches) on against off, over the same home,
alternating query by query.

    python -m bench.search_latency
"""

from __future__ import annotations

import random
import sqlite3
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path

import anyio

import reverie
from bench._common import WORDS, describe, fact, percentile


async def main(size: int, queries: int) -> None:
    rng = random.Random(3)
    texts = [fact(i, rng) for i in range(size)]
    asks = [" ".join(rng.sample(WORDS, 3)) for _ in range(queries)]
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        async with reverie.open(home) as rv:
            ns = rv.namespace("bench")
            async with ns.session("fill") as s:
                for i, text in enumerate(texts):
                    await s.call_tool(
                        "topic", {"action": "save", "topic": f"t{i % 10}", "content": text}
                    )
            ours: list[float] = []
            for q in asks:
                start = time.perf_counter()
                await ns.search(q, k=10)
                ours.append(time.perf_counter() - start)
        raw_db = sqlite3.connect(Path(tmp) / "raw.db")
        raw_db.execute("CREATE VIRTUAL TABLE t USING fts5(text, tokenize='porter unicode61')")
        raw_db.executemany("INSERT INTO t (text) VALUES (?)", [(x,) for x in texts])
        raw_db.commit()
        raw: list[float] = []
        for q in asks:
            expression = " OR ".join(f'"{w}"' for w in q.split())
            start = time.perf_counter()
            raw_db.execute(
                "SELECT rowid, text, bm25(t) FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 10",
                (expression,),
            ).fetchall()
            raw.append(time.perf_counter() - start)
        raw_db.close()
        indexed, scanned = await _turn_hits(home, queries)
        counted, uncounted = await _accesses(home, asks)
    print(f"facts: {size}, queries: {queries}")
    print(f"bare FTS5 (sync sqlite3): {describe(raw)}")
    print(f"reverie ns.search:        {describe(ours)}")
    print(f"ratio p50 bare / reverie: {percentile(raw, 50) / percentile(ours, 50):.2f}")
    print(f"best hit a turn, facts_session index:    {describe(indexed)}")
    print(f"best hit a turn, no index (every fact):  {describe(scanned)}")
    print(f"ratio p50 indexed / scanned: {percentile(indexed, 50) / percentile(scanned, 50):.2f}")
    print(f"access counting on:  {describe(counted)}")
    print(f"access counting off: {describe(uncounted)}")
    print(f"ratio p50 on / off: {percentile(counted, 50) / percentile(uncounted, 50):.3f}")


async def _turn_hits(home: Path, queries: int) -> tuple[list[float], list[float]]:
    """Search latency when the best hit is a turn whose fact is brought, with the index and
    after dropping it."""
    async with reverie.open(home) as rv:
        said = "we switched to SumUp this week."
        async with rv.namespace("bench").session("chat") as s:  # the agent saves what it learns
            await s.turn(user=said, assistant="Card provider noted.")
            await s.call_tool("topic", {"action": "save", "topic": "t0", "content": said})
    timings: list[list[float]] = []
    for drop in (False, True):
        if drop:
            with closing(sqlite3.connect(home / "reverie.db")) as conn:
                conn.execute("DROP INDEX facts_session")
        async with reverie.open(home) as rv:
            ns, taken = rv.namespace("bench"), []
            for _ in range(queries):
                start = time.perf_counter()
                hits = await ns.search("card provider", k=10)
                taken.append(time.perf_counter() - start)
            assert hits and hits[0].text == "we switched to SumUp this week.", hits[:2]
        timings.append(taken)
    return timings[0], timings[1]


async def _accesses(home: Path, asks: list[str]) -> tuple[list[float], list[float]]:
    """Search latency with access counting on and off: two runtimes over one home, the
    queries alternated between them so both see the same machine noise. The batches the
    counting runtime fills are written by its learner while the searches go on."""
    off = reverie.Config().with_section("records", enabled=False)
    on_times: list[float] = []
    off_times: list[float] = []
    async with reverie.open(home) as counting, reverie.open(home, config=off) as plain:
        for q in asks * 3:
            for rv, taken in ((counting, on_times), (plain, off_times)):
                start = time.perf_counter()
                await rv.namespace("bench").search(q, k=10)
                taken.append(time.perf_counter() - start)
        await counting.wait_idle()
    return on_times, off_times


if __name__ == "__main__":
    anyio.run(
        main,
        int(sys.argv[1]) if len(sys.argv) > 1 else 10_000,
        int(sys.argv[2]) if len(sys.argv) > 2 else 300,
    )
