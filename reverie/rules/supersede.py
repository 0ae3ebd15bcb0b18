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
from typing import Final

from reverie.rules.claims import (
    CORRECTION_PREFIX,
    FILLER,
    IRREGULAR_PAST,
    LABEL_COLON,
    RELATION,
    Claim,
    parse,
    same_subject,
)
from reverie.rules.similarity import (
    STOPWORDS,
    is_value,
    near_duplicate,
    stem,
    tokens,
    values,
    word_set,
)
from reverie.rules.value_slots import (
    changes_value,
    competes,
    holds_others,
    names,
    recounts,
    replaces_value,
    restates_all,
    restates_values,
    value_slots,
    words_of,
)

__all__ = [
    "Claim",
    "Keys",
    "changes_value",
    "closeness",
    "competes",
    "denies_held",
    "keys",
    "parse",
    "pick_superseded",
    "recounts",
    "replaces_value",
    "restates",
    "restates_all",
    "restates_values",
    "same_fact",
    "subject_phrase",
    "supersedes",
    "value_slots",
]


def _attribute(text: str, claim: Claim) -> bool:
    """Whether a claim gives its subject a value that a correction replaces — a number, an
    id, a short phrase — rather than describing it ("Caroline is researching adoption
    agencies…", "Joanna is a writer"): descriptions accumulate, like events. A one-word
    subject with the copula ("Joanna is …") is a person or thing with many properties; it
    takes a value token ("Python is 3.11") to make it one attribute."""
    one_word = len(claim.subject) == 1 and not (claim.values - claim.value_tokens)
    if one_word and claim.relation == "be" and not claim.value_tokens and _named(text):
        return False
    body = RELATION.split(LABEL_COLON.sub(" :", CORRECTION_PREFIX.sub("", text, count=1)), 1)
    after = [w for w in tokens(body[-1]) if w not in STOPWORDS and w not in FILLER]
    if (
        len(body) > 1
        and after
        and after[0].endswith("ing")
        and len(after[0]) > 4
        and not is_value(after[0])
    ):
        return False  # "is going", "has been playing": an activity, not a value
    return bool(claim.values) or len(claim.value) <= 4


def _same_role(new: Claim, old: Claim) -> bool:
    """ "Commit abc is the last good build" → "Commit def is the last good build": a definite
    description names one role, so a new holder replaces the old one."""
    if not (new.definite and old.definite) or new.value != old.value:
        return False
    return {w for w in new.subject if not is_value(w)} == {
        w for w in old.subject if not is_value(w)
    } and new.subject != old.subject


# a named thing given up: "ditched TuneLab", "cancelled Squarespace", "no longer use Xero"
_RETIRED: Final = re.compile(
    r"\b(?i:ditch(?:ed|ing)?|dropp(?:ed|ing)|dump(?:ed|ing)?|cancel(?:l?ed|l?ing)?"
    r"|scrapp(?:ed|ing)|got rid of|stopp(?:ed|ing) using|no longer (?:use|using|on|with)"
    r"|(?:mov|switch|migrat)(?:ed|ing) (?:away )?from)"
    r"\s+(?:(?i:the|our|my)\s+)?(?P<name>[A-Z][\w.+&'’-]*(?:\s+[A-Z][\w.+&'’-]*){0,2})"
)


def retired_names(text: str) -> frozenset[str]:
    """The named things a text says were given up (see ``_RETIRED``)."""
    return frozenset(found["name"] for found in _RETIRED.finditer(text))


def retires(new_text: str, old_text: str) -> bool:
    """The new text gives up a named thing the old one names, and takes on another named
    thing the old one does not name ("also ditched TuneLab, I've moved over to Verituner" /
    "I use TuneLab on my phone for tunings"): the habit is over. An old text holding a value
    of its own ("Slack costs us 40 a month") is not ended: the value would be lost."""
    gone = retired_names(new_text)
    if not any(re.search(rf"(?<![\w-]){re.escape(g)}(?![\w-])", old_text) for g in gone):
        return False
    others = _capitalised(new_text) - {w.lower() for g in gone for w in g.split()}
    return bool(others - _capitalised(old_text)) and not values(old_text)


