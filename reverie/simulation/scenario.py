"""The scenario generator: seeded, deterministic agent conversations with ground truth.

Several users and projects (namespaces) talk to an agent over days on a ManualClock, the
way people really chat: lowercase, abbreviations, typos. Facts are introduced in many
surface forms, restated in other words, reported by the assistant after it checked a
tool, and corrected days later or in the very next message ("scratch that, it's 45s").
Users paste tracebacks, logs, code, shell sessions, diffs and tables; they hedge ("prob
3 replicas iirc"), give their name and timezone in passing, drop secrets in passing, and
send greetings, acknowledgements and fragments. The assistant answers with explanations
and code, and promises to remember. The agent saves only a minority of facts with its
tools; the rest is left to the flush.

The phrasings are written here from how people talk, not from the rules that decide what
is stored: the simulation grades those rules, so it must not mirror them. The ground
truth — every subject's current value and the values it replaced, each user's name and
timezone, and everything that must never be stored (pasted lines, hedged values, secrets,
greetings, acknowledgements) — is what the report measures the store against.
"""

from __future__ import annotations

import random
import re
import string
from dataclasses import dataclass, field
from typing import Any

NAMES = ("alice", "bruno", "chen", "dara", "emeka", "farah", "goran", "hana")
PROJECTS = ("atlas", "borealis", "cobalt", "delta")
SUBJECTS_PER_USER = 8

_WORD = re.compile(r"[a-z0-9@][a-z0-9@._:/-]*[a-z0-9]|[a-z0-9]")


def words(text: str) -> list[str]:
    """Lower-cased words, keeping hosts, paths, versions and URLs whole."""
    return _WORD.findall(text.lower())


def mentions(text: str, form: str) -> bool:
    """Whether ``form`` (one or more words) occurs in ``text`` word for word."""
    hay, needle = words(text), words(form)
    n = len(needle)
    return n > 0 and any(hay[i : i + n] == needle for i in range(len(hay) - n + 1))


def stems(text: str) -> set[str]:
    """The text's words, plus each plural without its 's' (backups → backup)."""
    found = set(words(text))
    return found | {w[:-1] for w in found if len(w) > 3 and w.endswith("s")}


@dataclass(frozen=True, slots=True)
class Subject:
    """Something with one current value at a time, and how people name it."""

    topic: str
    noun: str  # "deploy timeout"
    question: str
    values: tuple[tuple[str, ...], ...]  # each value's surface forms, canonical first
    guesses: tuple[str, ...]  # hedged values, never true
    markers: tuple[tuple[str, ...], ...]  # word sets that say a text is about this subject
    place: bool = False  # a host / URL / bucket: it "moves" rather than being "bumped"

    def forms(self, value: str) -> tuple[str, ...]:
        return next(f for f in self.values if f[0] == value)

    def about(self, text: str) -> bool:
        found = stems(text)
        return any(set(m) <= found for m in self.markers)

    def carries(self, text: str, value: str) -> bool:
        return any(mentions(text, form) for form in self.forms(value))


