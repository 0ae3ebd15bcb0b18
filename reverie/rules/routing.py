"""The six-way routing discipline as rules: every fact has exactly one home.

name / timezone → user_settings; preferences → user (USER.md); agent identity →
agent_profile; reply style → soul (SOUL.md); reusable workflows → skill; environment facts
and lessons → memory (MEMORY.md); specific facts (addresses, hashes, thresholds) → topic.
A statement with a specific value goes to a topic even when it also reads like a lesson:
the flush prefers topics, which are large, over MEMORY.md, which is injected every turn.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from reverie.rules.extraction import Tag, Weight, weight
from reverie.rules.similarity import STOPWORDS, is_value, stem, tokens


class Home(StrEnum):
    USER_SETTINGS = "user_settings"
    USER = "user"
    AGENT_PROFILE = "agent_profile"
    SOUL = "soul"
    SKILL = "skill"
    MEMORY = "memory"
    TOPIC = "topic"
    SKIP = "skip"


MEMORY_HOMES: Final = frozenset(
    {Home.USER_SETTINGS, Home.USER, Home.AGENT_PROFILE, Home.SOUL, Home.MEMORY}
)

_NAME = re.compile(
    r"\b(?i:my name is|call me|i am called|i'm called)\s+(?P<v>[A-Z][\w'-]*(?: [A-Z][\w'-]*)?)"
)
_TZ = re.compile(
    r"\b(?:my )?time ?zone is\s+(?P<v>[\w/+:-]+)|\bi(?:'m| am) (?:in|on)\s+"
    r"(?P<w>UTC[+-]\d{1,2}(?::\d\d)?|GMT[+-]\d{1,2}|[A-Z][a-z]+/[A-Za-z_]+)",
    re.I,
)
_AGENT_NAME = re.compile(r"\b(?i:your name is)\s+(?P<v>[A-Z][\w'-]*)")
_AGENT_ROLE = re.compile(r"\byou are (?:my |a |an |the )(?P<v>[\w' -]{3,60}?)(?:[.,;!]|$)", re.I)
_STYLE = re.compile(
    r"\b(?:reply|respond|answer|write|talk|speak)(?:s|ing)? (?:to me )?(?:in|with|using|briefly"
    r"|concisely|formally|casually|only)\b|\bbe (?:more )?(?:concise|brief|terse|formal|casual"
    r"|friendly|direct)\b|\bno emojis?\b|\buse bullet|\bkeep (?:it|answers|replies|responses)"
    r" (?:short|brief)\b|\bplain text\b|\btone\b",
    re.I,
)
_PREFERENCE = re.compile(
    r"\b(?:i|user) (?:prefer|prefers|like|likes|love|loves|hate|hates|dislike|dislikes"
    r"|want|wants|don't like|do not like|'d rather|would rather|always use|never use"
    r"|usually)\b|\bmy favou?rite\b",
    re.I,
)
_WORKFLOW = re.compile(
    r"\bsteps?\s*(?:\d|:)|\bfirst\b.*\bthen\b|\bto \w+(?: \w+){0,4}, (?:first |run |do |use )",
    re.I,
)
_NARRATION = re.compile(
    r"^(?:i|i've|i'll|i'm|i have|i will|i am|let me|we'll|i just|i now)\b", re.I
)


@dataclass(frozen=True, slots=True)
class Route:
    home: Home
    content: str
    topic: str = ""
    reason: str = ""
    sure: bool = True
    """False where the rules guess and a model's judgement is worth its cost: whether a
    value-less statement is a durable lesson for MEMORY.md."""

    def as_answer(self, candidate_id: int) -> dict[str, Any]:
        """The route in the shape of a flush answer's item."""
        return {
            "id": candidate_id,
            "home": self.home.value,
            "topic": self.topic,
            "content": self.content,
            "reason": self.reason,
        }


def _specific(text: str) -> bool:
    return any(is_value(t) for t in tokens(text))


def route(
    text: str,
    tag: Tag,
    *,
    speaker: str,
    topics: Mapping[str, Iterable[str]] | Sequence[str],
    max_topics: int,
) -> Route:
    """The one home of a candidate statement (or SKIP, with the reason). ``topics`` maps
    each existing topic to words its facts use (or is a plain list of names)."""
    if speaker == "assistant" and tag is not Tag.INSIGHT and _NARRATION.match(text):
        return Route(Home.SKIP, text, reason="the agent narrating its own action")
    if speaker == "user":
        if m := _NAME.search(text):
            return Route(Home.USER_SETTINGS, f"name: {m['v']}", reason="the user's name")
        if m := _TZ.search(text):
            return Route(
                Home.USER_SETTINGS, f"timezone: {m['v'] or m['w']}", reason="the user's timezone"
            )
        if m := _AGENT_NAME.search(text):
            return Route(Home.AGENT_PROFILE, f"name: {m['v']}", reason="the agent's identity")
        if m := _AGENT_ROLE.search(text):
            role = m["v"].strip()
            return Route(Home.AGENT_PROFILE, f"role: {role}", reason="the agent's identity")
        if _STYLE.search(text):
            return Route(Home.SOUL, text, reason="reply style")
        if _PREFERENCE.search(text):
            return Route(Home.USER, text, reason="a user preference")
    if _WORKFLOW.search(text):
        return Route(
            Home.SKILL, text, reason="a reusable workflow: the agent saves it with skill_manage"
        )
    if _specific(text):
        topic = topic_for(text, topics, max_topics)
        if topic is None:
            return Route(Home.SKIP, text, reason=f"all {max_topics} topics are taken")
        return Route(Home.TOPIC, text, topic=topic, reason="a specific fact")
    if weight(tag) is Weight.HIGH:  # a correction, error, decision, completion or insight
        return Route(Home.MEMORY, text, reason=f"a lesson ({tag.value})", sure=False)
    return Route(Home.SKIP, text, reason="a plain event with no specific value")


def route_all(
    candidates: Sequence[Mapping[str, Any]],
    topics: Mapping[str, Iterable[str]],
    max_topics: int,
) -> list[tuple[int, Route]]:
    """Route a flush batch in order; a topic the rules open is known to the next one."""
    known = {name: list(words) for name, words in topics.items()}
    routes = []
    for candidate in candidates:
        found = route(
            candidate["text"],
            Tag(candidate["tag"]),
            speaker=candidate["speaker"],
            topics=known,
            max_topics=max_topics,
        )
        if found.topic and found.topic not in known:
            known[found.topic] = []
        routes.append((int(candidate["id"]), found))
    return routes


def topic_for(
    text: str, topics: Mapping[str, Iterable[str]] | Sequence[str], max_topics: int
) -> str | None:
    """An existing topic named in the text (or, failing that, whose facts share the most
    of its words), or a new one named after its subject."""
    words = [t for t in tokens(text) if t.isalpha() and t not in STOPWORDS]
    stems = {stem(w) for w in words}
    known: Mapping[str, Iterable[str]] = (
        topics if isinstance(topics, Mapping) else {name: () for name in topics}
    )
    best, best_score = None, 0.0
    for name, keywords in known.items():
        parts = [p for p in re.split(r"[-_]", name) if p]
        named = sum(1 for p in parts if stem(p) in stems)
        shared = len(stems & {stem(k) for k in keywords})
        score = named * 10 + (shared if shared >= 1 else 0)
        if score > best_score:
            best, best_score = name, score
    if best is not None:
        return best
    if len(known) >= max_topics or not words:
        return None
    return slug(words[0])


def slug(word: str) -> str:
    clean = re.sub(r"[^a-z0-9]+", "-", word.lower()).strip("-")
    return clean[:40] or "notes"