def _capitalised(text: str) -> frozenset[str]:
    """Capitalised words inside a text, not one opening it: product names written in mixed
    case too ("FreeAgent", "PackRight"), which ``value_slots.names`` (Title-case words)
    leaves out."""
    found = re.findall(r"(?<=[\w,;)] )[A-Z][\w.+&'’-]*", text)
    words = {re.split(r"['’]", w)[0].lower().rstrip(".,;:!?") for w in found}
    return frozenset(w for w in words if w not in STOPWORDS and w != "i")


def supersedes(new_text: str, old_text: str) -> bool:
    """True when ``new_text`` is a correction of ``old_text`` under the rule above."""
    if retires(new_text, old_text):
        return True
    if not _stems(new_text) & _stems(old_text):
        return False  # every path below needs a word in common (a subject, a slot's word)
    new, old = parse(new_text), parse(old_text)
    if old.negated and not new.negated and restates_values(new_text, old_text):
        return True  # its value said without the former one: the plain saying replaces it
    if _denial_of(new, old_text) and not holds_others(new_text, old_text):
        return True  # a summary keeps its other values: search puts the denial first
    if new.has_relation and old.has_relation:
        if same_subject(new, old):
            if new.negated and not old.negated and new.value and new.value == old.value:
                return True  # "now 600 (was 900)" says what "600" says, and more
            return (
                bool(new.value)
                and new.value != old.value
                and new.relation == old.relation
                and _attribute(new_text, new)
                and _attribute(old_text, old)
            ) or replaces_value(new_text, old_text)
        return _same_role(new, old) or replaces_value(new_text, old_text)
    if replaces_value(new_text, old_text) or recounts(new_text, old_text):
        return True
    if _reports_event(new_text) or _reports_event(old_text):
        return False  # events accumulate; only states supersede
    new_values, old_values = _value_positions(new_text), _value_positions(old_text)
    if len(new_values) != len(old_values) or not new_values:
        return False
    differing = sum(a != b for a, b in zip(new_values, old_values, strict=True))
    return differing == 1 and bool(new.skeleton) and new.skeleton == old.skeleton


def denies_held(new_text: str, old_text: str) -> bool:
    """The new text says a value instead of one the old text holds ("red oak … instead of
    LVP", "the temp kitchen to the dining room not the basement"): the newer is current,
    whether or not the old text's other values let it be superseded."""
    return _denial_of(parse(new_text), old_text)


def _denial_of(new: Claim, old_text: str) -> bool:
    if not new.negated or not _says_instead(new, old_text) or _denies(old_text, new.negated):
        return False
    negated = set(tokens(new.negated)) - STOPWORDS
    return bool(negated) and negated <= set(tokens(old_text))


# where one claim of a sentence ends and the next begins
_CLAUSES: Final = re.compile(
    r",\s+|;\s+|(?<!\s)\s+(?:but|so|and)\s+(?=\w+(?:'s)?\s)|(?<!\s)\s+[-\u2014]\s+"
)
_CLAUSE_LIMIT = 4
_CLAIMS_CHARS = 2000  # a fact longer than this is not split into claims


def claim_replaced(new_text: str, old_text: str) -> bool:
    """One claim of ``new_text`` corrects one of ``old_text`` ("…, so my new contact is Brett
    Kowalski" / "Our forwarder is Kestrel Logistics, my contact there is Ana Ruiz"): not a
    supersede of the whole old fact, whose other claims may still hold, but what search
    needs to put the newer first. At most four clauses of each are compared."""
    if len(new_text) > _CLAIMS_CHARS or len(old_text) > _CLAIMS_CHARS:
        return False
    news, olds = _claims(new_text), _claims(old_text)
    if len(news) == 1 and len(olds) == 1:
        return False  # the whole texts: ``supersedes`` answered that already
    if not names(new_text, initial=True) & names(old_text, initial=True):
        return False  # "Tom …, his favourite colour is blue" / "Dana …, her favourite …"
    return any(supersedes(a, b) for a in news for b in olds)


