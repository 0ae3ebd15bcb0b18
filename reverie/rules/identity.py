"""Who the user is: a name or a timezone given in passing, in the forms chat uses ("Priya
here", "name's Tom", "I'm Craig, a backend dev", "jst here", "my tz is asia/kolkata",
"im on CET"). Both go to user_settings, one value each.
"""

from __future__ import annotations

import re
from typing import Final

from reverie.rules.similarity import CALENDAR, MONTHS

# Timezone abbreviations are a closed set; an IANA name has its own shape (Area/City).
_TZ_ABBR: Final = (
    "UTC|GMT|CET|CEST|EET|EEST|BST|IST|JST|KST|CST|CDT|EST|EDT|MST|MDT|PST|PDT|AKST"
    "|HST|AEST|AEDT|ACST|AWST|NZST|NZDT|SGT|HKT|PHT|WIB|MSK|SAST|BRT|PKT"
)
_TZ_VALUE: Final = (
    rf"(?:(?:{_TZ_ABBR}|UTC|GMT)\s?[+-]\s?\d{{1,2}}(?::?\d\d)?|(?:{_TZ_ABBR})\b"
    r"|[A-Za-z]+/[A-Za-z_]+(?:/[A-Za-z_]+)?)"
)
_TZ: Final = re.compile(
    rf"\b(?:my )?(?:tz|time ?zone)(?: is|:|=| here is)?\s+(?P<a>{_TZ_VALUE})"
    rf"|\bi(?:'m|m| am)? (?:in|on|at)\s+(?P<b>{_TZ_VALUE})"
    rf"|^(?P<c>{_TZ_VALUE}) here\b"
    rf"|\((?:[^()]*\s)?(?P<d>{_TZ_VALUE})\)"
    rf"|\b(?:so |on |in )?(?P<e>{_TZ_VALUE}) for me\b"
    r"|\b(?:on|in) (?P<f>pacific|eastern|central|mountain) time\b"
    r"|\((?P<h>pacific|eastern|central|mountain) time\b"
    # a place's time the user keeps: "im on berlin time", "please assume UK time"
    r"|\b(?:(?:i'?m|i am|we're|we are) on|assume|use|so) (?P<g>(?!(?:my|the|no|your|our|local"
    r"|same|real|full|part|their|this|that|what|some|any|one|his|her)\b)[a-z]{2,20}) time\b",
    re.I,
)
_NAME_WORD: Final = r"[A-Z][a-z][\w'-]*"
# a greeting or a discourse word before an introduction: "hi there, I'm …", "ok so I'm …"
_GREETING: Final = r"^(?:(?i:hi|hey|hello|yo|so|ok|okay|well|oh|and)(?i: there| all)?[,!.]?\s+)*"
_NAME: Final = re.compile(
    rf"(?<!\w)(?<!(?i:your) )(?i:my name is|my name's|name's|call me|i am called|i'm called)"
    rf"\s+(?P<a>[A-Za-z][a-z][\w'-]*(?: {_NAME_WORD})?)"
    rf"|{_GREETING}(?i:i'm|i am|im|this is|it's)\s+(?P<b>{_NAME_WORD})"
    rf"(?=\s*(?:[,.!]|$| (?i:here|from|btw|and)\b))"
    rf"|{_GREETING}(?P<c>{_NAME_WORD}) (?i:here)\b"
    rf"|{_GREETING}(?P<d>[a-z][a-z'-]{{1,20}}) (?:here|btw)\b(?=\s*[,.!-]|\s*$)"
    rf"|{_GREETING}(?i:it's|its|this is) (?P<e>[a-z][a-z'-]{{1,20}})"
    r" (?=from\b|here\b)"
    # signed off: "Kind regards, Eleanor", "thank u — priya", "Thank you!! - Deb"
    r"|(?:(?:^|[.!?]\s+)(?i:(?:kind |best |warm(?:est)? |many )?regards|cheers|best|sincerely)"
    r"\s*[,\u2013\u2014-]\s*|(?i:thanks(?: again)?|thank (?:you|u)|thx|ty)\W*[-\u2013\u2014]\s*)"
    r"(?P<f>[A-Za-z][a-z'-]{1,20}(?: [A-Z][a-z'-]+)?)\s*[.!]*\s*$"
    rf"|(?:^|\s)[-\u2013\u2014]\s*(?P<g>{_NAME_WORD})\s*[.!]*\s*$"
    rf"|{_GREETING}(?P<h>[A-Za-z][a-z'-]{{1,20}}) signing off\b",
)
# how the user wants the agent to reply (SOUL.md): said as a request, and still a statement
STYLE: Final = re.compile(
    r"\b(?:reply|respond|answer|write|talk|speak)(?:s|ing)? (?:to me )?(?:in|with|using|briefly"
    r"|concisely|formally|casually|only)\b|\bbe (?:more )?(?:concise|brief|terse|formal|casual"
    r"|friendly|direct)\b|\bno emojis?\b|\buse bullet|\bkeep (?:it|answers|replies|responses)"
    r" (?:short|brief)\b|\bplain text\b|\btone\b",
    re.I,
)
# capitalised words that are not names when they follow "I'm"
_NOT_NAMES: Final = frozenset(
    """Back Done Fine Good Going Here Not Okay Ok Sorry Sure Trying Working Just Also Still
    Using Looking Getting Having Planning Thinking Currently Now Ready Happy Glad Stuck New
    Interested Curious Confused Available Free Busy Tired Away Off On In At""".split()
)