SUBJECTS = (
    Subject(
        "deploy",
        "deploy timeout",
        "What is the deploy timeout?",
        (("30s", "30 seconds"), ("45s", "45 seconds"), ("60s", "60 seconds"), ("90s", "90 sec")),
        ("75s", "120s"),
        (("deploy", "timeout"),),
    ),
    Subject(
        "postgres",
        "postgres pool size",
        "How big is the postgres pool?",
        (("20", "20 connections"), ("40", "40 connections"), ("64", "64 connections")),
        ("32", "50"),
        (("postgres", "pool"), ("pg", "pool")),
    ),
    Subject(
        "api",
        "api rate limit",
        "What is the API rate limit?",
        (("600 rpm", "600 requests per minute"), ("900 rpm", "900 requests per minute")),
        ("750 rpm", "1000 rpm"),
        (("rate", "limit"),),
    ),
    Subject(
        "billing",
        "billing cutoff day",
        "Which day is the billing cutoff?",
        (("day 25", "the 25th"), ("day 28", "the 28th"), ("day 27", "the 27th")),
        ("day 26", "day 30"),
        (("billing", "cutoff"),),
    ),
    Subject(
        "backups",
        "backup retention",
        "How long is the backup retention?",
        (("14 days", "two weeks"), ("30 days", "30d"), ("45 days", "45d")),
        ("21 days", "60 days"),
        (("backup", "retention"), ("backup", "kept")),
    ),
    Subject(
        "staging",
        "staging db host",
        "What is the staging database host?",
        (("pg-stage-1.internal",), ("pg-stage-2.internal",), ("pg-stage-3.internal",)),
        ("pg-stage-9.internal",),
        (("staging", "host"), ("staging", "db"), ("staging", "database")),
        place=True,
    ),
    Subject(
        "redis",
        "redis cache ttl",
        "What is the redis cache TTL?",
        (("5 min", "5 minutes"), ("15 min", "15 minutes"), ("10 min", "10 minutes")),
        ("25 min", "45 min"),
        (("redis", "ttl"), ("cache", "ttl")),
    ),
    Subject(
        "ci",
        "ci runner image",
        "Which CI runner image is used?",
        (("ubuntu-22.04",), ("ubuntu-24.04",), ("debian-12-slim",)),
        ("ubuntu-20.04",),
        (("ci", "image"), ("runner", "image")),
        place=True,
    ),
    Subject(
        "auth",
        "access token lifetime",
        "What is the access token lifetime?",
        (("20 min", "20 minutes"), ("30 min", "30 minutes"), ("60 min", "60 minutes")),
        ("90 min", "2 hours"),
        (("token", "lifetime"),),
    ),
    Subject(
        "queue",
        "worker concurrency",
        "What is the worker concurrency?",
        (("4",), ("8",), ("16",)),
        ("12", "6"),
        (("worker", "concurrency"),),
    ),
    Subject(
        "logs",
        "log bucket",
        "Which bucket do the logs go to?",
        (("s3://acme-logs-eu",), ("s3://acme-logs-us",), ("s3://acme-logs-archive",)),
        ("s3://acme-logs-old",),
        (("log", "bucket"),),
        place=True,
    ),
    Subject(
        "replicas",
        "api replica count",
        "How many replicas does the api run?",
        (("3 replicas", "3 pods"), ("4 replicas", "4 pods"), ("6 replicas", "6 pods")),
        ("5 replicas", "8 replicas"),
        (("api", "replica"),),
    ),
    Subject(
        "dashboard",
        "payments dashboard",
        "Where is the payments dashboard?",
        (("grafana.acme.io/d/pay-42",), ("grafana.acme.io/d/pay-57",)),
        ("grafana.acme.io/d/pay-13",),
        (("payment", "dashboard"),),
        place=True,
    ),
    Subject(
        "owner",
        "billing service owner",
        "Who owns the billing service?",
        (("maria",), ("kenji",), ("oskar",)),
        ("lena",),
        (("billing", "owner"), ("billing", "own")),
        place=True,
    ),
)


@dataclass(frozen=True, slots=True)
class Preference:
    """A preference (USER.md) or a reply style (SOUL.md), said in many ways."""

    key: str
    target: str  # "user" or "soul"
    forms: tuple[str, ...]
    agent: str  # how an agent writes it down with its memory tool
    markers: tuple[tuple[str, ...], ...]

    def about(self, text: str) -> bool:
        found = stems(text)
        return any(set(m) <= found for m in self.markers)


PREFERENCES = (
    Preference(
        "terse",
        "user",
        (
            "I like terse answers",
            "prefers terse answers tbh",
            "pls keep answers terse",
            "terse answers work best for me",
            "i prefer short terse replies, no essays",
            "keep it terse pls",
        ),
        "Prefers terse answers.",
        (("terse",),),
    ),
    Preference(
        "pytest",
        "user",
        (
            "I prefer pytest over unittest",
            "we use pytest, not unittest pls",
            "pytest > unittest for me",
            "always pytest pls, never unittest",
            "fwiw i'd rather write tests with pytest than unittest",
        ),
        "Prefers pytest over unittest.",
        (("pytest",),),
    ),
    Preference(
        "code-first",
        "user",
        (
            "show me the code first, then explain",
            "i like code first answers",
            "code first pls, explanation after",
            "pls lead with the code, talk after",
        ),
        "Prefers answers with the code first.",
        (("code", "first"), ("lead", "code")),
    ),
)
STYLES = (
    Preference(
        "emoji",
        "soul",
        (
            "no emojis in replies pls",
            "please reply in plain text, no emojis",
            "drop the emojis when u answer",
            "can you stop using emojis",
        ),
        "Reply in plain text, no emojis.",
        (("emoji",),),
    ),
    Preference(
        "bullets",
        "soul",
        (
            "reply in short bullet points",
            "bullets pls, not paragraphs",
            "i like bullet points in answers",
            "answer in bullet points from now on",
        ),
        "Reply in short bullet points.",
        (("bullet",),),
    ),
)
TIMEZONES = (
    ("Asia/Tokyo", "JST"),
    ("Asia/Kolkata", "IST"),
    ("Europe/Paris", "CET"),
    ("America/New_York", "EST"),
    ("America/Los_Angeles", "PST"),
    ("Europe/London", "GMT"),
)

# ---- phrasings ------------------------------------------------------------------------

