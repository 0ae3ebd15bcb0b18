"""LoCoMo retrieval (../shared/data/locomo10.json, CC BY-NC 4.0; read in place, never
copied): every observation of the ten conversations saved through the ``topic`` tool
(namespace = the conversation, topic = the speaker), then every question with evidence
searched; evidence recall@5/10/25 — the share of a question's evidence turns whose
observation is in the top k, averaged — against plain FTS5 BM25 over the same observations
(measured in this run) and the LoCoMo paper's figures (BM25 0.536 / 0.589 / 0.655, DRAGON
0.562 / 0.613 / 0.675). Then the same observations are saved again: every decision should be
NOOP.

    python -m bench.locomo
"""

from __future__ import annotations

import json
import re
import sqlite3
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio

import reverie
from bench._common import data_dir
from reverie.stores.search import match_expression

DATA = data_dir() / "locomo10.json"
KS = (5, 10, 25)
PAPER = {"BM25": (0.536, 0.589, 0.655), "DRAGON": (0.562, 0.613, 0.675)}


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "x"


def observations(sample: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(speaker, text, dia_id) in session order."""
    out = []
    for key in sorted(sample["observation"], key=lambda k: int(re.findall(r"\d+", k)[0])):
        for speaker, items in sample["observation"][key].items():
            for text, dia_id in items:
                ids = dia_id if isinstance(dia_id, list) else [dia_id]
                for one in ids:
                    out.append((speaker, text, str(one)))
    return out


def recall(found: list[set[str]], evidence: set[str]) -> tuple[float, ...]:
    scores = []
    for k in KS:
        got = set().union(*found[:k]) if found[:k] else set()
        scores.append(len(got & evidence) / len(evidence))
    return tuple(scores)


async def ingest(
    rv: reverie.Reverie, data: list[dict]
) -> tuple[dict[str, dict[str, set[str]]], Counter[str]]:  # type: ignore[type-arg]
    """Save every observation; which dia ids each stored fact stands for."""
    sources: dict[str, dict[str, set[str]]] = {}
    decisions: Counter[str] = Counter()
    for sample in data:
        ns = rv.namespace(slug(sample["sample_id"]))
        owned = sources.setdefault(ns.name, {})
        async with ns.session("ingest") as s:
            for speaker, text, dia_id in observations(sample):
                result = await s.call_tool(
                    "topic", {"action": "save", "topic": slug(speaker), "content": text}
                )
                decisions[result["decision"]] += 1
                if result.get("entry_id"):
                    owned.setdefault(str(result["entry_id"]), set()).add(dia_id)
    return sources, decisions


async def evaluate(
    rv: reverie.Reverie,
    data: list[dict],
    sources: dict[str, dict[str, set[str]]],
    include_superseded: bool,
) -> tuple[tuple[float, ...], int]:  # type: ignore[type-arg]
    totals = [0.0] * len(KS)
    count = 0
    for sample in data:
        ns = rv.namespace(slug(sample["sample_id"]))
        owned = sources[ns.name]
        for qa in sample["qa"]:
            evidence = {str(e) for e in qa.get("evidence") or []}
            if not evidence:
                continue
            hits = await ns.search(qa["question"], k=max(KS), include_superseded=include_superseded)
            found = [owned.get(h.id, set()) for h in hits]
            for i, score in enumerate(recall(found, evidence)):
                totals[i] += score
            count += 1
    return tuple(t / count for t in totals), count


def bm25_baseline(data: list[Any], path: Path) -> tuple[float, ...]:
    """Plain FTS5 BM25 over the same observations, one row each, no write path at all."""
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE VIRTUAL TABLE o USING fts5(text, ns UNINDEXED, dia UNINDEXED,"
        " tokenize = 'porter unicode61')"
    )
    for sample in data:
        conn.executemany(
            "INSERT INTO o VALUES (?, ?, ?)",
            [(t, sample["sample_id"], d) for _, t, d in observations(sample)],
        )
    totals, count = [0.0] * len(KS), 0
    for sample in data:
        for qa in sample["qa"]:
            evidence = {str(e) for e in qa.get("evidence") or []}
            expression = match_expression(qa["question"])
            if not evidence or expression is None:
                continue
            rows = conn.execute(
                "SELECT dia FROM o WHERE o MATCH ? AND ns = ? ORDER BY bm25(o) LIMIT ?",
                (expression, sample["sample_id"], max(KS)),
            ).fetchall()
            for i, score in enumerate(recall([{r[0]} for r in rows], evidence)):
                totals[i] += score
            count += 1
    conn.close()
    return tuple(t / count for t in totals)


async def main() -> None:
    if not DATA.exists():
        print(f"skipped: {DATA} is absent")
        return
    data = json.loads(DATA.read_text())
    with tempfile.TemporaryDirectory() as tmp:
        baseline = bm25_baseline(data, Path(tmp) / "bm25.db")
        async with reverie.open(Path(tmp) / "home") as rv:
            t0 = time.perf_counter()
            sources, first = await ingest(rv, data)
            ingest_s = time.perf_counter() - t0
            live, questions = await evaluate(rv, data, sources, include_superseded=False)
            every, _ = await evaluate(rv, data, sources, include_superseded=True)
            _, second = await ingest(rv, data)
    n = sum(first.values())
    print(f"{n} observations saved in {ingest_s:.1f} s ({n / ingest_s:.0f}/s): {dict(first)}")
    print(f"{questions} questions with evidence; evidence recall @5 / @10 / @25:")
    rows = [
        ("reverie (live facts, default)", live),
        ("reverie (with superseded)", every),
        ("FTS5 BM25, this run", baseline),
        *((f"LoCoMo paper {k}", v) for k, v in PAPER.items()),
    ]
    for label, scores in rows:
        print(f"  {label:>30}: " + " / ".join(f"{s:.3f}" for s in scores))
    print(
        "ratio to this run's BM25: "
        + " / ".join(f"{a / b:.2f}" for a, b in zip(live, baseline, strict=True))
    )
    print(f"second ingest of the same observations: {dict(second)}")


if __name__ == "__main__":
    sys.exit(anyio.run(main))
