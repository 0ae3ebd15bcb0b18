"""Rules of the review stages: extractive summaries, lint verdicts, promotion rewrites, and
the checks a model's answer must pass before anything it wrote is stored.

A model (the offline rules or a remote one) proposes; these rules dispose: a summary may
not carry a value no live fact carries, a rewrite must keep its fact's numbers, IDs and
paths and fit 220 chars, and neither may carry a control character, the snapshot's
framing, an instruction to the agent or a secret (``injection.answer_problem``). That is
how "never invented data" is enforced, not hoped for.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from reverie.rules.claims import IRREGULAR_PAST
from reverie.rules.injection import answer_problem
from reverie.rules.similarity import MONTHS, NEGATIONS, jaccard, values, word_set
from reverie.rules.supersede import supersedes

_PREFIX = re.compile(
    r"^\s*(?:(?:actually|correction|update|updated|note|fyi|btw|so|ok|okay|well|reminder"
    r"|as a reminder|just a reminder|just to confirm|to confirm|heads up)\b[\s,:;!.-]*)+",
    re.I,
)
_NOW = re.compile(r"\s+(?:now|currently)\s*([.!]?)\s*$", re.I)
_TRANSIENT: Final = re.compile(
    r"\b(today|tonight|tomorrow|yesterday|this (?:morning|afternoon|week|sprint)|right now"
    r"|for now|temporarily|temporary|at the moment|until (?:monday|tuesday|wednesday|thursday"
    r"|friday|next)|currently (?:down|broken|failing)|is down|in progress|wip)\b",
    re.I,
)


def _clean(content: str) -> str:
    text = _PREFIX.sub("", " ".join(content.split())).rstrip(".")
    return text[:1].upper() + text[1:]


def summarise(facts: Sequence[tuple[str, int]], max_chars: int) -> str:
    """An extractive summary of ``(content, chain depth)`` live facts: the most maintained
    (deepest chains) first, then the newest, whole facts only, within ``max_chars``."""
    texts = [_clean(content) for content, _ in facts]
    order = sorted(range(len(facts)), key=lambda i: (-facts[i][1], -i))
    picked: list[int] = []
    size = 0
    for i in order:
        text = texts[i]
        cost = len(text) + (2 if picked else 0)
        if size + cost > max_chars:
            continue
        picked.append(i)
        size += cost
    # in the topic's own order, so the summary reads like the history
    return "; ".join(texts[i] for i in sorted(picked))


def text_size(facts: Sequence[tuple[str, int]]) -> int:
    """The chars of every live fact joined as :func:`summarise` joins them."""
    texts = [_clean(content) for content, _ in facts]
    return sum(len(t) for t in texts) + 2 * max(0, len(texts) - 1)


def summary_problem(
    summary: str, live: Sequence[str], max_chars: int, *, extractive: bool = False
) -> str | None:
    """Why a proposed summary may not be stored (``None``: it may). ``extractive``: the
    rules made it of whole live facts (:func:`summarise`), each of which passed the write
    path's checks (control characters, framing, instructions, secrets) when it was stored,
    so those are not run again; a model's summary could carry anything, and is checked."""
    if not summary.strip():
        return "the summary is empty"
    if len(summary) > max_chars:
        return f"the summary is {len(summary)} chars; the limit is {max_chars}"
    unsafe = None if extractive else answer_problem(summary)
    if unsafe is not None:
        return f"the summary is not safe to show: {unsafe}"
    known = frozenset().union(*(values(text) for text in live)) if live else frozenset()
    invented = values(summary) - known
    if invented:
        return f"the summary carries values no live fact carries: {sorted(invented)[:5]}"
    return None


def rewrite(content: str, topic: str, max_chars: int) -> str:
    """A promoted fact as a rule for MEMORY.md: the filler prefix dropped, the topic named
    when the text does not name it, whitespace collapsed; the topic is added
    only if it fits (a fact too long to fit whole is not cut: the check then refuses it)."""
    text = _PREFIX.sub("", " ".join(content.split()))
    text = _NOW.sub(r"\1", text)  # "… is 30 days now." states a rule: "… is 30 days."
    text = text[:1].upper() + text[1:]
    named = f"{topic}: {text}"
    if topic.replace("-", " ").lower() not in text.lower() and len(named) <= max_chars:
        return named
    return text