INTRODUCE = (
    "the {noun} is {v}",
    "{noun}: {v}",
    "fyi {noun} = {v}",
    "btw we set the {noun} to {v}",
    "our {noun} is {v} fwiw",
    "heads up, {noun} is {v} on our side",
    "for ref the {noun} is {v}.",
    "{Noun} is {v}, set it up last week",
    "note: {noun} -> {v}",
    "so the {noun} is {v} in prod",
)
RESTATE = INTRODUCE + (
    "just to confirm, {noun} is still {v}",
    "yeah {noun} is {v} like i said",
    "reminder: {noun} is {v}",
    "as i said the {noun} = {v}",
    "{noun} is {v}, nothing changed there",
)
CORRECT_AMOUNT = (
    "{noun} was bumped to {v}",
    "we increased the {noun} to {v}",
    "{noun} changed from {old} to {v}",
    "{noun} is now {v}",
    "update: {noun} dropped to {v}",
    "we extended the {noun} to {v}",
    "{noun} got raised to {v} yesterday",
    "ok so the {noun} is {v} now, changed it this morning",
    "improved the {noun} to {v} finally",
)
CORRECT_PLACE = (
    "{noun} moved to {v}",
    "{noun} changed from {old} to {v}",
    "{noun} is now {v}",
    "we migrated the {noun} to {v}",
    "new {noun}: {v}",
    "heads up {noun} moved to {v} (was {old})",
    "the {noun} is {v} now",
    "no wait — the {noun} is {v} now",
)
CORRECT_NEXT = (  # the very next message fixes what was just said
    "scratch that, it's {v}",
    "no wait — the {noun} is {v} now",
    "sorry typo: {v} not {old}",
    "actually {v}, not {old}",
    "wait no, {noun} is {v}. my bad",
    "ugh, i meant {v}",
)
ASK_CHECK = (
    "can u check the {noun}?",
    "what's the {noun} rn?",
    "pls verify the {noun}",
    "do we know the {noun}?",
    "could you look up the {noun} for me",
    "whats our {noun} again",
)
TOOL_REPORT = (
    "I checked the config: the {noun} is {v}.",
    "Ran `{cmd}`: the {noun} is {v}.",
    "Looked it up in the repo — the {noun} is set to {v}.",
    "Checked: {noun} = {v} (from `{cmd}`).",
    "According to `{cmd}`, the {noun} is {v}.",
    "I verified it: the {noun} is currently {v}.",
)
TOOL_COMMANDS = (
    "kubectl get deploy -o wide",
    "terraform show",
    "cat deploy/values.yaml",
    "aws ssm get-parameter",
    "helm get values api",
)
HEDGE_SUBJECT = (
    "the {noun} is like {g} or smth, dont quote me",
    "pretty sure the {noun} is {g} but idk",
    "i think the {noun} is {g}?",
    "prob {g} iirc for the {noun}",
    "{noun} might be {g}",
    "maybe {g}? not sure about the {noun}",
    "could be {g}, havent checked the {noun} tho",
    "{noun} is {g} i guess?",
)
HEDGE_FREE = (  # (sentence, the hedged value)
    ("the idle timeout is like 128s or smth, dont quote me", "128s"),
    ("pretty sure it's the worker-34 box but idk", "worker-34"),
    ("i think it's port 8081?", "8081"),
    ("prob 5 shards iirc", "5 shards"),
    ("might be eu-west-2", "eu-west-2"),
    ("maybe the dns resolver at 10.0.0.7?", "10.0.0.7"),
    ("i guess the cron runs at 02:15 or so", "02:15"),
    ("i think the vpn is on 172.16.9.1, not sure", "172.16.9.1"),
)
IDENTITY_NAME = (
    "{Name} here",
    "name's {name} btw",
    "hey it's {name} from the {project} team",
    "this is {Name}",
    "{name} here, quick q",
    "hi, {Name} speaking",
)
IDENTITY_TZ = (
    "{abbr} here",
    "my tz is {iana_l}",
    "im on {abbr}",
    "fyi i'm in {iana} time",
    "(i'm on {abbr} btw)",
    "timezone: {iana_l}",
)
GREETINGS = ("hi", "hey", "hello!", "morning", "yo", "hey there", "gm")
FRAGMENTS = (
    "ok that fixed it",
    "ty!",
    "thx",
    "lol",
    "kk",
    "nvm",
    "cool",
    "perfect, thanks",
    "yep",
    "wait no, 16:30. typo",
    "brb",
    "sounds good",
    "ok",
    "great, ty",
    "hmm",
)
ASSISTANT_ACKS = (
    "Got it, I'll remember that.",
    "Noted — I'll keep that in mind.",
    "Sure, I'll remember.",
    "Understood, saving that for later.",
    "Will do!",
    "Thanks for letting me know.",
    "Got it.",
    "I'll make a note of it.",
)
ASSISTANT_REPLIES = ("Hello! How can I help?", "You're welcome!", "Glad it worked.", "Sure.")
LESSONS = (
    "Lesson: always drain the queue before restarting the workers.",
    "turns out the cron jobs need UTC timestamps",
    "Never run migrations during the billing window.",
    "lesson learned: rotate credentials before revoking the old ones",
    "TIL the load balancer caches health checks for a minute",
)
ERRORS = (
    "The build failed with exit code 137 on runner ci-4.",
    "the migration died with error 1205 on the orders table",
    "nightly export failed again, disk full on the batch host",
)
DECISIONS = (
    "We decided to use Postgres 16 for the ledger service.",
    "decision: we keep the search cluster on opensearch for now",
    "ok we're going with feature flags for the rollout, decided",
)
QUESTIONS = (
    ("how do i tail the api logs?", "Use the logging dashboard, filtered by service."),
    ("any idea why ci is slow today?", "The shared runners are busy; it should clear up."),
    ("what's a good retry policy for webhooks", "Exponential backoff with jitter, capped."),
)
PROCEDURE = (
    "release",
    "To release, first run make ci, then tag the commit, then run scripts/deploy.sh.",
)
USED_SKILL = "used_skill"
"""Not a tool call: the host reporting a use of a skill (``Session.used_skill``)."""
RELEASE_ASKS = ("How do we release?", "how do we cut a release again", "release steps pls")

