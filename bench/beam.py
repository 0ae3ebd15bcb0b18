"""BEAM 100K through the host API (../shared/data/beam-100k/<n>/, read in place, never
copied): every conversation is fed turn by turn into a fresh home — one session per batch,
one ``s.turn`` per user→assistant exchange, ``s.idle()`` every 10 turns and at the end of a
batch, ``rv.wait_idle()`` after each batch, the clock following the batches' time anchors —
then every probing question with evidence is searched. Figures, each against its aim:

- evidence recall@5 / @10 of ``ns.search`` against plain FTS5 BM25 over the same exchanges,
  measured in this run (one row per exchange, user + assistant text, porter unicode61;
  query = every non-stop-word token of the question quoted and OR-ed). A reverie hit covers
  an evidence exchange if it is an episode hit at that exchange, or a fact / entry
  *attributed* to it: the exchange holding the largest share of the item's content words,
  when that share is >= 60 % and the item has >= 3 content words.
- answer held (information_extraction, knowledge_update, temporal_reasoning): the answer's
  distinctive tokens (numbers, month names, capitalised or mixed-case words) that the
  evidence text actually contains all occur in one top-5 fact/entry hit (temporal
  questions join two events: the union of the top-5 fact/entry hits); without such tokens,
  one hit holds >= 60 % of the answer's content words found in the evidence.
- update ranked first (knowledge_update): the first top-10 fact/entry hit holding every
  updated key token ranks above every hit holding an original-only key token (the
  original statement's distinctive tokens that the updated answer lacks).
- flush reach: the share of episodes whose extracts all have ids <= the namespace's final
  ``flush:watermark``, or that have no extracts but were extracted (weight set).
- junk share, assistant-sourced share, model calls per 1000 turns, items, MEMORY.md items.

    python -m bench.beam [--data DIR] [--limit N] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio

import reverie
from bench._common import data_dir

DATA = data_dir() / "beam-100k"
KS = (5, 10)
HELD_CATEGORIES = ("information_extraction", "knowledge_update", "temporal_reasoning")
AIMS = {
    "recall_ratio": 1.05,
    "held": 0.3,
    "update_first": 0.8,
    "flush_reach": 0.9,
    "junk": 0.05,
    "calls_per_1000": 10.0,
}
TURN_CAP = 100_000
MARKER = re.compile(r"\s*->->\s*\d+\s*(?:,\s*\d+\s*)*")
STOP = frozenset(
    """a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing down during each few
    for from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just let me more most my myself no nor not now of off on once only
    or other our ours out over own same she should so some such than that the their theirs
    them then there these they this those through to too under until up very was we were what
    when where which while who whom why will with would you your yours yourself ive im dont
    cant id youre thats whats ill get got make made sure use using want need like""".split()
)
MONTHS = (
    "jan feb mar apr may jun jul aug sep oct nov dec".split(),
    """january february march april may june july august september october november
    december""".split(),
)
NOT_PROPER = frozenset("i im ive my you your we our the a an it this that".split())


# -- data ------------------------------------------------------------------------------


@dataclass
class Exchange:
    index: int
    session_id: str
    turn: int
    user: str
    assistant: str
    ids: set[int] = field(default_factory=set)

    @property
    def text(self) -> str:
        return f"{self.user}\n{self.assistant}".strip()


@dataclass
class Batch:
    number: int
    anchor: datetime | None
    exchanges: list[Exchange]


@dataclass
class Question:
    category: str
    text: str
    answer: str
    evidence: set[int]
    original: set[int] = field(default_factory=set)
    updated: set[int] = field(default_factory=set)
    references: list[str] = field(default_factory=list)


@dataclass
class Conversation:
    name: str
    batches: list[Batch]
    questions: list[Question]
    messages: dict[int, str] = field(default_factory=dict)

    @property
    def exchanges(self) -> list[Exchange]:
        return [x for b in self.batches for x in b.exchanges]

    def by_message(self) -> dict[int, Exchange]:
        return {i: x for x in self.exchanges for i in x.ids}


def strip_marker(text: str) -> str:
    return MARKER.sub("", text).strip()


def parse_anchor(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    for fmt in ("%B-%d-%Y", "%b-%d-%Y", "%B %d, %Y", "%Y-%m-%d"):
        try:
            return datetime.strptime(value.strip(), fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def batch_anchor(batch: dict[str, Any]) -> datetime | None:
    """The batch's ``time_anchor``, else the first message's that carries one."""
    found = parse_anchor(batch.get("time_anchor"))
    for group in batch.get("turns") or []:
        for message in group:
            if found is None:
                found = parse_anchor(message.get("time_anchor"))
    return found


def pair_exchanges(messages: list[dict[str, Any]]) -> list[tuple[str, str, set[int]]]:
    """User→assistant pairs in order; a lone side becomes an exchange of its own."""
    out: list[tuple[str, str, set[int]]] = []
    pending: tuple[str, set[int]] | None = None
    for m in messages:
        text = str(m.get("content") or "")
        if m.get("role") == "user":
            if pending is not None:
                out.append((pending[0], "", pending[1]))
            pending = (strip_marker(text), {int(m["id"])})
        else:
            user, ids = pending if pending is not None else ("", set())
            out.append((user, text.strip(), ids | {int(m["id"])}))
            pending = None
    if pending is not None:
        out.append((pending[0], "", pending[1]))
    return out


def flatten_ids(value: Any) -> set[int]:
    if isinstance(value, dict):
        return set().union(*(flatten_ids(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(flatten_ids(v) for v in value)) if value else set()
    if isinstance(value, int) or (isinstance(value, str) and value.strip().isdigit()):
        return {int(value)}
    return set()


def load_questions(raw: dict[str, list[dict[str, Any]]]) -> list[Question]:
    out = []
    for category, items in raw.items():
        for item in items:
            src = item.get("source_chat_ids")
            answer = next(
                (str(item[k]) for k in ("answer", "ideal_answer", "ideal_response") if k in item),
                "",
            )
            q = Question(category, str(item.get("question", "")), answer, flatten_ids(src))
            if isinstance(src, dict) and "updated_info" in src:
                q.original = flatten_ids(src.get("original_info"))
                q.updated = flatten_ids(src.get("updated_info"))
            q.references = [str(r) for r in item.get("conversation_references") or []]
            out.append(q)
    return out


def load_conversation(folder: Path) -> Conversation:
    chat = json.loads((folder / "chat.json").read_text())
    batches, index, texts = [], 0, {}
    for number, raw in enumerate(chat, start=1):
        session_id = f"b{raw.get('batch_number', number)}"
        exchanges = []
        messages = [m for group in raw.get("turns") or [] for m in group]
        texts.update({int(m["id"]): strip_marker(str(m.get("content") or "")) for m in messages})
        for turn, (user, assistant, ids) in enumerate(pair_exchanges(messages)):
            exchanges.append(Exchange(index, session_id, turn, user, assistant, ids))
            index += 1
        batches.append(Batch(number, batch_anchor(raw), exchanges))
    questions = load_questions(json.loads((folder / "probing_questions.json").read_text()))
    return Conversation(folder.name, batches, questions, texts)


def conversation_dirs(data: Path, limit: int | None) -> list[Path]:
    dirs = [p for p in data.iterdir() if (p / "chat.json").exists()] if data.is_dir() else []
    dirs.sort(key=lambda p: (0, int(p.name)) if p.name.isdigit() else (1, p.name))  # type: ignore[return-value]
    return dirs[:limit] if limit else dirs


# -- tokens and matching -----------------------------------------------------------------


def normalise(text: str) -> str:
    return re.sub(r"(?<=\d),(?=\d{3}\b)", "", text.lower())


def words(text: str) -> list[str]:
    return re.findall(r"[a-z][a-z0-9]*", normalise(text))


def content_words(text: str) -> set[str]:
    return {w for w in words(text) if len(w) > 2 and w not in STOP}


def numbers(text: str) -> set[str]:
    return set(re.findall(r"\d+(?:[.:]\d+)*", normalise(text)))


def month(word: str) -> str | None:
    w = word.lower()
    for short, full in zip(*MONTHS, strict=True):
        if w in (short, full):
            return short
    return None


def tokens(text: str) -> set[str]:
    """Every word, number and month (as its three-letter form) in ``text``."""
    out = set(words(text)) | numbers(text)
    return out | {m for w in out if (m := month(w))}


def distinctive(text: str) -> set[str]:
    """Numbers, months, and capitalised or mixed-case words not opening a sentence."""
    out = numbers(text)
    for i, (lead, word) in enumerate(re.findall(r"(^|[.!?]\s+|\s|\(|\")([A-Za-z][\w-]*)", text)):
        if (m := month(word)) and len(word) >= 3 and word[0].isupper():
            out.add(m)
            continue
        low = word.lower()
        mixed = any(c.isupper() for c in word[1:]) or any(c.isdigit() for c in word)
        opens = i == 0 or lead.strip() in ".!?"
        if low in NOT_PROPER or low in STOP or len(low) < 2:
            continue
        if mixed or (word[0].isupper() and not opens):
            out |= set(words(word))
    return out


def attribute(text: str, exchanges: list[Exchange], bags: list[set[str]]) -> set[int]:
    """The exchanges a stored item was taken from: those holding its largest share of
    content words, if that share is >= 60 % and it has >= 3 content words."""
    mine = content_words(text)
    if len(mine) < 3:
        return set()
    shares = [len(mine & bag) / len(mine) for bag in bags]
    best = max(shares, default=0.0)
    if best < 0.6:
        return set()
    return {x.index for x, s in zip(exchanges, shares, strict=True) if s == best}


# -- junk --------------------------------------------------------------------------------

JUNK_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (label, re.compile(pattern, re.MULTILINE))
    for label, pattern in (
        ("marker", r"->->"),
        (
            "log/trace",
            r"Traceback|File \"[^\"]+\", line \d+|^\s*\w*(?:Error|Exception):"
            r"|\b(?:INFO|DEBUG|WARNING|WARN|ERROR|CRITICAL)\b[\]:]|\d{4}-\d\d-\d\d[ T]\d\d:\d\d",
        ),
        ("table", r"^\s*\|.*\||\|\s*:?-{3,}"),
        (
            "latex",
            r"\\(?:frac|text|begin|end|sum|int|cdot|times|sqrt|left|right)\b|\$\$"
            r"|\\\(|\\\[",
        ),
        (
            "shell",
            r"^\s*(?:\$|>>>|PS>|C:\\>)\s|^\s*(?:pip|npm|yarn|git|docker|curl|sudo"
            r"|python3?|cd|ls|export|kubectl|brew|apt(?:-get)?)\s+[-\w./]",
        ),
        (
            "json/yaml",
            r"^\s*[{\[]\s*\"|\"\w+\"\s*:\s*|^\s*-?\s*[a-z_]+_[a-z_]+:\s"
            r"|^\s*-\s+name:\s",
        ),
        (
            "code",
            r"```|^\s*(?:def\s+\w+\(|class\s+\w+[(:]|import\s+[\w.]+\s*$|from\s+[\w.]+"
            r"\s+import\b|return\b|(?:const|let|var)\s+\w+\s*=|function\s*\w*\(|#include\b"
            r"|elif\b|try:|except\b|@\w+[.(]|(?:public|private)\s+(?:static\s+)?\w+\s+\w+\s*\()",
        ),
        (
            "code",
            r"[;{}]\s*$|=>|\w\)\s*:\s*$|^\s*[\w.\[\]'\"]+\s*[+\-*/]?=\s*[\w'\"(\[{]"
            r"|\b[a-z_]\w*\([^()\s]*\)\.\w|^\s*</?[a-z][\w-]*(?:\s[^>]*)?>",
        ),
        ("lead-in", r":\s*\**\s*$"),
        ("heading", r"^\s*#{1,6}\s|^\s*\*\*[^*]+\*\*\s*:?\s*$"),
    )
)


REQUEST = re.compile(
    r"\?\s*$|\b(?:can|could) you\b|\bhow (?:can|do|should) i\b|\bi'?m trying to\b"
    r"|\bi want to make sure\b|\bi'?m (?:kinda |really )?(?:worried|struggling|stuck|wondering)"
    r"|\bi'?d appreciate\b|\bhelp me\b",
    re.IGNORECASE,
)


def is_request(text: str) -> bool:
    """A request or worry of the moment ("can you help…", "I'm trying to…"), not a fact;
    reported beside the junk share, not in it."""
    return bool(REQUEST.search(text))


def junk_reason(text: str) -> str | None:
    """Why ``text`` is junk as a stored memory, or None for prose worth keeping."""
    for label, pattern in JUNK_PATTERNS:
        if pattern.search(text):
            return label
    if len(words(text)) < 3 and not re.match(r"^[a-z_]+:\s*\S", text):
        return "fragment"
    return None


# -- baseline ----------------------------------------------------------------------------


def match_query(question: str) -> str | None:
    """Every non-stop-word token quoted and OR-ed (FTS5); None if nothing is left."""
    toks = [t for t in re.findall(r"\w+", question.lower()) if t not in STOP]
    return " OR ".join(f'"{t}"' for t in dict.fromkeys(toks)) or None


class Bm25:
    """Plain FTS5 BM25 over the exchanges, one row each, in memory."""

    def __init__(self, exchanges: list[Exchange]) -> None:
        self.conn = sqlite3.connect(":memory:")
        self.conn.execute("CREATE VIRTUAL TABLE x USING fts5(text, tokenize='porter unicode61')")
        self.conn.executemany(
            "INSERT INTO x (rowid, text) VALUES (?, ?)", [(x.index, x.text) for x in exchanges]
        )

    def search(self, question: str, k: int) -> list[int]:
        expression = match_query(question)
        if expression is None:
            return []
        rows = self.conn.execute(
            "SELECT rowid FROM x WHERE x MATCH ? ORDER BY bm25(x) LIMIT ?", (expression, k)
        ).fetchall()
        return [int(r[0]) for r in rows]

    def close(self) -> None:
        self.conn.close()


def recall_at(found: list[set[int]], evidence: set[int], k: int) -> float:
    got = set().union(*found[:k]) if found[:k] else set()
    return len(got & evidence) / len(evidence)


# -- feeding reverie -----------------------------------------------------------------------


def namespace_of(conv: Conversation) -> str:
    return f"beam-{conv.name}"


def follow(clock: reverie.ManualClock, anchor: datetime | None) -> None:
    """Advance to the batch's anchor (never back); a day when there is none."""
    if anchor is None:
        clock.advance(timedelta(days=1))
    elif anchor > clock.now():
        clock.advance(anchor - clock.now())


