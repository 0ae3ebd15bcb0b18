"""Skill gaps, by structure: what users keep asking for that no skill covers.

Three signals, each clustered the same way — two texts are one when they share at least
``shared_words`` content words (stemmed, stop words and the grammar of asking left out) and
their Jaccard similarity reaches ``similarity``; a cluster is the connected component of
that link:

- requests (user turns): a gap when asked in ``min_sessions`` distinct sessions;
- errors (the extractor's error-tagged statements): a gap when one area failed
  ``min_errors`` times;
- procedures (assistant turns with ``min_steps`` numbered steps): a gap when the agent
  walked the same steps by hand ``min_procedures`` times.

A cluster a registered skill already covers (its name, description and trigger words hold
``covered_share`` of the cluster's core words) is no gap; neither is one a person already
accepted or rejected. Pure: no I/O (see :mod:`reverie.skills.drafts` for the pass)."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from reverie.config import DraftsConfig
from reverie.rules.similarity import jaccard, word_set
from reverie.stores.records import Skill

REQUEST, ERROR, PROCEDURE = "request", "error", "procedure"

ASKING: Final = frozenset(
    """how why need needs want wants help let lets get know tell show give way again
    someone something anything thing things ok okay yes thanks thank""".split()
)
"""The grammar of asking, not a capability: two requests that share only "how … need …"
are not one request."""

_STEP: Final = re.compile(r"^\s*(?:\d{1,2}[.)]|step\s+\d{1,2}[:.)]?)\s+(\S.*)$", re.I | re.M)
_TRIGGERS: Final = re.compile(r"^\s*trigger words?\s*:\s*(.+)$", re.I | re.M)
_DESCRIPTION: Final = re.compile(r"^\s*description\s*:\s*(.+)$", re.I | re.M)
MAX_CORE: Final = 6
SAME_GAP: Final = 0.5
"""Jaccard of two gaps' core words from which they are one gap (a draft's, found again)."""


@dataclass(frozen=True, slots=True)
class Signal:
    """One text that may reveal a gap: a request, an error or a procedure, and its turn."""

    kind: str
    episode_id: int
    session_id: str
    text: str
    reply: str | None = None
    """The assistant's answer in the same turn (a request's), for the draft's steps."""

    @property
    def words(self) -> frozenset[str]:
        return content_words(self.text)


@dataclass(frozen=True, slots=True)
class Gap:
    """A cluster of signals no skill covers, ranked by ``score``."""

    kind: str
    core: tuple[str, ...]
    signals: tuple[Signal, ...]
    sessions: int
    score: float

    @property
    def key(self) -> str:
        return " ".join(sorted(self.core))

    @property
    def evidence(self) -> tuple[int, ...]:
        return tuple(sorted({s.episode_id for s in self.signals}))


def content_words(text: str) -> frozenset[str]:
    """The words that carry a text's meaning (stemmed), without the grammar of asking."""
    return frozenset(w for w in word_set(text) if w not in ASKING and len(w) > 1)


def steps(text: str | None) -> list[str]:
    """The numbered steps of a text, in order ("1. …", "2) …", "Step 3: …")."""
    return [m.group(1).strip() for m in _STEP.finditer(text or "")]


def linked(shared: int, a: int, b: int, cfg: DraftsConfig) -> bool:
    """Two texts of ``a`` and ``b`` content words, ``shared`` of them in common, are one."""
    return shared >= cfg.shared_words and shared / (a + b - shared) >= cfg.similarity


