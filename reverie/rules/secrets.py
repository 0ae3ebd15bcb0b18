"""Secrets are never knowledge: a write that carries a credential is refused, a turn that
carries one is logged with it redacted, and no later stage ever sees the raw value.

Detection is by the shape credentials have, from two sources that name a *kind*:
detect-secrets' format plugins (the maintained list of published token formats: AWS,
GitHub, GitLab, Slack, Stripe, Twilio, SendGrid, npm, PyPI, JWTs, private keys, …), used as
pure regex matchers (never their network verification, never their file scanning), plus
our own rules for how people paste credentials into a chat: labelled assignments
(``password=…``, ``API_KEY: …``, "the db pw is …"), credentials inside a URL, bearer and
basic auth headers, PEM blocks, access codes, and long random-looking tokens. A labelled
value must look like a credential (not a placeholder such as ``YOUR_API_KEY``, not a
reference such as ``os.environ['TOKEN']``, not a masked ``****``) — talk *about* a secret
("the password is in 1Password", "rotate the API key") is not a secret.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any, Final

from reverie.errors import quoted
from reverie.rules import passwords
from reverie.rules import secret_formats as formats
from reverie.rules.secret_formats import Finding

MARKER: Final = re.compile(r"\[redacted [a-z0-9-]+\]")
QUOTE_CHARS: Final = 160  # of a refused call, redacted: with the reason, under ~200 chars


WINDOW: Final = 2000  # the most text one rule or plugin sees at once: a quadratic regex
# (detect-secrets' URL and npm plugins on ``x://`` repeats) then costs O(n · WINDOW)
OVERLAP: Final = 600  # shared by neighbouring windows
SNAP: Final = 200  # a cut moves back (a start forward) to whitespace within this many chars
# so every span up to OVERLAP - SNAP = 400 chars (any token format, any label and its
# value) lies whole in one window; a longer run cut without whitespace is extended below


def findings(text: str) -> list[Finding]:
    """Every secret span of a text, overlapping ones merged, in text order. PEM blocks
    are found on the whole text; everything else window by window (:func:`windows`)."""
    found, masked = formats.pem_blocks(text)
    for start, end in windows(masked):
        for item in _scan(masked[start:end]):
            found.append(_widened(text, item, start, end))
    found.sort(key=lambda f: (f.start, -f.end))
    merged: list[Finding] = []
    for item in found:
        last = merged[-1] if merged else None
        if last is None or item.start >= last.end:
            merged.append(item)
            continue
        best = last if last.rank <= item.rank else item
        merged[-1] = Finding(last.start, max(last.end, item.end), best.kind, best.rank)
    return merged


def windows(text: str) -> Iterator[tuple[int, int]]:
    """Overlapping ``(start, end)`` windows of at most :data:`WINDOW` chars covering the
    text, cut at whitespace where there is some near the limit."""
    size, start = len(text), 0
    while True:
        end = min(start + WINDOW, size)
        if end < size:
            cut = max(text.rfind(c, end - SNAP, end) for c in " \n\t")
            end = cut if cut > start else end
        yield start, end
        if end >= size:
            return
        nxt = end - OVERLAP
        spaces = [i for i in (text.find(c, nxt, nxt + SNAP) for c in " \n\t") if i != -1]
        start = min(spaces) if spaces else nxt


def _widened(text: str, item: Finding, start: int, end: int) -> Finding:
    """A window's finding in text offsets; one cut by a window edge inside a run without
    whitespace takes the whole run (so no piece of a long token escapes redaction)."""
    first, last = item.start + start, item.end + start
    if item.end == end - start and end < len(text) and not text[end].isspace():
        last = end + len(text[end:].split(None, 1)[0])
    if item.start == 0 and start > 0 and not text[start - 1].isspace():
        first = max(text.rfind(c, 0, start) for c in " \n\t\r") + 1
    return Finding(first, last, item.kind, item.rank)


def _scan(window: str) -> list[Finding]:
    token = formats.tokenish(window)
    found = list(formats.own(window, token))
    if token or any(w in window for w in ("://", "BEGIN", "PuTTY")):
        found += _plugin_findings(window)
    return found


def secret_kind(text: str) -> str | None:
    """The kind of the first secret in a text (``aws-access-key``, ``jwt``, …), or None."""
    found = findings(text)
    return found[0].kind if found else None


# symbols written onto a secret's end: a password may end in them ("Hunter2Secret!"), so
# the marker takes them too rather than leave a piece of the secret beside it (a comma,
# colon, semicolon or full stop there ends the sentence, and "@" or "-" joins what follows:
# the host of a connection string; those stay)
_TAIL: Final = frozenset("!?#$%&*+=~^")


def redact(text: str) -> str:
    """The text with each secret, and any punctuation written onto its end, replaced by
    ``[redacted <kind>]``."""
    pieces, at = [], 0
    for item in findings(text):
        end = item.end
        while end < len(text) and text[end] in _TAIL:
            end += 1
        pieces += [text[at : item.start], f"[redacted {item.kind}]"]
        at = max(at, end)
    return "".join([*pieces, text[at:]])


def has_secret(text: str) -> bool:
    """The flush's test, stricter than a tool call's: a credential, the marker of one
    already redacted, or a credential label beside any value-like token. A statement it
    keeps out only stays in the episode log, so doubt counts as a secret here."""
    if MARKER.search(text) is not None or secret_kind(text) is not None:
        return True
    return passwords.near_credential(text)


def refusal(kind: str, field: str, text: str) -> str:
    """The agent-facing reason a write carrying a secret is refused: what was found, what
    to do instead, and the call quoted redacted and bounded (never the secret itself)."""
    call = quoted(" ".join(redact(text).split()), QUOTE_CHARS)
    return (
        f"{field} carries a secret ({kind}); nothing was written. Credentials are never "
        "stored in memory: save a reference instead, e.g. 'the key is in the vault at "
        f"<path>' or 'read it from the env var <NAME>'. The call, redacted: {call}"
    )


# ---- detect-secrets' format plugins -----------------------------------------------------

# plugin (module.Class) -> our kind; the plugins left out are noisy on chat text (public
# IPs, the keyword and high-entropy scans) and covered by our labelled-value rules instead
_PLUGIN_KINDS: Final = {
    "aws.AWSKeyDetector": "aws-access-key",
    "artifactory.ArtifactoryDetector": "artifactory-token",
    "azure_storage_key.AzureStorageKeyDetector": "azure-storage-key",
    "basic_auth.BasicAuthDetector": "connection-string",
    "cloudant.CloudantDetector": "cloudant-key",
    "discord.DiscordBotTokenDetector": "discord-token",
    "github_token.GitHubTokenDetector": "github-token",
    "gitlab_token.GitLabTokenDetector": "gitlab-token",
    "ibm_cloud_iam.IbmCloudIamDetector": "ibm-cloud-key",
    "ibm_cos_hmac.IbmCosHmacDetector": "ibm-cos-key",
    "jwt.JwtTokenDetector": "jwt",
    "mailchimp.MailchimpDetector": "mailchimp-key",
    "openai.OpenAIDetector": "openai-key",
    "private_key.PrivateKeyDetector": "private-key",
    "pypi_token.PypiTokenDetector": "pypi-token",
    "sendgrid.SendGridDetector": "sendgrid-key",
    "slack.SlackDetector": "slack-token",
    "softlayer.SoftlayerDetector": "softlayer-key",
    "square_oauth.SquareOAuthDetector": "square-key",
    "stripe.StripeDetector": "stripe-key",
    "telegram_token.TelegramBotTokenDetector": "telegram-token",
    "twilio.TwilioKeyDetector": "twilio-key",
}
# what a window must hold (lower-cased) for a plugin to run: a literal of its regex
_PLUGIN_NEEDS: Final = {
    "aws-access-key": ("akia", "asia", "abia", "acca", "a3t", "aws"),
    "artifactory-token": ("AKC", *(f"AP{c}" for c in "0123456789ABCDEF")),
    "azure-storage-key": ("accountkey",),
    "connection-string": ("://",),
    "cloudant-key": tuple(
        f"{head}{sep}{tail}"
        for head in ("cl", "clou")
        for sep in ("", "_", "-")
        for tail in ("api", "key", "pw", "pass", "token")
    )
    + ("cloudant",),
    "discord-token": (".",),
    "github-token": ("gh",),
    "gitlab-token": ("gl", "gr1348941"),
    "ibm-cloud-key": ("key", "pwd", "pass", "token"),
    "ibm-cos-key": ("secret",),
    "jwt": ("eyj",),
    "mailchimp-key": ("-us",),
    "openai-key": ("t3blbkfj",),
    "private-key": ("begin", "putty"),
    "pypi-token": ("pypi-",),
    "sendgrid-key": ("sg.",),
    "slack-token": ("xox", "hooks.slack"),
    "softlayer-key": ("softlayer", "sl"),
    "square-key": ("sq0csp",),
    "stripe-key": ("k_live_",),
    "telegram-token": (":",),
    "twilio-key": ("AC", "SK"),
}
# the shortest run without whitespace a plugin's value can be: most windows have none
_PLUGIN_RUN: Final = {
    "artifactory-token": 11,
    "cloudant-key": 24,
    "discord-token": 59,
    "ibm-cloud-key": 44,
    "ibm-cos-key": 48,
    "mailchimp-key": 36,
    "softlayer-key": 64,
    "telegram-token": 44,
    "twilio-key": 34,
}
# a value the plugin's own regex captures loosely is checked like ours
_PLUGIN_CHECKS: Final[dict[str, Callable[[str], bool]]] = {
    "connection-string": formats.credential,
    "cloudant-key": formats.token_like,
    "ibm-cloud-key": formats.token_like,
    "ibm-cos-key": formats.token_like,
    "softlayer-key": formats.token_like,
    "artifactory-token": formats.token_like,
}


@cache
def _plugins() -> tuple[tuple[str, Any], ...]:
    """detect-secrets' format plugins, imported by name on first use (it pulls in
    requests); never through its registry, which would also load plugins from its settings."""
    out = []
    for name, kind in _PLUGIN_KINDS.items():
        module, cls = name.rsplit(".", 1)
        out.append(
            (kind, getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), cls)())
        )
    return tuple(out)


def _plugin_spans(plugin: Any, text: str) -> Iterator[tuple[int, int]]:
    """Where a plugin matches. Its own ``analyze_string`` yields only the value (and for a
    regex with one group, only that group — for the GitHub plugin the ``ghp`` prefix), so
    its patterns are run here: the span is the last group when it is the value, else the
    whole match. A plugin with its own validation (JWT) is asked for values instead."""
    if "analyze_string" in type(plugin).__dict__:  # JWT: its regex backtracks on "eyJ"
        for candidate in _JWT_CANDIDATE.finditer(text):  # repeats, so it sees candidates
            for value in set(plugin.analyze_string(candidate.group())):
                for hit in re.finditer(re.escape(value), candidate.group()):
                    yield candidate.start() + hit.start(), candidate.start() + hit.end()
        return
    for pattern in plugin.denylist:
        for hit in pattern.finditer(text):
            groups = [i for i in range(1, (pattern.groups or 0) + 1) if hit.group(i)]
            span = (
                hit.span(groups[-1]) if groups and len(hit.group(groups[-1])) >= 8 else hit.span()
            )
            yield span


def _plugin_findings(text: str) -> Iterator[Finding]:
    low, longest = text.lower(), max(map(len, text.split()), default=0)
    for kind, plugin in _plugins():
        needs = _PLUGIN_NEEDS[kind]
        if longest < _PLUGIN_RUN.get(kind, 8) or not any(
            need in (low if need.islower() else text) for need in needs
        ):
            continue
        for start, end in _plugin_spans(plugin, text):
            while start < end and text[start] in _EDGE:
                start += 1
            while end > start and text[end - 1] in _EDGE:
                end -= 1
            value = text[start:end]
            check = _PLUGIN_CHECKS.get(kind)
            if len(value) < 8 or (check is not None and not check(value)):
                continue
            yield Finding(start, end, _refine(kind, value), formats.RANK_FORMAT)


_EDGE: Final = " \t\r\n\"':="
_JWT_CANDIDATE: Final = re.compile(r"(?<![\w=-])eyJ[\w=-]*\.[\w=.+/-]*")


def _refine(kind: str, value: str) -> str:
    """A plugin that covers two formats: say which one matched."""
    if kind == "aws-access-key" and not formats.AWS_KEY_ID.fullmatch(value):
        return "aws-secret-key"
    if kind == "slack-token" and value.startswith("https://"):
        return "slack-webhook"
    return kind


__all__ = ["MARKER", "Finding", "findings", "has_secret", "redact", "refusal", "secret_kind"]
