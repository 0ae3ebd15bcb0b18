"""The dream cycle on conversations nobody here wrote: BEAM 100K (../shared/data/beam-100k,
read in place), each conversation fed turn by turn as ``bench.beam`` feeds it (its own
timestamps on a ManualClock, so the review passes dream at their slots as a host's would),
then one more dream at the end. What every dream wrote is read back from the ledger and
judged with ``bench.beam``'s own junk rules (code, logs, tables, LaTeX, lead-ins to pastes)
and source attribution (user or assistant text):

- dreams run by the passes, insights and actions written, and their junk share;
- the share of insights quoting the assistant's long answers rather than the user, and
  the share that are requests of the moment ("I'm trying to…", "can you…": ``bench.beam``'s
  rule), a statement but no lesson;
- the health score at the end, and the graph's size;
- cost: the last dream's wall time against the feed's, same run (a ratio, not a time).

    python -m bench.dream_beam [--limit N] [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio

import reverie
from bench.beam import (
    DATA,
    Conversation,
    conversation_dirs,
    feed,
    flat,
    is_request,
    junk_reason,
    load_conversation,
    namespace_of,
    source_of,
)
from reverie.stores import dream as dream_store
from reverie.stores.db import Database

_QUOTED = re.compile(r'"(.*)"\s*$', re.S)


def quoted(line: str) -> str:
    """The statement an extractive line quotes (the whole line when it quotes none)."""
    m = _QUOTED.search(line)
    return m.group(1) if m else line


async def dreams_of(home: Path, namespace: str) -> list[dict[str, Any]]:
    db = await Database.open(home / "reverie.db", reverie.Config().store)
    try:
        return await db.read(lambda conn: dream_store.runs(conn, namespace))
    finally:
        await db.close()


async def run_conversation(conv: Conversation, home: Path) -> dict[str, Any]:
    clock = reverie.ManualClock(conv.batches[0].anchor or datetime(2024, 1, 1, tzinfo=UTC))
    async with reverie.open(home, clock=clock) as rv:
        t0 = time.perf_counter()
        turns = await feed(rv, clock, conv)
        fed_s = time.perf_counter() - t0
        ns = rv.namespace(namespace_of(conv))
        t1 = time.perf_counter()
        last = await ns.dream()
        dream_s = time.perf_counter() - t1
    runs = await dreams_of(home, namespace_of(conv))
    user = "\x00".join(flat(x.user) for x in conv.exchanges)
    assistant = "\x00".join(flat(x.assistant) for x in conv.exchanges)
    insights = [quoted(i) for r in runs for i in r["learnt"]["insights"]]
    actions = [quoted(a) for r in runs for a in r["learnt"]["actions"]]
    junk = [(why, t) for t in insights + actions if (why := junk_reason(t))]
    return {
        "name": conv.name,
        "turns": turns,
        "dreams": len(runs),
        "daily_reports": sum(1 for r in runs if r.get("evening")),
        "insights": len(insights),
        "actions": len(actions),
        "junk": len(junk),
        "junk_reasons": dict(Counter(why for why, _ in junk)),
        "requests": sum(1 for t in insights if is_request(t)),
        "request_samples": [t[:120] for t in insights if is_request(t)][:3],
        "junk_samples": [f"[{why}] {t[:120]!r}" for why, t in junk[:5]],
        "sources": dict(Counter(source_of(t, user, assistant) for t in insights)),
        "health": last["health"]["score"],
        "graph": {k.removeprefix("graph_"): v for k, v in last["after"].items() if "graph" in k},
        "fed_s": round(fed_s, 2),
        "dream_s": round(dream_s, 3),
    }


async def run(data: Path, limit: int | None) -> list[dict[str, Any]]:
    results = []
    with tempfile.TemporaryDirectory(prefix="reverie-dream-beam-") as tmp:
        for folder in conversation_dirs(data, limit):
            conv = load_conversation(folder)
            results.append(await run_conversation(conv, Path(tmp) / conv.name))
            print(f"{conv.name}: done", file=sys.stderr)
    return results


def totals(results: list[dict[str, Any]]) -> dict[str, Any]:
    keys = ("turns", "dreams", "daily_reports", "insights", "actions", "junk", "requests")
    out: dict[str, Any] = {k: sum(r[k] for r in results) for k in keys}
    out["sources"] = dict(sum((Counter(r["sources"]) for r in results), Counter()))
    out["junk_share"] = out["junk"] / max(1, out["insights"] + out["actions"])
    out["request_share"] = out["requests"] / max(1, out["insights"])
    out["assistant_share"] = out["sources"].get("assistant", 0) / max(1, out["insights"])
    out["health_mean"] = round(sum(r["health"] for r in results) / len(results), 1)
    out["dream_over_feed"] = sum(r["dream_s"] for r in results) / sum(r["fed_s"] for r in results)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not conversation_dirs(args.data, args.limit):
        print(f"skipped: no BEAM conversations under {args.data}")
        return 0
    results = anyio.run(run, args.data, args.limit)
    tot = totals(results)
    if args.json:
        print(json.dumps({"conversations": results, "total": tot}, indent=1))
        return 0
    print(
        f"{'conv':>5} {'turns':>5} {'dreams':>6} {'daily':>5} {'ins':>4} {'act':>4} {'junk':>4}"
        f" {'health':>6} {'dream/feed':>10}"
    )
    for r in results:
        print(
            f"{r['name']:>5} {r['turns']:>5} {r['dreams']:>6} {r['daily_reports']:>5}"
            f" {r['insights']:>4} {r['actions']:>4} {r['junk']:>4} {r['health']:>6}"
            f" {r['dream_s'] / r['fed_s']:>10.4f}"
        )
        for sample in r["junk_samples"]:
            print(f"        {sample}")
    print(json.dumps(tot, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
