"""Our own credential shapes, beside detect-secrets' format plugins: the token formats it
lacks, and the ways people paste a credential into a chat (a labelled value, a URL with a
password, an auth header, a PEM block, a door code, a bare random token).

A labelled value counts only when it looks like a credential: placeholders
(``YOUR_API_KEY``, ``mypassword``), references (``os.environ['TOKEN']``, ``${DB_PASS}``,
``request.form['password']``) and masks (``****``) are how code and docs *mention* one.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Final

from reverie.rules import passwords


@dataclass(frozen=True, slots=True)
class Finding:
    """One secret span of a text, and what kind of credential it is."""

    start: int
    end: int
    kind: str
    rank: int  # lower is more specific: a named token format beats a generic shape


RANK_FORMAT: Final = 0  # a published token format (a prefix, a fixed layout)
RANK_SHAPE: Final = 1  # a credential in a URL or header, an access code
RANK_LABEL: Final = 2  # a value after a credential label
RANK_RANDOM: Final = 3  # a bare random-looking token

AWS_KEY_ID: Final = re.compile(r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}")

# ---- what a credential value looks like --------------------------------------------------

_REFERENCE = re.compile(
    r"^[$<{%]|[()\[\]]|^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$"  # ${X}, <x>, f(x), a.b.c
)
_CONSTANT = re.compile(r"[A-Z]+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")  # SECRET, YOUR_API_KEY


def _classes(value: str) -> int:
    """Character classes in a value: lower, upper (past a capital first letter), digit,
    symbol (``_-.`` separate words, they are not symbols)."""
    return sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value[1:]),
            any(c.isdigit() for c in value),
            any(not c.isalnum() and c not in "_-." for c in value),
        )
    )


def _mention(value: str) -> bool:
    """A placeholder, a reference or a mask rather than the credential itself."""
    top = Counter(value.lower()).most_common(1)[0][1]
    return bool(_REFERENCE.search(value) or _CONSTANT.fullmatch(value) or top * 2 > len(value))


def credential(value: str) -> bool:
    """A password-like value: ≥ 6 chars mixing classes (or all digits), not a mention."""
    if len(value) < 6 or _mention(value):
        return False
    return _classes(value) >= 2 or value.isdigit()


def strong(value: str) -> bool:
    """A value that is a password even without a label's ``is`` / ``=``: letters, digits
    and a symbol, ≥ 8 chars."""
    return len(value) >= 8 and _classes(value) >= 3 and not _mention(value)


_SYMBOL = re.compile(r"[!#$%&*?@^~+]")


def password_shaped(value: str) -> bool:
    """Lower and upper case, a digit and a symbol that is not only its first or last char
    ("#project1Modal", "Hello2!" are not), no e-mail's "@" inside, and strong."""
    core = value.rstrip("!?")
    return (
        any(c.islower() for c in core)
        and any(c.isupper() for c in core)
        and any(c.isdigit() for c in core)
        and _SYMBOL.search(core[1:-1]) is not None
        and not ("@" in core[1:-1] and "." in core)
        and strong(core)
    )


def token_like(value: str) -> bool:
    """An API-key-like value: ≥ 16 chars with letters and digits, not a mention, not a
    name built of words and short tags (``v2-deps-9f8e7d6c``, ``build-2024-03-a8f9c2e``)."""
    if len(value) < 16 or _mention(value) or identifier(value):
        return False
    return any(c.isalpha() for c in value) and any(c.isdigit() for c in value)


_NAME_PIECE = re.compile(r"[a-z]{3,}")
_SHORT_TAG = 12  # a hex or version piece shorter than this is a tag, not key material


def identifier(value: str) -> bool:
    """A name joined from pieces (``-``, ``_``, ``.``, ``:``, ``/``) with a lower-case word
    among them and no piece of key length: a cache key, a build or image tag."""
    pieces = [p for p in re.split(r"[-_.:/]", value) if p]
    if len(pieces) < 2 or not any(_NAME_PIECE.fullmatch(p) for p in pieces):
        return False
    return all(len(p) < _SHORT_TAG for p in pieces if not p.isalpha())


def decodes_to_pair(value: str) -> bool:
    """A base64 value that decodes to ``user:password`` (an HTTP basic auth header)."""
    try:
        raw = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    text = raw.decode("utf-8", "replace")
    return ":" in text.strip(":") and text.isprintable()


def entropy(token: str) -> float:
    """Shannon entropy in bits per character."""
    counts = Counter(token)
    return -sum(n / len(token) * math.log2(n / len(token)) for n in counts.values())


_PIECES = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def random_looking(token: str) -> bool:
    """A run of letters and digits with lower case, upper case and digits, near the entropy
    of random characters, in short pieces: a key, not a CamelCase name or a word."""
    if len(token) < 20 or _classes(token) < 3:
        return False
    if entropy(token) < 0.8 * math.log2(min(len(token), 62)):
        return False
    return len(token) / len(_PIECES.findall(token)) <= 3.5


# ---- the rules ---------------------------------------------------------------------------

