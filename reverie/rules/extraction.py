"""L2's rules: which sentences of a turn are candidates, and what kind of statement each is.

No model call: the thalamus filter drops greetings and acknowledgements, the verification
ladder drops hedged guesses and questions, and a tag says what kind of statement is left.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from reverie.rules.blocks import prose
from reverie.rules.claims import IRREGULAR_PAST, TAKING_BACK, parse, without_denied
from reverie.rules.identity import STYLE, identity_apart, name_in, signed_off, timezone_in
from reverie.rules.secrets import has_secret
from reverie.rules.similarity import MONTHS, STOPWORDS, is_value, shape, tokens, values
from reverie.rules.supersede import subject_phrase
from reverie.rules.value_slots import bare_count, changes_a_value, slot_shape, unit_kind, words_of

SNAPSHOT_BLOCK: Final = re.compile(r"<reverie-snapshot\b.*?(?:</reverie-snapshot>|\Z)", re.S)
REPORT_BLOCK: Final = re.compile(r"<reverie-report\b.*?(?:</reverie-report>|\Z)", re.S)
PREFETCH_BLOCK: Final = re.compile(r"<reverie-prefetch\b.*?(?:</reverie-prefetch>|\Z)", re.S)
# a title or a Latin abbreviation ends in a dot without ending the sentence ("Mrs. Vogel")
_TITLES: Final = ("Mr", "Mrs", "Ms", "Dr", "Prof", "Jr", "Sr", "vs", "e.g", "i.e")
_NOT_AN_END: Final = "".join(rf"(?<!\b{re.escape(a)}\.)" for a in _TITLES)
# a two-letter Title-case abbreviation before a name ("St. Brendan's", "Mt. Hood")
_ABBREVIATED: Final = re.compile(r"\b[A-Z][a-z]\.$")
_NAME_AFTER: Final = re.compile(r"^[A-Z][a-z][\w'’-]*")
_SENTENCE = re.compile(rf"(?<=[.!?;]){_NOT_AN_END}\s+(?=\S)|\n+")
# a day written with a dot before its month ("1. July", "15. August 2027") is one date
_DAY_DOT: Final = re.compile(r"(?<![\d.,$€£¥])(?:[1-9]|[12]\d|3[01])\.$")
_MONTH_AFTER: Final = re.compile(
    r"^(?:" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\b"
    r"(?:[,.;!?]|\s+\d|$)",
    re.I,
)
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
    NOTED = "noted"  # the user asked for it to be remembered
    EVENT = "event"


class Weight(StrEnum):
    HIGH = "high"
    NORMAL = "normal"


HIGH_TAGS: Final = frozenset(
    {Tag.CORRECTION, Tag.ERROR, Tag.DECISION, Tag.COMPLETED, Tag.INSIGHT, Tag.NOTED}
)

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
    r"\b(maybe|perhaps|probably|prob|possibly|might|i think|i thought|i guess|i believe"
    r"|i suppose|i reckon|not sure|unsure|not certain|could be|may be|seems|seem to|likely"
    r"|unlikely|wonder|guess|assume|presumably|if i recall|if i remember|iirc|afaik|idk"
    r"|i'm not certain|hopefully|pretty sure|fairly sure|kinda sure|or so|or something"
    r"|or smth|or sth|something like|dont quote me|don't quote me|not 100%|ish|roughly"
    r"|(?:is|was|be|at|about|around|takes|took) like|like \d|\d\S*\s*-?ish|somewhere around"
    r"|give or take|ballpark|could have been|might have been|supposedly|apparently"
    r"|(?:could|can|would)(?:n'?t| not) swear|swear to it)\b"
    r"|\bnot 100\s*%|\?"
)
_QUESTION_START: Final = re.compile(
    r"^(?:should|shall|could|would|can|do|does|did|is|are|was|were|will|what|why|how|when"
    r"|where|which|who)\b"
)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A sentence worth showing the flush: verified-sounding, not chatter, tagged.
    ``anchor`` marks a fragment whose subject is in an earlier turn ("now it's 45s"): it
    is stored only once resolved against that turn, else left in the episode log."""

    text: str
    tag: Tag
    weight: Weight
    anchor: bool = False


def strip_injected(text: str) -> str:
    """Remove blocks reverie itself put in the prompt (the snapshot, review reports, the
    next-round prefetch)."""
    return PREFETCH_BLOCK.sub(" ", REPORT_BLOCK.sub(" ", SNAPSHOT_BLOCK.sub(" ", text)))


def sentences(text: str) -> list[str]:
    out = []
    for part in _dated(_SENTENCE.split(text)):
        clean = _ACK_PREFIX.sub("", _BULLET.sub("", part).strip()).strip().rstrip(";,")
        clean = _EMPHASIS.sub("", clean).strip()
        if clean:
            out.append(clean)
    return out


def _dated(parts: list[str]) -> list[str]:
    """The split parts, a day's dot ("… opening is now 15.") joined to the month after it,
    and an abbreviation's ("St.") to the name after it."""
    out: list[str] = []
    for part in parts:
        if out and (
            _DAY_DOT.search(out[-1].rstrip())
            and _MONTH_AFTER.match(part.lstrip())
            or _ABBREVIATED.search(out[-1].rstrip())
            and (name := _NAME_AFTER.match(part.lstrip())) is not None
            and name.group(0).lower() not in STOPWORDS
        ):
            out[-1] = f"{out[-1].rstrip()} {part.lstrip()}"
        else:
            out.append(part)
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
    return _HEDGE.search(_ROUNDED.sub(_rounding, lowered)) is not None


