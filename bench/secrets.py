"""The secret scanner: caught % per kind on the labelled set, false positives on real
conversations, and what a scan costs beside the write it guards.

- labelled: tests/data/secrets_labelled.jsonl (caught per kind, named right, hard negatives
  flagged; the held-out rows were written after the rules were tuned and are shown apart);
- LoCoMo observations and BEAM 100K user messages: no credentials in them, so every hit is
  a false positive (each is printed, to be judged);
- cost: ``secret_kind`` per call against ``str.lower`` on the same texts, and against one
  memory add through the public API, measured in the same run (ratios).

    python -m bench.secrets
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

import reverie
from bench._common import data_dir
from reverie.rules.secrets import findings, redact, secret_kind

ROOT = Path(__file__).resolve().parents[1]
DATA = data_dir()
LABELLED = ROOT / "tests" / "data" / "secrets_labelled.jsonl"
CAUGHT_AIM, FP_AIM = 0.95, 0.01


def locomo_observations(data: Path) -> list[str]:
    """Every LoCoMo ``observation`` fact (2,541), or [] when the data is absent."""
    path = data / "locomo10.json"
    if not path.exists():
        return []
    return [
        item[0]
        for conversation in json.loads(path.read_text())
        for people in conversation["observation"].values()
        for items in people.values()
        for item in items
    ]


def beam_user_messages(data: Path) -> list[str]:
    """Every user message of the BEAM 100K conversations, or [] when absent."""
    out = []
    for chat in sorted((data / "beam-100k").glob("*/chat.json")):
        for batch in json.loads(chat.read_text()):
            for turn in batch["turns"]:
                out += [m["content"] for m in turn if m["role"] == "user"]
    return out


def labelled_report(rows: list[dict[str, Any]]) -> bool:
    total, caught, named = Counter[str](), Counter[str](), Counter[str]()
    for row in (r for r in rows if r["secret"]):
        kinds = {f.kind for f in findings(row["text"])}
        total[row["kind"]] += 1
        caught[row["kind"]] += bool(kinds)
        named[row["kind"]] += row["kind"] in kinds
    print(f"{'kind':22} {'items':>5} {'caught':>7} {'named right':>12}")
    for kind in sorted(total):
        print(
            f"{kind:22} {total[kind]:5d} {caught[kind] / total[kind]:7.0%}"
            f" {named[kind] / total[kind]:12.0%}"
        )
    rate = sum(caught.values()) / sum(total.values())
    print(f"{'all':22} {sum(total.values()):5d} {rate:7.1%}  (aim >= {CAUGHT_AIM:.0%})")
    for split, held in (("tuned on", False), ("held out", True)):
        part = [r for r in rows if r["secret"] and bool(r.get("held_out")) == held]
        hit = sum(secret_kind(r["text"]) is not None for r in part)
        print(f"  {split}: {hit}/{len(part)} caught")
    print("  (the first held-out block's first run caught 22/26; three fixes followed: 'set the")
    print("  password to X', 'mysql -pX', '<password>X</password>'. The second, passwords said")
    print("  in words (block held-out-words), first ran at 13/20 caught, 0/20 negatives flagged;")
    print("  seven fixes by structure followed — the figures here are after them)")
    for block in ("review", "held-out-words", "tenth-round", "eleventh-round"):
        part = [r for r in rows if r.get("block") == block]
        pos = [r for r in part if r["secret"]]
        hit = sum(secret_kind(r["text"]) is not None for r in pos)
        fp = sum(secret_kind(r["text"]) is not None for r in part if not r["secret"])
        print(f"  block {block}: {hit}/{len(pos)} caught, {fp}/{len(part) - len(pos)} flagged")
    negatives = [r["text"] for r in rows if not r["secret"]]
    flagged = [t for t in negatives if secret_kind(t) is not None]
    print(f"hard negatives flagged: {len(flagged)}/{len(negatives)}")
    for text in flagged:
        print(f"  {secret_kind(text)}: {redact(text)[:100]!r}")
    return rate >= CAUGHT_AIM


def false_positives(name: str, texts: list[str]) -> bool:
    if not texts:
        print(f"{name}: data not present, skipped")
        return True
    hits = [t for t in texts if secret_kind(t) is not None]
    rate = len(hits) / len(texts)
    print(f"{name}: {len(hits)}/{len(texts)} flagged = {rate:.2%} (aim <= {FP_AIM:.0%})")
    for text in hits:
        print(f"  {secret_kind(text)}: {redact(text)[:160]!r}")
    return rate <= FP_AIM


def per_call(fn: Callable[[str], object], texts: list[str], rounds: int = 3) -> float:
    """Best-of-rounds mean seconds per call over the texts."""
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for text in texts:
            fn(text)
        best = min(best, (time.perf_counter() - start) / len(texts))
    return best


async def memory_add_cost(texts: list[str]) -> float:
    """Mean seconds of one memory add (a fresh entry each time) through the public API."""
    config = reverie.Config().with_section("caps", memory=10_000_000)
    samples = []
    with tempfile.TemporaryDirectory() as tmp:
        async with reverie.open(Path(tmp), config=config) as rv:
            async with rv.namespace("bench").session("s") as s:
                for i, text in enumerate(texts):
                    args = {"action": "add", "target": "memory", "content": f"{i} {text}"}
                    start = time.perf_counter()
                    await s.call_tool("memory", args)
                    samples.append(time.perf_counter() - start)
    return statistics.fmean(samples)


def cost_report(texts: list[str]) -> None:
    secret_kind("warm up: imports detect-secrets on first use AKIA0000000000000000")
    scan, lower = per_call(secret_kind, texts), per_call(str.lower, texts)
    write = anyio.run(memory_add_cost, texts[:300])
    chars = statistics.fmean(len(t) for t in texts)
    print(f"cost per call over {len(texts)} texts (mean {chars:.0f} chars):")
    print(
        f"  secret_kind {scan * 1e6:.1f} us, str.lower {lower * 1e6:.2f} us "
        f"-> {scan / lower:.0f}x str.lower"
    )
    print(f"  one memory add {write * 1e6:.0f} us -> the scan is {scan / write:.1%} of a write")
    rng = random.Random(1)
    big = " ".join(rng.choice(texts) for _ in range(600))[:100_000]
    adversarial_report(big)


def best_of(fn: Callable[[], object], rounds: int = 3) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def adversarial_report(paste: str) -> None:
    """Review finding 3: one 100 KB text may cost at most tens of ms, whatever it holds
    (``x://`` repeats took 10.9 s in detect-secrets' npm and URL plugins). Each line: the
    windowed scan, ``str.lower`` of the same text, and the scan with no windows (one
    window as wide as the text) — the quadratic cost that windows bound."""
    from reverie.rules import secrets

    cases = {
        '"x://" * 25_000': "x://" * 25_000,
        '"see http://a.example/ " * 4500': "see http://a.example/ " * 4500,
        "100 KB normal paste (LoCoMo + BEAM)": paste,
        '"password=" * 11_000': "password=" * 11_000,
        '"pw is " * 16_000': "pw is " * 16_000,
        '"://a:b@" * 14_000': "://a:b@" * 14_000,
    }
    print("one findings() call on 100 KB texts (best of 3):")
    whole = secrets.WINDOW
    for name, text in cases.items():
        scan, lower = best_of(lambda t=text: findings(t)), best_of(lambda t=text: t.lower())
        secrets.WINDOW = len(text) + 1
        try:
            unbounded = best_of(lambda t=text: findings(t), rounds=1)
        finally:
            secrets.WINDOW = whole
        print(
            f"  {name:38} {scan * 1000:7.1f} ms ({scan / lower:6.0f}x str.lower);"
            f" without windows {unbounded * 1000:7.1f} ms"
        )


def main() -> int:
    rows = [json.loads(line) for line in LABELLED.read_text().splitlines()]
    print(f"== labelled set: {LABELLED.relative_to(ROOT)} ({len(rows)} rows)")
    met = labelled_report(rows)
    observations, messages = locomo_observations(DATA), beam_user_messages(DATA)
    print("\n== false positives on conversations without credentials")
    met &= false_positives("LoCoMo observations", observations)
    met &= false_positives("BEAM 100K user messages", messages)
    print()
    cost_report((observations + messages) or [r["text"] for r in rows])
    if not met:
        print("\nAN AIM IS MISSED (see above)")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