_SEP = r"[\"'\]]?\s*(?:is|was|are|to|=|:=|=>|->|:|>)\s*[\"'`]?"
_QUALIFIER = r"(?:\s+(?:for|of|on|to|at)(?:\s+[\w.@/-]+){1,4}?){0,2}"  # "for the gate at the venue"
# how a value is said after its label: "is 4471", ": 4471", ", it's 4471", ", its 5093"
_SAID_AS = r"\s*(?:,\s*)?(?i:it['\u2019]?s|it is|is|was|=|:|#|-)?\s*"
_VALUE = r"(?P<v>[^\s\"'`,;<]{1,256})"  # bounded: a long run costs one bounded try
_TOKEN_LABEL = (
    r"(?:api[_ -]?key|apikey|api[_ -]?token|access[_ -]?key(?:[_ -]?id)?|secret[_ -]?"
    r"(?:access[_ -]?)?key|client[_ -]?secret|app[_ -]?secret|auth[_ -]?token|access[_ -]?"
    r"token|refresh[_ -]?token|bot[_ -]?token|token|secret|private[_ -]?key|signing[_ -]?key"
    r"|webhook[_ -]?secret|credentials?|creds|key|(?-i:[A-Z]{2,}(?:TOKEN|SECRET|KEY)))"
)
_LABEL_START = r"(?i:(?:\b|(?<=_))"
_LABEL_END = r"(?:\b|(?=_)))"
_TOKEN_NAMED = _LABEL_START + _TOKEN_LABEL + _LABEL_END


@dataclass(frozen=True, slots=True)
class _Rule:
    kind: str
    rank: int
    needs: tuple[str, ...]  # lower-case substrings, one of which any match contains
    pattern: re.Pattern[str]
    check: Callable[[str], bool] | None = None  # applied to group "v" (else the match)


_LOCK: Final = r"(?i:\b(?:lock|padlock|locker|room|shed|door|gate|safe|box|cage|cabinet)s?\b)"
_COMBO: Final = r"(?i:\b(?:combo|combination)\b)"
_COMBO_VALUE: Final = (  # a dial's numbers ("10-20-30") or a keypad's ("4471")
    r"\s*(?:[,:=]|\bis\b)?\s*(?i:is\s+)?(?P<v>\d{1,3}(?:[- ]\d{1,3}){2,3}|\d{4,6})"
    r"(?![\w:/-]|[.,]\d)"
)


def _rule(
    kind: str,
    rank: int,
    needs: str,
    pattern: str,
    check: Callable[[str], bool] | None = None,
) -> _Rule:
    return _Rule(kind, rank, tuple(needs.split()), re.compile(pattern, re.S), check)