def rewrite_problem(rewritten: str, content: str, topic: str, max_chars: int) -> str | None:
    """Why a promotion rewrite may not be written (``None``: it may)."""
    if not rewritten.strip():
        return "the rewrite is empty"
    if len(rewritten) > max_chars:
        return f"the rewrite is {len(rewritten)} chars; the limit is {max_chars}"
    unsafe = answer_problem(rewritten)
    if unsafe is not None:
        return f"the rewrite is not safe to show: {unsafe}"
    lost = values(content) - values(rewritten)
    if lost:
        return f"the rewrite drops the fact's values {sorted(lost)[:5]}"
    invented = values(rewritten) - values(content) - values(topic)
    if invented:
        return f"the rewrite adds values the fact does not have: {sorted(invented)[:5]}"
    return None


def transient(text: str) -> bool:
    """A statement about now (an outage, today's plan) is not a durable rule."""
    return _TRANSIENT.search(text) is not None


_MONTH = "(?:" + "|".join(sorted(MONTHS, key=len, reverse=True)) + ")"
# a day of the calendar: "April 22", "22nd of April", "2024-04-22" (not "3/4", a ratio too)
_DATED: Final = re.compile(
    rf"\b{_MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?\b"
    rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}\b|\b\d{{4}}-\d{{2}}-\d{{2}}\b",
    re.I,
)
_OPENER = r"^(?:(?:also|and|but|so|ok|okay|well|honestly|tbh|btw|fyi|update)\W+)*"
_DEGREE = (
    r"(?:(?:kinda|kind of|sort of|really|so|very|pretty|super|quite|a bit|a little|totally"
    r"|still|getting|increasingly)\s+)*"
)
# the speaker's stance toward something ("I'm kinda worried that …", "I feel bad about …")
_STANCE: Final = re.compile(
    rf"{_OPENER}i(?:'m| am| feel| felt| was| have been|'ve been| get| got)\s+{_DEGREE}"
    r"[a-z-]+\s*(?:,|\b(?:about|that|because|since|after|now that|with|over)\b)",
    re.I,
)
# what the speaker is doing or means to do just now ("I'm trying to …", "I'll …")
_AIM: Final = re.compile(
    rf"{_OPENER}(?:i(?:'m| am)\s+(?:(?:still|currently|now|just|also|really)\s+)*"
    r"(?:trying|planning|looking|hoping|thinking|considering|wondering|working on|aiming"
    r"|going to|gonna|about to)\b"
    r"|i(?:'d| would)? (?:want|need|like|hope|plan|intend|wanna)\s+to\b|i(?:'ll| will)\s)",
    re.I,
)


def momentary(text: str) -> bool:
    """A statement of its moment rather than a standing fact: tied to a day of the calendar
    (an event, a deadline), the speaker's stance toward something ("I'm worried that …"),
    what the speaker is trying or means to do, or a state of now. Such a fact stays in its
    topic; MEMORY.md, shown every turn, is for what holds from turn to turn."""
    body = " ".join(text.split())
    return bool(transient(body) or _DATED.search(body) or _STANCE.match(body) or _AIM.match(body))


# a past-tense verb among a statement's first words: it tells what happened
_TOLD_EVENT: Final = re.compile(
    r"^(?:[\w'-]+[\s,]+){0,5}?(?:\w{2,}ed|" + "|".join(sorted(IRREGULAR_PAST)) + r")\b", re.I
)


def narrated(text: str) -> bool:
    """A statement that tells an event ("Graham took the lid off and found …", "we switched
    to SumUp") rather than stating how things are: the rules cannot generalise it into a
    rule for every turn (a model may), so the offline model does not promote it."""
    found = _TOLD_EVENT.search(_clean(text))
    if found is None:
        return False
    before = re.findall(r"[a-z']+", found.group(0).lower())[:-1]
    return not any(w in _COPULA or w.endswith("'s") for w in before)  # "is limited to"


_COPULA: Final = frozenset("is are was were be been being am".split())


def memory_twin(text: str, memory: Sequence[str], threshold: float = 0.6) -> str | None:
    """The MEMORY.md entry that already says this, if one does."""
    words = word_set(text)
    for entry in memory:
        if values(text) <= values(entry) and jaccard(words, word_set(entry)) >= threshold:
            return entry
    return None


def contradicts(a: str, b: str) -> bool:
    """The lint verdict rule for an unclear pair: the same subject with a different value,
    or the same statement with the negation flipped."""
    if supersedes(a, b) or supersedes(b, a):
        return True
    wa, wb = word_set(a), word_set(b)
    if (wa & NEGATIONS) == (wb & NEGATIONS):
        return False
    return jaccard(wa - NEGATIONS, wb - NEGATIONS) >= 0.6
