"""Write-path throughput: reverie's topic save (validation, duplicate and supersede checks,
insert, search index, ledger row, projection append) against raw aiosqlite insert+commit
with the same durability (WAL, synchronous=FULL), both measured in this run.

    python -m bench.write_path [N]
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiosqlite
import anyio

import reverie
from bench._common import fact


async def raw(path: Path, texts: list[str]) -> float:
    async with aiosqlite.connect(path, isolation_level=None) as db:
        await db.execute("PRAGMA journal_mode = WAL")
        await db.execute("PRAGMA synchronous = FULL")
        await db.execute("CREATE TABLE facts (id INTEGER PRIMARY KEY, topic TEXT, content TEXT)")
        start = time.perf_counter()
        for i, text in enumerate(texts):
            await db.execute("BEGIN IMMEDIATE")
            await db.execute(
                "INSERT INTO facts (topic, content) VALUES (?, ?)", (f"t{i % 10}", text)
            )
            await db.execute("COMMIT")
        return time.perf_counter() - start


async def through_reverie(home: Path, texts: list[str], embedder: Any = None) -> float:
    """Seconds for reverie to save every text (``embedder``: with the embedding seam on)."""
    async with reverie.open(home, embedder=embedder) as rv:
        async with rv.namespace("bench").session("w") as s:
            start = time.perf_counter()
            for i, text in enumerate(texts):
                result = await s.call_tool(
                    "topic", {"action": "save", "topic": f"t{i % 10}", "content": text}
                )
                assert result["decision"] == "ADD", result
            return time.perf_counter() - start


async def main(n: int) -> None:
    rng = random.Random(7)
    texts = [fact(i, rng) for i in range(n)]
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        raw_s = await raw(base / "raw.db", texts)
        rev_s = await through_reverie(base / "home", texts)
    print(f"writes: {n}")
    print(f"raw aiosqlite insert+commit: {n / raw_s:8.0f} writes/s")
    print(f"reverie topic save:          {n / rev_s:8.0f} writes/s")
    print(f"ratio reverie / raw:         {raw_s / rev_s:8.2f}  (aim >= 0.5)")


if __name__ == "__main__":
    anyio.run(main, int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
