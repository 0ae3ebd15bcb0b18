"""The profile and self-model syntheses as rules (no I/O).

A synthesis is a list of clauses, each a value taken from one or more source records and
carrying their ids: the user profile from user_settings (who), the topics with the most
live facts (what they work on) and the hand-written USER.md entries (how they like
answers); the self-model from the active corrections, lessons and errors (how to work with
this user). :func:`compose` renders the clauses that fit a budget, most important first,
and :func:`clause_problem` / :func:`sentence_problem` check that a value is grounded in
its sources. Stored text is data: a source that gives the agent an instruction or carries
a secret is never quoted, and every quote is rendered by :func:`~reverie.rules.injection.as_data`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from reverie.frozen import quick_init
from reverie.rules.directives import aimed_at_agent
from reverie.rules.injection import answer_problem, as_data, control_problem
from reverie.rules.secrets import has_secret
from reverie.rules.similarity import STOPWORDS, is_value, normalise, stem, tokens, values

USER_SECTIONS: Final = ("who", "prefers", "works_on")
"""The profile's sections in the order a tight budget keeps them."""
SOUL_SECTIONS: Final = ("correction", "lesson", "error")
LABELS: Final = {
    "who": "Who",
    "works_on": "Works on",
    "prefers": "Preferences",
    "correction": "Corrections",
    "lesson": "Lessons",
    "error": "Mistakes to avoid",
    "sentence": "",
}
HEADS: Final = {
    "user": "User profile (weekly synthesis)",
    "soul": "Self-model (weekly synthesis), working with this user",
}
ELLIPSIS: Final = "…"
GROUNDED_SHARE: Final = 0.6
"""The share of a model sentence's content words its cited sources must hold."""


@quick_init
@dataclass(frozen=True, slots=True)
class Clause:
    """One value of a synthesis: its section (``who``, ``works_on``, ``prefers``,
    ``correction``, ``lesson``, ``error``, or ``sentence`` for a model's prose), the text
    shown, and the ids of the records it came from."""

    section: str
    text: str
    sources: tuple[str, ...]

    @classmethod
    def of(cls, data: dict[str, Any]) -> Clause:
        return cls(str(data["section"]), str(data["text"]), tuple(data["sources"]))

    def to_dict(self) -> dict[str, Any]:
        return {"section": self.section, "text": self.text, "sources": list(self.sources)}


@quick_init
@dataclass(frozen=True, slots=True)
class Source:
    """A record a synthesis may draw on: its id, its kind (``setting``, ``entry``,
    ``fact``, or a log record's kind), its text, and its place (a setting's key, a fact's
    topic)."""

    id: str
    kind: str
    text: str
    place: str = ""
    speaker: str = "agent"
    """Who it is read as: ``user`` for a record logged from a conversation turn (never
    vetted by a tool's checks, so a standing order in it is refused, as the flush refuses
    one from a user turn), ``agent`` for what the memory tool or a host kept."""


@lru_cache(maxsize=4096)
def unquotable(text: str, speaker: str = "agent") -> str | None:
    """Why a source's text may not be quoted in a synthesis (``None``: it may): an
    instruction aimed at the agent or a dangerous order (as the memory tool refuses them),
    a secret or a control character. Framing is not a reason: it is defanged by
    :func:`quote`. Cached: a week's sources are mostly last week's."""
    if control_problem(text) is not None:
        return "a control character"
    kind = aimed_at_agent(text, speaker)
    if kind is not None:
        return f"an instruction to the agent ({kind})"
    return "a secret" if has_secret(text) else None


def quote(text: str, limit: int) -> str:
    """``text`` as data on one line, cut at a word to at most ``limit`` chars."""
    flat = as_data(text).strip().rstrip(".;")
    if len(flat) <= limit:
        return flat
    cut = flat[: max(1, limit - 1)]
    if " " in cut:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:") + ELLIPSIS


def who(settings: Sequence[Source]) -> list[Clause]:
    """The user's settings, their name first: ``Alice``, ``timezone: Europe/Oslo``."""
    ordered = sorted(settings, key=lambda s: s.place != "name")
    out = []
    for s in ordered:
        if unquotable(s.text) is not None:
            continue
        value = s.text.partition(":")[2].strip() if s.place == "name" else s.text
        out.append(Clause("who", quote(value, 80), (s.id,)))
    return out


def works_on(topics: Sequence[tuple[str, Sequence[Source]]]) -> list[Clause]:
    """One clause per topic, most facts first; its sources are the topic's newest facts."""
    return [
        Clause("works_on", quote(name, 60), tuple(f.id for f in facts))
        for name, facts in topics
        if facts and unquotable(name) is None
    ]


