"""The six-way routing discipline as rules: every fact has exactly one home.

name / timezone → user_settings; preferences → user (USER.md); agent identity →
agent_profile; reply style → soul (SOUL.md); reusable workflows → skill; environment facts
and lessons → memory (MEMORY.md); specific facts (addresses, hashes, thresholds) → topic.
A statement with a specific value goes to a topic even when it also reads like a lesson:
the flush prefers topics, which are large, over MEMORY.md, which is injected every turn.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from typing import Any, Final

from reverie.rules.claims import IRREGULAR_PAST
from reverie.rules.extraction import Tag, Weight, standing_request, weight
from reverie.rules.identity import STYLE, name_in, timezone_in
from reverie.rules.similarity import (
    CALENDAR,
    STOPWORDS,
    derived,
    is_value,
    measure_units,
    stem,
    tokens,
)
from reverie.rules.supersede import keys, parse, subject_phrase
from reverie.rules.value_slots import names, words_of


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

_AGENT_NAME = re.compile(r"\b(?i:your name is)\s+(?P<v>[A-Z][\w'-]*)")
_AGENT_ROLE = re.compile(r"\byou are (?:my |a |an |the )(?P<v>[\w' -]{3,60}?)(?:[.,;!]|$)", re.I)
_PREFERENCE = re.compile(
    r"\b(?:i|user) (?:prefer|prefers|like|likes|love|loves|hate|hates|dislike|dislikes"
    r"|don't like|do not like|'d rather|would rather|always use|never use"
    r"|usually)\b|\bmy favou?rite\b",
    re.I,
)
# where the user lives or works from, said of themselves: "based in Lisbon", "here in
# Portland", "we live in Halifax" (a place is a proper name)
_RESIDENCE = re.compile(
    r"^(?:(?i:so|ok|and|but|also|btw)\W+)*(?i:i|i'm|im|i am|we|we're|we are|my|our)\b"
    r".*\b(?i:based (?:in|out of)|living in|live in|located in|here in|moved to)\s+[A-Z][\w'-]+"
)
# what the user does, and where: "i run a small boatyard in falmouth", "I am Vice President
# of Operations at Prairie Lantern Credit Union", "I teach physics at Westbrook High"
_OCCUPATION = re.compile(
    r"^(?:(?i:so|ok|and|but|also|btw|hi|hello|well)\W+)*"
    r"(?:(?i:i|we)\s+(?i:run|own|manage|work|teach|lead|coach|chair)\b"
    r"[^.?!]{0,80}?\s(?i:at|for|in|of)"
    r"|(?i:i'm|im|i am)\s+(?:(?i:a|an|the)\s+)?(?!(?i:bit|little|lot|tad)\b)"
    r"(?:(?![\w'-]*ing\b)[\w'-]+\s+){0,5}?(?i:at|for))"
    r"\s+(?:(?i:a|an|the|our|my)\s+)?(?![a-z]+ing\b)\S"
)
# something given its name: "a corgi named Biscuit", "the robot, called Bolt"
_NAMED = re.compile(
    r"\b(?i:named|called|nicknamed)\s+[\"'“]?[A-Z][\w'-]+"
    # or named by an apposition: "tidepool (our lab server)", "rui (one of my mechanics)"
    r"|\b(?!(?i:it|this|that|them|these|those|one|him|her|us)\s)[\w.-]{2,}\s+"
    r"\((?i:our|my|the|one of (?:my|our|the))\s+[^()]{2,40}\)"
)
# a switch to a named thing: "we switched to SumUp", "going with Ciclomundo from now on",
# "replaced Jenkins with GitHub Actions" (the new value is a proper or product name)
_CHANGE_VERB = r"(?i:switch|mov|migrat|chang|upgrad|downgrad|transferr?|port|renam)\w*"
_SWITCHED = (
    rf"\b(?:{_CHANGE_VERB}\s+"
    r"(?:[\w'-]+\s+){0,4}?"
    r"(?i:to|onto)|(?i:go|going|went|stick|sticking|settled?)\s+with|(?i:replac|swapp?)\w*\s+"
    r"(?:[\w'-]+\s+){0,4}?(?i:with|for|by)|(?i:dropp?|ditch)\w*\s+(?:[\w'-]+\s+){0,4}?for"
    r"|(?i:settled|decided|landed|agreed)\s+on|(?i:opted|opting)\s+for"
    r"|(?i:i'm|im|i am|we're|we are)\s+(?i:on|using)(?=\s+\S+(?:\s+\S+)?\s+now\b))"
)
_SWITCH = re.compile(_SWITCHED + r"\s+(?:(?i:the)\s+)?[\"'“]?(?:[A-Z][\w.+-]*|[a-z]+[A-Z][\w.+-]*)")
# the same in a text written without capitals ("also switched to napa for parts"): the
# writer gives no capital to read, so the word right after the switch is what was switched
# to (after "the" a common noun: "sticking with the plan")
_SWITCH_UNCAPITALISED = re.compile(_SWITCHED + r"\s+(?P<name>[a-z][\w.+-]*)")


# a change between two named things, said with a verb of change: "move next year's
# yearbook from Jostens to Walsworth" (not "I drove from Leeds to York")
_FROM_NAME_TO_NAME = re.compile(
    rf"\b{_CHANGE_VERB}\s+(?:[\w'’-]+\s+){{0,5}}?"
    r"from\s+(?:[A-Z][\w&'’.-]*\s+){1,3}?to\s+(?:the\s+)?[A-Z][\w&'’.-]*"
)


def _switch(text: str) -> bool:
    if _SWITCH.search(text) or _named_change(text):
        return True
    if _role_holder(text):
        return True  # who holds a role now ("…, so Marisol is my dive buddy", "Tilly is
        # taking over the desk")
    if any(c.isupper() for c in text):
        return False  # a writer who capitalises capitalises names
    return any(
        found["name"] not in FUNCTION_WORDS for found in _SWITCH_UNCAPITALISED.finditer(text)
    )


def _named_change(text: str) -> bool:
    """ "from Jostens to Walsworth": both ends named, neither a weekday or a month alone
    ("from Monday to Friday" is a span of time, not a change of holder)."""
    for found in _FROM_NAME_TO_NAME.finditer(text):
        ends = re.findall(r"[A-Z][\w&'’.-]*", found.group(0))
        if not all(e.lower().rstrip(".") in CALENDAR for e in ends):
            return True
    return False


# "Wholesaler is now Hollander Flowers": a thing's new holder, named
_IS_NOW_NAMED = re.compile(r"\b(?:is|are)\s+now\s+(?:with\s+|on\s+|using\s+)?[A-Z][a-z]")
_NEAR_NAME = 5  # words either side of a name that say what it is the name of
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def switched_from(new_text: str, old_text: str) -> bool:
    """The newer text says a switch to a named thing ("moving to SumUp, the reader came
    today", "Wholesaler is now Hollander Flowers") and the older names another thing with
    a word of what they share beside it ("… go through a Square reader …", "wholesale
    flowers from the Van Vliet truck"): for search, the newer one is the current one. Which
    name it replaced is not known, so this orders hits and never supersedes anything."""
    theirs = names(old_text) - (_holders(new_text) or names(new_text))
    ours = _switch_words(new_text) if theirs else frozenset()
    if not ours:
        return False
    words = tokens(old_text)
    near = {
        words[j]
        for i, word in enumerate(words)
        if word in theirs
        for j in range(max(0, i - _NEAR_NAME), min(len(words), i + _NEAR_NAME + 1))
        if words[j] not in theirs
    }
    return any(derived(a, stem(b)) for a in ours for b in near if b.isalpha() and len(b) > 2)


def says_switch(text: str) -> bool:
    """Whether a text says a switch to a named thing (its name may open the sentence:
    "Tilly is taking over the desk")."""
    return bool(_switch_words(text))


@lru_cache(maxsize=4096)
def _switch_words(text: str) -> frozenset[str]:
    """The words of the sentences of ``text`` that say a switch to a named thing (none: no
    switch). Search compares one hit with each of the others: asked once per hit."""
    said = [s for s in _SENTENCE_END.split(text) if _switch(s) or _IS_NOW_NAMED.search(s)]
    return frozenset().union(*(words_of(sentence) for sentence in said))


# a thing's state said as current, of a subject of its own (not the speaker, not a
# pronoun): "colette brennan has the jersey bag now", "so luis does thursdays now", "all
# new clients go thru that now" — who holds, does or uses what, as of now
_STATE_NOW = re.compile(
    r"^\W*(?:(?:also|and|but|so|ok|oh|btw|right|yeah|well)\W+)*"
    r"(?!(?:i|i'm|im|we|we're|you|it|its|it's|that|that's|this|they|they're|he|she|there"
    r"|there's|here|now|let|let's|lets|everything|everything's|something|nothing|everyone"
    r"|someone|anyone|anything)\b)"
    r"[a-z][\w'’-]*(?:\s+[a-z][\w'’-]*){0,3}?(?:'s|’s|\s+(?:has|have|does|do|is|are|goes|go"
    r"|takes|take|runs|run|gets|get|uses|use|keeps|keep|handles|covers|owns|leads|holds|lives"
    r"|sits|starts|finishes|opens|closes|works))\s+(?:[\w'’/-]+\s+){0,6}?now\b"
    r"(?!\s+(?:that|i|we|you|what|how|why))",
    re.I,
)
# the speaker doing something now or saying something: "I was listening to Taylor Swift",
# "I told him Happy Birthday": the name is in the moment or in the words said
_DOING_OR_TELLING = re.compile(
    r"\b(?:was|were)\s+[a-z]+ing\b|\b(?:told|said|asked|texted|yelled|shouted)\b",
    re.I,
)


def _told_or_doing(text: str) -> bool:
    return _MOMENT.match(text) is not None and _DOING_OR_TELLING.search(text) is not None


# a named thing taken in place of another: "so we're doing Madeira instead"
_INSTEAD = re.compile(r"\binstead\b")
_NAMED_BEFORE = re.compile(r"(?<=\s)((?:[A-Z][\w.+'’-]*\s+){1,4})$")


def _named_instead(text: str) -> bool:
    """A name of up to four capitalised words right before "instead" (each "instead"
    looks back 80 characters at most: no scan of a long text from every position)."""
    for found in _INSTEAD.finditer(text):
        before = _NAMED_BEFORE.search(text[max(0, found.start() - 80) : found.start()])
        if before is not None and any(name_like(w) for w in before.group(1).split()):
            return True
    return False


# what the speaker habitually uses or deals with, by name: "I use Aftershoot to cull", "we
# bank with Monzo", "we order our hammers from Abel", "hammers are ordered from Abel". Said
# in the present tense of a first-person (or passive) habit, the name is the value of a
# standing fact (which tool, bank or supplier); a past tense ("I got a call from Dave") is
# an event and does not match, nor does being somewhere ("I'm on Zoom all day").
_HABIT_VERB = r"(?:use|bank|order|buy|source|host|run|book|shop|stock|store|insure|get)"
_USES_NAMED: Final = re.compile(
    r"(?:(?:^|[,;:]\s+|\b(?:and|but|so|now)\s+)(?:(?i:also|still|just|mostly|always|only)\s+)?"
    r"(?:(?i:i|we)\s+(?:(?i:now|still|mostly|always|only|usually|all)\s+)?"
    rf"(?i:{_HABIT_VERB})(?!\w))"
    r"|\b(?i:is|are)\s+(?:(?i:all|now|still|usually|always)\s+)?"
    r"(?i:ordered|bought|sourced|hosted|booked|stocked|stored|insured|banked))"
    r"(?:\s+(?![A-Z])[\w'’-]+){0,4}?"
    r"(?:\s+(?i:with|from|on|through|via|at|in|by|to))?"
    r"\s+(?P<name>[A-Z][\w.+&'’-]*)"
)


def _uses_named(text: str) -> bool:
    """A standing habit with a named thing as its value (see ``_USES_NAMED``): not a
    weekday, a month or a word of a closed class ("we run late on Mondays")."""
    return any(
        found["name"].lower().rstrip(".'’s") not in FUNCTION_WORDS | CALENDAR
        for found in _USES_NAMED.finditer(text)
    )


_WORKFLOW = re.compile(
    r"\bsteps?\s*(?:\d|:)|\bfirst\b.*\bthen\b|\bto \w+(?: \w+){0,4}, (?:first |run |do |use )",
    re.I,
)
_LESSON = re.compile(
    r"^(?:lesson(?: learned)?\s*[:,-]|note to self|rule of thumb|tip\s*:|turns out|always\b"
    r"|never\b|remember to\b|make sure to\b|don't ever\b"
    # or after a clause that sets it up: "whatever you suggest, never tell me to restart …"
    r"|[^,;.]{0,60}[,:]\s+(?:never|don'?t ever|do not ever)\s+(?!again\b)[a-z])",
    re.I,
)
# a first-person statement with no specific value is about the moment ("I'm still getting
# this error", "I want to make sure it's right"), not a durable lesson
_MOMENT = re.compile(r"^(?:i|i'm|im|i've|ive|i'll|i'd|i am|i have|i was|we|we're|we've|my)\b", re.I)
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


def name_like(word: str) -> bool:
    """A capitalised word that is not a function word: a person or a team."""
    return word[:1].isupper() and word.lower() not in FUNCTION_WORDS


def _specific(text: str) -> bool:
    """A statement with a value: a number, an identifier, or a name something is given."""
    return any(is_value(t) for t in tokens(text)) or _NAMED.search(text) is not None


# a capitalised word: Title-case ("Brendan's", "O'Neil") or a short acronym ("RIT")
_CAPITAL = r"(?:[A-Z][a-z][\w'’.-]*|[A-Z]{2,5}(?![\w]))"
_PROPER = re.compile(rf"(?<=[\w,;)] )({_CAPITAL}(?:\s+(?:of |the |& )?{_CAPITAL})+)")


def proper_name(text: str) -> str | None:
    """The first proper name of two capitalised words or more that does not open the
    statement ("the Riverside Players", "Hurricane Electric"): a name of a place, a group or
    a product, which is a value the statement gives. Words of a closed class ("I", "The",
    a weekday alone) do not make one."""
    for found in _PROPER.finditer(text):
        words = [w for w in re.split(r"\s+", found.group(1)) if w not in {"of", "the", "&"}]
        named = [w for w in words if w.lower().rstrip(".'’s") not in FUNCTION_WORDS]
        if len(named) >= 2:
            return found.group(1).rstrip(".")
    return None


# a person as the value of a responsibility: "Alex owns billing since the reorg"
_OWNER = re.compile(
    r"^(?:[A-Z][a-z]+(?: [A-Z][a-z]+)?|[a-z]+) (?:now )?(?:owns|leads|manages|runs|handles"
    r"|maintains|is on[- ]call for|is responsible for|took over) \w+",
)


# where a clause starts: a sentence, or after a pause
_CLAUSE_START = r"(?:^|[.!?,;:\u2014\u2013]\s+|\s-\s+|\b(?:and|but|so|now|then)\s+)"
_PERSON = r"[A-Z][a-z]+(?:[ -][A-Z][a-z]+)?"
# a person as the holder of a role, said with a determiner: "Osian is my captain", "Joost
# Bakker is acting manager for the team", "Priya's our on-call this week" (who holds it is
# the value; "Mo is the best" and "Friday is the deadline" are not)
_ROLE: Final = re.compile(
    _CLAUSE_START + r"(?:(?:also|oh|ok)\W+)*"
    rf"(?P<who>{_PERSON})(?:\s+is|['’]s)\s+(?:now\s+|also\s+|still\s+)?"
    r"(?:(?:my|our|the|their|his|her|your)\s+(?:new\s+)?|(?:acting|interim|new)\s+)"
    r"(?P<role>(?![a-z]+est\b)[a-z][\w'’-]*(?:\s+[a-z][\w'’-]*){0,2}?)"
    r"(?=\s*(?:$|[.,;:!)]|\s(?:for|of|on|at|in|until|till|since|from|now|this|next|and|but"
    r"|so)\b))"
)
# "new rep is Kirra", "our new treasurer will be Sam Ortiz": a role's new holder
_NEW_HOLDER: Final = re.compile(
    _CLAUSE_START + r"(?:(?:the|our|my|his|her|their)\s+)?"
    r"new\s+[a-z][\w'’-]*(?:\s+[a-z][\w'’-]*)?\s+(?:is|will be)\s+"
    rf"(?P<who>{_PERSON})(?=\s*(?:$|[.,;:!?)]|\s(?:and|but|so|from|who|she|he)\b))"
)
# a person taking a thing over: "Marcy Ng's taking over council from Dana", "Tilly is
# taking over the desk"; from a writer who never capitalises, "odile is taking over sound"
_TAKES_OVER: Final = re.compile(
    _CLAUSE_START + rf"(?P<who>{_PERSON}|[a-z]{{2,}})"
    r"(?:['’]s|\s+is|\s+has|\s+will)?\s+(?:taking|takes|took|taken|take)\s+over\b"
)


def _role_holder(text: str) -> bool:
    """A person said to hold a role ("Osian is my captain", "…, so Marisol is my dive
    buddy"), its new holder ("new rep is Kirra"), or who takes it over."""
    return bool(_holders(text))


def _holders(text: str) -> frozenset[str]:
    """The names a text gives as a role's holder now (not "Friday is the deadline", not
    "Here's the summary from …"; a lowercase name only from a writer who never
    capitalises): other names it mentions (the one who left) are not what it switched to."""
    capitals = any(c.isupper() for c in text)
    found = [
        hit["who"]
        for pattern in (_ROLE, _NEW_HOLDER, _TAKES_OVER)
        for hit in pattern.finditer(text)
        if hit["who"][0].isupper() or not capitals
    ]
    return frozenset(
        w.lower()
        for who in found
        if who.split()[0].lower() not in FUNCTION_WORDS | CALENDAR
        for w in who.split()
    )


def _short_claim(text: str) -> bool:
    """A claim that gives a named subject a short value: a value too ("ciso is grace", "sso
    moved from okta to entra id", "Alex owns billing")."""
    if _OWNER.match(text) and name_like(text.split()[0]):
        return True
    claim = parse(re.split(r"[,;(]|\s[-\u2014]\s", text)[0])  # its first clause
    return (
        claim.has_relation
        and not claim.pronoun_subject
        and 1 <= len(claim.value) <= 4
        and len(claim.subject) <= 3
        and claim.relation in {"be", "at", "changed to"}
    )


def route(
    text: str,
    tag: Tag,
    *,
    speaker: str,
    topics: Topics,
    max_topics: int,
    anchor: str | None = None,
) -> Route:
    """The one home of a candidate statement (or SKIP, with the reason). ``topics`` maps
    each existing topic to what is known of it (or is a plain list of names); ``anchor``
    is the topic of a live fact the statement corrects or restates, if one was found."""
    if speaker == "assistant" and tag is not Tag.INSIGHT and _NARRATION.match(text):
        return Route(Home.SKIP, text, reason="the agent narrating its own action")
    if speaker == "user" and (settled := _identity_or_style(text)) is not None:
        return settled
    if _WORKFLOW.search(text):
        return Route(
            Home.SKILL, text, reason="a reusable workflow: the agent saves it with skill_manage"
        )
    if _specific(text):
        topic = anchor or topic_for(text, topics, max_topics, kind=EVENT_TOPICS.get(tag))
        if topic is None:
            return Route(Home.SKIP, text, reason=f"all {max_topics} topics are taken")
        return Route(Home.TOPIC, text, topic=topic, reason="a specific fact")
    if tag is Tag.NOTED:  # the user asked for it to be remembered: kept, in its topic
        topic = anchor or topic_for(text, topics, max_topics)
        if topic is not None:
            return Route(Home.TOPIC, text, topic=topic, reason="asked to be remembered")
    if _LESSON.match(text):  # said as a lesson, in so many words
        return Route(Home.MEMORY, text, reason="a lesson, marked as one")
    if (reason := _value_said(text, speaker)) is not None:
        if (topic := anchor or topic_for(text, topics, max_topics)) is not None:
            return Route(Home.TOPIC, text, topic=topic, reason=reason)
    if speaker == "user" and _RESIDENCE.search(text):
        return Route(Home.USER, text, reason="where the user lives")
    if speaker == "user" and _OCCUPATION.search(text):
        return Route(Home.USER, text, reason="what the user does")
    if (reason := _name_said(text, speaker)) is not None:
        if (topic := anchor or topic_for(text, topics, max_topics)) is not None:
            return Route(Home.TOPIC, text, topic=topic, reason=reason)
    if _MOMENT.match(text):
        return Route(Home.SKIP, text, reason="the speaker's situation of the moment")
    if weight(tag) is Weight.HIGH:  # a correction, error, decision, completion or insight
        return Route(Home.MEMORY, text, reason=f"maybe a lesson ({tag.value})", sure=False)
    return Route(Home.SKIP, text, reason="a plain event with no specific value")


def _value_said(text: str, speaker: str) -> str | None:
    """Why a statement with no specific value still gives one (a topic's reason), if it
    does: a short claim, who holds a role, a switch to a named thing, a state now."""
    if _short_claim(text):
        return "a named value"
    if _role_holder(text):
        return "who holds a role"
    if _switch(text) or _named_instead(text):
        return "a switch to a named value"
    if speaker == "user" and _STATE_NOW.search(text):
        return "a state said as current"
    return None


def _name_said(text: str, speaker: str) -> str | None:
    """After where the user lives and what they do: a habit's named value, or a named
    place, group or firm ("we perform in St. …" is a doing, not a fact)."""
    if speaker == "user" and _uses_named(text):
        return "what the user uses, by name"
    if proper_name(text) is not None and not _told_or_doing(text):
        return "a named place, group or firm"
    return None


def _identity_or_style(text: str) -> Route | None:
    """A user's statement that settles who they (or the agent) are or how to reply."""
    if name := name_in(text):
        return Route(Home.USER_SETTINGS, f"name: {name}", reason="the user's name")
    if zone := timezone_in(text):
        return Route(Home.USER_SETTINGS, f"timezone: {zone}", reason="the user's timezone")
    if m := _AGENT_NAME.search(text):
        return Route(Home.AGENT_PROFILE, f"name: {m['v']}", reason="the agent's identity")
    if m := _AGENT_ROLE.search(text):
        role = m["v"].strip()
        return Route(Home.AGENT_PROFILE, f"role: {role}", reason="the agent's identity")
    if STYLE.search(text):
        return Route(Home.SOUL, text, reason="reply style")
    if _PREFERENCE.search(text):
        return Route(Home.USER, text, reason="a user preference")
    if standing_request(text) is not None:
        return Route(Home.SOUL, text, reason="a standing request for replies")
    return None


@dataclass(frozen=True, slots=True)
class TopicHint:
    """What the router knows of an existing topic: the words its facts use most, and the
    subjects (supersede keys) its live facts are about."""

    keywords: frozenset[str] = frozenset()
    subjects: frozenset[str] = frozenset()


Topics = Mapping[str, TopicHint] | Sequence[str]


def route_all(
    candidates: Sequence[Mapping[str, Any]],
    topics: Mapping[str, TopicHint],
    max_topics: int,
    anchors: Mapping[int, str] | None = None,
) -> list[tuple[int, Route]]:
    """Route a flush batch in order; a topic the rules open, and the subject a candidate
    put there, are known to the next candidate."""
    known = dict(topics)
    routes = []
    for candidate in candidates:
        found = route(
            candidate["text"],
            Tag(candidate["tag"]),
            speaker=candidate["speaker"],
            topics=known,
            max_topics=max_topics,
            anchor=(anchors or {}).get(int(candidate["id"])),
        )
        if found.topic:
            hint = known.get(found.topic, TopicHint())
            subject = keys(found.content).subject
            if subject:
                hint = TopicHint(hint.keywords, hint.subjects | {subject})
            known[found.topic] = hint
        routes.append((int(candidate["id"]), found))
    return routes


# Reports of what happened (a failure, a decision, a change made) gather in one topic per
# kind, so ten topics hold a project's subjects rather than one topic per incident.
EVENT_TOPICS: Final = {Tag.ERROR: "incidents", Tag.DECISION: "decisions", Tag.COMPLETED: "changes"}


def topic_for(text: str, topics: Topics, max_topics: int, kind: str | None = None) -> str | None:
    """Where a specific fact belongs: the topic already holding a live fact about the same
    subject; else a topic the text names; else, for a report of an event, its kind's topic;
    else one whose facts share at least two of its words; else a new topic named after its
    subject."""
    known: Mapping[str, TopicHint] = (
        topics if isinstance(topics, Mapping) else {name: TopicHint() for name in topics}
    )
    subject = keys(text).subject
    if subject:
        for name, hint in sorted(known.items()):
            if subject in hint.subjects:
                return name
    words = [t for t in tokens(text) if t.isalpha() and t not in FUNCTION_WORDS]
    stems = {stem(w) for w in words}
    if kind is not None and not any(
        stem(p) in stems for name in known for p in re.split(r"[-_]", name) if p
    ):
        if kind in known or len(known) < max_topics - 1:
            return kind  # the last slot is kept for what fits nowhere else
    best, best_score = None, 0
    for name, hint in sorted(known.items()):
        parts = [p for p in re.split(r"[-_]", name) if p]
        named = sum(1 for p in parts if stem(p) in stems)
        shared = len(stems & {stem(k) for k in hint.keywords})
        score = named * 10 + (shared if shared >= 2 else 0)
        if score > best_score:
            best, best_score = name, score
    if best is not None:
        return str(best)
    if len(known) >= max_topics - 1:  # the last slot gathers what fits nowhere else
        if GENERAL in known or len(known) < max_topics:
            return GENERAL
        return _nearest(known, stems)  # all taken: the topic its words are most at home in
    named_after = topic_name(text)
    return slug(named_after) if named_after else GENERAL


GENERAL: Final = "notes"


def _nearest(known: Mapping[str, TopicHint], stems: set[str]) -> str | None:
    """When every slot is taken, the topic sharing most of a statement's words (one is
    enough: a statement skipped is lost to search), else None."""
    scored = [(len(stems & {stem(k) for k in hint.keywords}), name) for name, hint in known.items()]
    shared, name = max(scored, default=(0, ""))
    return name if shared else None


# Words that say what happened to a subject, not what the subject is: never a topic name.
_NOT_A_NAME: Final = frozenset(
    """decided decide use using keep keeping failed fails failing lesson learned turns
    just confirm reminder always never set changed moved updated take takes took put
    january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday today tomorrow yesterday week
    month year day days weeks months years hour hours minute minutes""".split()
)
# The closed classes of English (pronouns, determiners, quantifiers, prepositions,
# conjunctions, auxiliaries, modals), the calendar's abbreviations and chat's fillers: a
# topic is never named after one of them.
FUNCTION_WORDS: Final = STOPWORDS | frozenset(
    """i me my mine myself we us our ours you your yours he him his she her hers it its they
    them their theirs this that these those who whom whose which what where when why how
    a an the some any no every each all both either neither few many much more most other
    another such own same of in on at by for with about against between into through during
    before after above below to from up down out off over under again further once here
    there and but or nor so yet if then than because as until while although though unless
    since whether am is are was were be been being have has had having do does did doing
    will would shall should can could may might must ought not only very too also just
    even still already now ever never soon really quite rather pretty almost enough btw
    wait ok okay oh ah hmm um uh well like yeah yes yep nope hey hi hello thanks thank
    please pls lol anyway actually basically maybe probably perhaps sure let lets let's
    i'm i've i'll i'd we're we've we'll you're it's that's there's here's what's im ive
    ill dont didnt doesnt cant wont isnt wasnt got get gets getting go goes going went
    gone make makes made making need needs want wants trying try tried see seems thing
    things stuff something anything everything nothing one ones way lot bit kind sort
    given new old good bad big small first last next sorry typo heads ref fyi note quick
    question update reminder fwiw imo tbh thx yeah cool nice great plus few changes kinda
    sorta gonna wanna gotta lemme dunno totally super literally honestly ugh argh meh
    oops whoops welp gah omg wow yay phew
    everyone everybody someone somebody anyone anybody nobody everywhere somewhere anywhere
    around aside per via across along among amid toward towards upon within without beyond
    despite except near past throughout unlike versus vs least less fewer several lots
    plenty jan feb mar apr jun jul aug sep sept oct nov dec mon tue tues wed thu thur thurs
    fri instead otherwise else meanwhile anyhow somehow""".split()
)


def _namable(word: str, verbs: tuple[str, ...] = ("ing", "ed", "ly")) -> bool:
    return (
        word.isalpha()
        and len(word) >= 3
        and word not in FUNCTION_WORDS
        and word not in _NOT_A_NAME
        and word not in IRREGULAR_PAST
        and not word.endswith(verbs)
    )


def topic_name(text: str) -> str | None:
    """What a new topic is called: a word of the statement's subject phrase; else the word
    naming its first value ("Redis 7.0", "port 5000"); else its first noun-like word:
    never a function word, a verb form or a single letter."""
    phrase = subject_phrase(text)
    words = tokens(text)
    # a word right after a subject pronoun is its verb ("I block 3-hour slots", "we met")
    verbs = {words[i + 1] for i, w in enumerate(words[:-1]) if w in _SUBJECTS}
    if phrase:  # of "quick one, kafka cluster is on 3.5.1" the last clause names it
        last = tokens(re.split(r"[,;:()\u2014\u2013]|\s-\s", phrase)[-1])
        if last and last[0] in _SUBJECTS:
            last = ()  # "I must book the groomer and she (is …)": a clause, no noun phrase
        found = [w for w in last if _namable(w, ("ed", "ly")) and w not in verbs]
        if found:  # "staging db": what tells it apart comes first
            return found[0]
    for i, word in enumerate(words):
        if is_value(word) and i > 0 and _namable(words[i - 1]) and words[i - 1] not in verbs:
            return words[i - 1]
    head = _first_head(words, verbs)
    if head:
        return head
    after_to = {words[i + 1] for i, w in enumerate(words[:-1]) if w == "to"}
    # a unit of measure right after a number is part of the value ("30 minutes"), not what
    # the value is of (a counted thing still names one: "5 replicas")
    units = measure_units(words)
    found = [w for w in words if _namable(w) and w not in after_to | verbs | units]
    return found[0] if found else None


_SUBJECTS: Final = frozenset("i we you they he she i'm we're im".split())
_DETERMINERS: Final = frozenset("my our the his her their your this".split())


def _first_head(words: Sequence[str], verbs: set[str]) -> str | None:
    """The last namable word of the first noun phrase a determiner opens ("my editing
    schedule" → "schedule")."""
    for i, word in enumerate(words):
        if word not in _DETERMINERS:
            continue
        phrase: list[str] = []
        for after in words[i + 1 : i + 5]:
            if after in FUNCTION_WORDS or not after.isalpha():
                break
            phrase.append(after)
        named = [w for w in phrase if _namable(w, ("ly",)) and w not in verbs]
        if named:
            return named[-1]
    return None


def slug(word: str) -> str:
    clean = re.sub(r"[^a-z0-9]+", "-", word.lower()).strip("-")
    return clean[:40] or "notes"