# "roughly $610 million", "roughly 38,400 members": a figure of three digits or more, two of
# them significant, rounded for the telling — not a guess, as "roughly 40", "roughly 21 min"
# or "roughly 2000" may be
_ROUNDED: Final = re.compile(r"\broughly\s+(?P<n>[$€£¥]?\d[\d,.]*)")


def _rounding(found: re.Match[str]) -> str:
    digits = re.sub(r"\D", "", found["n"]).lstrip("0")
    return found["n"] if len(digits) >= 3 and len(digits.rstrip("0")) >= 2 else found[0]


def tag(sentence: str) -> Tag:
    """What kind of statement a sentence is. One that says a value changed ("I've adjusted
    the snack budget to $75", "my grocery budget was increased to $550") is a correction
    however the change is worded: keeping a stored value current outranks what is new."""
    if changes_a_value(sentence):
        return Tag.CORRECTION
    lowered = sentence.lower()
    for name, pattern in _TAG_RULES:
        if pattern.search(lowered):
            return name
    return Tag.EVENT


def weight(tag_: Tag) -> Weight:
    return Weight.HIGH if tag_ in HIGH_TAGS else Weight.NORMAL


# A request to the assistant is not a statement about the user's world.
_REQUEST: Final = re.compile(
    r"^(?:(?:so|and|but|ok|now|also)\s+)?(?:please\b|pls\b|plz\b|(?:can|could|would|will)"
    r" (?:you|u)\b|help me\b|i (?:need|want|would like|'d like) (?:you|u|help|to know|some)\b"
    r"|i(?: would|'d)? (?:appreciate|welcome) (?:your|any|it if|some|help|advice)\b"
    r"|(?:show|give|tell|explain|write|create|generate|make|walk) (?:me|us)\b|let me know\b"
    r"|any (?:ideas|thoughts|suggestions|tips)\b|thoughts\b)",
    re.I,
)
_CLAUSE: Final = re.compile(r",\s+|;\s+|\s+(?:but|so)\s+|\s+-{1,2}\s+|\s+—\s+")
_EMPHASIS: Final = re.compile(r"\*\*|__|(?<!\w)[*_](?=\w)|(?<=\w)[*_](?!\w)")
# a pronoun or demonstrative standing for something said earlier
_ANAPHOR: Final = re.compile(
    r"^(?:(?:and|but|so|oh|ah|also|now|then|update|wait|no|nope|actually|sorry|oops|correction"
    r"|scratch that|make (?:that|it))[\s,:;.!-]*)*(?:it|that|this|those|these|they|its|it's"
    r"|that's|thats|they're|theyre|he|she)\b",
    re.I,
)
_CORRECTING: Final = re.compile(
    rf"^(?:(?:{TAKING_BACK}|no|nope|update|err?|um+|oh|ah|now)\b[\s,:;.!-]*)+", re.I
)


def declarative(sentence: str) -> str | None:
    """The statement a sentence makes, without the question or request it ends with ("I run
    Flask 2.3 on port 5000, can you help me with auth?" → "I run Flask 2.3 on port
    5000"); None when it makes none."""
    if _REQUEST.match(sentence) and not STYLE.search(sentence):
        return None
    if "?" not in sentence:
        return _before_request(sentence)
    kept: list[str] = []
    for clause in _CLAUSE.split(sentence):
        lowered = clause.lower().strip()
        asked = _ASKED.search(clause) if "?" in clause else None
        head = clause[: asked.start()].strip() if asked else ""
        if head and not head[-1].isalnum() and len(head.split()) > 2:
            kept.append(head)  # "$1,840 for the year 😩 is that normal??": a mark between
            break
        if "?" in clause or _REQUEST.match(lowered):
            break
        if _QUESTION_START.match(lowered) and not (kept and _RELATIVE.match(lowered)):
            break  # "…, who are 63 and 77, …" after a noun is a relative clause, not a question
        kept.append(clause.strip())
    return _statement(", ".join(kept))


_RELATIVE: Final = re.compile(r"(?:who|whose|whom|which|where|when)\b")
# what makes a request hold for every reply, not the task at hand
_STANDING_ASK: Final = re.compile(
    r"\b(?:always|never|from now on|going forward|in future|in the future|in general|by default"
    r"|throughout|every ?time|each time|whenever|standing request|general request"
    r"|(?:every|each|all(?: of)?|any) (?:our |my |your |the )?(?:answers?|repl(?:y|ies)"
    r"|responses?|messages?|correspondence|code|snippets?|emails?))\b",
    re.I,
)
# a clause that starts a statement of its own, after the request ("…, i read these on my
# phone"): where the request ends
_OWN_SUBJECT: Final = re.compile(
    r"^(?:i|i'm|im|i've|we|we're|my|our|he|she|they|it's|its|this|that|which|because|since"
    r"|as)\b",
    re.I,
)


def standing_request(sentence: str) -> str | None:
    """A request that holds for every reply ("can you keep answers shorter in general?",
    "pls always do tidyverse stuff for me, not base R"): a preference of the user's, said
    as a request, kept as a statement up to where a clause of its own begins; None for
    any other sentence (a request for the task at hand is not knowledge)."""
    asked = _REQUEST.match(sentence) or sentence.rstrip().endswith("?")
    if not asked and not _BARE_ASK.match(sentence):
        later = _LATER_ASK.search(sentence)  # "she finds … too casual, so please use …"
        return standing_request(sentence[later.end() :]) if later else None
    kept: list[str] = []
    for clause in _CLAUSE.split(sentence.replace("?", "")):
        if kept and _OWN_SUBJECT.match(clause.strip()):
            break
        kept.append(clause.strip())
    text = _statement(", ".join(kept))
    return text if text and _STANDING_ASK.search(text) else None


