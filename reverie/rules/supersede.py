"""The supersede rule: when does a new topic fact replace a live one?

A new fact SUPERSEDES a live fact of the same topic only when both are about the same
subject and say something different about it. "Same subject" is decided by rules, in order:

1. **Claim match.** When both split into *subject* and *value* at a relation word ("is",
   "are", "uses", "runs on", "moved to", "=", ":" …), their subjects' content words —
   identifiers included — must be equal and their values must differ.
   "The deploy timeout is 30s" → "The deploy timeout is 45s" supersedes;
   "The staging host is a" → "The production host is b" does not (different subjects), nor
   does "Server 1 is down" → "Server 2 is down" (an identifier in the subject names another
   thing). One exception: a definite description as the value names a single role, so
   "Commit abc is the last good build" → "Commit def is the last good build" supersedes.
2. **Skeleton match.** When either has no relation word: with every value token (numbers,
   versions, hosts, paths, ids) blanked out, the two texts have the same content words,
   and exactly one value differs: "Postgres 15 on port 5432" → "Postgres 16 on port 5432".
   Reports of events (a past-tense verb: "wrote", "fixed") never supersede each other —
   events accumulate; only states are corrected.
3. **Explicit correction.** "Actually it is Y, not X" / "Y instead of X": the live fact
   whose text contains X is superseded, whatever its subject.

Anything else — merely related facts, a pronoun subject with nothing to anchor it, an
unrelated statement — is ADDed. Near-duplicates are caught before this rule (NOOP).
Among several matching live facts the most recent one is superseded.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from reverie.rules.similarity import (
    NEGATIONS,
    STOPWORDS,
    canonical,
    is_value,
    shape,
    stem,
    tokens,
    value_sequence,
)

_CORRECTION_PREFIX = re.compile(
    r"^\s*(?:(?:actually|correction|update|updated|wait|no|nope|oops|sorry|fyi|btw|by the way"
    r"|note|reminder|as a reminder|just a reminder|just to confirm|to confirm|heads up"
    r"|scratch that|i mean|ok|okay|so)\b[\s,:;!.\u2014\u2013-]*)+",
    re.I,
)
_LABEL_COLON = re.compile(r"(?<=\w):(?=\s)")
# "Y, not X" / "Y and not X": a comma or "and" marks X as the value being corrected;
# a plain "not" inside a sentence ("encourages him not to give up") corrects nothing
_NOT_X = re.compile(r"(?:[,;]\s*(?:and\s+)?|\s+and\s+)not\s+(?P<old>[^,;.]+?)\s*[.!]?\s*$", re.I)
_INSTEAD_OF = re.compile(r"\binstead\s+of\s+(?P<old>[^,;.]+)", re.I)
# "moved from okta to entra id": the old value is named, the relation is "moved to"
_FROM_TO = re.compile(
    r"\b(?P<verb>moved|changed|switched|migrated|went|upgraded|downgraded|bumped|increased"
    r"|decreased|dropped|raised|lowered|extended|shifted|reduced|grew|rose|fell)\s+"
    r"(?:\w+\s+)?from\s+(?P<old>[^,;.]+?)\s+to\s+",
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
_RELATION = re.compile(
    r"(?:^|\s)(" + "|".join(re.escape(r) for r in _RELATIONS) + r")(?:\s|$)", re.I
)
_PREPOSITIONS = frozenset({"in", "on", "at", "by", "to", "during", "for", "from", "with"})
_PRONOUNS = frozenset({"it", "this", "that", "they", "he", "she", "we", "i", "you", "there"})
_IRREGULAR_PAST = frozenset(
    """wrote ran sent made did went took got built found gave told saw met left brought
    bought paid caught fell felt kept lost put read said sold spent stood thought won""".split()
)
_FILLER = frozenset({"now", "currently", "actually", "no", "longer", "still", "really", "new"})


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
        stem(w) for w in words if w in NEGATIONS or (w not in STOPWORDS and w not in _FILLER)
    )


_LABEL = re.compile(r"^\s*[\w-]+(?:\s[\w-]+)?\s*:\s+(?P<rest>.+)$", re.S)


def _unlabelled(body: str) -> str:
    """ "ci note: the runner image -> debian-12" is the claim after its label."""
    m = _LABEL.match(body)
    if m and _RELATION.search(_LABEL_COLON.sub(" :", m["rest"])):
        return m["rest"]
    return body


@lru_cache(maxsize=65536)
def parse(text: str) -> Claim:
    """Split a fact into subject, value, skeleton and any explicitly negated old value."""
    body = _unlabelled(_CORRECTION_PREFIX.sub("", text, count=1))
    negated = None
    for pattern in (_NOT_X, _INSTEAD_OF):
        found = pattern.search(body)
        if found:
            negated = found.group("old").strip()
            body = body[: found.start()] + body[found.end() :]
            break
    moved = _FROM_TO.search(body)
    if moved and negated is None:
        negated = moved.group("old").strip()
        body = body[: moved.start()] + "changed to " + body[moved.end() :]
    relation = _RELATION.search(_LABEL_COLON.sub(" :", body))
    if relation:
        body = _LABEL_COLON.sub(" :", body)
        subject_words = tokens(body[: relation.start(1)])
        value_words = tokens(body[relation.end(1) :])
    else:
        subject_words, value_words = (), tokens(body)
    all_words = tokens(body)
    skeleton = frozenset(
        stem(w) for w in all_words if not is_value(w) and w not in STOPWORDS and w not in _FILLER
    )
    if _is_event(value_words):
        subject_words = ()  # "X was added in sprint 12" reports an event, not X's state
    subject = _content(subject_words)
    pronoun = bool(subject_words) and all(
        w in _PRONOUNS or w in STOPWORDS or w in _FILLER for w in subject_words
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


def _attribute(text: str, claim: Claim) -> bool:
    """Whether a claim gives its subject a value that a correction replaces — a number, an
    id, a short phrase — rather than describing it ("Caroline is researching adoption
    agencies…", "Joanna is a writer"): descriptions accumulate, like events. A one-word
    subject with the copula ("Joanna is …") is a person or thing with many properties; it
    takes a value token ("Python is 3.11") to make it one attribute."""
    one_word = len(claim.subject) == 1 and not (claim.values - claim.value_tokens)
    if one_word and claim.relation == "be" and not claim.value_tokens and _named(text):
        return False
    body = _RELATION.split(_LABEL_COLON.sub(" :", _CORRECTION_PREFIX.sub("", text, count=1)), 1)
    after = [w for w in tokens(body[-1]) if w not in STOPWORDS and w not in _FILLER]
    if after and after[0].endswith("ing") and len(after[0]) > 4 and not is_value(after[0]):
        return False  # "is going", "has been playing": an activity, not a value
    return bool(claim.values) or len(claim.value) <= 4


def _named(text: str) -> bool:
    """Whether a claim's subject is a name (capitalised), not a role ("the owner")."""
    body = _CORRECTION_PREFIX.sub("", text, count=1).strip()
    first = re.match(r"(?:(?:the|a|an|our|my|their)\s+)?(\w+)", body, re.I)
    return first is not None and first.group(1)[:1].isupper()


def _same_subject(new: Claim, old: Claim) -> bool:
    if new.pronoun_subject or not new.subject or not old.subject:
        return False
    return new.subject == old.subject


def _same_role(new: Claim, old: Claim) -> bool:
    """ "Commit abc is the last good build" → "Commit def is the last good build": a definite
    description names one role, so a new holder replaces the old one."""
    if not (new.definite and old.definite) or new.value != old.value:
        return False
    return {w for w in new.subject if not is_value(w)} == {
        w for w in old.subject if not is_value(w)
    } and new.subject != old.subject


PARTIAL_VALUES = 2


def replaces_value(new_text: str, old_text: str) -> bool:
    """A natural correction of the whole old fact: it changes one of its values and the old
    fact holds no more than one other value the new one does not repeat. Changing one of
    a summary's many values ("Pike deposition May 28, Hollis $525/h, 127 exhibits …" →
    "the deposition moved to May 30") must not hide the rest: both stay live, and search
    puts the newer first (``changes_value`` alone, in ``stores.search``)."""
    if not changes_value(new_text, old_text):
        return False
    new_values = {v for v, _, _ in value_slots(new_text)}
    others = [v for v, _, _ in value_slots(old_text) if v not in new_values]
    return len(others) < PARTIAL_VALUES + 1


def supersedes(new_text: str, old_text: str) -> bool:
    """True when ``new_text`` is a correction of ``old_text`` under the rule above."""
    new, old = parse(new_text), parse(old_text)
    if new.negated:
        negated = set(tokens(new.negated)) - STOPWORDS
        if negated and negated <= set(tokens(old_text)):
            return True
    if new.has_relation and old.has_relation:
        if _same_subject(new, old):
            return (
                bool(new.value)
                and new.value != old.value
                and new.relation == old.relation
                and _attribute(new_text, new)
                and _attribute(old_text, old)
            ) or replaces_value(new_text, old_text)
        return _same_role(new, old) or replaces_value(new_text, old_text)
    if replaces_value(new_text, old_text):
        return True
    if _reports_event(new_text) or _reports_event(old_text):
        return False  # events accumulate; only states supersede
    new_values, old_values = _value_positions(new_text), _value_positions(old_text)
    if len(new_values) != len(old_values) or not new_values:
        return False
    differing = sum(a != b for a, b in zip(new_values, old_values, strict=True))
    return differing == 1 and bool(new.skeleton) and new.skeleton == old.skeleton


# Saying that a value changed: a verb of change, "now", or a participle with "to <value>"
# ("has been adjusted to 1,200"). Closed by meaning, not fitted to one phrasing.
_CHANGE = re.compile(
    r"\b(?:now|no longer|anymore|any more|instead|actually|scratch that|correction|updated?"
    r"|changed?|moved|switched|increased|decreased|raised|lowered|reduced|bumped|grown|grew"
    r"|rose|risen|dropped|fell|fallen|extended|shortened|shifted|improved|adjusted|upgraded"
    r"|downgraded|replaced|revised|expanded|doubled|halved|climbed|jumped|slipped|boosted"
    r"|pushed|postponed|delayed|rescheduled|brought forward|went (?:up|down)|reached|hit"
    r"|surpassed|exceeded|climbed to|now at|raising|lowering|increasing|decreasing|reducing"
    r"|bumping|moving|switching|changing|extending|dropping|cutting|going to"
    r"|(?:to|will) (?:reduce|increase|decrease|raise|lower|bump|extend|shift|move|change"
    r"|switch|cut|push)"
    r"|from [^,;.]{1,40} to|set (?:[\w'./-]+ ){0,4}to)\b"
    r"|\b\w+(?:ed|en)\s+(?:\w+\s+){0,3}to\s+\S*\d",
    re.I,
)
_WINDOW = 4


@lru_cache(maxsize=65536)
def value_slots(text: str, window: int = _WINDOW) -> tuple[tuple[str, frozenset[str], str], ...]:
    """Each value token of a text with the content words around it (what the value is a
    value of) and the word right after it (its unit): "1,000 calls/day quota" gives
    ("1,000", {call, day, quota}, "call"). Names (capitalised words) are left out: they
    say whose value it is, not which value."""
    body = _CORRECTION_PREFIX.sub("", text, count=1)
    names = {w.lower() for w in re.findall(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]+\b", body)} - _CALENDAR
    words = tokens(body)
    out = []
    for i, word in enumerate(words):
        if not is_value(word):
            continue
        near: set[str] = set()
        for other in words[max(0, i - window) : i + window + 1]:
            for part in re.split(r"[/_]", other):  # "default_pool_size", "calls/day"
                if part and not is_value(part) and part not in STOPWORDS | _FILLER | names:
                    near.add(stem(part))
        unit = next(
            (
                stem(w)
                for w in words[i + 1 : i + 2]
                if w.isalpha() and w not in STOPWORDS and w not in _NOT_UNITS
            ),
            "",
        )
        after = words[i + 1] if i + 1 < len(words) else ""
        out.append((canonical(word, after), frozenset(near - _CHANGE_WORDS), unit))
    return tuple(out)


# words that follow a value without being its unit ("45 since", "90 after the change")
_NOT_UNITS = frozenset(
    """since after before until because when while per via then now so but and or if as
    than already yet still too also just again lol btw rn today tonight yesterday tomorrow
    currently anymore fyi""".split()
)
_CALENDAR = frozenset(
    """january february march april may june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday
    saturday sunday""".split()
)
_CHANGE_WORDS = frozenset(
    stem(w)
    for w in """now update updated change changed moved switched increased decreased raised
    lowered reduced bumped grown grew rose dropped fell extended shortened shifted improved
    adjusted upgraded downgraded replaced revised expanded doubled halved from to recently
    currently""".split()
)


def changes_value(new_text: str, old_text: str) -> bool:
    """A natural correction: the new text says a value changed ("increased to 78%", "moved
    to …/pay-57", "now 12 books"), or names the attribute the old text gave a value to
    ("The staging DB is pg-stage-2 on port 5433" → "The staging DB port is 5434"); its one
    new value is of the same kind as an old one, with the same unit, about the same thing
    (a content word beside both values)."""
    said = _says_change(new_text) or _changed_value(old_text)  # "dropped to 3" … "is 6"
    if not (said or parse(new_text).has_relation):
        return False  # cheap first: most pairs end here
    old_slots = value_slots(old_text)
    old_values = {v for v, _, _ in old_slots}
    former = set(value_sequence(parse(new_text).negated or ""))  # "from May 21 to …"
    fresh = [s for s in value_slots(new_text, _WINDOW + 2) if s[0] not in old_values | former]
    if not fresh or not old_slots:
        return False
    if len(fresh) > 1 and any(shape(v) == "name" for v, _, _ in fresh):
        return False  # a new identifier beside a new value names another thing ("web-2 … 8002")
    if not (said or _same_claim(new_text, old_text)):
        if not any(_names_attribute(new_text, old_text, v) for v, _, _ in fresh):
            return False
    words = _words(new_text)
    need = 1
    if len(fresh) == 1:  # one new value: the whole statement says what it is a value of,
        fresh = [(fresh[0][0], fresh[0][1] | words, fresh[0][2])]
        need = 2 if len(words) > _LONG else 1  # a long one shares two words with it
    return any(_same_slot(slot, old, words, need) for slot in fresh for old in old_slots)


@lru_cache(maxsize=65536)
def _says_change(text: str) -> bool:
    return _CHANGE.search(text) is not None


@lru_cache(maxsize=65536)
def _changed_value(text: str) -> bool:
    """A change word right before a value ("dropped to 3 replicas"), not anywhere in a long
    text ("I'm trying to update my timeline …")."""
    return _CHANGED_VALUE.search(text) is not None


_CHANGED_VALUE = re.compile(r"(?:" + _CHANGE.pattern + r")\s+(?:\w+\s+){0,2}?[$€£¥#]?\d", re.I)
_LONG = 20  # content words: a statement this long says many things


@lru_cache(maxsize=65536)
def _names(text: str, initial: bool = False) -> frozenset[str]:
    """The capitalised words of a text (its first too, with ``initial``; never a month, a
    day or a function word): whose it is."""
    body = _CORRECTION_PREFIX.sub("", text, count=1).strip()
    pattern = r"\b[A-Z][a-z]+\b" if initial else r"(?<!^)\b[A-Z][a-z]+\b"
    found = {w.lower() for w in re.findall(pattern, body)}
    return frozenset(found - _CALENDAR - STOPWORDS - _PRONOUNS)


@lru_cache(maxsize=65536)
def _words(text: str) -> frozenset[str]:
    body = _CORRECTION_PREFIX.sub("", text, count=1)
    names = _names(text)
    return (
        frozenset(
            stem(w)
            for w in tokens(body)
            if w.isalpha() and w not in STOPWORDS and w not in _FILLER and w not in names
        )
        - _CHANGE_WORDS
    )


Slot = tuple[str, frozenset[str], str]


def _same_slot(new: Slot, old: Slot, new_words: frozenset[str], need: int = 1) -> bool:
    """Two values of one kind about the same thing: a shared content word beside both, and
    no unit that the other side does not mention ("2 concerts" is not "3 kids")."""
    (value, near, unit), (old_value, around, old_unit) = new, old
    if slot_shape(value, unit) != slot_shape(old_value, old_unit):
        return False
    if len((near & around) - {unit, old_unit}) < need:  # a unit alone is not the thing
        return False
    return not old_unit or not unit or old_unit in new_words or unit in around


def _same_claim(new_text: str, old_text: str) -> bool:
    new, old = parse(new_text), parse(old_text)
    return new.has_relation and old.has_relation and _same_subject(new, old)


_UNIT_SHAPES = {
    "duration": frozenset(
        "ms s sec secs second seconds m min mins minute minutes h hr hrs hour hours d day days"
        " w wk wks week weeks month months year years".split()
    ),
    "percent": frozenset({"percent", "pct"}),
    "money": frozenset("usd eur gbp dollars euros pounds bucks".split()),
    "time": frozenset("am pm a.m p.m".split()),
}


def slot_shape(value: str, unit: str) -> str:
    """A value's kind, read with the word after it: "90 sec" is a duration like "30s"."""
    kind = shape(value)
    if kind in {"percent", "version"} and value.count(".") <= 1:
        kind = "number"  # "99.5%" and "99.7", "3.11" and "3.12": decimals alike
    if kind == "number":
        for name, units in _UNIT_SHAPES.items():
            if unit in units or unit in {stem(u) for u in units}:
                return name
    return kind


def _names_attribute(new_text: str, old_text: str, value: str) -> bool:
    """ "<subject> <attribute> is <value>" where the old text said "<attribute> <value>"
    about the same subject: the staging DB's port."""
    new, old = parse(new_text), parse(old_text)
    if not (new.has_relation and old.subject and old.subject < new.subject):
        return False
    words = tokens(old_text)
    labels = {stem(words[i - 1]) for i, w in enumerate(words) if i and is_value(w)}
    return bool((new.subject - old.subject) & labels) and value in new.value_tokens


RESTATED_SHARE = 0.5


def restates_values(new_text: str, old_text: str) -> bool:
    """The same values about the same thing in other words ("as i said the backup retention
    = 45d" / "improved the backup retention to 45d finally"): every value the same, in the
    same order — the old text's first values, so "45d" restates "now 45 days (was 14 days)"
    and "14 days" does not — each beside a content word it had before."""
    new_slots, old_slots = value_slots(new_text), value_slots(old_text)
    old_slots = old_slots[: len(new_slots)]  # "45d" restates "now 45 days (was 14 days)"
    if not new_slots or [v for v, _, _ in new_slots] != [v for v, _, _ in old_slots]:
        return False
    if parse(new_text).negated or parse(old_text).negated:
        return False
    a, b = _names(new_text, initial=True), _names(old_text, initial=True)
    if a and b and not (a <= b or b <= a):
        return False  # the same number about Caroline and about Melanie
    if len(new_slots) == 1:  # one value: the whole statement says what it is a value of,
        x, y = _words(new_text), _words(old_text)  # and most of it is said by both
        return bool(x & y) and len(x & y) >= RESTATED_SHARE * min(len(x), len(y))
    return all(a & b for (_, a, _), (_, b, _) in zip(new_slots, old_slots, strict=True))


def restates(new_text: str, old_text: str) -> bool:
    """The same claim in other words — the same subject given the same value ("The deploy
    timeout is set to 30s" / "Deploy timeout: 30s"): a near-duplicate the Jaccard tier
    can miss when filler words dilute a short fact."""
    new, old = parse(new_text), parse(old_text)
    if new.negated or not (new.has_relation and old.has_relation):
        return False
    if _value_positions(new_text) != _value_positions(old_text):
        return False  # "worker 3 item 0" and "worker 0 item 3" name different things
    return _same_subject(new, old) and bool(new.value) and new.value == old.value


def _reports_event(text: str) -> bool:
    """A past-tense verb marks a report of something that happened ("wrote", "fixed")."""
    return any(
        w in _IRREGULAR_PAST or (w.endswith("ed") and len(w) > 4 and not is_value(w))
        for w in tokens(text)
    )


def _value_positions(text: str) -> list[str]:
    return [w for w in tokens(text) if is_value(w)]


@dataclass(frozen=True, slots=True)
class Keys:
    """Index keys that find every fact the rule could supersede without scanning a topic:
    two facts can only match under rule 1, the role exception or rule 2 when these agree."""

    subject: str | None
    role: str | None
    skeleton: str | None
    negated: str | None


def keys(text: str) -> Keys:
    claim = parse(text)
    subject = role = skeleton = None
    if claim.has_relation and not claim.pronoun_subject:
        subject = " ".join(sorted(claim.subject))
        if claim.definite:
            plain = sorted(w for w in claim.subject if not is_value(w))
            role = " ".join(plain) + " | " + " ".join(sorted(claim.value))
    if claim.skeleton and _value_positions(text) and not _reports_event(text):
        skeleton = " ".join(sorted(claim.skeleton))
    return Keys(subject, role, skeleton, claim.negated)


def subject_phrase(text: str) -> str | None:
    """The words before a claim's relation ("The deploy timeout" of "The deploy timeout is
    30s"), as written; None when the text is no claim or its subject is a pronoun."""
    claim = parse(text)
    if not claim.has_relation or claim.pronoun_subject:
        return None
    body = _LABEL_COLON.sub(" :", _CORRECTION_PREFIX.sub("", text, count=1))
    relation = _RELATION.search(body)
    return body[: relation.start(1)].strip(" ,") if relation else None


def closeness(new_text: str, old_text: str) -> int:
    """How much two facts are about one thing, to choose among several a statement could
    correct: the same subject counts most, then the content words they share."""
    new, old = parse(new_text), parse(old_text)
    same = new.has_relation and old.has_relation and _same_subject(new, old)
    return 100 * same + len(_words(new_text) & _words(old_text))


def pick_superseded(new_text: str, live: Sequence[tuple[str, str]]) -> str | None:
    """Of ``(fact_id, text)`` pairs, oldest first, the id the new fact supersedes, if any."""
    for fact_id, text in reversed(live):
        if supersedes(new_text, text):
            return fact_id
    return None
