"""Value slots: natural corrections and restatements read through the values a text holds
and the words around each ("$5,000 for software licenses" → "the budget for software
licenses increased to $6,200"); docs/supersede.md, rule 4."""

from __future__ import annotations

import os
import re
from functools import lru_cache
from typing import Final

from reverie.rules.claims import (
    CORRECTION_PREFIX,
    FILLER,
    PRONOUNS,
    TAKING_BACK,
    parse,
    same_subject,
)
from reverie.rules.similarity import (
    CALENDAR,
    MONTHS,
    STOPWORDS,
    UNIT_SHAPES,
    canonical,
    derived,
    is_value,
    shape,
    stem,
    tokens,
    value_sequence,
)

# Saying that a value changed: a verb of change, "now", or a participle with "to <value>"
# ("has been adjusted to 1,200"). Closed by meaning, not fitted to one phrasing.
_CHANGE = re.compile(
    r"\b(?:now|no longer|anymore|any more|instead|actually|scratch that|correction|updated?"
    r"|changed?|moved|switched|increased|decreased|raised|lowered|reduced|bumped|grown|grew"
    r"|rose|risen|dropped|fell|fallen|extended|shortened|shifted|improved|adjusted|upgraded"
    r"|downgraded|replaced|revised|expanded|doubled|halved|climbed|jumped|slipped|boosted"
    r"|pushed|postponed|deferred|defer|delayed|rescheduled|brought forward|went (?:up|down)"
    r"|reached|hit"
    r"|surpassed|exceeded|climbed to|now at|raising|lowering|increasing|decreasing|reducing"
    r"|bumping|moving|switching|changing|extending|dropping|cutting|going to"
    r"|(?:to|will) (?:reduce|increase|decrease|raise|lower|bump|extend|shift|move|change"
    r"|switch|cut|push)"
    r"|from (?:[^\s,;.]+ ){1,4}to|set (?:[\w'./-]+ ){0,4}to"
    r"|(?:got|brought|cut|knocked) (?:[\w'-]+ ){0,3}?down to"
    r"|(?:put|putting|puts|pushed|pushing|jacked|knocked) (?:[\w'-]+ ){0,4}?(?:up|down) to)\b"
    r"|\b\w+(?:ed|en)\s+(?:\w+\s+){0,4}to\s+\S*\d",
    re.I,
)
_WINDOW = 4


# where a value was read ("(from `cat deploy/values.yaml`)"): provenance, not a value
_SOURCE = re.compile(r"\s*\((?:from|per|via|according to|source:?)\s[^)]*\)", re.I)


@lru_cache(maxsize=65536)
def asserted(text: str, labels: bool = False) -> tuple[tuple[str, frozenset[str], str], ...]:
    """The value slots of what a text asserts: a value it names as former or denied ("from
    s3://…-eu to …", "60 min, not 20 min") is not one of its values."""
    former = set(value_sequence(parse(text).negated or ""))
    slots = value_slots(text, labels=labels)
    return tuple(s for s in slots if s[0] not in former) if former else slots


@lru_cache(maxsize=65536)
def value_slots(
    text: str, window: int = _WINDOW, labels: bool = False
) -> tuple[tuple[str, frozenset[str], str], ...]:
    """Each value token of a text with the content words around it (what the value is a
    value of) and the word right after it (its unit): "1,000 calls/day quota" gives
    ("1,000", {call, day, quota}, "call"). Names (capitalised words) are left out: they
    say whose value it is, not which value — except, with ``labels``, a capitalised word
    right before the value, which names what it is of ("R 4.3.2", "Unity 2022.3"): read
    when looking for a change, not when judging a restatement."""
    body = _SOURCE.sub("", CORRECTION_PREFIX.sub("", text, count=1))
    names = {w.lower() for w in re.findall(r"(?<![.!?:]\s)(?<!^)\b[A-Z][a-z]+\b", body)} - CALENDAR
    words = tokens(body)
    capitals = {w.lower() for w in re.findall(r"\b[A-Z][\w+-]*", body)}
    out = []
    for i, word in enumerate(words):
        if not is_value(word):
            continue
        near: set[str] = set()
        before = [w for w in words[max(0, i - 3) : i] if w not in {"to", "is", "at", "="}]
        label = before[-1] if before and before[-1].isalpha() else ""
        if labels and label and label not in _NOT_NEAR and label in capitals:
            near.add(stem(label))  # a name right before a value is what it is of: "R 4.3.2"
        for other in words[max(0, i - window) : i + window + 1]:
            for part in re.split(r"[/_]", other):  # "default_pool_size", "calls/day"
                if len(part) > 2 and not is_value(part) and part not in _NOT_NEAR | names:
                    near.add(stem(part))
        unit = next(
            (
                stem(w)
                for w in words[i + 1 : i + 2]  # a month is one, though "may" is a modal too
                if w.isalpha() and (w in MONTHS or w not in STOPWORDS) and w not in _NOT_UNITS
            ),
            "",
        )
        if i and words[i - 1] in MONTHS:
            unit = words[i - 1]  # "February 15" is a day of a month, not a count
        elif suffix := _UNIT_SUFFIX.match(word):
            unit = suffix[1]  # "300Ah total": the unit is written on the number
        after = words[i + 1] if i + 1 < len(words) else ""
        out.append((canonical(word, after), frozenset(near - _CHANGE_WORDS), unit))
    return tuple(out)