def quoted_clauses(section: str, sources: Iterable[Source], limit: int) -> list[Clause]:
    """One clause per quotable source, in the order given."""
    return [
        Clause(section, quote(s.text, limit), (s.id,))
        for s in sources
        if unquotable(s.text, s.speaker) is None and s.text.strip()
    ]


def self_model(records: Sequence[Source], limit: int) -> list[Clause]:
    """The corrections, lessons and errors (most pressing first, as given)."""
    by_kind = {kind: [r for r in records if r.kind == kind] for kind in SOUL_SECTIONS}
    return [c for kind in SOUL_SECTIONS for c in quoted_clauses(kind, by_kind[kind], limit)]


def render(target: str, clauses: Sequence[Clause]) -> str:
    """The synthesis entry: its head, then each section's clauses in section order."""
    if not clauses:
        return ""
    sections = USER_SECTIONS if target == "user" else SOUL_SECTIONS
    order = [*sections, "sentence"]
    parts = []
    for section in order:
        texts = [c.text for c in clauses if c.section == section]
        if not texts:
            continue
        joined = (", " if section == "works_on" else "; ").join(texts)
        label = LABELS[section]
        parts.append(f"{label}: {joined}." if label else " ".join(texts))
    return f"{HEADS[target]}: " + " ".join(parts)


def compose(target: str, clauses: Sequence[Clause], budget: int) -> tuple[str, list[Clause]]:
    """The synthesis within ``budget`` chars: clauses are taken in the order given (most
    important first) while the whole still fits; one that does not fit is left out, the
    next may still fit. ``("", [])`` when none fits."""
    kept: list[Clause] = []
    for clause in clauses:
        trial = [*kept, clause]
        if len(render(target, trial)) <= budget:
            kept = trial
    return render(target, kept), kept


def clause_problem(clause: Clause, found: dict[str, tuple[str, str, str]]) -> str | None:
    """Why a clause is not (or no longer) grounded (``None``: it is): each source must
    exist and be live, and the clause's value must be said by one of them (a topic clause:
    be that topic). ``found``: id → (status, content, place), as the store has it."""
    if not clause.sources:
        return "no source"
    for source_id in clause.sources:
        if source_id not in found:
            return f"source {source_id} does not exist"
        if found[source_id][0] != "active":
            return f"source {source_id} is {found[source_id][0]}"
    if clause.section == "sentence":  # a model's prose: grounded by meaning
        cited = [Source(i, "", found[i][1], found[i][2]) for i in clause.sources]
        return sentence_problem(clause.text, cited)
    said = normalise(clause.text.removesuffix(ELLIPSIS))
    for source_id in clause.sources:
        _, content, place = found[source_id]
        if clause.section == "works_on" and normalise(place) == said:
            return None
        if said and said in normalise(as_data(content)):
            return None
    return "its value is not said by its sources"


def _words(text: str) -> set[str]:
    return {stem(t) for t in tokens(text) if t not in STOPWORDS and not is_value(t)}


def sentence_problem(text: str, cited: Sequence[Source]) -> str | None:
    """Why a model's sentence is not grounded in the sources it cites (``None``: it is):
    it cites none, carries a value (number, id, path) none of them has, or fewer than
    :data:`GROUNDED_SHARE` of its content words occur in them."""
    if not cited:
        return "it cites no listed source"
    known = [f"{s.text} {s.place}" for s in cited]
    invented = values(text) - frozenset().union(*(values(k) for k in known))
    if invented:
        return f"it carries values its sources do not: {sorted(invented)[:5]}"
    words = _words(text)
    if not words:
        return "it says nothing"
    held = words & set().union(*(_words(k) for k in known))
    if len(held) < GROUNDED_SHARE * len(words):
        return f"only {len(held)} of its {len(words)} content words come from its sources"
    return None


def prose_problem(target: str, sentences: Sequence[Clause], budget: int) -> str | None:
    """Why a model's synthesis may not be written (``None``: it may): empty, over the
    budget, or not safe to show (framing, an instruction, a secret)."""
    text = render(target, sentences)
    if not text:
        return "it is empty"
    if len(text) > budget:
        return f"it is {len(text)} chars; the budget is {budget}"
    unsafe = answer_problem(text) or aimed_at_agent(text, "agent")
    return None if unsafe is None else f"it is not safe to show: {unsafe}"