# an imperative addressed to the agent without "can you": "pls always do …", "please use …"
_BARE_ASK: Final = re.compile(r"^(?:(?:also|and|so|ok|oh)\s+)?(?:please|pls|plz|kindly)\b", re.I)
# the same after a clause of reasons: "…, so please use 'Kind regards' from now on"
_LATER_ASK: Final = re.compile(
    r"[,;]\s*(?:(?:so|and|but)\s+)?(?=(?:please|pls|plz|kindly)\b)", re.I
)


def _statement(text: str) -> str | None:
    """What is left of a sentence, trimmed, if it still says something (three words)."""
    text = text.strip(" ,;-—")
    return text if len(text.split()) >= 3 else None


def _before_request(sentence: str) -> str | None:
    """A statement that runs on into a request with no question mark ("…, so I'm starting
    from scratch - can you help me implement …") ends where the request begins; a request
    for a standing way of replying ("…, please correct my English when I make mistakes")
    is part of what it says, and so is a relative clause ("…, which has improved to …")."""
    for found in _CLAUSE.finditer(sentence):
        rest = sentence[found.end() :]
        if _REQUEST.match(rest) and not (STYLE.search(rest) or _STANDING.search(rest)):
            return _statement(sentence[: found.start()])
        if (asked := _ASKED.search(rest)) and asked.start() == 0:
            return _statement(sentence[: found.start()])  # "…, is that about right"
    return sentence


# a question asked in passing, with or without its mark: "is that about right", "does that
# leave gaps": a verb before its pronoun subject, after a statement
_ASKED: Final = re.compile(
    r"(?<![\w'])(?i:is|are|does|do|did|should|shall|can|could|would|will|was|were)\s+"
    r"(?i:that|this|it|i|we|you|they|there|he|she)\b(?!['\u2019])(?=\s+\w)"
)


# a request that holds from now on, not for the task at hand
_STANDING: Final = re.compile(
    r"\b(?:when(?:ever)?|every ?time|each time|always|from now on|in future|going forward)\b",
    re.I,
)


def _without_lead_in(sentence: str) -> str:
    """A sentence that ends with a colon leads into something else ("I run Flask 2.3, so
    here's my config:"): its last clause goes, the rest may still be a statement."""
    if not sentence.rstrip().endswith(":"):
        return sentence
    clauses = _CLAUSE.split(sentence.rstrip().rstrip(":"))
    return ", ".join(clauses[:-1]).strip(" ,") if len(clauses) > 1 else ""


def bare_value(sentence: str) -> bool:
    """A correction that gives only a value ("wait no, 16:30", "make that 45s"): a value
    without a correcting word is a pasted or stray token, not a correction."""
    if not _CORRECTING.match(sentence):
        return False
    rest = without_denied(_CORRECTING.sub("", sentence)).strip(" .!,")  # "…, not 20 min"
    words = rest.split()
    return 0 < len(words) <= 3 and any(is_value(t) for t in tokens(rest))


# a later clause with its own subject changing a named thing's value: the sentence is
# whole even when it opens with a pronoun ("it's so humid that I've dropped hydration to
# 75%", "it was raining so we moved the standup to 10:30")
_OWN_CHANGE: Final = re.compile(
    r"\b(?:i|we|they)(?:'ve|'d| have| had)?\s+(?:\w+ed|set|put|got|cut|upped)\s+"
    r"(?:(?:the|my|our|their)\s+)?(?!(?:it|that|this|them|those|these)\b)[a-z][\w-]*\s+"
    r"(?:[\w'-]+\s+){0,3}?(?:to|from)\s+(?:[A-Za-z]{3,9}\s+)?\S*\d"  # "to September 19"
    # or a change still to make, to a thing named with its determiner or its owner: "she
    # asked to move the monitoring visit from the 25th to April 1", "she wants to move next
    # year's yearbook from Jostens to Walsworth" (a value, or a name)
    r"|\b(?:to|will|'ll|can|could|would)\s+(?:move|push|change|shift|bump|raise|lower|drop"
    r"|extend|cut|set|switch)\s+(?:(?:the|my|our|their|his|her)\s+|(?:[a-z]+\s+)?[a-z]+['’]s\s+)"
    r"[a-z][\w'’-]*\s+(?:[\w'-]+\s+){0,4}?(?:to|from)\s+"
    r"(?:(?:the\s+)?(?:[A-Za-z]{3,9}\s+)?\S*\d|(?-i:[A-Z])[\w&'’-]+)",
    re.I,
)


_RELATIVE_AFTER: Final = re.compile(r"\s+(?:who|whom|whose|which)\b", re.I)


def _opens_with_pronoun(sentence: str) -> bool:
    """The sentence opens with a pronoun standing for an earlier subject; an acronym spelt
    like one is a name ("HE session is up" is Hurricane Electric's, "IT owns the VPN")."""
    found = _ANAPHOR.match(sentence)
    if found is None or _RELATIVE_AFTER.match(sentence, found.end()):
        return False  # "Those who have already paid £25": who, the sentence says itself
    word = re.findall(r"[A-Za-z']+", found.group(0))[-1]
    shouted = sum(c.isupper() for c in sentence) > sum(c.islower() for c in sentence)
    return not (len(word) >= 2 and word.isupper() and not shouted)


