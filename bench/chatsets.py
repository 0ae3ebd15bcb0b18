"""Score how well reverie learns from hand-written multi-session conversations.

Each JSON file in DIR is one user (one namespace) talking to an agent over several
sessions and days, with ground truth: the facts said (their current value and the values
they replaced), where a careful memory would keep each one, and substrings that must never
be stored (secrets, hedged guesses, pasted code). Every conversation runs in its own fresh
home, through the public API only, on a ManualClock: the clock walks to each session's day,
``s.idle()`` runs after every 8 turns and at the end of each session, ``rv.wait_idle()``
after each session, and one more idle session the day after the last lets the background
review run. Then the store is measured:

- ``current_recall``: share of facts whose ``current`` value (any listed substring,
  case-insensitive, with the word/number boundaries of :func:`value_pattern`) is in one of
  the first 5 fact/entry hits of ``ns.search(query)``
  (``current_recall_ep``: the same over the first 5 hits of any kind, episodes included);
- ``stale_first``: share of updated facts where, among the first 5 fact/entry hits, a hit
  carrying a stale value (and no current one) ranks above the first hit carrying the
  current value, or no hit carries the current value at all;
- ``stale_live``: share of updated facts with a live stored item that carries a stale value
  and no current one (a replaced value left standing);
- ``duplicates``: share of live stored items (facts and entries) that near-duplicate an
  earlier-listed live item. Value tokens are the whitespace-split, punctuation-stripped,
  lowercased tokens holding a digit, one of ``/ : @ #``, or a dot between word characters
  (versions, hosts, paths, channels, amounts). Two items are near-duplicates when they have
  the same value tokens AND either rapidfuzz ``token_set_ratio`` >= 90 on the lowercased
  texts (near-identical wording), or the shared value-token set is non-empty and
  ``token_set_ratio`` >= 52 (the same values restated in other words). Two items about one
  subject with different values are not duplicates (that is ``stale_live``);
- ``forbidden_stored``: ``must_not_store`` substrings found in a live fact/entry (listed);
- ``junk_stored``: live items that look like pasted code, logs, tracebacks, configs, shell
  sessions, diffs or tables (see :func:`junk_reason`; listed);
- ``home_right``: share of facts whose current value is in a live item of their ``home``
  (topic = facts; memory/user/soul/user_settings = entries of that target);
- ``model_calls_per_1000_turns`` from ``rv.model_calls()`` (the ledger's model_call rows);
- ``tool_errors``: the conversation's own explicit tool calls answered ERROR (listed).

``python -m bench.chatsets DIR [--json] [--seed N] [--show-stored] [--embed]``; ``--seed``
shifts each session's hour of day (0-3 h) reproducibly; ``--show-stored`` lists every live
item; ``--embed`` runs with the packaged embedding seam on (the ``[embed]`` extra). A file
that fails prints its error; the run goes on.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sqlite3
import sys
import tempfile
import traceback
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
from rapidfuzz import fuzz

import reverie

TOP = 5
IDLE_EVERY = 8
STORED_KINDS = ("fact", "entry")
VALUE_MARK = re.compile(r"\d|[/:@#]|\w\.\w")
STRIP = ".,;:!?()[]{}<>\"'`*"


@dataclass
class Item:
    """One live stored item: a fact (home "topic") or an entry (home = its target)."""

    id: str
    home: str
    text: str


@dataclass
class Result:
    name: str
    turns: int = 0
    items: list[Item] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


# --- driving a conversation -------------------------------------------------------------


CONFIG: list[reverie.Config | None] = [None]  # the run's settings (``--embed``)


async def drive(conv: dict[str, Any], home: Path, rng: random.Random) -> tuple[int, int, list[str]]:
    """Run every session of ``conv`` through the public API; return (turns, model calls,
    the errors of the conversation's own tool calls)."""
    start = datetime.fromisoformat(conv["start"])
    if start.tzinfo is None:  # a set written without an offset: read as UTC
        start = start.replace(tzinfo=UTC)
    clock = reverie.ManualClock(start)
    turns = 0
    errors: list[str] = []
    async with reverie.open(home, clock=clock, config=CONFIG[0]) as rv:
        ns = rv.namespace(conv["namespace"])
        for session in conv["sessions"]:
            target = start + timedelta(days=session["day"], minutes=rng.randint(0, 180))
            if target > clock.now():
                clock.advance(target - clock.now())
            else:
                clock.advance(timedelta(hours=2))
            turns += await run_session(ns, session, errors)
            await rv.wait_idle()
        clock.advance(timedelta(days=1))
        async with ns.session("chatsets-review") as s:
            await s.idle()
        await rv.wait_idle()
        calls = await count_model_calls(rv)
    return turns, calls, errors


async def run_session(ns: reverie.Namespace, session: dict[str, Any], errors: list[str]) -> int:
    turns = 0
    async with ns.session(session["session_id"]) as s:
        for event in session["events"]:
            if "turn" in event:
                await s.turn(user=event["turn"]["user"], assistant=event["turn"]["assistant"])
                turns += 1
                if turns % IDLE_EVERY == 0:
                    await s.idle()
            elif "tool" in event:
                result = await s.call_tool(event["tool"]["name"], event["tool"]["args"])
                if result.get("decision") == "ERROR":
                    errors.append(f"{session['session_id']}: {result.get('error')}")
        await s.idle()
    return turns


async def count_model_calls(rv: reverie.Reverie) -> int:
    if hasattr(rv, "model_calls"):
        per_stage = await rv.model_calls()
        return sum(int(row.get("calls", 0)) for row in per_stage.values())
    return 0


# --- reading the store ------------------------------------------------------------------


def live_items(home: Path, namespace: str) -> list[Item]:
    conn = sqlite3.connect(home / "reverie.db")
    try:
        facts = conn.execute(
            "SELECT id, content FROM facts WHERE invalid_at IS NULL AND namespace = ?",
            (namespace,),
        ).fetchall()
        entries = conn.execute(
            "SELECT id, target, content FROM entries WHERE status = 'live' AND namespace = ?",
            (namespace,),
        ).fetchall()
        items = [Item(i, "topic", c) for i, c in facts]
        items += [Item(i, t, c) for i, t, c in entries]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        if "user_settings" in tables:
            rows = conn.execute(
                "SELECT key, value FROM user_settings WHERE namespace = ?", (namespace,)
            ).fetchall()
            items += [Item(f"us-{k}", "user_settings", f"{k}: {v}") for k, v in rows]
        return items
    finally:
        conn.close()


async def search_texts(ns: reverie.Namespace, query: str) -> tuple[list[str], list[str]]:
    """The first TOP fact/entry hits' texts, and the first TOP hits of any kind."""
    hits = list(await ns.search(query, k=50))
    stored = [h.text for h in hits if h.kind in STORED_KINDS][:TOP]
    return stored, [h.text for h in hits[:TOP]]


# --- measures ---------------------------------------------------------------------------


def value_pattern(value: str) -> re.Pattern[str]:
    """Case-insensitive match of a ground-truth value: a short word (<= 4 letters) must
    stand alone (plural s allowed: "sam" is not in "same"); a value starting or ending with
    a digit must not continue a number there ("45" is not in "145" nor in "450")."""
    v = value.lower()
    left = r"(?<![a-z0-9])" if v.isalpha() and len(v) <= 4 else ""
    right = r"s?(?![a-z0-9])" if v.isalpha() and len(v) <= 4 else ""
    left = r"(?<![0-9])" if v[:1].isdigit() else left
    right = r"(?![0-9])" if v[-1:].isdigit() else right
    return re.compile(left + re.escape(v) + right)


def has(text: str, values: list[str]) -> bool:
    low = text.lower()
    return any(value_pattern(v).search(low) for v in values if v)


def first_index(texts: list[str], pred: Any) -> int | None:
    return next((i for i, t in enumerate(texts) if pred(t)), None)


def stale_ranks_first(stored: list[str], fact: dict[str, Any]) -> bool:
    cur = first_index(stored, lambda t: has(t, fact["current"]))
    stale = first_index(stored, lambda t: has(t, fact["stale"]) and not has(t, fact["current"]))
    return stale is not None and (cur is None or stale < cur)


def value_tokens(text: str) -> frozenset[str]:
    """Tokens that carry a specific value: numbers, versions, hosts, paths, channels."""
    tokens = (tok.strip(STRIP) for tok in text.lower().split())
    return frozenset(tok for tok in tokens if VALUE_MARK.search(tok))


def near_duplicate(a: str, b: str, va: frozenset[str], vb: frozenset[str]) -> bool:
    if va != vb:
        return False
    score = fuzz.token_set_ratio(a, b)
    return score >= 90 or (bool(va) and score >= 52)


def duplicate_ids(items: list[Item]) -> list[tuple[str, str]]:
    """Pairs (a, b) of live items where b near-duplicates a (see the module doc)."""
    pairs = []
    lows = [(it, it.text.lower(), value_tokens(it.text)) for it in items]
    for i, (a, la, va) in enumerate(lows):
        for b, lb, vb in lows[i + 1 :]:
            if near_duplicate(la, lb, va, vb):
                pairs.append((a.id, b.id))
    return pairs


JUNK_PATTERNS = [
    (re.compile(r"Traceback \(most recent call last\)|^\s*File \"", re.M), "traceback"),
    (re.compile(r"^\s*at [\w.$]+\(.*\)", re.M), "stack frame"),
    (re.compile(r"Exception in thread|Error: .*\n\s+at ", re.M), "exception"),
    (re.compile(r"^\s*(def |class \w+[(:]|import \w|from \w+ import|return )", re.M), "code"),
    (re.compile(r"^\s*(function |const |let |var |public |private |#include)", re.M), "code"),
    (re.compile(r"^\s*(\$ |>>> |# |PS [A-Z]:\\|\w+@[\w-]+:.*\$ )", re.M), "shell"),
    (re.compile(r"^\s*\|.*\|\s*$|^\s*\|?\s*:?-{3,}", re.M), "table"),
    (re.compile(r"^(\+\+\+|---|@@ |diff --git)", re.M), "diff"),
    (re.compile(r"\\(frac|sum|int|alpha|beta|mathbb|begin\{)"), "latex"),
    (re.compile(r"^\s*\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d[,.]?\d*\]?\s+\w+", re.M), "log line"),
    (re.compile(r"^\s*(INFO|WARN|WARNING|ERROR|DEBUG)\b", re.M), "log line"),
    (re.compile(r"\b(FATAL|PANIC|ERROR|DETAIL|Detail|HINT|E\d{4}):\s|^\w+: error:", re.M), "error"),
    (re.compile(r"^\s*[\w.-]+:\s*$|^\s*-\s+\w+:\s", re.M), "yaml"),
    (re.compile(r"^\s*\[[\w. -]+\]\s*$", re.M), "ini section"),
    (re.compile(r"```"), "fence"),
    (re.compile(r"^\s*\[\s*\d+\.\d+\]"), "kernel log"),
    (re.compile(r"\b[\w/-]+\.(py|tsx?|jsx?|java|go|rs|c|cpp|rb|swift|kt|tf):\d+"), "source loc"),
    (re.compile(r"\berror [A-Z]+\d+:|^Plan: \d+ to add|^Chain [A-Z]+ \(policy", re.M), "tool out"),
    (re.compile(r"\b0x[0-9a-fA-F]{8,}\b|\b(SIGSEGV|SIGABRT|EXC_BAD_ACCESS)\b"), "crash dump"),
    (re.compile(r"\S {3,}\S.*\S {3,}\S"), "columns"),
]


def junk_reason(text: str) -> str | None:
    """Why ``text`` looks like a pasted block rather than knowledge, or None."""
    for pattern, reason in JUNK_PATTERNS:
        if pattern.search(text):
            return reason
    braces = sum(text.count(c) for c in "{}[];")
    if len(text) > 0 and braces >= 4 and braces / len(text) > 0.03:
        return "brace-heavy"
    if text.count("\n") >= 4:
        return "multi-line block"
    return None


async def measure(conv: dict[str, Any], home: Path, items: list[Item]) -> dict[str, Any]:
    """The learning measures of one finished conversation (see the module doc)."""
    facts = conv["facts"]
    updated = [f for f in facts if f.get("stale")]
    recall = recall_ep = stale_first = 0
    async with reverie.open(home, config=CONFIG[0]) as rv:
        ns = rv.namespace(conv["namespace"])
        for fact in facts:
            stored, anyhit = await search_texts(ns, fact["query"])
            recall += any(has(t, fact["current"]) for t in stored)
            recall_ep += any(has(t, fact["current"]) for t in anyhit)
            stale_first += bool(fact.get("stale")) and stale_ranks_first(stored, fact)
    stale_live = sum(
        any(has(it.text, f["stale"]) and not has(it.text, f["current"]) for it in items)
        for f in updated
    )
    homed = [f for f in facts if f.get("home")]
    home_right = sum(
        any(it.home == f["home"] and has(it.text, f["current"]) for it in items) for f in homed
    )
    dups = duplicate_ids(items)
    dup_ids = {i for pair in dups for i in pair[1:]}
    return {
        "facts": len(facts),
        "updated": len(updated),
        "current_recall": ratio(recall, len(facts)),
        "current_recall_ep": ratio(recall_ep, len(facts)),
        "stale_first": ratio(stale_first, len(updated)),
        "stale_live": ratio(stale_live, len(updated)),
        "duplicates": ratio(len(dup_ids), len(items)),
        "duplicate_pairs": [[a, b] for a, b in dups],
        "home_right": ratio(home_right, len(homed)),
        "stored": len(items),
        "stored_by_home": count_homes(items),
    }


def ratio(n: int, d: int) -> float:
    return round(n / d, 3) if d else 0.0


def count_homes(items: list[Item]) -> dict[str, int]:
    out: dict[str, int] = {}
    for it in items:
        out[it.home] = out.get(it.home, 0) + 1
    return out


def hygiene(conv: dict[str, Any], items: list[Item]) -> dict[str, Any]:
    """Forbidden substrings and pasted-block junk among the live stored items."""
    forbidden = [
        {"value": v, "id": it.id, "text": it.text[:160]}
        for v in conv.get("must_not_store", [])
        for it in items
        if v.lower() in it.text.lower()
    ]
    junk = [
        {"id": it.id, "home": it.home, "reason": reason, "text": it.text[:160]}
        for it in items
        if (reason := junk_reason(it.text))
    ]
    return {
        "forbidden_stored": len({f["value"] for f in forbidden}),
        "forbidden": forbidden,
        "junk_stored": len(junk),
        "junk": junk,
    }


async def score_file(path: Path, seed: int) -> Result:
    result = Result(path.stem)
    try:
        conv = json.loads(path.read_text())
        result.name = conv.get("id", path.stem)
        with tempfile.TemporaryDirectory(prefix="chatsets-") as tmp:
            home = Path(tmp) / "home"
            rng = random.Random(f"{seed}:{result.name}")
            result.turns, calls, tool_errors = await drive(conv, home, rng)
            result.items = live_items(home, conv["namespace"])
            result.metrics = await measure(conv, home, result.items)
        result.metrics |= hygiene(conv, result.items)
        result.metrics["turns"] = result.turns
        result.metrics["tool_errors"] = tool_errors
        result.metrics["model_calls"] = calls
        result.metrics["model_calls_per_1000_turns"] = round(1000 * calls / max(result.turns, 1), 1)
    except Exception as exc:  # one broken file must not stop the run
        result.error = f"{type(exc).__name__}: {exc}"
        traceback.print_exc(file=sys.stderr)
    return result


WEIGHTS = {
    "current_recall": "facts",
    "current_recall_ep": "facts",
    "home_right": "facts",
    "stale_first": "updated",
    "stale_live": "updated",
    "duplicates": "stored",
}
SUMS = ("facts", "updated", "stored", "turns", "model_calls", "forbidden_stored", "junk_stored")


def overall(results: list[Result]) -> dict[str, Any]:
    """Pooled figures over the conversations that ran: shares weighted by their base."""
    ok = [r.metrics for r in results if r.error is None]
    out: dict[str, Any] = {"conversations": len(results), "failed": len(results) - len(ok)}
    for key in SUMS:
        out[key] = sum(int(m[key]) for m in ok)
    for key, base in WEIGHTS.items():
        total = sum(m[base] for m in ok)
        out[key] = round(sum(m[key] * m[base] for m in ok) / total, 3) if total else 0.0
    out["model_calls_per_1000_turns"] = round(1000 * out["model_calls"] / max(out["turns"], 1), 1)
    out["tool_errors"] = sum(len(m["tool_errors"]) for m in ok)
    return out


COLUMNS = [
    ("conv", 10),
    ("turns", 5),
    ("facts", 5),
    ("recall", 6),
    ("rec+ep", 6),
    ("staleF", 6),
    ("staleL", 6),
    ("dups", 5),
    ("forbid", 6),
    ("junk", 4),
    ("home", 5),
    ("stored", 6),
    ("calls/1k", 8),
]
KEYS = [
    "turns",
    "facts",
    "current_recall",
    "current_recall_ep",
    "stale_first",
    "stale_live",
    "duplicates",
    "forbidden_stored",
    "junk_stored",
    "home_right",
    "stored",
    "model_calls_per_1000_turns",
]


def table_row(name: str, m: dict[str, Any]) -> str:
    cells = [f"{name:<{COLUMNS[0][1]}}"]
    for (_, width), key in zip(COLUMNS[1:], KEYS, strict=True):
        cells.append(f"{m[key]:>{width}}")
    return " ".join(cells)


def print_table(results: list[Result], total: dict[str, Any]) -> None:
    print(" ".join(f"{h:<{w}}" if i == 0 else f"{h:>{w}}" for i, (h, w) in enumerate(COLUMNS)))
    for r in results:
        if r.error:
            print(f"{r.name:<10} ERROR {r.error}")
        else:
            print(table_row(r.name, r.metrics))
    print(table_row("OVERALL", total))
    for r in results:
        if r.error:
            continue
        for f in r.metrics["forbidden"]:
            print(f"  forbidden {r.name} {f['value']!r} in {f['id']}: {f['text']!r}")
        for err in r.metrics["tool_errors"]:
            print(f"  tool error {r.name} {err}")
        for j in r.metrics["junk"]:
            print(f"  junk {r.name} [{j['reason']}] {j['id']} ({j['home']}): {j['text']!r}")
        texts = {it.id: it.text[:100] for it in r.items}
        for a, b in r.metrics["duplicate_pairs"]:
            print(f"  duplicate {r.name} {texts.get(b)!r} ~ {texts.get(a)!r}")


async def run(directory: Path, seed: int) -> list[Result]:
    results = []
    for path in sorted(directory.glob("*.json")):
        results.append(await score_file(path, seed))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--seed", type=int, default=0, help="session-hour jitter seed")
    parser.add_argument("--show-stored", action="store_true", help="list every live item")
    parser.add_argument(
        "--embed", action="store_true", help="with the packaged embedding seam on ([embed] extra)"
    )
    args = parser.parse_args()
    if args.embed:
        CONFIG[0] = reverie.Config().with_section("embedder", enabled=True)
    results = anyio.run(run, args.directory, args.seed)
    total = overall(results)
    if args.json:
        doc = {
            "overall": total,
            "conversations": {
                r.name: ({"error": r.error} if r.error else r.metrics) for r in results
            },
        }
        print(json.dumps(doc, indent=2, default=str))
    else:
        print_table(results, total)
    if args.show_stored:
        for r in results:
            for it in r.items:
                print(f"  stored {r.name} {it.home:<13} {it.id}: {it.text[:200]!r}")


if __name__ == "__main__":
    main()