def capped(text: str) -> str | None:
    """``s.turn`` refuses a side over 100,000 chars (BEAM 4 has a 349k-char degenerate
    assistant answer): cut it there, as a host would."""
    return text[:TURN_CAP] or None


async def feed(rv: reverie.Reverie, clock: reverie.ManualClock, conv: Conversation) -> int:
    """Every exchange as one ``s.turn``; returns how many turns were fed."""
    ns = rv.namespace(namespace_of(conv))
    turns = 0
    for batch in conv.batches:
        follow(clock, batch.anchor)
        if not batch.exchanges:
            continue
        async with ns.session(batch.exchanges[0].session_id) as s:
            for n, x in enumerate(batch.exchanges, start=1):
                clock.advance(timedelta(minutes=1))
                await s.turn(user=capped(x.user), assistant=capped(x.assistant))
                turns += 1
                if n % 10 == 0:
                    await s.idle()
            await s.idle()
        await rv.wait_idle()
        print(f"  {conv.name}: batch {batch.number} fed ({turns} turns)", file=sys.stderr)
    clock.advance(timedelta(days=1))
    async with ns.session("end") as s:
        await s.idle()
    await rv.wait_idle()
    return turns


# -- scoring -------------------------------------------------------------------------------


@dataclass
class Scored:
    category: str
    recall: tuple[float, float]
    baseline: tuple[float, float]
    held: bool | None = None
    update_first: bool | None = None