# a clause that names its own subject: a determiner or a possessive and a noun after it
_OWN_SUBJECT_CLAUSE: Final = re.compile(
    r"^(?:(?:and|but|so|plus)\s+)?(?:(?:the|our|my|their|this|that|these|those)\s+[a-z][\w-]*\s+\S+"
    # or a noun of its own before its verb: "move-in is May 1"
    r"|(?!(?:it|he|she|they|this|that|there|which|who)\b)[a-z][\w'-]*"
    r"(?:\s+[a-z][\w'-]*)?\s+(?:is|are|was|were|has|have)\b)",
    re.I,
)


_CLAUSE_OR_COLON: Final = re.compile(_CLAUSE.pattern + r"|:\s+")


def _valued_clause_of_its_own(sentence: str) -> bool:
    """The pronoun's clause gives no value and a later clause with a subject of its own
    gives one ("she got it done before she left, the whole spring program has 7 days free
    now"; "he also raised the bar: MAE target is now 15 minutes"): the pronoun opens an
    aside, and the statement does not need an earlier turn."""
    first, *rest = _CLAUSE_OR_COLON.split(sentence)
    if any(is_value(t) for t in tokens(first)):
        return False  # the pronoun's own clause gives a value: whose, only its turn says
    return any(
        _OWN_SUBJECT_CLAUSE.match(clause.strip()) and any(is_value(t) for t in tokens(clause))
        for clause in rest
    )


# a statement of its own after a colon: a subject of its own and its verb, or "I" / "we"
_OWN_STATEMENT: Final = re.compile(
    r"^(?:(?:i|we)(?:['’](?:m|re|ve|d|ll))?\s+\w|" + _OWN_SUBJECT_CLAUSE.pattern[1:] + ")",
    re.I,
)
_PREFACE_WORDS = 3


def _after_preface(sentence: str) -> str:
    """A preface of three words or more with no value, then a colon, then a statement of
    its own with a value ("some good news to put you in a cheerful mood: we're at 44
    confirmed now", "he also raised the bar: MAE target is now 15 minutes"): the statement
    is what was said. A label before a colon ("rate: …", "Deliveries: Monday …") is its
    subject and stays."""
    head, colon, rest = sentence.partition(": ")
    rest = rest.strip()
    if not colon or len(re.findall(r"[\w'’]+", head)) < _PREFACE_WORDS:
        return sentence
    if any(is_value(t) for t in tokens(head)) or not any(is_value(t) for t in tokens(rest)):
        return sentence
    if _opens_with_pronoun(rest) or not _OWN_STATEMENT.match(rest):
        return sentence  # "Other thing on my mind: this is our 125th year" stays whole
    return rest[:1].upper() + rest[1:]


def _anchor(sentence: str) -> bool | None:
    """True for a fragment that needs an earlier turn's subject, False for a
    self-contained statement, None for a fragment nothing can resolve ("that fixed it")."""
    if name_in(sentence) or timezone_in(sentence):
        return False
    if bare_value(sentence):
        return True
    if _opens_with_pronoun(sentence):
        if _OWN_CHANGE.search(sentence) or _valued_clause_of_its_own(sentence):
            return False  # "it's been so humid that I've dropped hydration to 75%"
        return True if any(is_value(t) for t in tokens(sentence)) else None
    if len(re.findall(r"[A-Za-z]{2,}", sentence)) < 3:  # "Port is 5432" is whole
        valued = any(is_value(t) for t in tokens(sentence))
        whole = subject_phrase(sentence) or bare_count(sentence)
        return False if valued and whole else None
    return False


def candidates(text: str, min_chars: int, speaker: str = "user") -> list[Candidate]:
    """The candidate sentences of one side of a turn, in order, without repeats: pastes
    and markup cut out first (``blocks``); secrets, questions, requests, guesses and
    fragments dropped; an assistant contributes only what it reports having verified."""
    body = prose(strip_injected(text))
    if speaker == "assistant":
        return _reported(body, min_chars)
    said = sentences(body)
    if (name := signed_off(body)) is not None:  # "…\n- Denise (head coach)"
        said = [*said[:-1], f"I'm {name}."]
    return _statements(said, min_chars)


def _statements(found: list[str], min_chars: int) -> list[Candidate]:
    seen: set[str] = set()
    out = []
    for raw in _headed(found):
        remembered = to_remember(raw)  # "can you remember the export is …, so …"
        if remembered is not None and has_secret(raw):
            continue  # what is kept may hold the value and not its label ("… so you have
            # the wifi password")
        claims = [remembered] if remembered else _claims_of(_after_preface(_without_lead_in(raw)))
        noted = remembered is not None
        for sentence in _with_identity_apart(claims):
            if is_chatter(sentence, min_chars) or has_secret(sentence):
                continue
            if sentence.lower() in seen:
                continue
            seen.add(sentence.lower())
            anchor = _anchor(sentence)
            if anchor is not None:
                found_tag = tag(sentence)
                if noted and found_tag is Tag.EVENT:
                    found_tag = Tag.NOTED
                out.append(Candidate(sentence, found_tag, weight(found_tag), anchor))
    return out


