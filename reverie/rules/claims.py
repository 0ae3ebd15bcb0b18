"""Claims: a fact split at its relation word into subject and value, with the old value
a correction names ("Y, not X", "instead of X", "from X to Y") — what the supersede and
value-slot rules compare."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from reverie.rules.similarity import NEGATIONS, STOPWORDS, is_value, measure_units, stem, tokens

CORRECTION_PREFIX = re.compile(
    r"^\s*(?:(?:actually|correction|update|updated|wait|no|nope|oops|sorry|fyi|btw|by the way"
    r"|note|reminder|as a reminder|just a reminder|just to confirm|to confirm|heads up"
    r"|scratch that|i mean|ok|okay|so|yeah|yea|yep|yup|yes|well|anyway|anyways|oh|ah|hey"
    r"|also|and|ugh|argh|meh|whoops|welp|hmm|omg|(?:my )?mistake|my bad|(?:i )?meant)\b"
    r"[\s,:;!.\u2014\u2013-]*)+",
    re.I,
)
# words that take back what was said before ("oops, …", "sorry, mistake — …", "meant …")
TAKING_BACK = (
    r"oops|whoops|sorry|my bad|(?:my )?mistake|i meant|meant|i mean|correction|scratch that"
    r"|actually|typo|wait|make (?:that|it)"
)
LABEL_COLON = re.compile(r"(?<=\w):(?=\s)")
# "Y, not X" / "Y and not X": a comma or "and" marks X as the value being corrected;
# a plain "not" inside a sentence ("encourages him not to give up") corrects nothing
# (at the end, or as a clause of its own: "I ordered 1500 jars, not 1200, I looked …"); and
# a value right after another ("meant 3pm not 4pm", "5 bridesmaids now not 6")
_NOT_X = re.compile(
    r"(?:[,;]\s*(?:and\s+)?|\s+and\s+)not\s+(?P<old>(?:[^,;.]|[,.](?=\d))+?)"
    r"\s*(?:[.!]?\s*$|,\s+(?=\w))"
    r"|(?<=\d)(?P<unit>\s?[a-z%]{1,8}|\s[a-z][a-z'-]{8,20})?(?:\s+(?:now|anymore))?"
    r"\s+not\s+(?:(?:a|an|the)\s+)?(?P<old2>\S*\d[\w:.%/-]*)",
    re.I,
)


def without_denied(text: str) -> str:
    """The text without the former value it denies ("30 minutes not 20 min" → "30 minutes
    min"; "port 5433, not 5432" → "port 5433"): what it says, not what it takes back."""
    found = _NOT_X.search(text)
    return text if found is None else _cut(text, found)


def _cut(text: str, found: re.Match[str]) -> str:
    """``text`` without a denial ``found`` by :data:`_NOT_X`; the unit of the value before
    it stays ("3pm not 4pm" → "3pm")."""
    head = text[: found.start()] + (found.groupdict().get("unit") or "")
    tail = text[found.end() :]
    return f"{head} {tail}" if head and tail and not tail[0].isspace() else head + tail


_INSTEAD_OF = re.compile(r"\binstead\s+of\s+(?P<old>[^,;.]+)", re.I)
# "scratch the £55 thing, …": a value taken back by name ("forget" and "disregard" are
# not: "don't forget the 2 kids have the dentist", "disregard the 2nd invoice")
_SCRATCH = re.compile(
    r"\bscratch\s+(?:the\s+|that\s+|my\s+)?"
    r"(?P<old>[$€£¥#]?\d[\w.,:%/-]*?)(?=[\s,;.!]|$)(?:\s+(?:thing|one|figure|number|idea))?",
    re.I,
)
# "now 45s (was 30s)": the former value in brackets, as change notes write it
_WAS = re.compile(r"\s*\((?:was|previously|formerly|from)\s+(?P<old>[^()]{1,60})\)", re.I)
# "moved from okta to entra id": the old value is named, the relation is "moved to"
_FROM_TO = re.compile(
    r"\b(?P<verb>moved|changed|switched|migrated|went|upgraded|downgraded|bumped|increased"
    r"|decreased|dropped|raised|lowered|extended|shifted|reduced|grew|rose|fell)\s+"
    r"(?:\w+\s+)?from\s+(?P<old>(?:[^,;.]|\.(?!\s|$))+?)\s+to\s+",  # "cdn-eu.example.net"
    re.I,
)
_RELATIONS = [
    "is located at",
    "is located in",
    "has moved to",
    "has changed to",
    "is set to",
    "runs on",
    "lives in",
    "lives at",
    "moved to",
    "changed to",
    "set to",
    "points to",
    "defaults to",
    "listens on",
    "is now",
    "are now",
    "has been",
    "have been",
    "is",
    "are",
    "was",
    "were",
    "equals",
    "uses",
    "use",
    "becomes",
    "became",
    "costs",
    "takes",
    "=",
    ":",
    "->",
    "→",
]
RELATION = re.compile(
    r"(?:^|\s)(" + "|".join(re.escape(r) for r in _RELATIONS) + r")(?:\s|$)", re.I
)
_PREPOSITIONS = frozenset({"in", "on", "at", "by", "to", "during", "for", "from", "with"})
PRONOUNS = frozenset({"it", "this", "that", "they", "he", "she", "we", "i", "you", "there"})
IRREGULAR_PAST = frozenset(
    """wrote ran sent made did went took got built found gave told saw met left brought
    bought paid caught fell felt kept lost put read said sold spent stood thought won""".split()
)
FILLER = frozenset({"now", "currently", "actually", "no", "longer", "still", "really", "new"})


@dataclass(frozen=True, slots=True)
class Claim:
    """What a fact says, split for the rule."""

    subject: frozenset[str]
    value: frozenset[str]
    skeleton: frozenset[str]
    values: frozenset[str]
    negated: str | None
    pronoun_subject: bool
    has_relation: bool
    definite: bool
    relation: str = ""
    """The relation's class: "be" for the copula and its variants, "at" for locations,
    else the relation word itself."""
    value_tokens: frozenset[str] = frozenset()


def _content(words: Sequence[str]) -> frozenset[str]:
    return frozenset(
        stem(w) for w in words if w in NEGATIONS or (w not in STOPWORDS and w not in FILLER)
    )


_LABEL = re.compile(r"^\s*[\w-]+(?:\s[\w-]+)?\s*:\s+(?P<rest>.+)$", re.S)


def _unlabelled(body: str) -> str:
    """ "ci note: the runner image -> debian-12" is the claim after its label."""
    m = _LABEL.match(body)
    if m and RELATION.search(LABEL_COLON.sub(" :", m["rest"])):
        return m["rest"]
    return body


@lru_cache(maxsize=65536)
def parse(text: str) -> Claim:
    """Split a fact into subject, value, skeleton and any explicitly negated old value."""
    body = _unlabelled(CORRECTION_PREFIX.sub("", text, count=1))
    negated = None
    for pattern in (_NOT_X, _INSTEAD_OF, _WAS, _SCRATCH):
        found = pattern.search(body)
        if found:
            negated = (found.group("old") or found.group("old2")).strip().rstrip(".!")
            body = _cut(body, found)
            break
    moved = _FROM_TO.search(body)
    if moved and negated is None:
        negated = moved.group("old").strip()
        body = body[: moved.start()] + "changed to " + body[moved.end() :]
    relation = RELATION.search(LABEL_COLON.sub(" :", body))
    if relation:
        body = LABEL_COLON.sub(" :", body)
        subject_words = tokens(body[: relation.start(1)])
        value_words = tokens(body[relation.end(1) :])
    else:
        subject_words, value_words = (), tokens(body)
    all_words = tokens(body)
    # "is set to" says what "is" says: a copula's own words are not the statement's shape
    copula = (
        set(tokens(relation.group(1)))
        if relation and _relation_class(relation.group(1)) == "be"
        else set()
    )
    # nor is a unit of measure after a number: "5 minutes" and "5 min" are one value
    units = measure_units(all_words)
    skeleton = frozenset(
        stem(w)
        for w in all_words
        if not is_value(w) and w not in STOPWORDS | FILLER | copula | units
    )
    if _is_event(value_words):
        subject_words = ()  # "X was added in sprint 12" reports an event, not X's state
    subject = _content(subject_words)
    pronoun = bool(subject_words) and all(
        w in PRONOUNS or w in STOPWORDS or w in FILLER for w in subject_words
    )
    return Claim(
        subject=subject,
        value=_content(value_words),
        skeleton=skeleton,
        values=frozenset(w for w in all_words if is_value(w)),
        negated=negated,
        pronoun_subject=pronoun,
        has_relation=relation is not None and bool(subject),
        definite=bool(value_words) and value_words[0] == "the",
        relation=_relation_class(relation.group(1)) if relation else "",
        value_tokens=frozenset(w for w in value_words if is_value(w)),
    )


_COPULA = frozenset(
    {
        "is",
        "are",
        "was",
        "were",
        "is now",
        "are now",
        "has been",
        "have been",
        "becomes",
        "became",
        "is set to",
        "set to",
        "changed to",
        "has changed to",
        "equals",
        "=",
        ":",
        "->",
        "→",
    }
)
_LOCATION = frozenset(
    {"is located at", "is located in", "has moved to", "moved to", "lives in", "lives at"}
)


def _relation_class(word: str) -> str:
    word = " ".join(word.lower().split())
    if word in _LOCATION:
        return "at"
    if word in _COPULA:
        return "be"
    return "use" if word in {"uses", "use"} else word


def _is_event(value_words: Sequence[str]) -> bool:
    return (
        len(value_words) >= 2 and value_words[0].endswith("ed") and value_words[1] in _PREPOSITIONS
    )


def same_subject(new: Claim, old: Claim) -> bool:
    if new.pronoun_subject or not new.subject or not old.subject:
        return False
    return new.subject == old.subject