class Scorer:
    """Maps hits to evidence exchanges and checks answers, for one conversation."""

    def __init__(self, conv: Conversation) -> None:
        self.conv = conv
        self.exchanges = conv.exchanges
        self.bags = [content_words(x.text) | numbers(x.text) for x in self.exchanges]
        self.by_message = conv.by_message()
        self.by_turn = {(x.session_id, x.turn): x.index for x in self.exchanges}
        self._attributed: dict[str, set[int]] = {}

    def evidence(self, ids: set[int]) -> set[int]:
        return {self.by_message[i].index for i in ids if i in self.by_message}

    def evidence_text(self, ids: set[int]) -> str:
        """The source messages themselves (not their whole exchanges)."""
        return "\n".join(self.conv.messages.get(i, "") for i in sorted(ids))

    def covers(self, hit: reverie.SearchHit) -> set[int]:
        if hit.kind == "episode":
            index = self.by_turn.get((str(hit.session_id), int(hit.turn or 0)))
            return {index} if index is not None else set()
        if hit.text not in self._attributed:
            self._attributed[hit.text] = attribute(hit.text, self.exchanges, self.bags)
        return self._attributed[hit.text]


def holds(keys: set[str], loose: set[str], text: str) -> bool:
    """All distinctive ``keys`` in ``text``; without keys, >= 60 % of ``loose`` words."""
    have = tokens(text)
    if keys:
        return keys <= have
    return bool(loose) and len(loose & have) / len(loose) >= 0.6