# lower-case words that come before "here" without being a name
_NOT_NAME_WORDS: Final = frozenset(
    """same back still new everyone everybody nobody all over right up down out in stuck
    again also just only me you we they he she it this that who nothing something someone
    somebody anyone what how why where when here there now ok okay yes no thanks thank
    sorry hey hi hello yo lol maybe later anytime tomorrow soon mate man dude buddy bro pal
    guys folks team much heaps loads tons lots again""".split()
) | (CALENDAR - MONTHS)  # weekdays; a month is a name too (June, April, Jan)


def name_in(text: str) -> str | None:
    """The user's name, if the text gives it."""
    m = _NAME.search(text)
    if m is None:
        return None
    name = m["b"] or m["c"] or m["a"] or m["d"] or m["e"] or m["f"] or m["g"] or m["h"] or ""
    name = name[:1].upper() + name[1:]
    first = name.split()[0]
    if first in _NOT_NAMES or first.lower() in _NOT_NAME_WORDS:
        return None
    return None if re.fullmatch(_TZ_ABBR, first.upper()) else name  # "jst here" is a zone


_JOINER: Final = re.compile(r"^(?:[\s,;:.!\u2014\u2013-]|and\b|btw\b)+", re.I)


def identity_apart(text: str) -> tuple[str, str | None] | None:
    """A sentence that gives the user's name or timezone, split in two: the clause that
    gives it, and what the sentence says besides, as a statement of its own ("I'm Dev, I
    teach physics at Westbrook High" → "I'm Dev", "I teach physics at Westbrook High"),
    None for that when too little is left. None when the sentence gives neither."""
    for pattern, found in ((_NAME, name_in), (_TZ, timezone_in)):
        m = pattern.search(text)
        if m is None or found(text) is None:
            continue
        parts = (text[: m.start()].strip(" ,;"), _JOINER.sub("", text[m.end() :]).strip())
        rest = _JOINER.sub("", ", ".join(p for p in parts if p))
        said = m.group(0).strip()
        return said, (rest[:1].upper() + rest[1:] if len(rest.split()) >= 4 else None)
    return None


# a message's last line that is only a name, maybe after a dash and with a role after it,
# without the full stop a sentence ends with: "Tomás", "- Denise (Oyelaran, head coach)",
# "~ Sam K."; or a request to sign with it
_SIGNATURE: Final = re.compile(
    rf"\s*(?:[-\u2013\u2014~]\s*)?(?P<n>{_NAME_WORD})(?: [A-Z][a-z'-]+| [A-Z]\.)?"
    r"(?:\s*\([^()\"“”\n]{0,60}\))?\s*"
)
_SIGN_AS: Final = re.compile(
    r"\b(?i:sign(?:ed)?(?: it| them| off)? (?:from|as)(?: me)?)[,:]?"
    rf"\s+(?P<n>{_NAME_WORD})\s*[.!]*$"
)


def signed_off(text: str) -> str | None:
    """The user's name when a message is signed with it: its last line is the name alone,
    below something else ("…greedy?\\nTomás"), or it ends by asking to be signed with it
    ("sign it from me, Priya"). "Thanks, Ilse" thanks Ilse; a name at the end of a line of
    prose is an answer as often as a signature ("…for the backend? Postgres"); a quoted
    email's signature is not the user's: none of them gives a name."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines or any(q in lines[-1] for q in '"“”>'):
        return None
    found = _SIGNATURE.fullmatch(lines[-1]) if len(lines) >= 2 else None
    found = found or _SIGN_AS.search(lines[-1].strip())
    if found is None:
        return None
    name = found["n"]
    if name in _NOT_NAMES or name.lower() in _NOT_NAME_WORDS | _NOT_SIGNATURES:
        return None
    return name


# words a message can end on alone that are not a name: thanks, praise, a yes or a no
_NOT_SIGNATURES: Final = frozenset(
    """thanks thank thx cheers ty perfect great awesome amazing nice good fine sure
    yes yeah yep nope no ok okay done agreed exactly absolutely definitely lol haha wow
    please pls bye goodbye later anyway anyways whatever regards best sincerely love xoxo
    help ugh oops sorry congrats congratulations hooray yay brilliant excellent wonderful
    lovely sweet bingo correct right true indeed cool""".split()
)


def timezone_in(text: str) -> str | None:
    """The user's timezone, if the text gives it."""
    m = _TZ.search(text)
    if m is None:
        return None
    if m["f"] or m["h"]:  # kept as said: a stored value must be the user's own words
        return f"{(m['f'] or m['h']).capitalize()} time"
    if m["g"]:
        return f"{m['g'][:1].upper()}{m['g'][1:]} time"
    found = (m["a"] or m["b"] or m["c"] or m["d"] or m["e"]).replace(" ", "")
    return found if "/" in found else found.upper()