# ---- pastes and secrets -----------------------------------------------------------------

_SERVICES = ("checkout", "ingest", "notifier", "search", "billing-api", "reports")
_MODULES = ("worker", "handlers", "client", "tasks", "views", "sync")


def _traceback(rng: random.Random) -> str:
    svc, mod = rng.choice(_SERVICES), rng.choice(_MODULES)
    exc = rng.choice(
        (
            "KeyError: 'customer_id'",
            "TypeError: 'NoneType' object is not subscriptable",
            "ConnectionRefusedError: [Errno 111] Connection refused",
            "ValueError: invalid literal for int() with base 10: 'n/a'",
        )
    )
    return "\n".join(
        (
            "Traceback (most recent call last):",
            f'  File "/srv/{svc}/{mod}.py", line {rng.randrange(20, 400)}, in handle_{mod}',
            f"    payload = self.decode(msg.body)[{rng.randrange(1, 9)}]",
            f'  File "/srv/{svc}/codec.py", line {rng.randrange(10, 90)}, in decode',
            "    return json.loads(raw, object_hook=_hook)",
            exc,
        )
    )


def _log_excerpt(rng: random.Random) -> str:
    svc = rng.choice(_SERVICES)
    day, hour = rng.randrange(1, 28), rng.randrange(0, 24)
    lines = []
    for i in range(rng.randrange(3, 6)):
        ts = f"2026-03-{day:02d}T{hour:02d}:{rng.randrange(60):02d}:{rng.randrange(60):02d}Z"
        event = rng.choice(
            (
                f"ERROR [{svc}] connection reset by peer (attempt {i + 1}/5)",
                f"WARN  [{svc}] slow query took {rng.randrange(900, 9000)}ms",
                f"INFO  [{svc}] retrying batch {rng.randrange(1000, 9999)} after backoff",
                f"ERROR [{svc}] upstream returned 502 for /v1/orders/{rng.randrange(10**5)}",
            )
        )
        lines.append(f"{ts} {event}")
    return "\n".join(lines)


def _code(rng: random.Random) -> str:
    n = rng.randrange(2, 9)
    return rng.choice(
        (
            "```python\n"
            f"def fetch_with_retry(client, url, tries={n}):\n"
            "    for attempt in range(tries):\n"
            "        resp = client.get(url, timeout=attempt + 1)\n"
            "        if resp.status_code < 500:\n"
            "            return resp\n"
            "    raise RuntimeError(f'gave up on {url}')\n```",
            "```js\n"
            "export async function loadOrders(api, customerId) {\n"
            f"  const res = await api.get(`/orders?customer=${{customerId}}&limit={n}0`);\n"
            "  if (!res.ok) throw new Error('orders request failed');\n"
            "  return res.json();\n}\n```",
            "```sql\n"
            "SELECT o.id, o.total_cents, c.email\n"
            "FROM orders o JOIN customers c ON c.id = o.customer_id\n"
            f"WHERE o.created_at > now() - interval '{n} days'\n"
            "ORDER BY o.total_cents DESC LIMIT 50;\n```",
            "```yaml\n"
            "livenessProbe:\n"
            "  httpGet:\n"
            "    path: /healthz\n"
            f"  initialDelaySeconds: {n}\n"
            f"  failureThreshold: {n + 1}\n```",
            "```json\n"
            '{\n  "feature": "new-checkout",\n  "rollout_percent": ' + str(n * 10) + ",\n"
            '  "allow_list": ["qa-team", "beta-users"],\n  "kill_switch": false\n}\n```',
        )
    )