def _claims(text: str) -> list[str]:
    parts = [p.strip(" .!") for p in _CLAUSES.split(text)]
    return [p for p in parts if len(p.split()) >= 3][:_CLAUSE_LIMIT]


def _says_instead(new: Claim, old_text: str) -> bool:
    """A denial replaces a statement only beside what it says in its place, about the
    old statement's thing ("it is the green cluster, not the blue cluster"); "like right
    now, not in librenms" denies a place and says nothing instead."""
    return bool(new.values) or bool(
        word_set(" ".join(new.value | new.subject)) & word_set(old_text)
    )


@lru_cache(maxsize=65536)
def _stems(text: str) -> frozenset[str]:
    parts = (p for t in tokens(text) for p in [t, *re.split(r"[/_]", t)] if p)
    return frozenset(stem(p) for p in parts if p not in STOPWORDS)  # "default_pool_size"


def _denies(text: str, phrase: str) -> bool:
    """Whether ``text`` itself says "not <phrase>" ("encourages him not to give up"): it
    agrees with a statement that denies the phrase, it does not assert what is denied."""
    words = tokens(text)
    said = [w for w in tokens(phrase) if w not in STOPWORDS]
    for i, word in enumerate(words):
        if word in {"not", "never", "no"} and said:
            after = [w for w in words[i + 1 : i + 1 + len(said) + 2] if w not in STOPWORDS]
            if after[: len(said)] == said:
                return True
    return False


def same_fact(new_text: str, old_text: str, threshold: float) -> bool:
    """One fact in other words: a restated claim, the same values about the same thing, or
    a near-duplicate (the NOOP tiers of a topic save)."""
    return (
        restates(new_text, old_text)
        or restates_values(new_text, old_text)
        or near_duplicate(new_text, old_text, threshold) is not None
    )


def restates(new_text: str, old_text: str) -> bool:
    """The same claim in other words — the same subject given the same value ("The deploy
    timeout is set to 30s" / "Deploy timeout: 30s"): a near-duplicate the Jaccard tier
    can miss when filler words dilute a short fact."""
    new, old = parse(new_text), parse(old_text)
    if new.negated or not (new.has_relation and old.has_relation):
        return False
    if _value_positions(new_text) != _value_positions(old_text):
        return False  # "worker 3 item 0" and "worker 0 item 3" name different things
    return same_subject(new, old) and bool(new.value) and new.value == old.value


def _reports_event(text: str) -> bool:
    """A past-tense verb marks a report of something that happened ("wrote", "fixed")."""
    return any(
        w in IRREGULAR_PAST or (w.endswith("ed") and len(w) > 4 and not is_value(w))
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
    body = LABEL_COLON.sub(" :", CORRECTION_PREFIX.sub("", text, count=1))
    relation = RELATION.search(body)
    return body[: relation.start(1)].strip(" ,") if relation else None


def closeness(new_text: str, old_text: str) -> int:
    """How much two facts are about one thing, to choose among several a statement could
    correct: the same subject counts most, then the content words they share."""
    new, old = parse(new_text), parse(old_text)
    same = new.has_relation and old.has_relation and same_subject(new, old)
    return 100 * same + len(words_of(new_text) & words_of(old_text))


def pick_superseded(new_text: str, live: Sequence[tuple[str, str]]) -> str | None:
    """Of ``(fact_id, text)`` pairs, oldest first, the id the new fact supersedes, if any:
    of several, the one most about the same thing (``closeness``: "ci runner image is now
    debian-12-slim" corrects "ci runner image is ubuntu-22.04", not "The build failed on
    runner ci-4"), then the newest."""
    best: tuple[int, int] | None = None
    picked = None
    for place, (fact_id, text) in enumerate(live):
        if supersedes(new_text, text):
            score = (closeness(new_text, text), place)
            if best is None or score > best:
                best, picked = score, fact_id
    return picked


def _named(text: str) -> bool:
    """Whether a claim's subject is a name (capitalised), not a role ("the owner")."""
    body = CORRECTION_PREFIX.sub("", text, count=1).strip()
    first = re.match(r"(?:(?:the|a|an|our|my|their)\s+)?(\w+)", body, re.I)
    return first is not None and first.group(1)[:1].isupper()
