"""L2's rules: which sentences of a turn are candidates, and what kind of statement each is.

No model call: the thalamus filter drops greetings and acknowledgements, the verification
ladder drops hedged guesses and questions, and a tag says what kind of statement is left.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from reverie.rules.similarity import STOPWORDS, is_value, tokens

SNAPSHOT_BLOCK: Final = re.compile(r"<reverie-snapshot\b.*?(?:</reverie-snapshot>|\Z)", re.S)
REPORT_BLOCK: Final = re.compile(r"<reverie-report\b.*?(?:</reverie-report>|\Z)", re.S)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+(?=\S)|\n+")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_ACK_PREFIX = re.compile(
    r"^(?:(?:got it|sure|ok(?:ay)?|noted|understood|great|thanks|thank you|alright|right|yes"
    r"|yep|no problem|of course|will do|perfect|cool)\b[\s,.!:;-]*)+",
    re.I,
)


class Tag(StrEnum):
    """What kind of statement a candidate is."""

    CORRECTION = "correction"
    ERROR = "error"
    DECISION = "decision"
    COMPLETED = "completed"
    INSIGHT = "insight"
    EVENT = "event"


class Weight(StrEnum):
    HIGH = "high"
    NORMAL = "normal"


HIGH_TAGS: Final = frozenset({Tag.CORRECTION, Tag.ERROR, Tag.DECISION, Tag.COMPLETED, Tag.INSIGHT})

# First match wins, so the order is the priority: a correction that mentions an error is
# a correction.
_TAG_RULES: Final[tuple[tuple[Tag, re.Pattern[str]], ...]] = (
    (
        Tag.CORRECTION,
        re.compile(
            r"\b(actually|correction|scratch that|i meant|not \w+(?: \w+)?,? but|instead of"
            r"|was wrong|is wrong|changed (?:it )?to|is now|are now|now (?:is|uses|runs)"
            r"|no longer|moved to|updated to)\b"
        ),
    ),
    (
        Tag.ERROR,
        re.compile(
            r"\b(error|errors|exception|failed|fails|failing|failure|traceback|crash(?:ed|es)?"
            r"|broke|broken|bug|segfault|oom|refused|denied|timed out)\b"
        ),
    ),
    (
        Tag.DECISION,
        re.compile(
            r"\b(decided|decide|we'll use|we will use|let's use|let's go with|going with|chose"
            r"|agreed|settled on|from now on|we'll go with|will use|plan is)\b"
        ),
    ),
    (
        Tag.COMPLETED,
        re.compile(
            r"\b(done|finished|completed|deployed|merged|shipped|released|fixed|resolved"
            r"|migrated|installed|upgraded|set up|configured)\b"
        ),
    ),
    (
        Tag.INSIGHT,
        re.compile(
            r"\b(turns out|turned out|learned|lesson|the trick|note that|always|never|because"
            r"|root cause|realised|realized|tip|remember that|important|must|requires?)\b"
        ),
    ),
)

_GREETING: Final = frozenset(
    "hi hello hey thanks thank thx ty ok okay k cool great nice sure yes yep yeah no nope "
    "bye goodbye morning evening night good awesome perfect got it sounds fine np welcome "
    "cheers lol alright right understood noted you too see ya later".split()
)
_HEDGE: Final = re.compile(
    r"\b(maybe|perhaps|probably|possibly|might|i think|i guess|i believe|i suppose|not sure"
    r"|unsure|could be|may be|seems|seem to|likely|unlikely|wonder|guess|assume|presumably"
    r"|if i recall|iirc|afaik|i'm not certain|hopefully)\b"
)
_QUESTION_START: Final = re.compile(
    r"^(?:should|shall|could|would|can|do|does|did|is|are|was|were|will|what|why|how|when"
    r"|where|which|who)\b"
)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A sentence worth showing the flush: verified-sounding, not chatter, tagged."""

    text: str
    tag: Tag
    weight: Weight


def strip_injected(text: str) -> str:
    """Remove blocks reverie itself put in the prompt (the snapshot, review reports)."""
    return REPORT_BLOCK.sub(" ", SNAPSHOT_BLOCK.sub(" ", text))


def sentences(text: str) -> list[str]:
    out = []
    for part in _SENTENCE.split(text):
        clean = _ACK_PREFIX.sub("", _BULLET.sub("", part).strip()).strip().rstrip(";,")
        if clean:
            out.append(clean)
    return out


def is_chatter(sentence: str, min_chars: int) -> bool:
    """The thalamus filter: a short greeting or acknowledgement is not a candidate."""
    if len(sentence) >= min_chars:
        return False
    if any(is_value(t) for t in tokens(sentence)):
        return False
    words = re.findall(r"[a-z']+", sentence.lower())
    return all(w in _GREETING or w in STOPWORDS for w in words)


def is_hedged(sentence: str) -> bool:
    """The verification ladder: guesses and questions never become facts."""
    lowered = sentence.lower().strip()
    if lowered.endswith("?") or _QUESTION_START.match(lowered):
        return True
    return _HEDGE.search(lowered) is not None


def tag(sentence: str) -> Tag:
    lowered = sentence.lower()
    for name, pattern in _TAG_RULES:
        if pattern.search(lowered):
            return name
    return Tag.EVENT


def weight(tag_: Tag) -> Weight:
    return Weight.HIGH if tag_ in HIGH_TAGS else Weight.NORMAL


def candidates(text: str, min_chars: int) -> list[Candidate]:
    """The candidate sentences of one side of a turn, in order, without repeats."""
    seen: set[str] = set()
    out = []
    for sentence in sentences(strip_injected(text)):
        key = sentence.lower()
        if key in seen or is_chatter(sentence, min_chars) or is_hedged(sentence):
            continue
        seen.add(key)
        found = tag(sentence)
        out.append(Candidate(sentence, found, weight(found)))
    return out