def _shell(rng: random.Random) -> str:
    svc = rng.choice(_SERVICES)
    pod = f"{svc}-{rng.randrange(10**4, 10**5):x}-{rng.choice(('x2kq', 'p9zt', 'm4wd'))}"
    return "\n".join(
        (
            f"$ kubectl get pods -n {svc}",
            "NAME                          READY   STATUS             RESTARTS   AGE",
            f"{pod}   1/1     Running            0          3d",
            f"{pod}b  0/1     CrashLoopBackOff   {rng.randrange(5, 40)}         41m",
            f"$ kubectl logs {pod}b --tail=2",
            "standard_init_linux.go:228: exec user process caused: exec format error",
        )
    )


def _diff(rng: random.Random) -> str:
    n = rng.randrange(2, 7)
    return "\n".join(
        (
            "--- a/config/retry.yaml",
            "+++ b/config/retry.yaml",
            f"@@ -{n * 3},6 +{n * 3},6 @@",
            f"-  max_attempts: {n}",
            f"+  max_attempts: {n + 2}",
            "   backoff_strategy: exponential_with_jitter",
        )
    )


def _table(rng: random.Random) -> str:
    rows = [
        f"| {svc} | {rng.randrange(120, 900)}ms | {rng.randrange(1, 40) / 10}% |"
        for svc in rng.sample(_SERVICES, 3)
    ]
    return "\n".join(("| service | p99 latency | error rate |", "|---|---|---|", *rows))


PASTES = (_traceback, _log_excerpt, _code, _shell, _diff, _table)
USER_PASTE_LEADS = (
    "here's the error:\n{p}",
    "getting this now\n```\n{p}\n```",
    "{p}\n\nany idea?",
    "logs from this morning:\n{p}",
    "pasting what i see:\n{p}\nwhat does this mean",
    "look at this\n{p}",
)
ASSISTANT_PASTE_LEADS = (
    "Here's one way to do it:\n{p}\nThis keeps the behaviour the same and adds a guard.",
    "The output shows the problem:\n{p}\nThe second pod is crash-looping.",
    "Try this:\n{p}\nRun it and tell me what you get.",
    "I'd change it like this:\n{p}\nThat should make the failure go away.",
)


def paste_lines(paste: str) -> list[str]:
    """The distinctive lines of a paste: everything in it but fences and short scraps."""
    out = []
    for line in paste.splitlines():
        text = line.strip()
        if text.startswith("```") or len(text) < 12 or sum(c.isalnum() for c in text) < 6:
            continue
        out.append(text)
    return out


_ALNUM = string.ascii_letters + string.digits
_B64 = _ALNUM + "-_"