# a unit written on its number ("300ah", "5mg", "30s"), not an ordinal's ending ("28th")
_UNIT_SUFFIX = re.compile(r"[$€£¥]?\d[\d.,]*(?!st$|nd$|rd$|th$)([a-z]+)$")
# words that follow a value without being its unit ("45 since", "90 after the change")
_NOT_UNITS = frozenset(
    """since after before until because when while per via then now so but and or if as
    than already yet still too also just again lol btw rn today tonight yesterday tomorrow
    currently anymore fyi instead""".split()
)
# The speaker's attitude to what they say ("I'm trying to …", "I'm worried that …"), and
# in a whole statement calendar words (part of a date value): neither says which thing a
# value belongs to. Contraction remnants ("m" of "I'm") are not words either.
_ATTITUDE = frozenset(
    """try trying tried plan planning planned look looking considering consider wondering
    wonder worried worry hoping hope thinking think want wanted wanting need needed feel
    feeling felt curious struggling stuck nervous excited glad happy kinda sorta really
    gonna wanna""".split()
)
_CHANGE_WORDS = frozenset(
    stem(w)
    for w in """now update updated change changed moved switched increased decreased raised
    lowered reduced bumped grown grew rose dropped fell extended shortened shifted improved
    adjusted upgraded downgraded replaced revised expanded doubled halved from to recently
    currently going went gone goes pushed postponed delayed rescheduled climbed jumped
    boosted""".split()  # "going to $38" / "going with $24 for …": no thing in common
)
# prepositions the stop words leave out: "through August" says when, not what
_PREPOSITIONS = frozenset(
    """through thru across along around within without toward towards against among between
    beyond upon onto via per until till since during under above below plus minus""".split()
)
_NOT_NEAR = STOPWORDS | FILLER | _ATTITUDE | _PREPOSITIONS  # "by March 1" beside both is a clue
_NOT_CONTEXT = _NOT_NEAR | CALENDAR


