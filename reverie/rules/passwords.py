"""Credentials said in words: a credential label (password, pw, passphrase, login, …) in a
relation with one concrete value is a secret *whatever the value's character classes*
("pass is swordfish", "hunter2 is the password for prod", "admin with password
correcthorsebatterystaple", "login for grafana: admin / S3cr3tP@ss").

The decision is by the relation's structure, not by the value's look: a label, then a
copula or assignment (``is``, ``=``, ``:``, "as the password", "with password", a
user / value pair), then a value that is one token and not a word of the sentence's
grammar (article, pronoun, preposition, auxiliary), a state ("wrong", "required",
"changed"), a place a password is kept ("in the vault", a URL), or a placeholder. A plain
word must also end its clause ("the password is 12 characters long" names no value).
Talk *about* a password — "the password is in 1Password", "the password policy requires
12 characters", "reset your password at https://…" — has no such relation.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

from rapidfuzz.distance import DamerauLevenshtein

# the closed classes of English: a value is never one of these
_FUNCTION: Final = frozenset(
    """a an the this that these those my your our his her its their whose which what who
    whom whatever whichever it i you he she we they me him us them mine yours ours theirs
    one ones some any all none no not never also just still now then there here so too very
    quite really only even already again yet soon always usually maybe probably about above
    after against along among around as at before behind below beneath beside between
    beyond by down during except for from in inside into like near of off on onto out
    outside over past per since through throughout till to toward towards under until up
    upon via with within without and or but nor if because although though while when where
    whether unless than is are was were be been being am do does did done has have had
    having can could shall should will would may might must ought same such other another
    each every either neither both few many much more most less least several something
    anything nothing everything someone anyone everyone somewhere elsewhere how why lol
    please thanks ok okay yes yeah nope""".split()
)
# what is said *about* a credential rather than which one it is
_STATE: Final = frozenset(
    """wrong incorrect invalid correct right valid weak strong short long empty blank
    missing new old different temporary temp secret hidden optional mandatory unknown known
    fine good bad simple complex easy hard random unique private public sensitive insecure
    secure compromised current required needed expired enough set reset unset gone null nil
    tbd tba unchanged default case-sensitive visible unavailable available broken disabled
    enabled locked unlocked encrypted hashed salted plaintext cleartext masked redacted
    rotated stored shared saved managed generated""".split()
)
# nouns that make a compound with the label ("password manager") or say where one lives
_REFERENCE: Final = frozenset(
    """manager managers policy policies reset resets protection protected authentication auth
    field fields hash hashes hashing change changes rotation expiry expiration length
    strength prompt login logins recovery history requirement requirements rule rules vault
    vaults file files hint hints list check checks input box form update updates generator
    less keychain keeper bitwarden lastpass 1password env environment variable variables
    secret secrets store safe sso ldap oauth token tokens key keys label labels word words
    password passwords passwd pass pw pwd passphrase passcode credentials creds login
    username user""".split()
)
_NOT_VALUE: Final = _FUNCTION | _STATE | _REFERENCE
_PLACEHOLDER: Final = re.compile(
    r"^(?:[$<{%]|x{3,}$|\*+$|\.{3}|(?:your|my|the|some|new|example|sample|dummy|fake)"
    r"[_-]?(?:pass|pw|pwd|password|secret|value)|(?:pass|pw|pwd|password)[_-]?(?:here|goes"
    r"|value)$)",
    re.I,
)
_URLISH: Final = re.compile(r"^(?://|/|~/|\w+://|www\.)|://")
_CODE_ROOTS: Final = frozenset(
    "self this os env environ process config settings request req params args options opts "
    "ctx app cfg conf secrets vars".split()
)
_CALL: Final = re.compile(r"[()\[\]]")
_CONSTANT: Final = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_DOTTED: Final = re.compile(r"[a-z_]\w*(?:\.[a-z_]\w*)+")
_APPOSED: Final = re.compile(r"(?:[\w'’-]+\s+){0,5}?[\w'’-]+\s*[,:–—-]\s*")
_STOP: Final = re.compile(r"[.;!?\n]")
_LAST_WORD: Final = re.compile(r"([\w'’]+)\s*$")
_ARTICLE: Final = re.compile(r"(?i:the|my|our|your|his|her|their|its|a|an)\s")
_OWNER: Final = re.compile(r"(?i)(?:\b(?:my|the|our|your|admin|root)\s+)+$")
_BOUNDARY: Final = re.compile(r"(?:^|[.;:!?\n(—-]|\b(?:and|but|so|also|btw))\s*$")
_EDGE: Final = "\"'`.,;:!?)]}>"
_TOKEN: Final = re.compile(r"[^\s\"'`,;<]{1,100}")

# the labels: strong ones name a credential; "pass" is also a ticket or a mountain road,
# so it counts only as an assignment or at the start of a clause
_STRONG = (
    r"passwords?|passwd|passphrase|passcode|pwd|pw|mot de passe|contrase[ñn]a|passwort"
    r"|kennwort|senha|wachtwoord|memorable (?:word|phrase)|(?:security|secret) answer"
    r"|(?-i:[A-Z]{2,}(?:PASSWORD|PASSWD|PASS|PWD))"
)
_START = r"(?:(?<![\w-])|(?<=_)|(?<=\s-)|(?<=\s--))"
_END = r"(?![\w-])"
# what the label is of ("for prod", "on the router"), or who gave or asked for it ("they
# asked for", "you gave me"): a short clause between the label and its value
_QUAL = (
    r"(?:\s+(?:for|of|on|to|at|in)(?:\s+(?!is\b|was\b)[\w.@-]+){1,4}?"
    r"|\s+(?:that\s+|which\s+)?(?:they|you|i|we|he|she)\s+(?!is\b|was\b|are\b)[a-z]+"
    r"(?:\s+(?:for|me|us|him|her|them|to me|to us))?)?"
)
_ASIDE = r"(?:\s*,[^,.;:\n]{1,40},|\s*\([^()\n]{1,40}\))?"
_SEP = (
    r"[\"'\]]?\s*(?P<sep>(?:(?:(?:has been|have been|was|is|got|been)\s+)?(?:set|changed"
    r"|updated)\s+to|is|was|are|to|(?:is|was) now|now is|should be|will be|would be|ist|est|es"
    r"|é)(?!\w)|:=|=>|->|=|:(?!//))\s*"
)
_FORWARD: Final = re.compile(
    _START + rf"(?i:(?P<label>{_STRONG}|pass)){_END}" + rf"(?i:{_QUAL}{_ASIDE}{_SEP})"
)
_XML: Final = re.compile(r"(?i)<(password|passwd|pass|pwd)>(?P<v>[^<\s]{1,100})</\1>")
_BACKWARD: Final = re.compile(
    r"(?:^|(?<=[\s,;:()]))(?P<v>[^\s,;:()]{1,100})\s*(?:[—–:,-]\s*)?(?i:(?:that|this|it|which)"
    r"(?:'s|’s|\s+is|\s+was)|is|was|as)\s+(?i:(?:the|my|our|your|a|an|their|its)\s+)?"
    r"(?:[\w-]+\s+){0,2}?" + _START + rf"(?i:{_STRONG})" + r"(?![\w-])"
)
_WITH: Final = re.compile(
    r"(?:(?P<lead>(?:^|(?<=\s))(?i:with|and|using|plus)\s+|[,/;]\s*)|^|(?<=[\s(]))"
    r"(?:(?i:the)\s+)?"
    r"(?P<flag>--?)?" + _START + rf"(?i:{_STRONG})" + r"\s+(?!(?i:is|was|are|to|for|of|on|at|in)\b)"
)
_PAIR: Final = re.compile(
    r"(?<![\w-])(?i:logins?|credentials?|creds|user(?:name)?\s*(?:/|and)\s*pass(?:word)?)"
    r"(?![\w-])" + rf"(?i:{_QUAL}{_SEP})"
    r"(?P<user>[^\s/,;:]{1,64})\s*(?:/|:|,|\s(?i:and|&)\s)\s*"
)
_CLAUSE_END: Final = re.compile(
    r"\s*(?:$|[.,;!?)\]}\n]|[-–—]\s|\(|\s(?i:for|on|and|but|so|if|in|at|to|when|then|now"
    r"|please|btw|which|until|from|since|because|or|as|with|dont|don't|do|is|was|just|ok"
    r"|okay|lol|thanks|i|we|it|you|right|too|also|though|case|fyi|yesterday|today|tomorrow"
    r"|tonight|earlier|last|this|next)(?![\w']))"
)
# "changed the pw to X": a verb of setting makes "to" an assignment
_SETTING: Final = re.compile(
    r"(?i:\b(?:set|change|changed|changing|update|updated)\s+(?:\w+\s+){0,2})$"
)
# "root / letmein gets you in": a spaced user / value pair in a sentence about credentials
_SLASH: Final = re.compile(r"(?:^|(?<=[\s(:]))(?P<user>[^\s/]{2,64}) / (?P<v>[^\s/])")
# what a lower-cased text must hold for any relation above to be in it (cheap to scan)
GATE: Final = re.compile(
    r"(?:pass(?:words?|wd|phrase|code|wort)?|pwd?|logins?|credentials?|creds|senha"
    r"|contrase[ñn]a|wachtwoord|kennwort|mot de passe|memorable (?:word|phrase)"
    r"|(?:security|secret) answer)(?![\w-])"
)


def words_value(
    text: str, start: int, end: int | None = None, plain_ok: bool = True, assigned: bool = False
) -> str:
    """A token at ``start`` is a credential value: not grammar, state, reference or a
    placeholder; a plain word only when it ends its clause. Returns '' when it is not."""
    stop = len(text) if end is None else end
    quote = text[start] if start < stop and text[start] in "\"'`" else ""
    if quote:
        close = text.find(quote, start + 1, min(stop, start + 102))
        if close > start + 1:
            inner = text[start + 1 : close]
            return inner if not _mention(inner) and not inner.isspace() else ""
    hit = _TOKEN.match(text, start, stop)
    if hit is None:
        return ""
    value = hit.group().rstrip(_EDGE)
    if len(value) < 4 or _mention(value):
        return ""
    if _mixed(value):
        return value
    if not plain_ok or value.lower() in _NOT_VALUE:
        return ""
    if value.islower() and value.isalpha() and value.endswith(("ed", "ing")):
        return ""  # a participle: "the password was changed", "… is expiring"
    after = start + len(value)
    return value if assigned or _CLAUSE_END.match(text, after, stop) else ""


def plain_value(value: str) -> bool:
    """A value in a place only a credential goes (``scheme://user:VALUE@host``): any word
    that is not a placeholder, a label or a word of grammar."""
    if len(value) < 4 or _mention(value):
        return False
    return _mixed(value) or value.lower() not in _NOT_VALUE


def _mixed(value: str) -> bool:
    """Two character classes or more (a digit beside letters, a symbol, an inner capital):
    no word of the sentence's grammar looks like that."""
    classes = (
        any(c.isalpha() for c in value),
        any(c.isdigit() for c in value),
        any(not c.isalnum() and c not in "-'." for c in value),
        any(c.isupper() for c in value[1:]) and any(c.islower() for c in value),
    )
    return sum(classes) >= 2


def _mention(value: str) -> bool:
    """A placeholder, a mask, a URL or path, a reference in code (``f(x)``, ``a.b``)."""
    low = value.lower()
    if _PLACEHOLDER.search(value) or _URLISH.search(value) or _CALL.search(value):
        return True
    if _CONSTANT.fullmatch(value):  # YOUR_PASSWORD, DB_PASS
        return True
    if _DOTTED.fullmatch(value) and (
        "_" in value or set(low.split(".")) & (_REFERENCE | _CODE_ROOTS)
    ):
        return True  # settings.db_password, os.environ.x: a place in code, not a passphrase
    return max(low.count(c) for c in set(low)) * 2 > len(low) or low in _REFERENCE


def _apposition(text: str, start: int) -> tuple[int, str]:
    """After an article-led phrase ("the dog's name, Biscuit2019"): the value named in
    apposition, if the phrase is short and the value ends the clause."""
    window = text[start : start + 80]
    lead = _APPOSED.match(window)
    if lead is None or _STOP.search(lead.group()):
        return -1, ""
    at = start + lead.end()
    return at, words_value(text, at)


_BEFORE, _AFTER = 200, 300  # around a label: where its relation and value can be


def said(text: str) -> Iterator[tuple[int, int]]:
    """Every span of a password said in words: label → value, value → label, "with
    password X", a user / value pair, ``<password>X</password>``. The relations are
    matched only near a label (:data:`GATE`), so text without one costs a single scan."""
    spans: set[tuple[int, int]] = set()
    for start, end in _regions(text):
        for find in (_forward, _backward, _with, _pairs):
            spans.update(find(text, start, end))
        spans.update(m.span("v") for m in _XML.finditer(text, start, end) if not _mention(m["v"]))
    yield from sorted(spans)


def _regions(text: str) -> list[tuple[int, int]]:
    """Merged stretches around each label the gate finds."""
    out: list[tuple[int, int]] = []
    for hit in GATE.finditer(text.lower()):
        start, end = max(0, hit.start() - _BEFORE), min(len(text), hit.end() + _AFTER)
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], end)
        else:
            out.append((start, end))
    return out


