"""What a dream learnt, by rules (the embedded default) or by a configured model checked
by rules: 3–5 insights ("I learned that …") taken from the day's HIGH-weight statements
and learnings, 1–3 next actions from the errors still open and the day's decisions, and
0–3 topic updates (a model's only: the rules store nothing the writer did not already
take). A model's line is kept only if it is safe to show and carries no value (number,
id, path, name) that its sources do not carry; what it loses, the rules' lines fill."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from reverie.frozen import quick_init
from reverie.model.questions import DREAM
from reverie.model.seam import Field, Prompt, Schema
from reverie.rules.directives import aimed_at_agent
from reverie.rules.injection import answer_problem
from reverie.rules.similarity import jaccard, values, word_set
from reverie.stores.dream import Day, Said

LINE_CHARS: Final = 300
"""A source longer than this is a paste, not a lesson: no insight is made of it."""
SAME: Final = 0.6
"""Two statements whose word sets overlap this much say one thing: one insight."""
_INSIGHT_KINDS: Final = (
    "correction",
    "lesson",
    "insight",
    "decision",
    "pattern",
    "completed",
    "error",
)
_ACTION_KINDS: Final = ("decision",)

DREAM_SCHEMA: Final = Schema(
    (
        Field("reasoning"),
        Field("insights", "array", items=(Field("text", description="I learned that …"),)),
        Field("actions", "array", items=(Field("text", description="One next action."),)),
        Field(
            "topics",
            "array",
            items=(Field("topic"), Field("content", description="A fact for the topic.")),
        ),
    )
)


@quick_init
@dataclass(frozen=True, slots=True)
class Learnt:
    """A dream's distillation: its lines, who wrote them, and the model's lines refused."""

    insights: tuple[str, ...]
    actions: tuple[str, ...]
    topics: tuple[tuple[str, str], ...] = ()
    by: str = "rules"
    refused: tuple[dict[str, str], ...] = field(default_factory=tuple)
    sources: tuple[str, ...] = ()
    """The statements the lines may draw on (what a model is shown, and checked against)."""


def _fits(text: str) -> bool:
    return 0 < len(text) <= LINE_CHARS and "\n" not in text.strip()


def usable(said: Sequence[Said]) -> list[Said]:
    """The statements a dream may quote or show a model: never one that instructs the
    agent, forges framing or carries a secret (the flush flags those and stores nothing)."""
    return [
        s for s in said if aimed_at_agent(s.text, "user") is None and answer_problem(s.text) is None
    ]


def _distinct(said: Sequence[Said], limit: int) -> list[Said]:
    """The first ``limit`` statements that say something new (one line each)."""
    kept: list[Said] = []
    for one in said:
        words = word_set(one.text)
        if not _fits(one.text) or not words:
            continue
        if any(jaccard(words, word_set(k.text)) >= SAME for k in kept):
            continue
        kept.append(one)
        if len(kept) == limit:
            break
    return kept


def insight_sources(today: Day) -> list[Said]:
    """What the write path stored first — values that changed, then new facts and entries
    (each passed the write path's checks: no paste, no guess, no secret) — then the
    learning records, then the HIGH-weight statements only tagged."""
    updates = [s for s in today.stored if s.kind == "update"]
    stored = [s for s in today.stored if s.kind != "update"]
    learnt = [s for s in today.learnt if s.kind in _INSIGHT_KINDS]
    said = [s for s in today.high if s.kind in _INSIGHT_KINDS]
    return usable(updates + stored + learnt + said)


def by_rules(today: Day, recalled: Sequence[str], max_insights: int, max_actions: int) -> Learnt:
    """The rules' distillation: extractive, every line a statement stored or said today."""
    insights = [
        f'I learned that "{s.text.strip()}"'
        for s in _distinct(insight_sources(today), max_insights)
    ]
    if len(insights) < max_insights:
        for text in recalled[: max_insights - len(insights)]:
            if _fits(text):
                insights.append(f'I was reminded that "{text.strip()}"')
    open_errors = usable(today.open_errors)
    errors = [
        f'Resolve the open error: "{s.text.strip()}"' for s in _distinct(open_errors, max_actions)
    ]
    decided = usable([s for s in today.high if s.kind in _ACTION_KINDS])
    follow = [
        f'Follow up on the decision: "{s.text.strip()}"' for s in _distinct(decided, max_actions)
    ]
    sources = tuple(dict.fromkeys(s.text for s in [*insight_sources(today), *open_errors]))
    actions = tuple((errors + follow)[:max_actions])
    return Learnt(tuple(insights), actions, sources=sources)


def question(
    today: Day, recalled: Sequence[str], limits: tuple[int, int, int], topics: Sequence[str]
) -> Prompt:
    """The dream's question to a configured model: the day's sources and the long-term
    items recalled; the answer is checked line by line (:func:`checked`)."""
    insights, actions, updates = limits
    payload: dict[str, Any] = {
        "learnings": [{"kind": s.kind, "text": s.text} for s in insight_sources(today)][:40],
        "open_errors": [s.text for s in usable(today.open_errors)][:10],
        "long_term": list(recalled),
        "topics": list(topics),
        "limits": {"insights": insights, "actions": actions, "topics": updates},
    }
    system = (
        f"You are an agent reviewing its day. Write {min(3, insights)} to {insights} genuine "
        "insights, each starting 'I learned that', from the learnings given; at most "
        f"{actions} next actions from the open errors and decisions; and at most {updates} "
        "facts worth saving to one of the topics listed. Use only what the data says; keep "
        "numbers, names, IDs and paths exactly as given."
    )
    return Prompt(
        stage=DREAM,
        system=system,
        user=json.dumps(payload, ensure_ascii=False, indent=1),
        schema=DREAM_SCHEMA,
        max_tokens=1200,
        payload=payload,
    )


def _problem(text: str, known: frozenset[str]) -> str | None:
    if not _fits(text):
        return f"not one line of at most {LINE_CHARS} chars"
    unsafe = answer_problem(text)
    if unsafe is not None:
        return f"not safe to show: {unsafe}"
    invented = values(text) - known
    if invented:
        return f"carries values no source carries: {sorted(invented)[:5]}"
    return None


def checked(
    data: dict[str, Any],
    sources: Sequence[str],
    rules: Learnt,
    model: str,
    limits: tuple[int, int, int],
) -> Learnt:
    """A model's answer, each line kept only if it passes; the rules fill what it lost."""
    known = frozenset().union(*(values(t) for t in sources)) if sources else frozenset()
    refused: list[dict[str, str]] = []

    def keep(kind: str, lines: list[str], limit: int) -> list[str]:
        out = []
        for text in (" ".join(str(x).split()) for x in lines):
            why = _problem(text, known)
            if why is None:
                out.append(text)
            else:
                refused.append({"kind": kind, "text": text[:LINE_CHARS], "why": why})
        return out[:limit]

    insights = keep("insight", [i["text"] for i in data.get("insights", [])], limits[0])
    actions = keep("action", [a["text"] for a in data.get("actions", [])], limits[1])
    topics = []
    for item in data.get("topics", [])[: limits[2]]:
        content = " ".join(str(item["content"]).split())
        why = _problem(content, known)
        if why is None and str(item["topic"]).strip():
            topics.append((str(item["topic"]).strip(), content))
        else:
            refused.append(
                {"kind": "topic", "text": content[:LINE_CHARS], "why": why or "no topic"}
            )
    return Learnt(
        tuple(insights or rules.insights),
        tuple(actions or rules.actions),
        tuple(topics),
        model,
        tuple(refused),
        rules.sources,
    )