def _headed(found: list[str]) -> list[str]:
    """Each sentence, a headless one said after the sentence it goes with: "also insurance
    renewal came in. NFU Mutual, up 18% ffs." is one statement ("also insurance renewal
    came in: NFU Mutual, up 18% ffs."), as is "rhys start date pushed again. 5 may now, …".
    A headless sentence's first clause is short, holds a value or an acronym, and has no
    verb or subject of its own."""
    out: list[str] = []
    for sentence in found:
        before = out[-1] if out else ""
        if before and _headless(sentence) and _can_head(before):
            out[-1] = f"{before.rstrip(' .!')}: {sentence}"
        else:
            out.append(sentence)
    return out


def _headless(sentence: str) -> bool:
    first = re.split(r",\s|;", _OPENERS.sub("", sentence), maxsplit=1)[0]
    words = re.findall(r"[\w£$€%.'-]+", first)
    if not 0 < len(words) <= _HEADLESS_WORDS or ":" in first:
        return False  # "Intro and Overview: …" is a label and what it labels
    named = any(is_value(w.lower()) or _ACRONYM.fullmatch(w) for w in words)
    verbal = any(w.lower() in _VERBAL or w.lower().endswith(("ed", "ing")) for w in words)
    return named and not verbal and not _opens_with_pronoun(sentence)


def _can_head(sentence: str) -> bool:
    """A statement of a few words with no value of its own, not a question or a greeting."""
    said = sentence.strip()
    return (
        not said.endswith("?")
        and not is_hedged(said)
        and len(said.split()) >= _HEAD_WORDS
        and not any(is_value(t) for t in tokens(said))
    )


_ACRONYM: Final = re.compile(r"[A-Z]{2,}[\w-]*|[A-Z][a-z]+[A-Z]\w*")
_HEADLESS_WORDS = 4
_HEAD_WORDS = 3
_OPENERS: Final = re.compile(
    r"^(?:(?:so|ok|okay|and|also|then|well|now|btw|fyi|tbh|imo|lol|hi|hey|hello)\W+)+", re.I
)
# a verb or a subject of its own: the sentence has its head
_VERBAL: Final = frozenset(
    "is are was were be been being am has have had do does did will would can could should"
    " might must i i'll i'd i've i'm we we'll we're you you're they they're he he's she she's"
    " it it's that's there there's".split()
)


def _with_identity_apart(claims: list[str]) -> list[str]:
    """Each claim, with the user's name or timezone given apart from what else it says:
    "I'm Dev, I teach physics at Westbrook High" is "I'm Dev" (user_settings) and "I teach
    physics at Westbrook High" (a fact of its own), not one candidate with one home."""
    out = []
    for claim in claims:
        rest: str | None = claim
        for _ in range(2):  # a name and a timezone in one sentence
            apart = identity_apart(rest) if rest else None
            if apart is None:
                break
            said, rest = apart
            out.append(said)
        if rest:
            out.append(rest)
    return out


def _claims_of(sentence: str) -> list[str]:
    """What a sentence asserts: its statement, less a question, request or aside it ends
    with; and a fact its question or worry takes for granted ("how do I spend the
    increased budget of $6,200 for licences?")."""
    if (asked := standing_request(sentence)) is not None:
        return [asked]  # a standing preference, asked for: not a question, not a guess
    kept = declarative(sentence)
    if kept is not None:
        kept = _without_remark_to_agent(kept)
    if kept is not None and (is_hedged(kept) or _ASIDE.search(kept)):
        kept = _before_aside(kept)
    given = presupposed(sentence) if kept != sentence else None
    if given and kept and given.lower() in kept.lower():
        given = None
    change = changed_clause(kept) if kept else None
    if change is not None:
        kept = change  # the one thing of value a long task statement says
        if given and values(given) <= values(change):
            given = None
    return [text for text in (kept, given) if text]


# the user asks the agent to keep something: "can you remember …", "pls note that …",
# "keep in mind …", "don't forget …", "for future reference: …"
_REMEMBER: Final = re.compile(
    r"^(?:(?:also|and|so|ok|okay|oh|btw|one more thing)\W+)*"
    r"(?:(?:can|could|would|will) (?:you|u) (?:please |pls )?|(?:please|pls|plz) )?"
    r"(?:remember|note(?: down)?|make a note|keep in mind|do not forget|don'?t forget"
    r"|for (?:future|later) reference)\b(?:\s+(?:that|of|this|for (?:next time|later)))?"
    r"[\s,:;-]+(?P<said>.+)$",
    re.I,
)
# where what is to be kept ends: the reason for keeping it, or the request itself
_KEPT_ENDS: Final = re.compile(
    r"(?:,\s*|\s+)(?:so (?:that )?(?:i|we|you)\b|for (?:next time|later|the future)\b"
    r"|(?:thanks|thx|ty)\b)|[?]",
    re.I,
)


def to_remember(sentence: str) -> str | None:
    """What the user asks the agent to remember, as a statement of its own ("can you
    remember the export is semicolon separated so I dont have to …" → "the export is
    semicolon separated"); None when the sentence asks for nothing to be kept."""
    found = _REMEMBER.match(sentence.strip())
    if found is None or sentence.rstrip().endswith("?"):
        return None  # "can you remember the port we used last time?" asks
    said = found["said"]
    if (end := _KEPT_ENDS.search(said)) is not None:
        said = said[: end.start()]
    said = _statement(said)
    if said is None or _QUESTION_START.match(said.lower()) or said.lower().startswith("to "):
        return None  # "remember to call Sam" is a task, "remember when …" a question
    if not _FINITE.search(said) or _OBJECT_FIRST.match(said) or is_hedged(said):
        return None  # "don't forget the milk": a thing, not a statement; a guess stays out
    return said