_TOKENISH = "key token secret cred"
# a number followed by its unit is a quantity ("the gate is 1200 metres away"), not a code
_NOT_A_QUANTITY = (
    r"(?!\s*(?:%|(?i:years?|yrs?|days?|weeks?|hours?|hrs?|minutes?|mins?|seconds?|secs?|am|pm"
    r"|kg|lbs?|km|miles?|m|ms|ft|feet|foot|cm|mm|sq|square|metres?|meters?|dollars?|euros?"
    r"|pounds?|people|guests|users|items|units|words|pages|rpm|watts?|w|kw|v|volts?)\b))"
)
_YEAR = re.compile(r"(?:19|20)\d\d")
# a code given digit by digit, as a keypad is pressed ("9-0-5-2"), or as a dial's numbers
# ("19-44-02"); never a date's four-digit year, a score ("3-2-1") or a range ("2-3")
_KEYED = r"\d(?:-\d){3,7}(?!-?\d)|\d\d(?:-\d\d){2,3}(?!-?\d)"
# what may come right before "code" said apart from its lock: a determiner or a pause
# (each a fixed-width look back, tried only where "code" starts)
_AFTER_WORD = "|".join(
    [
        *(rf"(?<=\b{d} )" for d in "the The its their his her a my our your".split()),
        *(f"(?<={re.escape(p + space)})" for p in ",;:(" for space in ("", " ")),
    ]
)
# what a code opens, named: "the key safe by the side door", "the alarm"
# what holds a code and nothing else (its code may look like a year), then what a code opens
_BOX_WORDS = r"lockbox|key ?box|key ?safe|keypad|padlock|locker"
_OPENED_WORDS = r"alarm|gate|door|safe|garage"
_LOCK_WORDS = rf"{_BOX_WORDS}|{_OPENED_WORDS}"
_LOCKED = rf"(?i:\b(?:{_LOCK_WORDS})\b)"
# whose code a lock's code is: "the user code", "a guest code" (never "area code")
_CODE_FOR = (
    r"(?i:user|guest|entry|access|master|door|gate|alarm|keypad|lock|unlock|backup|temp"
    r"|temporary|new|own)"
)
# and, with a code said later in the sentence, the places whose codes it names
_LOCKS = (  # a plain lock only as a thing fitted: "a new lock", "the lock" (not "row locks")
    rf"(?i:\b(?:{_LOCK_WORDS}|(?:a|an|the|new|our|my|that)\s+(?:new\s+)?locks?"
    r"|building|entry|access|security)\b)"
)
# what may follow a code said far from its label: the sentence's end or a pause, or a
# closed-class word — never a counted thing ("there are 1200 sheep")
_CODE_ENDS = (
    r"(?=\s*(?:$|[,;:!?)\]\u2014\u2013]|\.(?!\d)|-\s|(?i:and|or|but|then|so|if|for|to|on|at"
    r"|from|until|when|btw|lol|pls|please|thanks)\b))"
)
_RULES: Final = (
    _rule("aws-access-key", RANK_FORMAT, "akia asia abia acca a3t", rf"\b{AWS_KEY_ID.pattern}\b"),
    # a key id of the wrong length, mistyped or cut: still a key ("AKIA4TQZ7EXAMPLE9KD")
    _rule("random-token", RANK_SHAPE, "akia asia", r"\b(?:AKIA|ASIA)[A-Z0-9]{12,19}\b"),
    _rule(
        "aws-secret-key",
        RANK_FORMAT,
        "aws",
        r"(?i:aws)[\w .-]{0,30}?(?i:secret)[\w .-]{0,20}?"
        + _SEP
        + r"(?P<v>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
        token_like,
    ),
    _rule(
        "github-token",
        RANK_FORMAT,
        "gh github_pat_",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_\w{22,})",
    ),
    _rule(
        "slack-token",
        RANK_FORMAT,
        "xox xapp-",
        r"\bxox[abposre]-\d+-[A-Za-z0-9-]{8,}|\bxapp-\d-\w+-\d+-\w+",
    ),
    _rule(
        "gitlab-token",
        RANK_FORMAT,
        "gl",
        r"\b(?:glpat|gldt|glrt|glptt|glsoat|glft|glcbt|glimt|glagent|gloas)-[\w-]{20,}",
    ),
    _rule("anthropic-key", RANK_FORMAT, "sk-ant-", r"\bsk-ant-[a-z]{2,8}\d{2}-[\w-]{20,}"),
    _rule(
        "openai-key",
        RANK_FORMAT,
        "sk-",
        r"\bsk-(?!ant-)(?:proj-|svcacct-|admin-)?(?=[\w-]*\d)[\w-]{20,}",
    ),
    _rule("google-api-key", RANK_FORMAT, "aiza", r"\bAIza[\w-]{35}(?![\w-])"),
    _rule("stripe-key", RANK_FORMAT, "k_live_ k_test_", r"\b[sr]k_(?:live|test)_[0-9A-Za-z]{16,}"),
    _rule("huggingface-token", RANK_FORMAT, "hf_", r"\bhf_[A-Za-z0-9]{30,}\b"),
    _rule("npm-token", RANK_FORMAT, "npm_", r"\bnpm_[A-Za-z0-9]{36}\b"),
    # detect-secrets' npm plugin (``//.+/:_authToken=``) is quadratic on a line of ``//``
    # repeats, so its .npmrc shape is matched here, anchored on the literal
    _rule(
        "npm-token",
        RANK_FORMAT,
        "_authtoken",
        r"/:_authToken=\s*(?P<v>npm_[A-Za-z0-9]{36}|[A-Fa-f0-9-]{36})(?![\w-])",
    ),
    _rule("jwt", RANK_FORMAT, "eyj", r"\beyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]{8,}"),
    _rule(
        "connection-string",
        RANK_SHAPE,
        "://",
        r"://[^\s/:@]*:(?P<v>[^\s/@]+)@[\w.\[-]",
        lambda v: credential(v) or passwords.plain_value(v),
    ),
    _rule(
        "bearer-token",
        RANK_SHAPE,
        "bearer",
        r"(?i:\bbearer)\s+(?P<v>[\w.~+/=-]{16,})",
        token_like,
    ),
    _rule(
        "basic-auth",
        RANK_SHAPE,
        "basic",
        r"(?i:\bbasic)\s+(?P<v>[A-Za-z0-9+/]{8,}={0,2})",
        decodes_to_pair,
    ),
    _rule(
        "basic-auth",
        RANK_SHAPE,
        "-u --user",
        r"(?:^|\s)(?:-u|--user)\s+[\"']?[^\s:\"']+:(?P<v>[^\s\"']+)",
        lambda v: credential(v) or passwords.plain_value(v),
    ),
    _rule(
        "access-code",
        RANK_SHAPE,
        "code",
        r"(?i:\b(?:door|alarm|gate|lock|safe|garage|building|entry|access|key ?pad|security"
        r"|lockbox|locker)(?:\s+(?:panel|system|pad|box))?\s+code\b)"
        + _QUALIFIER
        + _SAID_AS
        + rf"(?P<v>{_KEYED}|[#*]?\d[\d#*]{{2,}}[#*]?)(?!\w|\.\d)",
    ),
    _rule(  # a code named after its lock: "the key box at the sacristy door, code 3091"
        "access-code",
        RANK_SHAPE,
        "code",
        _LOCKED + r"(?:[\s,]+[\w'-]+){0,6}?(?:\s*[,;:(]\s*|\s+(?i:with|using|has|have|takes)"
        r"\s+(?i:the\s+|a\s+)?)(?i:code)\s*(?i:is|=|:)?\s*"
        rf"(?P<v>{_KEYED}|[#*]?\d{{4,8}}[#*]?)(?![\w:/-]|[.,]\d)",  # four digits: not "code 500"
    ),
    _rule(  # a lock's combination: "the equipment room …, Darren gave me the combo, 12-34-08"
        "access-code",
        RANK_SHAPE,
        "combo combination",
        rf"{_LOCK}[^.!?\n]{{0,80}}?{_COMBO}(?:\s+(?:code|number))?"
        + _COMBO_VALUE
        + _NOT_A_QUANTITY,
    ),
    _rule(  # "the combo for the shed is 10 20 30"; "the combination for the storeroom
        # padlock at the market, which is 3-9-1-7"
        "access-code",
        RANK_SHAPE,
        "combo combination",
        rf"{_COMBO}(?:\s+(?:code|number))?\s+(?i:for|to|of|on)\s+(?:[\w'-]+\s+){{0,3}}?{_LOCK}"
        r"(?:[\s,]+[\w'-]+){0,6}?" + _COMBO_VALUE + _NOT_A_QUANTITY,
    ),
    _rule(  # a code said as what the lock is: "the lockbox on the side door is 4471"; a
        # box's code may look like a year ("lockbox … is 1937"), a door's or gate's may not
        "access-code",
        RANK_SHAPE,
        "lock box keypad alarm gate door safe garage",
        # a plain lock only as the lock of a place, its code ending the clause: "the lock
        # on the honey house is 2719" (not "the lock on the orders table is 3000 rows")
        rf"(?i:\b(?:(?P<box>{_BOX_WORDS})|{_OPENED_WORDS}|(?P<plain>locks?)(?=\s+(?:on|for|of|at)\s))\b)"
        r"(?:[\s,]+[\w'-]+){0,5}?\s*,?\s*(?i:it['\u2019]?s|it is|is|=|:)\s*"
        r"(?(box)|(?![#*]?(?:19|20)\d\d(?!\d)))"
        # the value ends there: no decimal, name, path or street after it ("4471.")
        rf"(?P<v>{_KEYED}|[#*]?\d{{4,8}}[#*]?)(?![\w:/-]|[.,]\w|\s+[A-Z][a-z])"
        + _NOT_A_QUANTITY
        + rf"(?(plain){_CODE_ENDS})",
    ),
    _rule(  # a box's code after a pause, ending its sentence: "a key safe by the side
        # gate, 4471."
        "access-code",
        RANK_SHAPE,
        "lockbox box keypad padlock safe locker",
        rf"(?i:\b(?:{_BOX_WORDS})\b)(?:[\s,]+[\w'-]+){{0,6}}?\s*,\s*"
        r"(?P<v>[#*]?\d{4,8}[#*]?)(?=\s*(?:$|[!?;)]|\.(?!\d)))",
        lambda v: not _YEAR.fullmatch(v),
    ),
    _rule(  # a lock's code changed: "the parish changed the lockbox to 7731"
        "access-code",
        RANK_SHAPE,
        "lockbox box keypad padlock gate door safe locker",
        r"(?i:\b(?:changed|reset|re-?keyed|set)\s+(?:the|our|my|their|its)\s+(?:[\w'-]+\s+){0,2}?"
        rf"(?:{_BOX_WORDS}|gate|door|safe)"
        r"(?:\s+code)?\s+to)\s+(?P<v>[#*]?\d{4,8}[#*]?)(?![\w.:/-]|,\d)" + _NOT_A_QUANTITY,
        lambda v: not _YEAR.fullmatch(v),
    ),
    _rule(  # a lock's code said later in its sentence: "a key safe by the side door, the
        # code's 4471"; "the alarm code for her for when she opens on sunday …, it's 8812"
        "access-code",
        RANK_SHAPE,
        "code",
        # "code" right after its lock, or later after a determiner or a pause: never another
        # kind of code ("the door … has area code 0161")
        rf"(?:{_LOCKS}\s+(?:(?i:panel|pad|system)\s+)?|{_LOCKS}[^.!?\n]{{0,60}}?(?:{_AFTER_WORD})"
        rf"(?:{_CODE_FOR}\s+)?(?=(?i:code)\b))(?i:code\b)"
        # up to the first digit at once (possessive: nothing to try twice), said after a
        # space, "=" or ":" ("the code's 4471", "…, it's 8812", "code: 7788")
        r"(?:['\u2019]s)?[^.!?\n\d#*]{0,80}+(?<=[\s=:])(?P<v>[#*]?\d{4,8}[#*]?)" + _CODE_ENDS,
        lambda v: not _YEAR.fullmatch(v),
    ),
    _rule(  # a lock's code said as "it" in the next sentence: "… ask me for the key safe. I
        # told her on phone it is 2580 but she forget"
        "access-code",
        RANK_SHAPE,
        "it",
        rf"{_LOCKS}[^\n]{{0,120}}?(?i:\bit['\u2019]?s|\bit is)\s+(?P<v>[#*]?\d{{4,8}}[#*]?)"
        + _CODE_ENDS,
        lambda v: not _YEAR.fullmatch(v),
    ),
    _rule(  # a lock's code said as "the code" in a later sentence: "… the code of the
        # late-arrival key box by email … The code at present is 7316"
        "access-code",
        RANK_SHAPE,
        "code",
        rf"{_LOCKS}[^\n]{{0,240}}?[.!?]\s+(?i:the|its|their)\s+(?i:code)\b"
        r"[^.!?\n\d#*]{0,30}?\s(?i:is|was|=|:)\s*(?P<v>[#*]?\d{4,8}[#*]?)" + _CODE_ENDS,
        lambda v: not _YEAR.fullmatch(v),
    ),
    _rule(  # an account given a password's value: "the shared DJI account … is "Chamine#Vila26""
        "password-assignment",
        RANK_SHAPE,
        "account",
        r"(?i:\baccount\b)[^.!?\n]{0,60}?\s(?i:is|=|:)\s*[\"'`\u201c]?"
        r"(?P<v>[^\s\"'`\u201d,;<]{8,64})",
        lambda v: strong(v.rstrip(".!?")),
    ),
    _rule(  # a login said as user and password: "I log in with marloes.v / Rdam!2026haven"
        "password-assignment",
        RANK_SHAPE,
        "log sign with",
        r"(?i:\b(?:log(?:ged|ging)?\s*in|sign(?:ed|ing)?\s*in|login|credentials?)\b)"
        r"[^.\n]{0,20}?\s[\w.@+-]{2,64}\s*[/|:]\s*(?P<v>[^\s\"'`,;<]{6,64})",
        lambda v: strong(v.rstrip(".!?")),
    ),
    _rule(  # a PIN said in brackets after its name: "told her the pin (6093) over text"
        "access-code",
        RANK_SHAPE,
        "pin passcode",
        r"(?i:\b(?:pin|passcode)\b)\s*[(\[]\s*(?P<v>[#*]?\d{4,8}[#*]?)\s*[)\]]",
    ),
    _rule(  # a key that is a number: "The host key for our university licence is 731904"
        "access-code",
        RANK_SHAPE,
        "key",
        r"(?i:\b(?:host|licen[cs]e|product|activation|unlock|recovery|admin)\s+key\b)"
        r"[^.!?\n]{0,60}?\s(?i:is|=|:)\s*(?P<v>\d{4,12})(?![\w.:/-]|,\d)",
    ),
    _rule(  # a password named, then said as "it" right after a pause: "the guest wifi
        # password. its Kx9#mPLw2 and I'm sick of writing it on post-its"
        "password-assignment",
        RANK_SHAPE,
        "pass pin",
        r"(?i:\b(?:password|passcode|passphrase|passwd|pin)\b)\s*[.,:;!?\u2014-]+\s*"
        r"(?i:(?:and|but|so)\s+)?(?i:\bit['\u2019]?s|\bit is)\s+[\"'`]?(?P<v>[^\s\"'`,;<]{6,64})",
        lambda v: strong(v.rstrip(".!?")),
    ),
    _rule(  # a password said as what the user types: "I'm typing Pastel#Nata88"
        "password-assignment",
        RANK_SHAPE,
        "typ enter put log sign",
        r"(?i:\b(?:typ(?:e|ed|es|ing)|enter(?:ed|s|ing)?|put(?:ting)? in|(?:log|sign)(?:ged|ging)?"
        # or said after a pause: "I type correct, is X", "I typed it exactly, it's X"
        r" in with))(?:(?:\s+[a-z]+){0,2}?\s*,\s*(?i:it['\u2019]?s|it is|is))?"
        r"\s+[\"'`]?(?=[^\s,;]*[\d#!$%&*@])(?P<v>[^\s\"'`,;<]{6,64})",
        lambda v: strong(v.rstrip(".!?")),
    ),
    _rule(
        "access-code",
        RANK_SHAPE,
        "pin passcode",
        r"(?i:\b(?:pin|pin code|pin number|passcode)\b)"
        + _QUALIFIER
        + _SAID_AS
        + r"(?P<v>\d{4,8})\b"
        + _NOT_A_QUANTITY,
    ),
    _rule(  # a PIN said later in its sentence, after a pause or in brackets: "… wanted a
        # PIN to make changes on the account over the phone, it's 6604", "my new PIN (it's
        # 5830)"
        "access-code",
        RANK_SHAPE,
        "pin passcode",
        r"(?i:\b(?:pin|pin code|pin number|passcode)\b)[^.!?\n\d]{0,80}?"
        r"[,(]\s*(?i:it['\u2019]?s|it is|which is)\s+(?P<v>\d{4,8})\b(?![.,:/-]?\d)"
        + _NOT_A_QUANTITY,
        lambda v: not _YEAR.fullmatch(v),
    ),
    _rule(
        "access-code",
        RANK_SHAPE,
        "code",
        r"(?i:\b(?:2fa|mfa|otp|backup|recovery|verification|one[- ]time)\s+codes?\b)"
        # said at once, or later in the sentence: "…, first one is 8841-2290"
        r"(?:[^.!?\n\d]{0,80}?(?:\s(?i:is|are|was)|[=:]))?\s*(?P<v>\d[\d -]{4,}\d)",
    ),
    _rule(
        "access-code",
        RANK_SHAPE,
        "wifi wi-fi wlan wpa psk hotspot",
        r"(?i:\b(?:wifi|wi-fi|wlan|wpa2?|psk|hotspot)\b(?:\s+(?:password|pass|pw|key|code))?)"
        + _SAID_AS
        + r"[\"'`]?"
        + _VALUE,
        lambda v: strong(v) or (credential(v) and len(v) >= 8),
    ),
    _rule(
        "password-assignment",
        RANK_LABEL,
        "mysql",
        r"\bmysql(?:dump|admin)?\b[^\n]{0,200}?\s-p(?P<v>[^\s\"']+)",
        lambda v: credential(v) or passwords.plain_value(v),
    ),
    _rule(
        "token-assignment",
        RANK_LABEL,
        _TOKENISH,
        _TOKEN_NAMED + _QUALIFIER + _SEP + _VALUE,
        token_like,
    ),
    _rule(  # a token named, then given in brackets: "my api secret (a1b9c7…) keeps failing"
        "token-assignment",
        RANK_LABEL,
        _TOKENISH,
        _TOKEN_NAMED + r"\s*[(\[]\s*[\"'`]?(?P<v>[^\s\"'`()\[\]]{16,256})",
        token_like,
    ),
    _rule(  # a code of letters and digits after its name: "the gate keypad code is C1984X",
        # "steam wants a guard code, R7K2P" (two digits at least: not "code is ready")
        "access-code",
        RANK_SHAPE,
        "code",
        rf"(?i:\b(?:{_LOCK_WORDS}|building|entry|access|key ?pad|security|guard|verification"
        r"|login|sms)(?:\s+(?:panel|system|pad|box))?\s+code\b)"
        + _QUALIFIER
        + _SAID_AS
        + r"(?P<v>(?=[A-Za-z0-9]*[A-Za-z])(?=(?:[A-Za-z]*\d){2})[A-Za-z0-9]{4,10})(?![\w.:/-])",
    ),
    _rule(  # a lock's code said changed after its name: "the keypad got reset to 2-5-8-0"
        "access-code",
        RANK_SHAPE,
        "reset changed set rekeyed",
        rf"(?i:\b(?:{_LOCK_WORDS})(?:\s+code)?(?:\s*,\s*it)?\s+(?:got|was|has been|have been|is"
        r"|has|had)\s+"
        r"(?:been\s+)?(?:changed|reset|re-?keyed|set)\s+to)\s+"
        rf"(?P<v>{_KEYED}|[#*]?\d{{4,8}}[#*]?)(?![\w.:/-]|,\d)" + _NOT_A_QUANTITY,
        lambda v: not _YEAR.fullmatch(v),
    ),
    _rule(  # a person's national number after its name: "SSN 412-77-9031", "NI number
        # QQ 12 34 56 C"
        "national-id",
        RANK_LABEL,
        "ssn social national ni nino",
        r"(?i:\b(?:ssn|social security|national insurance|ni number|nino)\b"
        r"(?:\s+(?:number|no\.?|#))?)[^.\n\d]{0,20}?"
        r"(?P<v>\d{3}[- ]?\d{2}[- ]?\d{4}|(?i:[a-z]{2})\s?\d{2}\s?\d{2}\s?\d{2}\s?(?i:[a-d]))"
        r"(?![\w-])",
    ),
    _rule(  # a bank's sort code: "sort code 20-45-77"
        "bank-account",
        RANK_LABEL,
        "sort",
        r"(?i:\bsort\s*code\b)[^.\n\d]{0,12}?(?P<v>\d{2}-\d{2}-\d{2}|\d{6})(?![\w-])",
    ),
    _rule(  # an account number in a sentence about a bank: "his bank details …, sort code
        # 20-45-77 account 83920145"
        "bank-account",
        RANK_LABEL,
        "account acct",
        r"(?i:\b(?:bank|sort\s*code|routing|iban|transfer|wire)\b)[^\n]{0,120}?"
        r"(?i:\b(?:account|acct)(?:\s+(?:number|no\.?|#))?)\s*[:#]?\s*(?i:is\s+)?"
        r"(?P<v>\d{8,12})(?![\w.-])",
    ),
    _rule(  # a password by its shape alone: lower and upper case, a digit and a symbol, in
        # one word of 8-40 ("it won't take Peony!Season26", "reset it to Nb!Adm1ssions#24");
        # never part of a longer run (a hash, a path, a regex), never "#anchor1Id"
        "password-shaped",
        RANK_RANDOM,
        "! # $ % & * ? @ ^ ~ +",
        r"(?:(?<=\s)|^|(?<=[(\"'\u201c]))(?P<v>[A-Za-z0-9!#$%&*?@^~+_-]{8,40})"
        r"(?=[.,;:!?)\"'\u201d]*(?:\s|$))",
        password_shaped,
    ),
    _rule(  # a key in dashed groups of letters and digits, said alone: "QX7P-M2KD-88RL was
        # the first one" (recovery and licence keys; not "PM21-004417", not a UUID)
        "random-token",
        RANK_RANDOM,
        "-",
        r"(?<![\w#-])(?P<v>[A-Z0-9]{4,5}(?:-[A-Z0-9]{4,5}){2,5})(?![\w-])",
        lambda v: (
            sum(bool(re.search(r"[A-Z]", g)) and bool(re.search(r"\d", g)) for g in v.split("-"))
            >= 2
        ),
    ),
)