def answer_keys(answer: str, evidence_text: str) -> tuple[set[str], set[str]]:
    """The answer's distinctive tokens the evidence contains, and its content words there."""
    ev = tokens(evidence_text)
    return distinctive(answer) & ev, content_words(answer) & ev


def answer_held(q: Question, scorer: Scorer, texts: list[str]) -> bool | None:
    keys, loose = answer_keys(q.answer, scorer.evidence_text(q.evidence))
    if not keys and not loose:
        return None
    if q.category == "temporal_reasoning" and keys:
        return bool(texts) and keys <= set().union(*(tokens(t) for t in texts))
    return any(holds(keys, loose, t) for t in texts)


def update_first(q: Question, scorer: Scorer, hits: list[reverie.SearchHit]) -> bool:
    """The first fact/entry hit holding the updated value ranks above any hit from the
    original statement that holds an original-only key token and not the update."""
    keys, loose = answer_keys(q.answer, scorer.evidence_text(q.updated) or q.answer)
    original = q.references[0] if q.references else scorer.evidence_text(q.original)
    later = " ".join(q.references[1:]) + " " + q.answer
    old_keys = distinctive(original) - tokens(later)
    old_exchanges = scorer.evidence(q.original) - scorer.evidence(q.updated)
    for hit in hits:
        if hit.kind == "episode":
            continue
        if holds(keys, loose, hit.text):
            return True
        if old_keys & tokens(hit.text) and scorer.covers(hit) & old_exchanges:
            return False
    return False