def changes_value(new_text: str, old_text: str) -> bool:
    """A natural correction: the new text says a value changed ("increased to 78%", "moved
    to …/pay-57", "now 12 books"), or names the attribute the old text gave a value to
    ("The staging DB is pg-stage-2 on port 5433" → "The staging DB port is 5434"); its one
    new value is of the same kind as an old one, with the same unit, about the same thing
    (a content word beside both values)."""
    said = _says_change(new_text) or _changed_value(old_text)  # "dropped to 3" … "is 6"
    if not (said or parse(new_text).has_relation):
        return False  # cheap first: most pairs end here
    old_slots = asserted(old_text, labels=True)
    old_values = {v for v, _, _ in old_slots}
    former = set(value_sequence(parse(new_text).negated or ""))  # "from May 21 to …"
    fresh = [
        s
        for s in value_slots(new_text, _WINDOW + 2, labels=True)
        if s[0] not in old_values | former | differences(new_text)
    ]
    if not fresh or not old_slots:
        return False
    if len(fresh) > 1 and any(shape(v) == "name" for v, _, _ in fresh):
        return False  # a new identifier beside a new value names another thing ("web-2 … 8002")
    if not (said or _same_claim(new_text, old_text) or _sets_state(new_text, old_text)):
        if not any(_names_attribute(new_text, old_text, v) for v, _, _ in fresh):
            return False
    words = words_of(new_text)
    if _kinds_apart(new_text, old_text, words & words_of(old_text)):
        return False  # "our holiday gift budget to $450" / "a $500 joint budget for groceries"
    # several new values and no change said: two words beside one of them show the thing
    need = 1 if _says_change(new_text) else 2
    if len(fresh) == 1:  # one new value: the whole statement says what it is a value of,
        fresh = [(fresh[0][0], fresh[0][1] | words, fresh[0][2])]
        need = 2 if len(words) > _LONG else 1  # a long one shares two words with it
    if any(_same_slot(slot, old, words, need) for slot in fresh for old in old_slots):
        return True
    if len(old_slots) != 1 or len(fresh) != 1:
        return False
    # one value on each side: each whole statement says what its value is of ("The board
    # votes on the contract on October 28" / "The board vote has been moved to November 4"),
    # when the two say mostly the same (two words, and more than half the shorter one, agree)
    (value, near, unit), whole = old_slots[0], words_of(old_text)
    if len(words & whole) <= RESTATED_SHARE * min(len(words), len(whole)):
        return False
    if _other_kind(new_text, old_text, words & whole):
        return False  # "The car insurance renewal …" / "The home insurance renewal …"
    return _same_slot(fresh[0], (value, near | whole, unit), words, max(need, 2))


# a count with the thing counted, said alone ("209 candidates now", "46 beds."): the thing
# is its subject (a unit of measure is not: "45 min" says nothing of what)
BARE_COUNT: Final = re.compile(
    r"^\W*(?P<n>\d[\d,]*)\s+(?P<thing>[a-z][a-z'-]*s)(?:\s+(?:now|total|left|today|so far))?"
    r"\W*$",
    re.I,
)


def bare_count(text: str) -> tuple[str, str] | None:
    """(count, thing) of a count said alone, the thing stemmed; None for anything else."""
    found = BARE_COUNT.match(text)
    if found is None or unit_kind(found["thing"].lower()) is not None:
        return None
    return canonical(found["n"], ""), stem(found["thing"].lower())


def recounts(new_text: str, old_text: str) -> bool:
    """A count said alone ("46 beds.") and a later statement of one value that counts the
    same things ("Inspector: max 42 beds."): the count said alone has nothing else to be
    about, so the later count replaces it."""
    old = bare_count(old_text)
    if old is None:
        return False
    slots = value_slots(new_text)
    return len(slots) == 1 and slots[0][2] == old[1] and slots[0][0] != old[0]


_BY_AMOUNT = re.compile(
    r"\bby\s+(?:about\s+|around\s+|roughly\s+|almost\s+|over\s+)?([$€£¥]?\d\S*)", re.I
)


@lru_cache(maxsize=65536)
def differences(text: str) -> frozenset[str]:
    """The values a text gives as differences ("over budget by $50", "cut it by 12 hours"):
    how much something moved, not what it is now, so never a new value of it. A time after
    "by" is a deadline ("by 5pm", "by 17:30"), not a difference."""
    out = set()
    for found in _BY_AMOUNT.finditer(text):
        rest = text[found.end(1) :].split()
        after = rest[0].strip(".,;:!?").lower() if rest else ""
        value = canonical(found.group(1).rstrip(".,;:!?"), after)
        if shape(value) != "time" and unit_kind(after) != "time":
            out.add(value)
    return frozenset(out)


def _sets_state(new_text: str, old_text: str) -> bool:
    """A state said as a claim ("Log bucket is s3://…-us") after a statement that set that
    state ("we set the log bucket to s3://…-eu"): the claim gives the current value."""
    if not parse(new_text).has_relation or parse(old_text).has_relation:
        return False
    return any(is_value(m["value"].strip(".,;")) for m in _SET_TO.finditer(old_text))


# a done setting of a value: "we set the log bucket to s3://…", "bumped the pool to 90"
_SET_TO = re.compile(r"\b(?:\w+ed|set|put|got)\s+(?:[\w'-]+\s+){0,4}?to\s+(?P<value>\S+)", re.I)