# every word a rule needs: a substring test each (C speed, no regex over the text)
_NEEDS: Final = frozenset(w for r in _RULES for w in r.needs)

# ---- bare random tokens ------------------------------------------------------------------

_ALNUM = re.compile(r"[A-Za-z0-9]+")
_RUN = re.compile(r"(?<![\w+/-])[A-Za-z0-9+/_-]{20,}={0,2}")
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+|\bwww\.\S+")
_PUBLIC_PEM = re.compile(
    r"-----BEGIN (?P<label>[A-Z0-9 ]*(?:CERTIFICATE|PUBLIC KEY)[A-Z0-9 ]*)-----.*?"
    r"(?:-----END (?P=label)-----|\Z)",
    re.S,
)
# public keys and content hashes: random by construction, and meant to be shared
_PUBLIC_BEFORE = re.compile(
    r"(?i:(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-\S+|sk-ssh-\S+|sha\d*|md5|digest|checksum"
    r"|hash|integrity|etag|base64,|fingerprint)[\s\"':=-]{0,3})$"
)
_HASH_PREFIX = re.compile(r"sha\d+[-:]|md5[-:]", re.I)
_IMAGE_MAGIC = ("iVBORw0KGgo", "/9j/", "R0lGOD", "UklGR", "JVBERi0")  # png jpeg gif webp pdf