async def score_question(
    ns: reverie.Namespace, q: Question, scorer: Scorer, bm25: Bm25
) -> Scored | None:
    evidence = scorer.evidence(q.evidence)
    if not evidence or not q.text:
        return None
    hits = list(await ns.search(q.text, k=max(KS)))
    found = [scorer.covers(h) for h in hits]
    base = [{i} for i in bm25.search(q.text, max(KS))]
    scored = Scored(
        q.category,
        (recall_at(found, evidence, 5), recall_at(found, evidence, 10)),
        (recall_at(base, evidence, 5), recall_at(base, evidence, 10)),
    )
    if q.category in HELD_CATEGORIES:
        texts = [h.text for h in hits[:5] if h.kind != "episode"]
        scored.held = answer_held(q, scorer, texts)
    if q.category == "knowledge_update" and q.updated:
        scored.update_first = update_first(q, scorer, hits)
    return scored


# -- stored items ----------------------------------------------------------------------------


@dataclass
class Item:
    kind: str
    id: str
    where: str
    content: str
    created_by: str


def stored_items(db: Path, namespace: str) -> list[Item]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        facts = conn.execute(
            "SELECT id, topic, content, created_by FROM facts"
            " WHERE invalid_at IS NULL AND namespace = ? ORDER BY rowid",
            (namespace,),
        ).fetchall()
        entries = conn.execute(
            "SELECT id, target, content, created_by FROM entries"
            " WHERE status = 'live' AND namespace = ? ORDER BY rowid",
            (namespace,),
        ).fetchall()
    finally:
        conn.close()
    return [Item("fact", *row) for row in facts] + [Item("entry", *row) for row in entries]


