"""Near-duplicate detection in tiers: normalised exact match, then Jaccard on word sets.

A pair is only a near-duplicate when it also carries the same *values* (numbers,
versions, hosts, paths, ids), in the same order: "timeout is 30s" and "timeout is 45s"
share most words but are two different facts, and treating them as one would silently
lose the newer value.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from typing import Final

REINFORCE_MARK = re.compile(r"\s*⟦×\d+⟧\s*$")
# a number with thousands separators or a currency sign is one value ("$5,000")
# an amount with thousands commas ("£4,500", even before a comma of the sentence), a
# decimal comma ("10,50 euro"), or a word, host, path or version
_TOKEN = re.compile(
    r"[$€£¥]?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?!\w|,\d)|[$€£¥]?\d+,\d{1,2}(?!\w|,\d)"
    r"|[$€£¥]?[/~#]?\w[\w./:@#%+~-]*"
)
_TRAILING = ".,:;!?-/"

# The calendar's words: month names (and their abbreviations) and weekdays.
CALENDAR: Final = frozenset(
    """january february march april may june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday
    saturday sunday""".split()
)
MONTHS: Final = frozenset(w for w in CALENDAR if not w.endswith("day"))
# the calendar's names with the weekdays' short forms
_DAYS: Final = CALENDAR | frozenset("mon tue tues wed thu thur thurs fri sat sun".split())
STOPWORDS = frozenset(
    """a an the this that these those of to in on at for from by with as and or but so
    is are was were be been being am it its it's i i'm we our you your he she they them
    their his her my me us do does did has have had will would should can could may
    now currently actually still also just really very please pls plz note noted fyi btw
    there here which who whom what when where about into over than then""".split()
)
# Negations change a fact's meaning; they are never dropped as stop words.
NEGATIONS = frozenset({"not", "no", "never", "don't", "doesn't", "isn't", "aren't", "won't"})


class Tier(StrEnum):
    """Which tier caught a near-duplicate."""

    EXACT = "exact"
    JACCARD = "jaccard"
    CONTAINED = "contained"


@dataclass(frozen=True, slots=True)
class Match:
    """A near-duplicate verdict: which tier caught it and how similar the word sets were."""

    tier: Tier
    similarity: float


@lru_cache(maxsize=65536)
def tokens(text: str) -> tuple[str, ...]:
    """Lower-cased tokens; dots, slashes and colons inside a token are kept (hosts, paths).
    Cached: the same live facts are compared against every new write."""
    text = unicodedata.normalize("NFKC", REINFORCE_MARK.sub("", text)).casefold()
    out = []
    for raw in _TOKEN.findall(text):
        token = raw.rstrip(_TRAILING)
        if token:
            out.append(token)
    return tuple(out)


def normalise(text: str) -> str:
    """The exact-match tier's key: case, spacing, punctuation and the ⟦×N⟧ mark ignored."""
    return " ".join(tokens(text))


_SIBILANTS: Final = ("s", "x", "z", "ch", "sh", "o")  # "boxes", "potatoes"


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A deliberately light suffix stripper: enough to equate 'deploys' and 'deploy'.
    Cached: a vocabulary is small and every text's words are stemmed again and again."""
    if is_value(word) or len(word) <= 4:
        return word
    for suffix in ("ing", "ies", "ed", "es", "s"):
        if suffix == "es" and not word[:-2].endswith(_SIBILANTS):
            continue  # "votes" is "vote" + s, "boxes" is "box" + es
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


DERIVED_MIN = 5  # letters of a word that begins another: one derived from the other


def derived(a: str, b: str) -> bool:
    """One word, or one derived from the other ("wholesale" / "wholesaler")."""
    return a == b or (min(len(a), len(b)) >= DERIVED_MIN and (a.startswith(b) or b.startswith(a)))


# One word for each way of saying the user favours something: "I like terse answers" and
# "Prefers terse answers" are one preference.
_CANONICAL: Final = {
    **dict.fromkeys(
        "like likes liked love loves prefer prefers preferred enjoy enjoys favour favours"
        " favor favors".split(),
        "prefer",
    ),
    **dict.fromkeys("reply replies answer answers respond responds write".split(), "reply"),
}


@lru_cache(maxsize=65536)
def word_set(text: str) -> frozenset[str]:
    """Content words, stemmed, for the Jaccard tier. Saying that one likes something is
    framing, not content: "I like terse answers" and "Terse answers" are one preference."""
    return frozenset(
        _CANONICAL.get(t, stem(t)) for t in tokens(text) if t in NEGATIONS or t not in STOPWORDS
    ) - {"prefer"}


@lru_cache(maxsize=65536)
def is_value(token: str) -> bool:
    """Numbers, versions, hosts, paths, ids, e-mail addresses: what a correction changes."""
    if any(c.isdigit() for c in token):
        return True
    if (
        "/" in token
        and (days := [p for p in token.split("/") if p])
        and all(p.lower() in _DAYS for p in days)
    ):
        return False  # "fri/sat", "mon/wed/fri": days said together, not a path
    if "/" in token or "@" in token or "\\" in token:
        return True
    if token.startswith("#") and len(token) > 1:
        return True  # a channel or ticket: #pay-incidents
    if "." in token.strip(".") and not token.endswith("."):
        return True  # host.name, file.ext, module.attr
    return False


def values(text: str) -> frozenset[str]:
    """The value tokens of a text."""
    return frozenset(t for t in tokens(text) if is_value(t))