@lru_cache(maxsize=65536)
def _says_change(text: str) -> bool:
    if _CORRECTING.match(text):
        return True  # "oops, the budget is $21k/month" takes back what was said
    return _CHANGE.search(_NO_CHANGE.sub(" ", text)) is not None


# a sentence that opens by taking back what was said before
_CORRECTING = re.compile(
    rf"^\W*(?:(?:ok|so|and|well|hmm|ugh)\W+)*(?:{TAKING_BACK}|no wait)\b", re.I
)


# saying that nothing changed ("…, nothing changed there", "hasn't changed")
_NO_CHANGE = re.compile(
    r"\b(?:nothing|no(?:thing)? one|hasn'?t|has not|haven'?t|have not|didn'?t|did not|never"
    r"|not|no)\s+(?:\w+\s+)?(?:changed?|moved|updated|switched)\b|\bunchanged\b",
    re.I,
)


@lru_cache(maxsize=65536)
def _changed_value(text: str) -> bool:
    """A change word right before a value ("dropped to 3 replicas"), not anywhere in a long
    text ("I'm trying to update my timeline …")."""
    return _CHANGED_VALUE.search(text) is not None


@lru_cache(maxsize=65536)
def changes_a_value(text: str) -> bool:
    """The text says a value changed: a word of change right before the value ("increased
    to $550", "from 3 to 5"), or a participle a few words before "to <value>" ("adjusted
    the snack budget to $75", "got extended to July 16")."""
    return _changed_value(text) or _PARTICIPLE_TO.search(text) is not None


_PARTICIPLE_TO = re.compile(
    r"\b\w+(?:ed|en)\s+(?:[\w'-]+\s+){0,4}?to\s+(?:[A-Z][a-z]+\s+)?[$€£¥#]?\d",
)


_CHANGED_VALUE = re.compile(r"(?:" + _CHANGE.pattern + r")\s+(?:\w+\s+){0,2}?[$€£¥#]?\d", re.I)
_LONG = 20  # content words: a statement this long says many things


@lru_cache(maxsize=65536)
def names(text: str, initial: bool = False) -> frozenset[str]:
    """The capitalised words of a text (its first too, with ``initial``; never a month, a
    day or a function word): whose it is."""
    body = CORRECTION_PREFIX.sub("", text, count=1).strip()
    pattern = r"\b[A-Z][a-z]+\b" if initial else r"(?<!^)\b[A-Z][a-z]+\b"
    found = {w.lower() for w in re.findall(pattern, body)}
    return frozenset(found - CALENDAR - STOPWORDS - PRONOUNS)


@lru_cache(maxsize=65536)
def words_of(text: str) -> frozenset[str]:
    body = CORRECTION_PREFIX.sub("", text, count=1)
    named = names(text)
    return (
        frozenset(
            stem(w)
            for w in tokens(body)
            if w.isalpha() and len(w) > 2 and w not in _NOT_CONTEXT and w not in named
        )
        - _CHANGE_WORDS
    )


def _other_kind(a: str, b: str, shared: frozenset[str]) -> bool:
    """Whether a shared word is modified differently on each side ("car insurance" /
    "home insurance"): a word right before it in each, a different content word that the
    other text does not hold, names two kinds of the thing."""
    before_a, before_b = _modifiers(a, shared), _modifiers(b, shared)
    words_a, words_b = words_of(a), words_of(b)
    return any(
        x != y and x not in words_b and y not in words_a
        for w in shared
        for x in before_a.get(w, ())
        for y in before_b.get(w, ())
    )


def _kinds_apart(a: str, b: str, shared: frozenset[str]) -> bool:
    """Whether every word the two texts share is modified differently on each side (the
    one thing both speak of is two kinds of it: "holiday gift budget" / "joint budget for
    groceries"); one shared word said alike on both sides ("test coverage") joins them."""
    return bool(shared) and all(_other_kind(a, b, frozenset({w})) for w in shared)


def _modifiers(text: str, shared: frozenset[str]) -> dict[str, set[str]]:
    words = [stem(w) for w in tokens(CORRECTION_PREFIX.sub("", text, count=1))]
    out: dict[str, set[str]] = {}
    for prev, word in zip(words, words[1:], strict=False):
        if word in shared and prev.isalpha() and prev not in _NOT_CONTEXT:
            out.setdefault(word, set()).add(prev)
    return out