def _backward(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """Value, then label: "hunter2 is the password for prod", "use X as the password"."""
    for hit in _BACKWARD.finditer(text, start, end):
        value = hit.group("v").rstrip(_EDGE)
        lead = _LAST_WORD.search(text, max(0, hit.start() - 24), hit.start())
        if lead and lead.group(1).lower() in _FUNCTION:
            continue  # "the name of the dog is the password": not the value itself
        if _CLAUSE_END.match(text, hit.end()) and words_value(text, hit.start("v")):
            yield hit.start("v"), hit.start("v") + len(value)


def _with(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """Label, then value: "admin with password X", "user ops, password X", ``--password X``."""
    for hit in _WITH.finditer(text, start, end):
        flag = hit.group("flag") is not None  # --password X: a command line's assignment
        label = text[hit.start() : hit.end()].split()[-1].lower()
        if not flag and hit.group("lead") is None and label.endswith("s") and label != "pass":
            continue  # "passwords live in 1Password": a plural label is a subject
        plain = flag or hit.group("lead") is not None or _clause_start(text, hit.start())
        value = words_value(text, hit.end(), plain_ok=plain, assigned=flag)
        if value and (plain or any(c.isdigit() for c in value)):
            yield hit.end(), hit.end() + len(value)


def _pairs(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """A user and a value: "login for grafana: admin / X", "credentials are bob and X"."""
    for hit in _PAIR.finditer(text, start, end):
        if hit.group("user").lower() not in _NOT_VALUE:
            value = words_value(text, hit.end())
            if value:
                yield hit.end(), hit.end() + len(value)
    if _LOOSE_LABEL.search(text, start, end):
        for hit in _SLASH.finditer(text, start, end):
            if hit.group("user").lower() not in _FUNCTION | _REFERENCE:
                value = words_value(text, hit.start("v"), assigned=True)
                if value:
                    yield hit.start("v"), hit.start("v") + len(value)


def _forward(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """Label, copula, value: "the password for X is Y", "pass is swordfish", ``pw=x``."""
    done = -1
    for hit in _FORWARD.finditer(text, start, end):
        if hit.start() < done:
            continue  # inside the value just found ("password=password=…")
        label, sep = hit.group("label"), hit.group("sep").lower()
        if (
            label.lower() == "pass"
            and sep not in {"=", ":"}
            and not _clause_start(text, hit.start(), possessive=True)
        ):
            continue
        at = hit.end()
        plain = sep != "to" or text[at : at + 1] in "\"'`"
        plain = plain or _SETTING.search(text, max(0, hit.start() - 60), hit.start()) is not None
        value = words_value(text, at, plain_ok=plain, assigned=sep in {"=", ":=", "=>"})
        if not value and _ARTICLE.match(text, at):
            at, value = _apposition(text, at)
        if value:
            at += 1 if text[at] in "\"'`" and not value.startswith(text[at]) else 0
            done = at + len(value)
            yield at, done


def _clause_start(text: str, at: int, possessive: bool = False) -> bool:
    """Nothing but a clause boundary (or "my" / "the") before ``at``."""
    before = text[max(0, at - 40) : at]
    if possessive:
        before = _OWNER.sub("", before)
    return _BOUNDARY.search(before) is not None


_LOOSE_LABEL: Final = re.compile(_START + rf"(?i:{_STRONG}|pass|logins?|credentials?|creds){_END}")
_VALUE_LIKE: Final = re.compile(r"[\"'`][^\"'`\s]{3,}[\"'`]|\S*(?:\d\S*[A-Za-z]|[A-Za-z]\S*\d)\S*")


def near_credential(text: str) -> bool:
    """The flush's stricter test: a credential label beside any concrete value-like token
    (a quoted word, letters with digits) or any relation above. A false positive only
    leaves a statement in the episode log, so this errs on the side of keeping it out."""
    if _LOOSE_LABEL.search(text) is None:
        return False
    if any(True for _ in said(text)):
        return True
    return any("pass" not in m.group().lower() for m in _VALUE_LIKE.finditer(text))


_WORDISH: Final = re.compile(r"(?<![\w-])[A-Za-z]{6,10}(?![\w-])")


def respelled(text: str) -> str:
    """``text`` with every misspelt "password" ("pasword", "passowrd", "passwrod") written
    as the label, padded to the same length, so spans found in it are spans of ``text``."""

    def fix(found: re.Match[str]) -> str:
        word = found.group()
        low = word.lower()
        if low[0] != "p" or low in ("password", "passwords"):
            return word
        if DamerauLevenshtein.distance(low, "password", score_cutoff=1) > 1:
            return word
        label = "password" if len(word) >= 8 else "passwd"
        return label.ljust(len(word))

    return _WORDISH.sub(fix, text) if "p" in text.lower() else text