@lru_cache(maxsize=65536)
def value_sequence(text: str) -> tuple[str, ...]:
    """The value tokens in order, each in its one spelling: "worker 3 item 0" and "worker 0
    item 3" differ; "30 seconds" and "30s" do not."""
    found = tokens(text)
    return tuple(
        canonical(t, found[i + 1] if i + 1 < len(found) else "")
        for i, t in enumerate(found)
        if is_value(t)
    )


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a ∩ b| / |a ∪ b|; two empty sets are identical."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def near_duplicate(new: str, old: str, threshold: float) -> Match | None:
    """The tiered check; ``None`` means the two texts are different facts."""
    if normalise(new) == normalise(old):
        return Match(Tier.EXACT, 1.0)
    if value_sequence(new) != value_sequence(old):
        return None
    a, b = word_set(new), word_set(old)
    score = jaccard(a, b)
    if score >= threshold:
        return Match(Tier.JACCARD, score)
    small, large = sorted((a, b), key=len)
    if len(small) >= CONTAINED_WORDS and small <= large:
        return Match(Tier.CONTAINED, score)  # the same claim with words added
    return None


CONTAINED_WORDS: Final = 3
"""A statement whose (at least three) content words all recur in another, with the same
values, says nothing the other does not: "answer in bullet points" / "Reply in short
bullet points"."""


def pigeonhole_terms(text: str, threshold: float) -> list[str]:
    """Terms of which any near-duplicate (Jaccard >= threshold) must contain at least one.

    A twin B of A shares at least ``ceil(threshold * |A|)`` of A's content words, so it holds
    at least one of any ``|A| - ceil(threshold * |A|) + 1`` of them; the longest are taken
    as the likeliest to be rare, so the query matches few rows."""
    by_stem: dict[str, str] = {}
    for token in tokens(text):
        if token in STOPWORDS and token not in NEGATIONS:
            continue
        by_stem.setdefault(stem(token), token)
    words = sorted(by_stem.values(), key=len, reverse=True)
    need = math.ceil(threshold * len(words) - 1e-9)
    return words[: max(1, len(words) - need + 1)]


_SHAPES: Final = (
    (
        "duration",
        re.compile(
            r"^\d+(?:\.\d+)?(?:ms|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?"
            r"|d|days?|w|wks?|weeks?)$"
        ),
    ),
    ("time", re.compile(r"^\d{1,2}:\d\d(?::\d\d)?(?:am|pm)?$|^\d{1,2}(?:am|pm)$")),
    ("money", re.compile(r"^[$€£¥][\d,.]+[kmb]?$|^[\d,.]+(?:usd|eur|gbp)$")),
    ("percent", re.compile(r"^\d+(?:\.\d+)?%$")),
    ("version", re.compile(r"^v?\d+\.\d+(?:\.\d+)*$")),
    # "300ah", "5mg", "16gb": a unit written on the number (not an ordinal's "28th")
    ("measure", re.compile(r"^\d+(?:[.,]\d+)?(?!st$|nd$|rd$|th$)[a-z]{2,3}$")),
    ("number", re.compile(r"^\d[\d,]*$|^\d+(?:\.\d+)?e-?\d+$")),
    ("name", re.compile(r"[/\\]|^[\w-]+\.[\w.-]+$")),
)


def shape(token: str) -> str:
    """What kind of value a token is, so a fragment's value replaces a value of its kind;
    identifiers, hosts and paths are one kind ("debian-12-slim" → "ubuntu-24.04")."""
    for name, pattern in _SHAPES:
        if pattern.search(token):
            return name
    return "name"


UNIT_SHAPES: Final = {
    "duration": frozenset(
        "ms s sec secs second seconds m min mins minute minutes h hr hrs hour hours d day days"
        " w wk wks week weeks month months year years".split()
    ),
    "percent": frozenset({"percent", "pct"}),
    "money": frozenset("usd eur gbp dollars euros pounds bucks".split()),
    "time": frozenset("am pm a.m p.m".split()),
}
"""Words that, right after a number, are its unit of measure (one kind each)."""
UNIT_WORDS: Final = frozenset().union(*UNIT_SHAPES.values())


def measure_units(words: Sequence[str]) -> set[str]:
    """The words of ``words`` that are a unit of measure right after a number ("30
    minutes"): part of the value, neither a name nor a word of the statement's shape."""
    pairs = zip(words, words[1:], strict=False)  # each word with the next
    return {unit for word, unit in pairs if unit in UNIT_WORDS and is_value(word)}


_DURATION = re.compile(
    r"^(\d+(?:\.\d+)?)\s*(ms|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?|w|wks?"
    r"|weeks?|mo|months?|y|yrs?|years?)$"
)
_DURATION_UNIT = {"ms": "ms", "mo": "mo", "mon": "mo", "m": "m", "mi": "m"}


_RATE = re.compile(r"^([$€£¥]?\d[\d,.]*)/(?:mo|month|day|d|yr|year|wk|week|h|hr|hour|min|s|sec)$")


def canonical(value: str, unit: str = "") -> str:
    """One spelling per value: "30 seconds", "30sec" and "30s" are "30s"; "28th" is "28";
    "1500/mo" is "1500"; "99.5%" is "99.5"."""
    rate = _RATE.match(value)
    if rate:
        value = rate.group(1)
    if re.fullmatch(r"\d+(?:\.\d+)?%", value):
        return value[:-1]
    ordinal = re.fullmatch(r"(\d+)(?:st|nd|rd|th)", value)
    if ordinal:
        return ordinal.group(1)
    joined = value + unit if re.fullmatch(r"\d+(?:\.\d+)?", value) and unit else value
    m = _DURATION.match(joined) or _DURATION.match(value)
    if m is None:
        return value
    word = m.group(2)
    return m.group(1) + _DURATION_UNIT.get(word[:2], _DURATION_UNIT.get(word[:1], word[:1]))