Slot = tuple[str, frozenset[str], str]
# What kind of time a date is, not what it is the date of: two dates that share only these
# are dates of two things.
_DATE_ROLES = frozenset(
    stem(w)
    for w in """start starting starts started begin begins beginning began end ends ending
    ended effective since until till due""".split()
)


def _same_slot(new: Slot, old: Slot, new_words: frozenset[str], need: int = 1) -> bool:
    """Two values of one kind about the same thing: a shared content word beside both, and
    no unit that the other side does not mention ("2 concerts" is not "3 kids")."""
    (value, near, unit), (old_value, around, old_unit) = new, old
    if slot_shape(value, unit) != slot_shape(old_value, old_unit):
        return False
    shared = near & around
    if shape(value) != "money":  # "$7,000 budget": what money is for is no unit, it is the thing
        shared -= {unit, old_unit}  # a unit alone is not the thing
    if unit_kind(unit) == "date":
        shared -= _DATE_ROLES  # "starting Dec 1" / "starting January 6": what starts?
    if len(shared) < need:
        return False
    if unit_kind(unit) is not None and unit_kind(unit) == unit_kind(old_unit):
        return True  # "10 minutes" and "5 min": one unit, spelled two ways
    return unit == old_unit or not old_unit or not unit or old_unit in new_words or unit in around


def _same_claim(new_text: str, old_text: str) -> bool:
    new, old = parse(new_text), parse(old_text)
    return new.has_relation and old.has_relation and same_subject(new, old)


_UNIT_SHAPES = {
    **UNIT_SHAPES,
    "date": CALENDAR,  # "15 December" and "30 September": days of a month
}


@lru_cache(maxsize=1024)
def unit_kind(unit: str) -> str | None:
    """The kind of measure a unit word names ("min", "minut" → duration), if any."""
    for name, units in _UNIT_SHAPES.items():
        if unit and (unit in units or unit in {stem(u) for u in units}):
            return name
    return None


def slot_shape(value: str, unit: str) -> str:
    """A value's kind, read with the word after it: "90 sec" is a duration like "30s"."""
    kind = shape(value)
    if kind in {"percent", "version"} and value.count(".") <= 1:
        kind = "number"  # "99.5%" and "99.7", "3.11" and "3.12": decimals alike
    if kind == "number":
        return unit_kind(unit) or kind
    if kind == "measure":
        return f"{kind} {unit}"  # "300ah" and "200ah" are alike, "5mg" and "10ml" are not
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
RESTATED_NEAR = 2


def restates_values(new_text: str, old_text: str) -> bool:
    """The same values about the same thing in other words ("as i said the backup retention
    = 45d" / "improved the backup retention to 45d finally"): every value the same, in the
    same order — the old text's first values, so "45d" restates "now 45 days (was 14 days)"
    and "14 days" does not — each beside a content word it had before."""
    new_slots, old_slots = value_slots(new_text), asserted(old_text)
    old_slots = old_slots[: len(new_slots)]  # "45d" restates "now 45 days (was 14 days)"
    if not new_slots or [v for v, _, _ in new_slots] != [v for v, _, _ in old_slots]:
        return False
    if parse(new_text).negated:
        return False  # "X, not Y" says more than a restatement (an old "X, not Y" is X)
    a, b = names(new_text, initial=True), names(old_text, initial=True)
    if a and b and not (a <= b or b <= a):
        return False  # the same number about Caroline and about Melanie
    if len(new_slots) == 1:  # one value: the whole statement says what it is a value of,
        x, y = words_of(new_text), words_of(old_text)  # and most of it is said by both,
        (_, near, unit), (_, around, old_unit) = new_slots[0], old_slots[0]
        beside = (near & around) - {unit, old_unit}  # or two words beside the value are
        return bool(x & y) and (
            len(x & y) >= RESTATED_SHARE * min(len(x), len(y)) or len(beside) >= RESTATED_NEAR
        )
    return all(a & b for (_, a, _), (_, b, _) in zip(new_slots, old_slots, strict=True))


PARTIAL_VALUES = 2