def flush_reach(db: Path, namespace: str) -> tuple[int, int]:
    """(episodes the flush reached, episodes): reached = every extract of the episode is
    at or below the final ``flush:watermark``, or no extracts but extracted (weight set)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        row = conn.execute(
            "SELECT value FROM review_state WHERE namespace = ? AND key = 'flush:watermark'",
            (namespace,),
        ).fetchone()
        mark = int(json.loads(row[0])) if row else 0
        rows = conn.execute(
            "SELECT e.id, e.weight, max(x.id) FROM episodes e"
            " LEFT JOIN extracts x ON x.episode_id = e.id WHERE e.namespace = ? GROUP BY e.id",
            (namespace,),
        ).fetchall()
    finally:
        conn.close()
    reached = sum(1 for _, weight, top in rows if (top <= mark if top else weight is not None))
    return reached, len(rows)


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[*`#>_]", "", text.lower())).strip()


def source_of(content: str, user: str, assistant: str) -> str:
    """'assistant' if the item's text occurs in an assistant message only."""
    needle = flat(content)
    if needle and needle in user:
        return "user"
    if needle and needle in assistant:
        return "assistant"
    return "neither"


def item_report(conv: Conversation, items: list[Item]) -> dict[str, Any]:
    user = "\x00".join(flat(x.user) for x in conv.exchanges)
    assistant = "\x00".join(flat(x.assistant) for x in conv.exchanges)
    junk = [(junk_reason(i.content), i) for i in items]
    junk = [(reason, i) for reason, i in junk if reason]
    sources = Counter(source_of(i.content, user, assistant) for i in items)
    memory = [i for i in items if i.kind == "entry" and i.where == "memory"]
    return {
        "items": len(items),
        "junk": len(junk),
        "junk_reasons": dict(Counter(reason for reason, _ in junk)),
        "junk_samples": [
            f"[{reason}] {i.kind}/{i.where}: {i.content[:160]!r}" for reason, i in junk[:12]
        ],
        "sources": dict(sources),
        "assistant": sources["assistant"],
        "requests": sum(1 for i in items if is_request(i.content)),
        "memory": len(memory),
        "memory_junk": sum(1 for i in memory if junk_reason(i.content)),
        "by_creator": dict(Counter(i.created_by for i in items)),
    }


# -- one conversation ------------------------------------------------------------------------


def calls_of(report: dict[str, dict[str, int]]) -> int:
    return sum(int(stage.get("calls", 0)) for stage in report.values())


async def run_conversation(conv: Conversation, home: Path) -> dict[str, Any]:
    clock = reverie.ManualClock(conv.batches[0].anchor or datetime(2024, 1, 1, tzinfo=UTC))
    scorer, bm25 = Scorer(conv), Bm25(conv.exchanges)
    t0 = time.perf_counter()
    try:
        settings = reverie.Config.load(environ=os.environ)  # REVERIE_* settings apply
        async with reverie.open(home, clock=clock, config=settings) as rv:
            turns = await feed(rv, clock, conv)
            fed_s = time.perf_counter() - t0
            ns = rv.namespace(namespace_of(conv))
            scored = [s for q in conv.questions if (s := await score_question(ns, q, scorer, bm25))]
            calls = calls_of(await rv.model_calls(ns.name))
    finally:
        bm25.close()
    db = home / "reverie.db"
    result = summarise(scored)
    result.update(name=conv.name, turns=turns, seconds=round(fed_s, 1), model_calls=calls)
    result["flush"] = list(flush_reach(db, namespace_of(conv)))
    result.update(item_report(conv, stored_items(db, namespace_of(conv))))
    return result


