"""BEAM 100K knowledge updates through the ``topic`` tool (../shared/data/beam-100k/, read in
place): for each knowledge_update probing question, the original and the updated statement
are saved in order to ONE topic of a fresh namespace; the second save's decision is
recorded, then the question is searched and the new statement should be the first fact hit.

Statements (``--source reference``, the default): the question's two
``conversation_references`` quotes, label prefixes such as "Information Update:" or
"Testing & Quality Assurance:" cut off, each reduced to its sentence carrying the value —
the updated one to the sentence holding most of the answer's distinctive tokens, the
original one to the sentence sharing most content words with it. ``--source user``: the
sentence of the source user message (code fences cut) that best matches the same quote —
the user's own wording; when both sides pick the same sentence, the quotes are used.

    python -m bench.beam_updates [--data DIR] [--limit N] [--source reference|user] [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

import reverie
from bench.beam import (
    DATA,
    Conversation,
    Question,
    content_words,
    conversation_dirs,
    distinctive,
    flat,
    load_conversation,
    tokens,
)

AIMS = {"supersede": 0.6, "new_first": 0.9}
LABEL = re.compile(r"^\s*[A-Z][A-Za-z &/'-]{0,40}:\s*")


@dataclass
class Pair:
    conversation: str
    question: str
    answer: str
    original: str
    updated: str


@dataclass
class Outcome:
    pair: Pair
    decision: str
    new_first: bool
    error: str | None = None


def unlabel(text: str) -> str:
    while (m := LABEL.match(text)) and len(text) > m.end():
        text = text[m.end() :]
    return text.strip()


def sentences(text: str) -> list[str]:
    text = text.split("```")[0]
    parts = re.split(r"(?<=[.!?])\s+(?=[A-Z\"'(])|\n{2,}", text)
    return [p.strip() for p in parts if len(p.split()) >= 3] or [text.strip()]


def best(candidates: list[str], keys: set[str], words: set[str]) -> str:
    """The candidate holding most ``keys``, then most ``words``; the first on ties."""

    def score(s: str) -> tuple[int, int]:
        have = tokens(s)
        return len(keys & have), len(words & have)

    return max(candidates, key=score)


def value_sentence(statement: str, answer: str) -> str:
    return best(sentences(unlabel(statement)), distinctive(answer), content_words(answer))


def from_user(conv: Conversation, ids: set[int], quote: str) -> str | None:
    by_message = conv.by_message()
    users = [by_message[i].user for i in sorted(ids) if i in by_message and by_message[i].user]
    if not users:
        return None
    return best(sentences(users[0]), distinctive(quote), content_words(quote))


def pair_of(conv: Conversation, q: Question, source: str) -> Pair | None:
    if len(q.references) < 2:
        return None
    updated = value_sentence(q.references[1], q.answer)
    original = best(
        sentences(unlabel(q.references[0])), distinctive(updated), content_words(updated)
    )
    if source == "user":
        u_new = from_user(conv, q.updated, updated)
        u_old = from_user(conv, q.original, original)
        if u_new and u_old and flat(u_new) != flat(u_old):
            original, updated = u_old, u_new
    return Pair(conv.name, q.text, q.answer, original, updated)


def pairs_of(conv: Conversation, source: str = "reference") -> list[Pair]:
    out = []
    for q in conv.questions:
        if q.category == "knowledge_update" and (p := pair_of(conv, q, source)):
            out.append(p)
    return out


async def try_pair(rv: reverie.Reverie, pair: Pair, n: int) -> Outcome:
    ns = rv.namespace(f"ku-{n}")
    async with ns.session("s-1") as s:
        await s.call_tool("topic", {"action": "save", "topic": "t", "content": pair.original})
        second = await s.call_tool(
            "topic", {"action": "save", "topic": "t", "content": pair.updated}
        )
    await rv.wait_idle()
    hits = await ns.search(pair.question, k=10)
    fact = next((h for h in hits if h.kind == "fact"), None)
    new_first = fact is not None and (
        (second.get("entry_id") is not None and fact.id == second.get("entry_id"))
        or flat(fact.text) == flat(pair.updated)
    )
    return Outcome(pair, str(second.get("decision")), new_first, second.get("error"))


async def run_pairs(pairs: list[Pair], home: Path) -> list[Outcome]:
    async with reverie.open(home) as rv:
        return [await try_pair(rv, pair, n) for n, pair in enumerate(pairs)]


def related(pair: Pair) -> bool:
    """Both statements speak of the same thing: >= 2 shared content words. (BEAM's
    original quote is sometimes another statement of the same session.)"""
    return len(content_words(pair.original) & content_words(pair.updated)) >= 2


def summary(outcomes: list[Outcome]) -> dict[str, Any]:
    n = len(outcomes)
    decisions = Counter(o.decision for o in outcomes)
    near = [o for o in outcomes if related(o.pair)]
    return {
        "pairs": n,
        "decisions": dict(decisions),
        "supersede": decisions["SUPERSEDE"] / n if n else 0.0,
        "new_first": sum(o.new_first for o in outcomes) / n if n else 0.0,
        "related_pairs": len(near),
        "related_supersede": (
            sum(o.decision == "SUPERSEDE" for o in near) / len(near) if near else 0.0
        ),
        "added": [
            {"conversation": o.pair.conversation, "old": o.pair.original, "new": o.pair.updated}
            for o in outcomes
            if o.decision == "ADD"
        ][:10],
        "errors": [o.error for o in outcomes if o.error][:5],
    }


def print_summary(s: dict[str, Any]) -> None:
    print(f"{s['pairs']} knowledge-update pairs saved to one topic each")
    print(
        f"SUPERSEDE share: {s['supersede']:.3f} (aim >= {AIMS['supersede']})"
        f" {'ok' if s['supersede'] >= AIMS['supersede'] else 'MISS'}"
    )
    print(
        f"new statement first fact hit: {s['new_first']:.3f} (aim >= {AIMS['new_first']})"
        f" {'ok' if s['new_first'] >= AIMS['new_first'] else 'MISS'}"
    )
    print(f"decisions of the second save: {s['decisions']}")
    print(
        f"SUPERSEDE share among the {s['related_pairs']} pairs sharing >= 2 content words: "
        f"{s['related_supersede']:.3f}"
    )
    for e in s["errors"]:
        print(f"  error: {e}")
    print("pairs that ADDed (the old fact stays live beside the new one):")
    for a in s["added"]:
        print(f"  [{a['conversation']}] old: {a['old']!r}\n       new: {a['new']!r}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="BEAM knowledge updates via topic saves")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--source", choices=("reference", "user"), default="reference")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    dirs = conversation_dirs(args.data, args.limit)
    if not dirs:
        print(f"skipped: no BEAM conversations under {args.data}")
        return 0
    pairs = [p for d in dirs for p in pairs_of(load_conversation(d), args.source)]
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="beam-updates-") as tmp:
        outcomes = anyio.run(run_pairs, pairs, Path(tmp) / "home")
    s = summary(outcomes) | {"source": args.source, "seconds": time.perf_counter() - t0}
    if args.json:
        print(json.dumps(s, indent=1))
    else:
        print_summary(s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