def replaces_value(new_text: str, old_text: str) -> bool:
    """A natural correction of the whole old fact: it changes one of its values and the old
    fact holds no more than one other value the new one does not repeat. Changing one of
    a summary's many values ("Pike deposition May 28, Hollis $525/h, 127 exhibits …" →
    "the deposition moved to May 30") must not hide the rest: both stay live, and search
    puts the newer first (``changes_value`` alone, in ``stores.search``)."""
    if restates_all(new_text, old_text):
        return True
    return changes_value(new_text, old_text) and not holds_others(new_text, old_text)


def holds_others(new_text: str, old_text: str) -> bool:
    """The old text holds more values that the new one does not repeat than a correction
    of one of them may take with it (a summary: "6 bridesmaids bouquets, 8 buttonholes,
    2 corsages")."""
    new_values = {v for v, _, _ in value_slots(new_text)}
    others = [v for v, _, _ in value_slots(old_text) if v not in new_values]
    return len(others) > PARTIAL_VALUES


COMPETING_SHARE = 0.25


def competes(new_text: str, old_text: str) -> bool:
    """Two statements giving one thing different values, however they are worded ("my
    Zotero library has 45 sources" / "I've added 52 sources to my Zotero library"): a value
    of one kind, unit and context in both, different, in statements that say mostly the
    same. Weaker than a correction — no change need be said — so it only orders search
    hits (the newer first) and never supersedes anything."""
    new_slots, old_slots = value_slots(new_text), value_slots(old_text)
    new_values, old_values = {v for v, _, _ in new_slots}, {v for v, _, _ in old_slots}
    fresh = [s for s in new_slots if s[0] not in old_values]
    former = [s for s in old_slots if s[0] not in new_values]
    if not (fresh and former):
        return False
    if len(fresh) > 1 and any(shape(v) == "name" for v, _, _ in fresh):
        return False  # a new identifier beside a new value names another thing
    a, b = names(new_text, initial=True), names(old_text, initial=True)
    if a and b and not (a & b):
        return False  # the same kind of value about Caroline and about Melanie
    x, y = words_of(new_text), words_of(old_text)
    if len(x & y) < max(2, COMPETING_SHARE * min(len(x), len(y))):
        return False
    if len(fresh) == 1:  # one new value: the whole statement says what it is a value of
        fresh = [(fresh[0][0], fresh[0][1] | x, fresh[0][2])]
    return any(_same_slot(s, o, x) for s in fresh for o in former)


def competes_asked(new_text: str, old_text: str, asked: frozenset[str]) -> bool:
    """Two values of one kind for the thing a question asks about ("switching to the 5%
    brine" / "pork chops in a 6% brine", asked "what strength brine …?"; "followers are at
    9,100 now" / "8,400 followers"), the newer said as a change or as what holds now: a word
    of the question beside both values — or the thing both count, when it is no unit of
    measure. The question ties the two statements to one thing where their other words may
    not, so one shared word is enough; like
    :func:`competes`, this only orders search hits (the newer first)."""
    new_slots, old_slots = asserted(new_text), value_slots(old_text)  # not "instead of 12"
    new_values, old_values = {v for v, _, _ in new_slots}, {v for v, _, _ in old_slots}
    fresh = [s for s in new_slots if s[0] not in old_values]
    former = [s for s in old_slots if s[0] not in new_values]
    if not (asked and fresh and former and (_says_change(new_text) or _NOW.search(new_text))):
        return False  # "I did 500 words in 40 minutes" is no newer "6,200 words in total"
    if len(fresh) > 1 and any(shape(v) == "name" for v, _, _ in fresh):
        return False  # a new identifier beside a new value names another thing
    a, b = names(new_text, initial=True), names(old_text, initial=True)
    if a and b and not (a & b):
        return False  # the same kind of value about Caroline and about Melanie
    whole_new = words_of(new_text) if len(new_slots) == 1 else frozenset()
    whole_old = words_of(old_text) if len(old_slots) == 1 else frozenset()
    both = _identified(new_values & old_values)  # "api.lanterndrift.gg" in each: its API
    return any(
        slot_shape(s[0], s[2]) == slot_shape(o[0], o[2])
        and _asks_of_both(asked, _about(s) | whole_new | both, _about(o) | whole_old | both)
        for s in fresh
        for o in former
    )