def summarise(scored: list[Scored]) -> dict[str, Any]:
    """Sums (not means) so that conversations add up; ``derive`` makes the shares."""
    held = [s.held for s in scored if s.held is not None]
    first = [s.update_first for s in scored if s.update_first is not None]
    return {
        "questions": len(scored),
        "recall_sum": [sum(s.recall[i] for s in scored) for i in range(len(KS))],
        "baseline_sum": [sum(s.baseline[i] for s in scored) for i in range(len(KS))],
        "held": [sum(held), len(held)],
        "held_by_category": {
            c: [
                sum(1 for s in scored if s.category == c and s.held),
                sum(1 for s in scored if s.category == c and s.held is not None),
            ]
            for c in HELD_CATEGORIES
        },
        "update_first": [sum(first), len(first)],
    }


# -- figures ---------------------------------------------------------------------------------


def share(pair: list[int] | tuple[int, int]) -> float | None:
    return pair[0] / pair[1] if pair[1] else None


def derive(r: dict[str, Any]) -> dict[str, Any]:
    """The shares and ratios of one conversation's (or the totals') sums."""
    n = r["questions"]
    recall = [s / n if n else 0.0 for s in r["recall_sum"]]
    base = [s / n if n else 0.0 for s in r["baseline_sum"]]
    return {
        "recall": recall,
        "baseline": base,
        "ratio": [a / b if b else None for a, b in zip(recall, base, strict=True)],
        "held": share(r["held"]),
        "update_first": share(r["update_first"]),
        "flush_reach": share(r["flush"]),
        "junk": r["junk"] / r["items"] if r["items"] else 0.0,
        "assistant_share": r["assistant"] / r["items"] if r["items"] else 0.0,
        "calls_per_1000": 1000 * r["model_calls"] / r["turns"] if r["turns"] else 0.0,
    }


def total(results: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"name": "total"}
    for key in (
        "questions",
        "turns",
        "model_calls",
        "items",
        "junk",
        "assistant",
        "requests",
        "memory",
        "memory_junk",
        "seconds",
    ):
        out[key] = sum(r[key] for r in results)
    for key in ("recall_sum", "baseline_sum", "held", "update_first", "flush"):
        out[key] = [sum(r[key][i] for r in results) for i in range(len(results[0][key]))]
    out["held_by_category"] = {
        c: [sum(r["held_by_category"][c][i] for r in results) for i in range(2)]
        for c in HELD_CATEGORIES
    }
    for key in ("junk_reasons", "sources", "by_creator"):
        out[key] = dict(sum((Counter(r[key]) for r in results), Counter()))
    return out


def fmt(value: float | None, digits: int = 2) -> str:
    return "  -  " if value is None else f"{value:.{digits}f}"


HEADER = (
    f"{'conv':>5} {'turns':>5} {'q':>3} {'r@5':>5} {'bm@5':>5} {'x@5':>5} {'r@10':>5}"
    f" {'bm@10':>5} {'x@10':>5} {'held':>5} {'upd1':>5} {'flush':>5} {'items':>5}"
    f" {'junk':>5} {'asst':>5} {'c/1k':>6} {'mem':>4} {'memj':>4}"
)