# a finite verb: a statement, not a noun phrase ("the milk on the way home")
_FINITE: Final = re.compile(
    r"\b(?:is|are|was|were|has|have|had|will|can|must|should|does|do|did|won't|can't)\b"
    r"|['’](?:s|re)\b|\b[a-z]{3,}(?:s|ed)\b(?=\s+\S)",
    re.I,
)
_OBJECT_FIRST: Final = re.compile(r"^(?:me|him|her|us|them)\b", re.I)


def changed_clause(statement: str) -> str | None:
    """The clause of a statement that says a value changed, as a statement of its own, when
    it holds every value the statement holds: what a fact given as background ("…, especially
    since my final draft reached 4,700 words by May 13, …") or in a relative clause ("…
    the dashboard API response time, which has recently improved to 250ms …") says, without
    the task or worry around it. None when there is no such clause, or the rest says more."""
    for found in _GIVEN_CLAUSE.finditer(statement):
        if found["np"]:
            text = f"{found['np']} {found['vp']}"
        else:
            text = found["clause"]
        text = text.strip(" .")
        if len(text.split()) < 4 or not changes_a_value(text):
            continue
        if values(statement) <= values(text) and text != statement.strip(" ."):
            return text[:1].upper() + text[1:]
    return None


_DETERMINER = r"(?:the|my|our|his|her|their)"
# background taken as given ("since …", "now that …") or a relative clause on a noun phrase
_TO_COMMA = r"(?:[^,;?]|,(?=\d))+"  # a clause runs to its comma, not the one of "4,700"
_GIVEN_CLAUSE: Final = re.compile(
    r"\b(?:since|now that|given that|considering that|as|and|(?:saw|noticed|found|learned"
    r"|heard|realized|realised|confirmed) that)\s+"
    rf"(?P<clause>(?:{_DETERMINER}|i(?:'ve| have)|we(?:'ve| have))\b{_TO_COMMA})"
    rf"|\b(?P<np>{_DETERMINER}\s+(?:[\w'-]+\s+){{0,8}}?[\w'-]+),\s+which\s+"
    rf"(?P<vp>(?:has|have|had|is|was|were|got)\s+{_TO_COMMA})",
    re.I,
)


# A clause saying what the speaker does not know *about something else* ("…, but I'm not
# sure how to wire it in"): it asks, it does not hedge the clauses before it. A bare hedge
# ("…, not sure", "…, dont quote me") does.
_ASIDE: Final = re.compile(
    r"\b(?:not sure|unsure|wondering|wonder|no idea|don'?t know|do not know|idk)"
    r"\s+(?:how|what|whether|if|why|where|when|which|who)\b",
    re.I,
)


# a remark on what the agent did or said, after the statement ("…, good thing you didn't
# put it in lol", "…, like you said"): past, so no instruction, and not the user's world
_REMARK_TO_AGENT: Final = re.compile(
    r"^(?:(?:good thing|glad|lucky|funny|like|as|since|because|lol|haha|so|and|but"
    r"|thank god)\s+)*(?:that\s+)?(?:you|u)\s+(?:(?:did|didn'?t|did not|were|was|had|hadn'?t)\b"
    r"|(?:\w{2,}ed|" + "|".join(sorted(IRREGULAR_PAST)) + r")\b)",
    re.I,
)


def _without_remark_to_agent(statement: str) -> str | None:
    """The statement without the clauses after it that remark on what the agent did."""
    clauses = _CLAUSE.split(statement)
    kept = list(clauses)
    while len(kept) > 1 and _REMARK_TO_AGENT.match(kept[-1].strip()):
        kept.pop()
    return statement if len(kept) == len(clauses) else _statement(", ".join(kept))


def _before_aside(sentence: str) -> str | None:
    """The clauses before an aside that asks about something else, when none of them is
    hedged; None when a hedge touches the statement itself."""
    kept: list[str] = []
    guessed = False
    for clause in _CLAUSE.split(sentence):
        if _ASIDE.search(clause):
            break
        if is_hedged(clause):
            if _says_more(clause):
                guessed = True  # "SLO is 99.95%, so roughly 21 min of budget", "… out for
                continue  # like 6 weeks so i'm on Califia now": a guess of its own, left out
            return None  # "…, maybe 6", "…, dont quote me": the hedge is on what came before
        kept.append(clause.strip())
    else:
        if not guessed:
            return None
    return _statement(", ".join(kept)) if kept else None


def _says_more(clause: str) -> bool:
    """A clause with two content words of its own (not a hedge's) is a claim of its own,
    not a hedge on the one before."""
    own = [
        w
        for w in re.findall(r"[a-z]{3,}", _HEDGE.sub(" ", clause.lower()))
        if w not in STOPWORDS and w not in _GREETING
    ]
    return len(own) >= 2