def clusters(signals: Sequence[Signal], cfg: DraftsConfig) -> list[list[Signal]]:
    """Connected components of the link. Each text counts the words it shares with every
    earlier one through an inverted index, so only texts sharing a word are compared."""
    words = [s.words for s in signals]
    parent = list(range(len(signals)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    index: dict[str, list[int]] = {}
    for i, found in enumerate(words):
        shared: Counter[int] = Counter()
        for word in found:
            shared.update(index.get(word, ()))
            index.setdefault(word, []).append(i)
        for j, n in shared.items():
            if linked(n, len(found), len(words[j]), cfg) and root(i) != root(j):
                parent[root(j)] = root(i)
    groups: dict[int, list[Signal]] = {}
    for i, signal in enumerate(signals):
        groups.setdefault(root(i), []).append(signal)
    return list(groups.values())


def core(members: Sequence[Signal], said: Counter[str] | None = None) -> tuple[str, ...]:
    """The words at least half the members use (at most six), the most telling first: by
    how often the members use each, times how rare it is across ``said`` (every signal of
    the kind: a word everyone says all month names no capability), so a draft is named
    after "ddl json snowflake", not "bad between changed"."""
    counts = Counter(w for m in members for w in m.words)
    need = math.ceil(len(members) / 2)
    total = sum(said.values()) if said else 0

    def telling(word: str) -> float:
        return counts[word] * (math.log((1 + total) / (1 + said[word])) if said else 1.0)

    kept = [w for w, n in counts.items() if n >= need]
    kept.sort(key=lambda w: (-telling(w), w))
    return tuple(kept[:MAX_CORE])


def skill_words(skill: Skill) -> frozenset[str]:
    """What a skill says it is for: its name, description and trigger words (a body's
    ``Description:`` / ``Trigger words:`` lines, else its first line)."""
    body = skill.body
    described = _DESCRIPTION.search(body)
    first = described.group(1) if described else next(iter(body.strip().splitlines()), "")
    triggered = _TRIGGERS.search(body)
    said = " ".join((skill.name.replace("-", " ").replace("_", " "), first))
    return content_words(said + " " + (triggered.group(1) if triggered else ""))


def covered(
    words: Iterable[str], skills: Sequence[Skill], cfg: DraftsConfig, *, whole: bool = False
) -> str | None:
    """The first skill covering these core words, or None (``whole``: by its body's words
    too, for steps or errors a skill already walks through)."""
    wanted = frozenset(words)
    if not wanted:
        return None
    for skill in skills:
        said = skill_words(skill) | (content_words(skill.body) if whole else frozenset())
        if len(wanted & said) / len(wanted) >= cfg.covered_share:
            return skill.name
    return None


def _threshold(kind: str, cfg: DraftsConfig) -> tuple[int, bool]:
    """How many a cluster needs, and whether they count distinct sessions."""
    if kind == REQUEST:
        return cfg.min_sessions, True
    if kind == ERROR:
        return cfg.min_errors, False
    return cfg.min_procedures, False


def gaps(
    signals: Sequence[Signal],
    skills: Sequence[Skill],
    decided: Iterable[tuple[str, Iterable[int]]],
    cfg: DraftsConfig,
) -> list[Gap]:
    """The ranked gaps: clusters over their kind's threshold that no skill covers and no
    person decided (``decided``: the gap key and evidence of accepted and rejected drafts;
    a gap with nearly the same core words, or mostly the same turns, is that gap)."""
    decided = list(decided)
    found: list[Gap] = []
    for kind in (REQUEST, ERROR, PROCEDURE):
        need, by_session = _threshold(kind, cfg)
        of_kind = [s for s in signals if s.kind == kind]
        said = Counter(w for s in of_kind for w in s.words)
        for members in clusters(of_kind, cfg):
            sessions = len({m.session_id for m in members})
            count = sessions if by_session else len({m.episode_id for m in members})
            words = core(members, said)
            whole = kind != REQUEST  # steps and errors: a skill's body may already hold them
            if count < need or len(words) < cfg.shared_words:
                continue
            if covered(words, skills, cfg, whole=whole):
                continue
            gap = Gap(kind, words, tuple(members), sessions, 0.0)
            if any(same_gap(gap, key, seen) for key, seen in decided):
                continue
            score = count + len(members) / 10 + sessions / 100
            found.append(Gap(kind, words, tuple(members), sessions, round(score, 3)))
    order = (REQUEST, ERROR, PROCEDURE)  # at equal score, what users said ranks first
    found.sort(key=lambda g: (-g.score, order.index(g.kind), g.key))
    return distinct(found)


def same_gap(gap: Gap, key: str, evidence: Iterable[int]) -> bool:
    """Whether a gap is the one a draft (its key and evidence) was made for: nearly the
    same core words, or mostly the same turns."""
    turns = set(gap.evidence)
    return jaccard(frozenset(gap.core), frozenset(key.split())) >= SAME_GAP or (
        len(turns & set(evidence)) * 2 >= len(turns)
    )


def distinct(ranked: Sequence[Gap]) -> list[Gap]:
    """One gap per need: a gap whose turns are mostly a better-ranked gap's turns (the
    steps the agent walked for the very requests that made that gap) is that gap."""
    kept: list[Gap] = []
    for gap in ranked:
        turns = set(gap.evidence)
        if all(len(turns & set(k.evidence)) * 2 < len(turns) for k in kept):
            kept.append(gap)
    return kept


def trigger_phrases(skill: Skill) -> list[frozenset[str]]:
    """What a user says when a skill is wanted: each phrase of its ``Trigger words:`` line
    (comma-separated) as the content words it needs together, else its name's words."""
    triggered = _TRIGGERS.search(skill.body)
    said = triggered.group(1).split(",") if triggered else [re.sub(r"[-_]", " ", skill.name)]
    return [words for phrase in said if (words := content_words(phrase))]


def stale(
    skills: Sequence[Skill], said: Iterable[str | None], created_before: str
) -> list[tuple[str, tuple[str, ...]]]:
    """Skills (made and last used before ``created_before``) none of whose trigger phrases
    occurs whole — every content word of it in one turn — in ``said`` (the recent user
    turns): each skill's name and the words looked for. One word of a phrase is not the
    phrase: "code" said is not "infrastructure as code"."""
    turns = [words for text in said if (words := content_words(text or ""))]
    if not turns:
        return []  # nobody said anything: nothing to judge by
    return [
        (skill.name, tuple(sorted(frozenset().union(*phrases))))
        for skill in skills
        if skill.created_at <= created_before
        and (skill.last_used_at or skill.created_at) <= created_before
        and (phrases := trigger_phrases(skill))
        and not any(phrase <= turn for phrase in phrases for turn in turns)
    ]