_PRIVATE_PEM = re.compile(
    r"-----BEGIN (?P<label>(?:[A-Z0-9]+ )*)PRIVATE KEY(?: BLOCK)?-----"
    r"(?:.*?-----END (?P=label)PRIVATE KEY(?: BLOCK)?-----|.*\Z)",
    re.S,
)


def pem_blocks(text: str) -> tuple[list[Finding], str]:
    """Private key blocks (an unterminated one runs to the end), and the text with every
    PEM block, private or public, blanked: a block spans lines and windows, and a public
    one (a certificate) is random by construction but never a secret."""
    if "-----BEGIN " not in text:
        return [], text
    found, pieces, at = [], [], 0
    blocks = [(m.span(), True) for m in _PRIVATE_PEM.finditer(text)]
    blocks += [(m.span(), False) for m in _PUBLIC_PEM.finditer(text)]
    for (start, end), private in sorted(blocks):
        if start < at:
            continue
        if private:
            found.append(Finding(start, end, "private-key", RANK_FORMAT))
        pieces += [text[at:start], re.sub(r"[^\n]", " ", text[start:end])]
        at = end
    return found, "".join([*pieces, text[at:]])


def _random_tokens(text: str) -> Iterator[Finding]:
    """Bare random-looking tokens outside URLs, public PEM blocks, public keys, hashes and
    base64 file contents."""
    skip = [m.span() for m in _URL.finditer(text)]
    skip += [m.span() for m in _PUBLIC_PEM.finditer(text)]
    for hit in _RUN.finditer(text):
        token, start = hit.group(), hit.start()
        if any(a <= start < b for a, b in skip) or token.startswith(_IMAGE_MAGIC):
            continue
        if _HASH_PREFIX.match(token) or _PUBLIC_BEFORE.search(text, max(0, start - 40), start):
            continue
        runs = _ALNUM.findall(token)
        if any(random_looking(run) for run in runs if len(run) >= 20) or (
            ("+" in token or "/" in token) and random_looking("".join(runs))
        ):
            yield Finding(start, hit.end(), "random-token", RANK_RANDOM)