# A definite description that carries a changed or set value: "the increased budget of
# $6,200 for licences", "the sound mixing sessions got extended to July 16".
_GIVEN: Final = re.compile(
    rf"\b{_DETERMINER}\s+(?:(?!{_DETERMINER}\b)[\w'-]+\s+){{0,6}}?"
    r"(?:new|\w+ed|\w+en)\s+"
    r"(?:[\w'-]+\s+){0,3}?(?:of|to|at|from\s+[^,;?]{1,30}?\s+to)\s+(?:[a-z]+\s+)?[$€£¥#]?\d"
    rf"(?:{_TO_COMMA})?",
    re.I,
)
_CONDITIONAL: Final = re.compile(r"\b(?:if|whether|suppose|assuming|in case|unless)\b", re.I)


def presupposed(sentence: str) -> str | None:
    """The fact a question or worry takes for granted, as a statement: a definite
    description with a value set or changed, or a pronoun's change said of the description
    it stands for ("… the Zoom meeting with Professor Danielle, so can you remind me that
    it's rescheduled to March 22 at 4:30 PM?"). None when it is itself hedged, conditional
    or planned."""
    for clause in re.split(r"[,;?]\s+|\?|\s+(?:but|so|and then)\s+", sentence):
        found = _GIVEN.search(clause)
        if found is None:
            continue
        text = found.group(0).strip(" .!")
        if _CONDITIONAL.search(clause[: found.end()]) or _HEDGE.search(text.lower()):
            continue
        return text[:1].upper() + text[1:]
    return _changed_it(sentence)


def _changed_it(sentence: str) -> str | None:
    """ "… it's rescheduled to <value>" said of the latest description before it."""
    found = _IT_CHANGED.search(sentence)
    if found is None or _CONDITIONAL.search(sentence[: found.start()]):
        return None
    described = list(_DESCRIBED.finditer(sentence[: found.start()]))
    if not described:
        return None
    aux = "is" if found["aux"].strip() in {"'s", "’s"} else found["aux"].strip()
    text = f"{described[-1].group(0).strip()} {aux} {found['change'].strip(' .!')}"
    return None if _HEDGE.search(text.lower()) else text[:1].upper() + text[1:]


# "it's rescheduled to March 22 at 4:30 PM", "it was shortened to 5-7 months"
_IT_CHANGED: Final = re.compile(
    r"\b(?:it|this|that)(?P<aux>['’]s|\s+is|\s+was|\s+has been|\s+had been|\s+got"
    r"|\s+will be)\s+(?:now\s+|just\s+|been\s+)?(?P<change>\w+(?:ed|en)\s+(?:[\w'-]+\s+){0,3}?"
    r"(?:to|until|till)\s+(?:[a-z]+\s+)?[$€£¥#]?\d"
    r"(?:(?!\s+(?:and|but|so|which|because)\s)(?:[^,;?]|,(?=\d)))*)",
    re.I,
)
# a description a pronoun may stand for: "the Zoom meeting with Professor Danielle"
_DESCRIBED: Final = re.compile(
    rf"\b{_DETERMINER}\s+(?:(?!\b{_DETERMINER}\b)[^,;?]){{2,60}}?"
    r"(?=[,;]|\s+(?:so|and|but|because)\b|$)",
    re.I,
)


# The assistant reporting what a tool showed it: a verified result, not advice.
_REPORT: Final = re.compile(
    r"^(?:(?:i|we)(?: just| have| 've|'ve)? )?(?:checked|ran|run|looked(?: it)? up|looked at"
    r"|queried"
    r"|verified|confirmed|inspected|fetched|read|searched|tested|measured|listed|opened|pulled"
    r"|grepped|pinged|called|tried|viewed|examined|scanned|dumped)\b[^:\u2014\u2013]*?"
    r"(?::\s*|\s*[\u2014\u2013]\s*|\s+-\s+|,?\s+(?:and"
    r"|which shows?|it shows?|it says|it returned|that)\s+)(?P<fact>.+)$"
    r"|^(?:according to|per) (?:the |your )?[\w .`/-]{2,40}?,\s*(?P<fact2>.+)$"
    r"|^the (?:output|result|response|logs?|config|query|command|tool|api)"
    r" (?:shows?|says|returned|reports?|confirms?)(?: that)?:?\s+(?P<fact3>.+)$",
    re.I,
)
_LONG_ANSWER: Final = 600


def _reported(body: str, min_chars: int) -> list[Candidate]:
    """An assistant's verified reports of a tool's result. Its advice, plans, examples,
    tables, explanations, acknowledgements and promises stay in the episode log; in a
    short answer (not a long explanation) a finding it states as an error, insight or
    correction counts too."""
    out: list[Candidate] = []
    short = len(body) < _LONG_ANSWER
    for sentence in sentences(body):
        m = _REPORT.match(sentence)
        if m:
            fact = (m["fact"] or m["fact2"] or m["fact3"] or "").strip()
            if not _NARRATION.match(fact):  # what it found, not what it advises
                out += _statements([fact[:1].upper() + fact[1:]], min_chars)
            continue
        if short and not _NARRATION.match(sentence):
            out += [c for c in _statements([sentence], min_chars) if _finding(c)]
    return out


# A finding said as one ("Lesson: …", "Turns out …", "Root cause: …"), not advice.
_MARKED: Final = re.compile(
    r"^(?:lesson(?: learned)?|note to self|rule of thumb|til|turns out|turned out|root cause"
    r"|the root cause|the fix was|the culprit was|the cause was)\b",
    re.I,
)


def _finding(candidate: Candidate) -> bool:
    """What an assistant says in a short answer that is knowledge: a finding marked as
    one, or an error it reports with its specific value ("exit code 137")."""
    if _MARKED.match(candidate.text):
        return True
    return (
        candidate.tag is Tag.ERROR
        and any(is_value(t) for t in tokens(candidate.text))
        and _PAST.search(candidate.text) is not None
    )


