"""Secrets are never knowledge: a statement that carries a credential stays in the
episode log and never becomes a candidate, a fact or an entry.

Detection is by the shape credentials have: the published prefixes of cloud and chat
tokens, JWTs, PEM blocks, credentials inside a URL, a password-like label followed by a
value, and long random-looking tokens (mixed letter cases and digits, high entropy).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Final

_PATTERNS: Final = (
    re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[A-Z0-9]{16}\b"),  # AWS access key ids
    re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}|\bgithub_pat_\w{30,}"),
    re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),  # Slack
    re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}"),  # OpenAI / Anthropic style keys
    re.compile(r"\bAIza[0-9A-Za-z_-]{30,}"),  # Google API keys
    re.compile(r"\beyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]{8,}"),  # JWT
    re.compile(r"-----BEGIN [A-Z ]*(?:PRIVATE KEY|CERTIFICATE)-----"),
    re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s/:@]+:[^\s/@]+@"),  # user:password@host
    re.compile(
        r"(?i)(?:\b|(?<=_))(?:password|passwd|passphrase|pass|pwd|pw|secret|api[_ -]?key"
        r"|access[_ -]?key"
        r"|auth[_ -]?token|token|private[_ -]?key|credentials?|creds|pin|passcode)\b"
        r"(?:\s+(?:for|of|on|to)(?:\s+[\w.@/-]+){1,4}?)?"
        r"[\"']?\s*(?:is|was|=|:|->|are)\s*[\"'`]?(?!(?:the|a|an|in|on|at|stored|set|not|now"
        r"|rotated|expired|kept|saved|managed|handled|shared|same|still|different|in)\b)"
        r"[^\s\"'`]{4,}"
    ),
)
# an access code or a wifi / login secret, said the way people say them: "the door code is
# 7731#", "pin 6613", "wifi is honeyb33s!sauvie", "password Tr1al!Harrow2026"
_ACCESS: Final = (
    re.compile(
        r"(?i)\b(?:door|alarm|gate|lock|safe|garage|building|entry|access|key ?pad|security)"
        r"\s+code\b[^.\n]{0,30}?\b(?:is|=|:)?\s*[\w#*]*\d{3,}[\w#*]*"
    ),
    re.compile(r"(?i)\b(?:pin|pin code|passcode)\b\s*(?:is|=|:|#)?\s*\d{4,}\b"),
    re.compile(
        r"(?i)\b(?:wifi|wi-fi|wlan|login|psk|passwd|password|pw|pwd)\b[^.\n]{0,24}?"
        r"(?:\bis\b|=|:|\s)\s*[\"'`]?(?=[^\s\"'`]*\d)(?=[^\s\"'`]*[A-Za-z])"
        r"(?=[^\s\"'`]*[!@#$%^&*_+=?])[^\s\"'`]{6,}"
    ),
)
_TOKEN: Final = re.compile(r"[A-Za-z0-9+/_=-]{24,}")


def _entropy(token: str) -> float:
    counts = Counter(token)
    return -sum(n / len(token) * math.log2(n / len(token)) for n in counts.values())


def _random_looking(token: str) -> bool:
    """A long token mixing lower case, upper case and digits with high entropy: a key, not
    a path, host or word ("deploy-timeout-settings" has one case and no digits)."""
    classes = sum(
        (
            any(c.islower() for c in token),
            any(c.isupper() for c in token),
            any(c.isdigit() for c in token),
        )
    )
    return classes == 3 and _entropy(token) >= 4.0


def has_secret(text: str) -> bool:
    """Whether a text carries something shaped like a credential."""
    if any(p.search(text) for p in _PATTERNS) or any(p.search(text) for p in _ACCESS):
        return True
    return any(_random_looking(t) for t in _TOKEN.findall(text))