def row(r: dict[str, Any]) -> str:
    d = derive(r)
    return (
        f"{r['name']:>5} {r['turns']:>5} {r['questions']:>3} {fmt(d['recall'][0]):>5}"
        f" {fmt(d['baseline'][0]):>5} {fmt(d['ratio'][0]):>5} {fmt(d['recall'][1]):>5}"
        f" {fmt(d['baseline'][1]):>5} {fmt(d['ratio'][1]):>5} {fmt(d['held']):>5}"
        f" {fmt(d['update_first']):>5} {fmt(d['flush_reach']):>5} {r['items']:>5}"
        f" {fmt(d['junk']):>5} {fmt(d['assistant_share']):>5} {fmt(d['calls_per_1000'], 1):>6}"
        f" {r['memory']:>4} {r['memory_junk']:>4}"
    )


def verdict(value: float | None, aim: float, at_most: bool = False) -> str:
    if value is None:
        return "n/a"
    ok = value <= aim if at_most else value >= aim
    return f"{value:.3f} (aim {'<=' if at_most else '>='} {aim:g}) {'ok' if ok else 'MISS'}"


def print_report(results: list[dict[str, Any]], tot: dict[str, Any]) -> None:
    print(HEADER)
    for r in [*results, tot]:
        print(row(r))
    d = derive(tot)
    print(
        f"\n{tot['questions']} questions with evidence, {tot['turns']} turns, "
        f"{tot['seconds']:.0f} s feeding"
    )
    for i, k in enumerate(KS):
        print(
            f"recall@{k}: reverie {d['recall'][i]:.3f} vs BM25 {d['baseline'][i]:.3f}; "
            f"ratio {verdict(d['ratio'][i], AIMS['recall_ratio'])}"
        )
    print(
        f"answer held in a top-5 fact/entry hit: {verdict(d['held'], AIMS['held'])} "
        f"{tot['held']}; by category {tot['held_by_category']}"
    )
    print(
        f"updated value ranked first: {verdict(d['update_first'], AIMS['update_first'])} "
        f"{tot['update_first']}"
    )
    print(f"flush reach: {verdict(d['flush_reach'], AIMS['flush_reach'])} {tot['flush']}")
    print(
        f"junk share of stored items: {verdict(d['junk'], AIMS['junk'], True)} "
        f"({tot['junk']}/{tot['items']}) {tot['junk_reasons']}"
    )
    print(f"items taken from assistant answers: {d['assistant_share']:.3f} {tot['sources']}")
    print(
        f"items that are requests / worries of the moment (not junk above): "
        f"{tot['requests'] / max(tot['items'], 1):.3f} ({tot['requests']}/{tot['items']})"
    )
    print(
        f"model calls per 1000 turns: "
        f"{verdict(d['calls_per_1000'], AIMS['calls_per_1000'], True)} ({tot['model_calls']})"
    )
    print(
        f"stored items {tot['items']} by creator {tot['by_creator']}; MEMORY.md items "
        f"{tot['memory']}, junk {tot['memory_junk']}"
    )
    print("junk samples:")
    for r in results:
        for line in r["junk_samples"][:4]:
            print(f"  {r['name']:>3} {line}")


async def run(data: Path, limit: int | None, keep: Path | None = None) -> list[dict[str, Any]]:
    results = []
    with tempfile.TemporaryDirectory(prefix="beam-") as tmp:
        root = keep or Path(tmp)
        for folder in conversation_dirs(data, limit):
            conv = load_conversation(folder)
            print(f"conversation {conv.name}: {len(conv.exchanges)} exchanges", file=sys.stderr)
            results.append(await run_conversation(conv, root / conv.name))
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--keep", type=Path, default=None, help="keep the homes under DIR")
    args = parser.parse_args(argv)
    if not conversation_dirs(args.data, args.limit):
        print(f"skipped: no BEAM conversations under {args.data}")
        return 0
    t0 = time.perf_counter()
    results = anyio.run(run, args.data, args.limit, args.keep)
    tot = total(results)
    if args.json:
        out = {
            "aims": AIMS,
            "conversations": [{**r, **derive(r)} for r in results],
            "total": {**tot, **derive(tot)},
            "wall_seconds": time.perf_counter() - t0,
        }
        print(json.dumps(out, indent=1, default=str))
    else:
        print_report(results, tot)
        print(f"wall time {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