# what happened, in the past tense ("failed with exit code 137"), not how things usually are
_PAST: Final = re.compile(
    r"\b(?:failed|crashed|broke|returned|threw|raised|timed out|exited|died|hung|errored"
    r"|was|were|got|hit)\b",
    re.I,
)


_NARRATION: Final = re.compile(
    r"^(?:i|i've|i'll|i'm|i have|i will|i am|let me|let's|we'll|i just|i now|i can|i would"
    r"|you can|you could|you should|you might|you may|try|consider|here's|here is|sure"
    r"|certainly|absolutely|of course|great|glad|happy)\b",
    re.I,
)


# what a change sets: "we extended the backup retention to 45d" → "backup retention"
_SET_OBJECT: Final = re.compile(
    rf"\b(?:{_DETERMINER}|its)\s+([a-z][\w-]*(?:\s+[a-z][\w-]*){{0,3}}?)\s+to\s+\S*\d",
    re.I,
)


def _set_object(text: str) -> str | None:
    found = _SET_OBJECT.search(text)
    return found.group(1) if found else None


def _valued(text: str) -> list[tuple[str, str]]:
    """Each value of a text with its kind, read with the word after it ("20 km", "30
    minutes"), in order."""
    words = tokens(text)
    return [
        (word, slot_shape(word, words[i + 1] if i + 1 < len(words) else ""))
        for i, word in enumerate(words)
        if is_value(word)
    ]


def _value_kinds(text: str) -> set[str]:
    """The kinds of the values a text holds."""
    return {kind for _, kind in _valued(text)}


def _kind_of(value: str, text: str) -> str | None:
    """The kind of ``value`` as ``text`` says it."""
    return next((kind for word, kind in _valued(text) if word == value), None)


def correct_held(fragment: str, holder: str) -> str | None:
    """A fragment that denies a value ("she wants 3000 bottles, not 2400 like before") said
    of the statement holding that value: the statement with the one value replaced ("The
    first order is 3000 bottles of 750 ml."), so nothing else it said is lost; None unless
    the fragment gives one value for one denied, of one kind, held once by ``holder``, and
    the two share a word of what the value is of ("bottles"): "The warehouse is at 2400 Elm
    Street" holds 2400 too, and is not what the bottles correct."""
    former = [t for t in tokens(parse(fragment).negated or "") if is_value(t)]
    said = without_denied(fragment)
    new = [t for t in tokens(said) if is_value(t) and t not in former]
    if len(former) != 1 or len(new) != 1 or shape(former[0]) != shape(new[0]):
        return None
    spots = list(re.finditer(rf"(?<![\w.]){re.escape(former[0])}(?![\w]|\.\d)", holder, re.I))
    if len(spots) != 1 or not words_of(fragment) & words_of(holder):
        return None
    if _kind_of(new[0], said) != _kind_of(former[0], holder):
        return None  # "30 minutes, not 20" does not correct "the drive is 20 km"
    raw = re.search(rf"(?<![\w.]){re.escape(new[0])}(?![\w]|\.\d)", fragment, re.I)
    value = raw.group(0) if raw else new[0]
    return holder[: spots[0].start()] + value + holder[spots[0].end() :]


# a count and the things it counts: "165 guests", "25 weddings" (a unit is not a thing)
_COUNTED: Final = re.compile(r"\b(\d[\d,]*)\s+([a-z][a-z'-]+s)\b")


def counts_a_thing(sentence: str) -> bool:
    """A count with the things counted ("It's also 165 guests", "that makes 25 weddings"):
    the value names what it counts, so the fragment is found by that word even when no
    earlier statement gives its subject; "it's 45s now" or "that's 3 days late" is not."""
    return any(bare_count(f"{n} {w}") is not None for n, w in _COUNTED.findall(sentence))


def resolve(fragment: str, earlier: list[str]) -> str | None:
    """A fragment ("now it's 45s", "wait no, 16:30") restated with the subject of the latest
    earlier statement that holds a value of the same kind; None when nothing fits."""
    said = without_denied(fragment)  # "30 minutes not 20 min" gives 30 minutes
    new = [t for t in tokens(said) if is_value(t)]
    if len(new) != 1:
        return None
    kind = _value_kinds(said)  # "30 days" is a duration like "45d", not a count like "600 rpm"
    for text in reversed(earlier):
        phrase = subject_phrase(text) or _set_object(text)
        if not phrase or _listed(phrase) or not kind & _value_kinds(text):
            continue
        raw = re.search(re.escape(new[0]) + r"(?:\s?(?P<unit>[a-z]+))?", said, re.I)
        value = new[0] if raw is None else raw.group(0)
        unit = raw["unit"].lower() if raw is not None and raw["unit"] else ""
        if raw is not None and unit and not unit_kind(unit) and unit not in tokens(text):
            if bare_count(f"{new[0]} {unit}") is not None:
                continue  # "3 courses": a count of a thing the antecedent does not name
            value = value[: raw.start("unit") - raw.start()].rstrip()  # "16:30 typo"
        return f"{phrase} is {value}"
    return None


def _listed(phrase: str) -> bool:
    """A "subject" that is a list of values ("140 guests, Saturday April 25, plated dinner,
    venue"): no one thing a fragment's value could be the value of."""
    return "," in phrase or any(is_value(t) for t in tokens(phrase))
