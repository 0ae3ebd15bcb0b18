"""The scenario generator: seeded, deterministic agent conversations with ground truth.

Several users and projects (namespaces) talk to an agent over days on a ManualClock. Facts
are introduced, restated in other words, corrected days later ("actually it is now X");
users greet, guess, decide, state preferences and reply styles; the assistant reports
errors, lessons and procedures worth a skill. The agent saves some facts with its tools
and leaves the rest to the flush, as real agents do. The ground truth — every subject's
current value and the values it replaced, and every sentence that must never be stored —
is what the report measures the store against.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

NAMES = ("alice", "bruno", "chen", "dara", "emeka", "farah", "goran", "hana")
PROJECTS = ("atlas", "borealis", "cobalt", "delta")


@dataclass(frozen=True, slots=True)
class Subject:
    """Something with one current value at a time."""

    topic: str
    statement: str  # "The deploy timeout is {v}"
    label: str  # "Deploy timeout"
    question: str
    values: tuple[str, ...]

    def say(self, value: str) -> str:
        return self.statement.format(v=value) + "."

    def restate(self, value: str, form: int) -> str:
        """The same fact in other words: what the writer must answer with NOOP."""
        forms = (
            self.statement.format(v=value).lower() + "!",
            "FYI, " + _lower_first(self.statement.format(v=value)) + ".",
            f"{self.label}: {value}",
            "Just to confirm: " + _lower_first(self.statement.format(v=value)) + ".",
        )
        return forms[form % len(forms)]

    def correct(self, value: str) -> str:
        return "Actually, " + _lower_first(self.statement.format(v=value)) + " now."


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


SUBJECTS = (
    Subject(
        "deploy",
        "The deploy timeout is {v}",
        "Deploy timeout",
        "What is the deploy timeout?",
        ("30s", "45s", "60s", "90s"),
    ),
    Subject(
        "postgres",
        "The postgres pool size is {v}",
        "Postgres pool size",
        "How big is the postgres pool?",
        ("10", "20", "40", "64"),
    ),
    Subject(
        "api",
        "The API rate limit is {v} requests per minute",
        "API rate limit",
        "What is the API rate limit?",
        ("600", "900", "1200"),
    ),
    Subject(
        "billing",
        "The billing cutoff day is day {v}",
        "Billing cutoff day",
        "Which day is the billing cutoff?",
        ("25", "28", "27"),
    ),
    Subject(
        "backups",
        "The backup retention is {v} days",
        "Backup retention",
        "How long is the backup retention?",
        ("14", "30", "45"),
    ),
    Subject(
        "staging",
        "The staging database host is {v}",
        "Staging database host",
        "What is the staging database host?",
        ("pg-stage-1.internal", "pg-stage-2.internal"),
    ),
    Subject(
        "redis",
        "The redis cache TTL is {v} minutes",
        "Redis cache TTL",
        "What is the redis cache TTL?",
        ("5", "15", "10"),
    ),
    Subject(
        "ci",
        "The CI runner image is {v}",
        "CI runner image",
        "Which CI runner image is used?",
        ("ubuntu-22.04", "ubuntu-24.04"),
    ),
    Subject(
        "auth",
        "The access token lifetime is {v} minutes",
        "Access token lifetime",
        "What is the access token lifetime?",
        ("15", "30", "60"),
    ),
    Subject(
        "queue",
        "The worker concurrency is {v}",
        "Worker concurrency",
        "What is the worker concurrency?",
        ("4", "8", "16"),
    ),
)
GREETINGS = ("hi", "hello!", "thanks!", "ok", "cool, thanks", "Got it.", "great", "bye!")
HEDGES = (
    "Maybe the cache is stale?",
    "I think the worker ran out of memory.",
    "Should we move the cluster to eu-west-1?",
    "It might be the DNS resolver at 10.0.0.2.",
    "Probably the nightly job overlapped with the backup.",
)
LESSONS = (
    "Lesson: always drain the queue before restarting the workers.",
    "Turns out the cron jobs need UTC timestamps.",
    "Never run migrations during the billing window.",
    "Lesson learned: rotate credentials before revoking the old ones.",
)
ERRORS = (
    "The build failed with exit code 137 on runner ci-4.",
    "The migration failed with error 1205 on the orders table.",
)
DECISIONS = (
    "We decided to use Postgres 16 for the ledger service.",
    "We decided to keep 3 replicas for the search cluster.",
)
PREFERENCES = ("I prefer short answers with code first.", "I prefer pytest over unittest.")
STYLES = ("Please reply in plain text, no emojis.", "Please reply in short bullet points.")
PROCEDURE = (
    "release",
    "To release, first run make ci, then tag the commit, then run scripts/deploy.sh.",
)


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
    def replaced(self) -> set[str]:
        """Values this subject had and no longer has."""
        return set(self.stale) - {self.current}


@dataclass
class Scenario:
    seed: int
    sessions: list[SessionPlan]
    truths: list[Truth]
    junk: frozenset[str]  # sentences that must never be stored

    @property
    def namespaces(self) -> list[str]:
        return sorted({s.namespace for s in self.sessions})

    @property
    def turns(self) -> int:
        return sum(len(s.turns) for s in self.sessions)


def hour_of(slot: int) -> float:
    """When a slot starts: 09:00, then every 2.5 hours (an idle gap between sessions),
    wrapping late slots into the evening."""
    return 9 + (slot * 2.5) % 13


def generate(
    seed: int = 7,
    sessions: int = 40,
    days: int = 14,
    turns: int = 20,
    users: int = 4,
    tool_rate: float = 0.6,
) -> Scenario:
    """A deterministic scenario: the same arguments give the same conversations."""
    if min(sessions, days, turns, users) < 1:
        raise ValueError("sessions, days, turns and users must be at least 1")
    rng = random.Random(seed)
    names = [  # a user on a project: alice-atlas, bruno-borealis, …
        f"{NAMES[i % len(NAMES)]}-{PROJECTS[i % len(PROJECTS)]}"
        + (f"-{i // len(NAMES)}" if i >= len(NAMES) else "")
        for i in range(users)
    ]
    subjects = {ns: rng.sample(SUBJECTS, k=min(7, len(SUBJECTS))) for ns in names}
    truth: dict[tuple[str, str], Truth] = {}
    introduced: dict[tuple[str, str], int] = {}
    skilled: set[str] = set()
    plans: list[SessionPlan] = []
    for index in range(sessions):
        ns = names[index % len(names)]
        day = min(days - 1, index * days // sessions)
        slot = sum(1 for p in plans if p.namespace == ns and p.day == day)
        first = index < len(names)
        said: list[Turn] = []
        for position in range(turns):
            said.append(
                _turn(
                    rng,
                    ns,
                    subjects[ns],
                    truth,
                    introduced,
                    skilled,
                    day,
                    first and position == 0,
                    tool_rate,
                )
            )
        plans.append(SessionPlan(ns, f"s{index:04d}-{ns}", day, slot, tuple(said)))
    junk = frozenset(GREETINGS) | frozenset(HEDGES)
    return Scenario(
        seed, plans, sorted(truth.values(), key=lambda t: (t.namespace, t.subject.topic)), junk
    )


def _turn(
    rng: random.Random,
    ns: str,
    subjects: list[Subject],
    truth: dict[tuple[str, str], Truth],
    introduced: dict[tuple[str, str], int],
    skilled: set[str],
    day: int,
    opening: bool,
    tool_rate: float,
) -> Turn:
    if opening:
        who = ns.split("-")[0].capitalize()
        return Turn("identity", f"Hi! My name is {who}. My timezone is Europe/Oslo.", "Hello!")
    roll = rng.random()
    subject = rng.choice(subjects)
    key = (ns, subject.topic)
    known = truth.get(key)
    if roll < 0.40:
        if known is None:  # introduce
            value = subject.values[0]
            truth[key] = Truth(ns, subject, value)
            introduced[key] = day
            return _fact_turn(rng, "fact", subject, subject.say(value), tool_rate)
        if introduced[key] + 2 <= day and rng.random() < 0.35:  # a correction, days later
            options = [v for v in subject.values if v != known.current]
            value = options[rng.randrange(len(options))]
            known.stale.append(known.current)
            known.current = value
            introduced[key] = day  # the next correction comes days after this one
            return _fact_turn(rng, "correction", subject, subject.correct(value), tool_rate)
        text = subject.restate(known.current, rng.randrange(4))
        return _fact_turn(rng, "restatement", subject, text, tool_rate)
    if roll < 0.55:
        return Turn("greeting", rng.choice(GREETINGS), rng.choice(("Hello!", "You're welcome.")))
    if roll < 0.68:
        return Turn("hedge", rng.choice(HEDGES), "Let me check before we rely on that.")
    if roll < 0.76:
        return Turn("lesson", None, rng.choice(LESSONS))
    if roll < 0.82:
        return Turn("error", None, rng.choice(ERRORS))
    if roll < 0.87:
        return Turn("decision", rng.choice(DECISIONS), "Noted.")
    if roll < 0.92:
        text = rng.choice(PREFERENCES)
        tools = (ToolUse("memory", {"action": "add", "target": "user", "content": text}),)
        return Turn("preference", text, "Noted.", tools if rng.random() < tool_rate else ())
    if roll < 0.96:
        return Turn("style", rng.choice(STYLES), "Will do.")
    name, body = PROCEDURE
    if ns in skilled:  # the agent made the skill already and follows it
        return Turn("procedure", "How do we release?", body)
    skilled.add(ns)
    tools = (ToolUse("skill_manage", {"action": "create", "name": name, "content": body}),)
    return Turn("procedure", "How do we release?", body, tools)


def _fact_turn(
    rng: random.Random, kind: str, subject: Subject, text: str, tool_rate: float
) -> Turn:
    tools: tuple[ToolUse, ...] = ()
    if rng.random() < tool_rate:
        tools = (ToolUse("topic", {"action": "save", "topic": subject.topic, "content": text}),)
    return Turn(kind, text, "Noted, I'll keep that in mind.", tools)
