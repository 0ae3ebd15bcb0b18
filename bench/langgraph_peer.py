"""A peer side by side: LangGraph's AsyncSqliteStore (``aput`` / ``asearch``) and reverie
(``topic`` save / ``ns.search``) on the same facts and questions, in this run.

Without an embedding index (none runs here) ``asearch`` filters by namespace and ignores the
query text, so its relevance is whatever order it returns; reverie ranks by BM25. Both
stores are SQLite files on the same disk. Needs the bench extra:
``pip install -e '.[bench]'``.

    python -m bench.langgraph_peer [N=2000]
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

import anyio

import reverie
from bench._common import WORDS, percentile


def corpus(n: int, rng: random.Random) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(topic, fact) pairs with a unique key phrase each, and (question, expected fact)."""
    facts, questions = [], []
    for i in range(n):
        a, b, c = rng.sample(WORDS, 3)
        text = f"The {a} {b} of unit{i} uses port {i + 2000} via {c}"
        facts.append((f"t{i % 10}", text))
        if i % 10 == 0:
            questions.append((f"Which port does the {a} {b} of unit{i} use?", text))
    return facts, questions


async def peer(
    path: Path, facts: list[tuple[str, str]], questions: list[tuple[str, str]]
) -> tuple[float, list[float], float]:
    from langgraph.store.sqlite.aio import AsyncSqliteStore

    async with AsyncSqliteStore.from_conn_string(str(path)) as store:
        await store.setup()
        start = time.perf_counter()
        for i, (topic, text) in enumerate(facts):
            await store.aput(("bench", topic), f"f{i}", {"content": text})
        write_s = time.perf_counter() - start
        latencies, hits = [], 0
        for question, expected in questions:
            t0 = time.perf_counter()
            found = await store.asearch(("bench",), query=question, limit=5)
            latencies.append(time.perf_counter() - t0)
            hits += any(item.value.get("content") == expected for item in found)
    return write_s, latencies, hits / len(questions)


async def ours(
    home: Path, facts: list[tuple[str, str]], questions: list[tuple[str, str]]
) -> tuple[float, list[float], float]:
    async with reverie.open(home) as rv:
        ns = rv.namespace("bench")
        async with ns.session("load") as s:
            start = time.perf_counter()
            for topic, text in facts:
                result = await s.call_tool(
                    "topic", {"action": "save", "topic": topic, "content": text}
                )
                assert result["decision"] == "ADD", result
            write_s = time.perf_counter() - start
        latencies, hits = [], 0
        for question, expected in questions:
            t0 = time.perf_counter()
            found = await ns.search(question, k=5)
            latencies.append(time.perf_counter() - t0)
            hits += any(h.text == expected for h in found)
    return write_s, latencies, hits / len(questions)


async def main(n: int) -> None:
    facts, questions = corpus(n, random.Random(3))
    with tempfile.TemporaryDirectory() as tmp:
        lg = await peer(Path(tmp) / "langgraph.db", facts, questions)
        rv = await ours(Path(tmp) / "home", facts, questions)
    print(f"{n} facts in 10 namespaces / topics, {len(questions)} questions")
    for label, (write_s, lat, recall) in (("langgraph AsyncSqliteStore", lg), ("reverie", rv)):
        print(
            f"{label:>27}: {n / write_s:7.0f} writes/s, search p50 "
            f"{percentile(lat, 50) * 1000:6.2f} ms p99 {percentile(lat, 99) * 1000:6.2f} ms, "
            f"recall@5 {recall:.3f}"
        )
    print(f"write throughput ratio reverie / langgraph: {lg[0] / rv[0]:.2f}")
    print(
        f"search p50 ratio reverie / langgraph: {percentile(rv[1], 50) / percentile(lg[1], 50):.2f}"
    )


if __name__ == "__main__":
    anyio.run(main, int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