# a vendor's prefix, then a random part: "gs_tok_9fA2kLq77x", "acme_live_Q8r2Lm4Zt7" —
# the shape of sk_live_ / ghp_ / xoxb- tokens from vendors no list names
_VENDOR = re.compile(
    r"(?<![\w/.-])(?P<p>[a-z]{2,10}(?:_[a-z]{2,8}){0,2})[_-](?P<s>[A-Za-z0-9]{10,64})(?![\w/.-])"
)
_HEX_TAIL = re.compile(r"[0-9a-f]{32,64}")
# prefixes that name a digest or an id, not a vendor ("sha256-…", "commit-…")
_DIGEST = frozenset(
    "sha sha1 sha256 sha384 sha512 md5 commit hash digest blob tree build id".split()
)


def _vendor_tokens(text: str) -> Iterator[Finding]:
    for hit in _VENDOR.finditer(text):
        tail = hit.group("s")
        hyphen = "-" in text[hit.start("p") : hit.start("s")]
        if hyphen and len(hit.group("p")) > 4:
            continue  # "release-9fce…", "build-A1b2…": a slug; a key's prefix is short (key-)
        if _HEX_TAIL.fullmatch(tail) and hit.group("p") not in _DIGEST:
            yield Finding(hit.start(), hit.end(), "vendor-token", RANK_RANDOM)  # shpat_…, key-…
            continue
        if hyphen:
            continue
        pieces = len(_PIECES.findall(tail))
        if _classes(tail) < 3 or len(tail) / pieces > 2.5:
            continue
        if entropy(tail) >= 0.8 * math.log2(min(len(tail), 62)):
            yield Finding(hit.start(), hit.end(), "vendor-token", RANK_RANDOM)