def _draw(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _secret(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    """A sentence carrying a secret in passing, and the secret strings in it."""
    kind = rng.randrange(8)
    if kind == 0:
        key = "AKIA" + _draw(rng, string.ascii_uppercase + string.digits, 16)
        form = rng.choice(
            ("oh and the aws key is {k} if u need it", "export AWS_ACCESS_KEY_ID={k}")
        )
    elif kind == 1:
        key = "ghp_" + _draw(rng, _ALNUM, 36)
        form = rng.choice(("use my token {k} for the api calls", "gh token: {k} (dont commit it)"))
    elif kind == 2:
        key = f"xoxb-{_draw(rng, string.digits, 11)}-{_draw(rng, string.digits, 12)}-"
        key += _draw(rng, _ALNUM, 24)
        form = rng.choice(("slack bot token is {k}", "the alerts bot uses {k} fyi"))
    elif kind == 3:
        key = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ" + _draw(rng, _B64, 30)
        key += "." + _draw(rng, _B64, 43)
        form = rng.choice(
            ("here's the jwt from the login response {k}", "auth header was Bearer {k}")
        )
    elif kind == 4:
        body = ("MIIEow" + _draw(rng, _ALNUM, 58), _draw(rng, _ALNUM + "+/", 64))
        block = "\n".join(
            ("-----BEGIN RSA PRIVATE KEY-----", *body, "-----END RSA PRIVATE KEY-----")
        )
        return "here's the deploy key:\n" + block, body
    else:
        key = rng.choice(("hunter", "tr0ub4dor", "s3cr3t", "letmein", "p4ssw0rd")) + _draw(
            rng, string.digits, 3
        )
        form = rng.choice(
            (
                "the db pw is {k}!! dont share",
                "creds are in the env: password={k}",
                "DB_PASSWORD={k} on staging",
                "root password for the bastion is {k}",
            )
        )
    return form.format(k=key), (key,)


# ---- the plan and its ground truth ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToolUse:
    tool: str
    args: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Turn:
    kind: str
    user: str | None
    assistant: str | None
    tools: tuple[ToolUse, ...] = ()
    subject: str | None = None  # the subject's topic, for fact turns
    value: str | None = None  # the canonical value the turn gives it


@dataclass(frozen=True, slots=True)
class SessionPlan:
    namespace: str
    session_id: str
    day: int
    slot: int  # the namespace's n-th session that day: slots run in order, one after another
    turns: tuple[Turn, ...]


@dataclass
class Truth:
    """What the store should hold about one subject of one namespace at the end."""

    namespace: str
    subject: Subject
    current: str
    stale: list[str] = field(default_factory=list)

    @property
    def replaced(self) -> list[str]:
        """Values this subject had and no longer has, in the order they were replaced."""
        return sorted(set(self.stale) - {self.current}, key=self.stale.index)


@dataclass(frozen=True, slots=True)
class Never:
    """Something said that must never be stored.

    ``kind``: paste (a pasted line), hedge (a hedged value, with its subject's topic when
    it has one), secret (a secret string), greeting, fragment or ack (a whole message)."""

    kind: str
    namespace: str
    text: str
    subject: str | None = None


@dataclass(frozen=True, slots=True)
class Identity:
    """A user's name and timezone, said in passing: both belong in user_settings."""

    namespace: str
    name: str
    timezone: tuple[str, ...]  # accepted forms: the IANA name and the abbreviation


@dataclass
class Scenario:
    seed: int
    sessions: list[SessionPlan]
    truths: list[Truth]
    never: list[Never]
    identities: list[Identity]

    @property
    def namespaces(self) -> list[str]:
        return sorted({s.namespace for s in self.sessions})

    @property
    def turns(self) -> int:
        return sum(len(s.turns) for s in self.sessions)

    def never_of(self, kind: str) -> list[Never]:
        return [n for n in self.never if n.kind == kind]


def hour_of(slot: int) -> float:
    """When a slot starts: 09:00, then every 2.5 hours (an idle gap between sessions),
    wrapping late slots into the evening."""
    return 9 + (slot * 2.5) % 13


@dataclass
class _User:
    """One namespace's state while its conversations are written."""

    namespace: str
    subjects: list[Subject]
    identity: Identity
    truth: dict[str, Truth] = field(default_factory=dict)
    changed: dict[str, int] = field(default_factory=dict)  # topic → day of the last change
    skilled: bool = False
    introduced: bool = False  # name and timezone said
    followed: int = 0  # times the agent followed its skill since it made it


@dataclass
class _Writer:
    """The generator's state: the RNG, the users, and the must-never-store list."""

    rng: random.Random
    tool_rate: float
    never: list[Never] = field(default_factory=list)

    def pick(self, options: tuple[str, ...]) -> str:
        return options[self.rng.randrange(len(options))]

    def forbid(self, kind: str, ns: str, text: str, subject: str | None = None) -> None:
        self.never.append(Never(kind, ns, text, subject))

    def ack(self, ns: str) -> str:
        text = self.pick(ASSISTANT_ACKS)
        self.forbid("ack", ns, text)
        return text


def generate(
    seed: int = 7,
    sessions: int = 40,
    days: int = 14,
    turns: int = 20,
    users: int = 4,
    tool_rate: float = 0.3,
) -> Scenario:
    """A deterministic scenario: the same arguments give the same conversations."""
    if min(sessions, days, turns, users) < 1:
        raise ValueError("sessions, days, turns and users must be at least 1")
    w = _Writer(random.Random(seed), tool_rate)
    people = [_user(w.rng, i) for i in range(users)]
    plans: list[SessionPlan] = []
    for index in range(sessions):
        user = people[index % len(people)]
        ns = user.namespace
        day = min(days - 1, index * days // sessions)
        slot = sum(1 for p in plans if p.namespace == ns and p.day == day)
        said = _session_turns(w, user, day, turns)
        plans.append(SessionPlan(ns, f"s{index:04d}-{ns}", day, slot, said))
    truths = [t for u in people for t in sorted(u.truth.values(), key=lambda t: t.subject.topic)]
    return Scenario(seed, plans, truths, w.never, [u.identity for u in people])


def _user(rng: random.Random, i: int) -> _User:
    """A user on a project (alice-atlas, bruno-borealis, …), their subjects and timezone."""
    name = NAMES[i % len(NAMES)]
    ns = f"{name}-{PROJECTS[i % len(PROJECTS)]}" + (
        f"-{i // len(NAMES)}" if i >= len(NAMES) else ""
    )
    subjects = rng.sample(SUBJECTS, k=min(SUBJECTS_PER_USER, len(SUBJECTS)))
    tz = TIMEZONES[rng.randrange(len(TIMEZONES))]
    return _User(ns, subjects, Identity(ns, name.capitalize(), tz))


def _session_turns(w: _Writer, user: _User, day: int, turns: int) -> tuple[Turn, ...]:
    out: list[Turn] = []
    if not user.introduced:  # the first session opens with a name, the timezone comes later
        user.introduced = True
        out += _identity(w, user)
    while len(out) < turns:
        out += _event(w, user, day, turns - len(out))
    return tuple(out[:turns])


def _identity(w: _Writer, user: _User) -> list[Turn]:
    ident = user.identity
    name = w.pick(IDENTITY_NAME).format(
        Name=ident.name, name=ident.name.lower(), project=user.namespace.split("-")[1]
    )
    iana, abbr = ident.timezone
    tz = w.pick(IDENTITY_TZ).format(
        iana=iana, iana_l=iana.lower(), abbr=w.pick((abbr, abbr.lower()))
    )
    greeting = f"Hi {ident.name}! How can I help?"
    return [Turn("identity", name, greeting), Turn("identity", tz, w.ack(user.namespace))]


def _event(w: _Writer, user: _User, day: int, room: int) -> list[Turn]:
    """One thing that happens in a conversation: one turn, or two when the next message
    corrects the first."""
    roll = w.rng.random()
    if roll < 0.36:
        return _fact_event(w, user, day, room)
    if roll < 0.47:
        return [_small_talk(w, user.namespace)]
    if roll < 0.56:
        return [_hedge(w, user)]
    if roll < 0.67:
        return [_paste(w, user.namespace)]
    if roll < 0.72:
        return [_secret_turn(w, user.namespace)]
    if roll < 0.81:
        return [_note(w, user.namespace)]
    if roll < 0.91:
        return [_preference(w, user.namespace, roll < 0.87)]
    if roll < 0.94:
        return [_procedure(user)]
    question, answer = QUESTIONS[w.rng.randrange(len(QUESTIONS))]
    return [Turn("question", question, answer)]


def _fact_event(w: _Writer, user: _User, day: int, room: int) -> list[Turn]:
    """A subject introduced, restated, or corrected days later; sometimes the next
    message corrects it again."""
    subject = user.subjects[w.rng.randrange(len(user.subjects))]
    known = user.truth.get(subject.topic)
    if known is None:
        value = subject.values[0][0]
        known = user.truth[subject.topic] = Truth(user.namespace, subject, value)
        user.changed[subject.topic] = day
        turns = [_say(w, user.namespace, "fact", subject, value, INTRODUCE)]
    elif user.changed[subject.topic] + 2 <= day and w.rng.random() < 0.35:
        turns = [_correct(w, user, known, day)]
    else:
        return [_say(w, user.namespace, "restatement", subject, known.current, RESTATE)]
    if room >= 2 and w.rng.random() < 0.15:  # "scratch that, it's …"
        old = known.current
        value = _change(w, known, day, user)
        text = w.pick(CORRECT_NEXT).format(noun=subject.noun, v=_form(w, subject, value), old=old)
        tools = _agent_saves(w, subject, f"{_cap(subject.noun)} is {value}, not {old}.")
        turns.append(Turn("correction", text, w.ack(user.namespace), tools, subject.topic, value))
    return turns


def _change(w: _Writer, known: Truth, day: int, user: _User) -> str:
    """A new value for the subject: the old one becomes stale."""
    options = [f[0] for f in known.subject.values if f[0] != known.current]
    value = options[w.rng.randrange(len(options))]
    known.stale.append(known.current)
    known.current = value
    user.changed[known.subject.topic] = day
    return value


def _correct(w: _Writer, user: _User, known: Truth, day: int) -> Turn:
    subject, old = known.subject, known.current
    value = _change(w, known, day, user)
    if w.rng.random() < 0.25:  # the assistant checks and reports the change
        report = w.pick(TOOL_REPORT).format(noun=subject.noun, v=value, cmd=w.pick(TOOL_COMMANDS))
        ask = w.pick(ASK_CHECK).format(noun=subject.noun)
        return Turn("tool_report", ask, report, (), subject.topic, value)
    forms = CORRECT_PLACE if subject.place else CORRECT_AMOUNT
    text = w.pick(forms).format(
        noun=subject.noun, Noun=_cap(subject.noun), v=_form(w, subject, value), old=old
    )
    tools = _agent_saves(w, subject, f"{_cap(subject.noun)} is now {value} (was {old}).")
    return Turn("correction", text, w.ack(user.namespace), tools, subject.topic, value)


def _say(
    w: _Writer, ns: str, kind: str, subject: Subject, value: str, forms: tuple[str, ...]
) -> Turn:
    """A user states the value, or the assistant reports it after checking a tool."""
    if w.rng.random() < 0.25:
        report = w.pick(TOOL_REPORT).format(noun=subject.noun, v=value, cmd=w.pick(TOOL_COMMANDS))
        ask = w.pick(ASK_CHECK).format(noun=subject.noun)
        return Turn("tool_report", ask, report, (), subject.topic, value)
    text = w.pick(forms).format(
        noun=subject.noun, Noun=_cap(subject.noun), v=_form(w, subject, value)
    )
    tools = _agent_saves(w, subject, f"{_cap(subject.noun)} is {value}.")
    return Turn(kind, text, w.ack(ns), tools, subject.topic, value)


def _form(w: _Writer, subject: Subject, value: str) -> str:
    """The value as a person says it: mostly its usual form, sometimes another."""
    forms = subject.forms(value)
    return forms[0] if len(forms) == 1 or w.rng.random() < 0.7 else w.pick(forms[1:])


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _agent_saves(w: _Writer, subject: Subject, content: str) -> tuple[ToolUse, ...]:
    """The agent saves a minority of facts itself, in its own words."""
    if w.rng.random() >= w.tool_rate:
        return ()
    return (ToolUse("topic", {"action": "save", "topic": subject.topic, "content": content}),)


def _small_talk(w: _Writer, ns: str) -> Turn:
    if w.rng.random() < 0.4:
        text, kind = w.pick(GREETINGS), "greeting"
    else:
        text, kind = w.pick(FRAGMENTS), "fragment"
    reply = w.pick(ASSISTANT_REPLIES)
    w.forbid(kind, ns, text)
    w.forbid("ack", ns, reply)
    return Turn(kind, text, reply)


def _hedge(w: _Writer, user: _User) -> Turn:
    reply = w.pick(("Let me check before we rely on that.", "I'll verify that.", "Hm, not sure."))
    if w.rng.random() < 0.6:
        subject = user.subjects[w.rng.randrange(len(user.subjects))]
        guess = w.pick(subject.guesses)
        w.forbid("hedge", user.namespace, guess, subject.topic)
        text = w.pick(HEDGE_SUBJECT).format(noun=subject.noun, g=guess)
        return Turn("hedge", text, reply, (), subject.topic)
    text, guess = HEDGE_FREE[w.rng.randrange(len(HEDGE_FREE))]
    w.forbid("hedge", user.namespace, guess)
    return Turn("hedge", text, reply)


def _paste(w: _Writer, ns: str) -> Turn:
    paste = PASTES[w.rng.randrange(len(PASTES))](w.rng)
    for line in paste_lines(paste):
        w.forbid("paste", ns, line)
    if w.rng.random() < 0.5:
        text = w.pick(USER_PASTE_LEADS).format(p=paste)
        return Turn("paste", text, w.pick(("Looking into it.", "That's a crash in the decoder.")))
    ask = w.pick(("how would you fix it?", "can you show me?", "what should i run", "example?"))
    return Turn("paste", ask, w.pick(ASSISTANT_PASTE_LEADS).format(p=paste))


def _secret_turn(w: _Writer, ns: str) -> Turn:
    text, secrets = _secret(w.rng)
    for secret in secrets:
        w.forbid("secret", ns, secret)
    return Turn("secret", text, "Careful with credentials in chat; consider rotating it.")


def _note(w: _Writer, ns: str) -> Turn:
    """A lesson, an error or a decision: worth keeping, but not measured as a subject."""
    kind = w.pick(("lesson", "error", "decision"))
    if kind == "lesson":
        return Turn(kind, None, w.pick(LESSONS))
    if kind == "error":
        text = w.pick(ERRORS)
        return Turn(kind, None, text) if w.rng.random() < 0.5 else Turn(kind, text, None)
    return Turn(kind, w.pick(DECISIONS), w.ack(ns))


def _preference(w: _Writer, ns: str, preference: bool) -> Turn:
    options = PREFERENCES if preference else STYLES
    pref = options[w.rng.randrange(len(options))]
    tools: tuple[ToolUse, ...] = ()
    if w.rng.random() < w.tool_rate:
        args = {"action": "add", "target": pref.target, "content": pref.agent}
        tools = (ToolUse("memory", args),)
    kind = "preference" if preference else "style"
    return Turn(kind, w.pick(pref.forms), w.ack(ns), tools, pref.key)


def _procedure(user: _User) -> Turn:
    name, body = PROCEDURE
    ask = RELEASE_ASKS[len(user.changed) % len(RELEASE_ASKS)]
    if user.skilled:  # the agent made the skill already, follows it, and the host says
        user.followed += 1  # how that went: most runs work, every 5th fails, and the
        ok = None if user.followed % 4 == 0 else user.followed % 5 != 0  # host cannot
        use = ToolUse(USED_SKILL, {"name": name, "ok": ok})  # tell for every 4th
        return Turn("procedure", ask, body, (use,))
    user.skilled = True
    tools = (ToolUse("skill_manage", {"action": "create", "name": name, "content": body}),)
    return Turn("procedure", ask, body, tools)