def _identified(shared: set[str]) -> frozenset[str]:
    """The words of the identifiers two texts share (a host, a path): what both are of."""
    parts = (p for v in shared if shape(v) == "name" for p in re.split(r"[./:_@-]+", v))
    return frozenset(stem(p) for p in parts if p.isalpha() and len(p) > 2)


_STEM_SHARED = 6  # letters two words begin with: "inspector" / "inspection"


def _asks_of_both(asked: frozenset[str], new: frozenset[str], old: frozenset[str]) -> bool:
    """A word of the question, or one derived from it ("inspector" / "inspection"), on
    each side."""
    return any(_holds(new, word) and _holds(old, word) for word in asked)


def _holds(side: frozenset[str], word: str) -> bool:
    return any(
        derived(w, word) or len(os.path.commonprefix([w, word])) >= _STEM_SHARED for w in side
    )


_NOW: Final = re.compile(r"\b(?:now|currently|these days|at the moment|as of)\b", re.I)


def _about(slot: Slot) -> frozenset[str]:
    """What a value is a value of: the words beside it, and what it counts ("48 covers")
    unless that is a unit of measure ("45 min" says nothing of what). (A text holding one
    value says as a whole what it is of: the caller adds its words.)"""
    _, near, unit = slot
    return near | {unit} if unit and unit_kind(unit) is None else near


COVERED_SHARE = 0.75
MANY_VALUES = 5
MIN_CHANGED = 2


def restates_all(new_text: str, old_text: str) -> bool:
    """A summary of many values (five or more) said again with some of them changed ("EKS
    3 nodes, RDS postgres 14, backups 7 days …" → "EKS 5 nodes. RDS postgres 16. Backups 30
    days …"): at least three quarters of the old values are repeated or given a newer value of the
    same kind beside a word they shared, so replacing it hides nothing; at least two
    changed."""
    new_slots, old_slots = value_slots(new_text), value_slots(old_text)
    if len(old_slots) < MANY_VALUES or len(new_slots) < MANY_VALUES:
        return False
    a, b = names(new_text, initial=True), names(old_text, initial=True)
    if a and b and not (a & b):
        return False
    old_values, new_values = {v for v, _, _ in old_slots}, {v for v, _, _ in new_slots}
    unused = [s for s in new_slots if s[0] not in old_values]  # each covers one old value
    repeated = changed = 0
    for value, around, _ in old_slots:
        if value in new_values:
            repeated += 1
            continue
        match = next((s for s in unused if shape(s[0]) == shape(value) and s[1] & around), None)
        if match is not None:
            if _sibling(match[0], value):
                return False  # "item-0001" after "item-0000" names the next row, not a change
            unused.remove(match)
            changed += 1
    if not repeated and words_of(new_text) == words_of(old_text):
        return False  # one template, every value new: the next row ("worker 1 … item 3")
    # one value changed is a partial update (``replaces_value``'s guard), not a new saying
    return changed >= MIN_CHANGED and repeated + changed >= COVERED_SHARE * len(old_slots)


def _sibling(new: str, old: str) -> bool:
    """Two identifiers that differ only in their digits: members of one series."""
    return shape(new) == "name" and re.sub(r"\d+", "#", new) == re.sub(r"\d+", "#", old)


ASKED_SHARED = 2


def answer_alike(new_text: str, old_text: str, asked: frozenset[str]) -> bool:
    """Two texts that share two of a question's words: answers to it about one thing."""
    return len(words_of(new_text) & words_of(old_text) & asked) >= ASKED_SHARED


def changes_asked(new_text: str, old_text: str, asked: frozenset[str]) -> bool:
    """Two answers to one question, the newer saying its value changed ("the number of
    mentees … has increased to 7" after "mentoring those 5 women …", asked "how many women
    have I highlighted as mentees in my media portfolio?"): the question names the thing
    both are about — two of its words in each, the same two — where the words beside their
    values may not; the new value is of a kind the old text holds. Orders search hits only;
    never supersedes."""
    if not changes_a_value(new_text) or not answer_alike(new_text, old_text, asked):
        return False
    old_slots = asserted(old_text)
    old_kinds = {slot_shape(v, u) for v, _, u in old_slots}
    old_values = {v for v, _, _ in old_slots}
    return any(
        slot_shape(v, u) in old_kinds and v not in old_values for v, _, u in asserted(new_text)
    )