# a run of digits glued to letters is part of a word or a hex id ("ent-13d6690829074600"), not
# a card number, even when its digits pass the Luhn check
_CARD = re.compile(r"(?<![\w-])[2-6]\d{3}(?:[ -]?\d){9,15}(?![\w-])")
_OTP_SEED = re.compile(
    r"(?i:\b(?:totp|2fa|mfa|otp|authenticator)\b[^.\n]{0,30}?)(?<![\w-])(?P<v>[A-Z2-7]{16,64})(?![\w-])"
)


_GROUPED = re.compile(r"\d{4}([ -])\d{4}\1\d{4}\1\d{1,7}")
_CARD_NAME = re.compile(r"(?i:\b(?:card|visa|mastercard|amex|credit|debit|cc)\b)")


def _named_card(text: str, hit: re.Match[str]) -> bool:
    """Digits grouped in fours ("4921 8830 1157 2204") with a card named just before."""
    before = text[max(0, hit.start() - 60) : hit.start()]
    return _GROUPED.fullmatch(hit.group()) is not None and _CARD_NAME.search(before) is not None


def _luhn(digits: str) -> bool:
    total = 0
    for i, d in enumerate(int(c) for c in reversed(digits)):
        total += d if i % 2 == 0 else (d * 2 - 9 if d > 4 else d * 2)
    return total % 10 == 0


def _cards_and_seeds(text: str) -> Iterator[Finding]:
    """A payment card number (13–19 digits passing the Luhn check, or written in groups of
    four after a card's name: a number mistyped or made up is still given as one) and a
    one-time-password seed (base32 after a 2FA label)."""
    for hit in _CARD.finditer(text):
        digits = re.sub(r"\D", "", hit.group())
        if 13 <= len(digits) <= 19 and (_luhn(digits) or _named_card(text, hit)):
            yield Finding(hit.start(), hit.end(), "payment-card", RANK_FORMAT)
    for hit in _OTP_SEED.finditer(text):
        yield Finding(hit.start("v"), hit.end("v"), "otp-seed", RANK_FORMAT)


# a key or token label, a few words, then a long value with digits: "pagerduty routing key
# e91d1c31…", "api token -qk4xHG…" (no "is" or ":" between them)
_NEAR_KEY = re.compile(
    r"(?i:\b(?:api[ _-]?)?(?:keys?|tokens?|secrets?|backup codes?|recovery codes?)\b)"
    r"(?:\s+[\w.-]+){0,6}?\s*:?\s+(?P<v>[A-Za-z0-9_+/=-]{20,})(?![\w/-]|\.\w)"  # "….": the end
)
# one-time codes in dashed groups, one or a list ("recovery codes: 8h2k-p9xq-4mzt,
# 3jd7-w2rc-q81n", "backup codes for 2fa, 3391-7720 and 5108-4467")
_CODE = r"[A-Za-z0-9]{3,6}(?:-[A-Za-z0-9]{3,6})+"
_CODES = re.compile(
    r"(?i:\b(?:backup|recovery|2fa|mfa)\s+codes?\b)[^.\n]{0,20}?"
    rf"(?P<v>{_CODE}(?:\s*(?:,|&|/|\band\b)?\s*{_CODE})*)(?![\w-])"
)
_WORD_PIECES = re.compile(r"(?:[A-Za-z]+|\d+)(?:[_.-](?:[A-Za-z]+|\d+))+")
_KNOWN_PREFIX = re.compile(r"\bAGE-SECRET-KEY-1[0-9A-Z]{40,}|\bdjango-insecure-\S{20,}")


def _labelled_values(text: str) -> Iterator[Finding]:
    for hit in _NEAR_KEY.finditer(text):
        value = hit.group("v").strip("-_")
        hexish = re.fullmatch(r"[0-9a-f]{32,}", value) is not None
        mixed = _classes(value) >= 2 and sum(c.isdigit() for c in value) >= 3
        if _WORD_PIECES.fullmatch(value):
            mixed = False  # user_id_2024_archive: an identifier made of words and numbers
        if hexish or (mixed and entropy(value) >= 3.5):
            yield Finding(hit.start("v"), hit.end("v"), "token-assignment", RANK_LABEL)
    for hit in _CODES.finditer(text):
        yield Finding(hit.start("v"), hit.end("v"), "backup-codes", RANK_LABEL)
    for hit in _KNOWN_PREFIX.finditer(text):
        yield Finding(hit.start(), hit.end(), "private-key", RANK_FORMAT)


def own(text: str, token: bool | None = None) -> Iterator[Finding]:
    """Every span our rules find (overlaps included; the caller merges them). A rule runs
    only when the text holds one of the words it needs: most text holds none, and the
    check costs a tenth of the rules. ``token``: :func:`tokenish`, when already known."""
    low = text.lower()
    present = {need for need in _NEEDS if need in low}
    for rule in _RULES if present else ():
        if present.isdisjoint(rule.needs):
            continue
        for hit in rule.pattern.finditer(text):
            group = "v" if "v" in rule.pattern.groupindex else 0
            start, end = hit.span(group)
            while end > start and text[end - 1] in ".)":
                end -= 1
            if rule.check is None or rule.check(text[start:end]):
                yield Finding(start, end, rule.kind, rule.rank)
    if any(c.isdigit() for c in text):
        yield from _cards_and_seeds(text)
        yield from _labelled_values(text)
    spelled = passwords.respelled(text)
    if passwords.GATE.search(spelled.lower()):
        for start, end in passwords.said(spelled):
            yield Finding(start, end, "password-assignment", RANK_LABEL)
    if tokenish(text) if token is None else token:
        yield from _random_tokens(text)
        if "_" in text or "-" in text:
            yield from _vendor_tokens(text)


_LONG = re.compile(r"\S{12,}")


def tokenish(text: str) -> bool:
    """Whether the text has a long run holding a digit or a case change: every token
    format (ours and detect-secrets') and every random token is one."""
    return any(_DIGIT.search(run) or not run[1:].islower() for run in _LONG.findall(text))


_DIGIT = re.compile(r"\d")
