"""Seed 004's M-FLOW graph by rule (no I/O): which entities, facets and facet points a
knowledge unit hangs from, and the sentence each edge carries (see docs/graph.md).

A unit (a fact, an entry, a turn of the episode log, a topic summary, a pattern, a log
record, a skill) is an L1 **episode**. Its **scopes** are the L4 entities it belongs to: its
home, read off where the loop stored it (a topic → ``project``, USER.md → ``user``, SOUL.md →
``system``, a log record → ``feedback``, …), plus each proper name it carries (a
person most often; a place or a product too — a capital cannot tell which). Its **types** are
what the loop already decided it is (the extractor's tag, the entry's target, the record's
kind). Each (scope, type) is an L2 **facet** ("corrections in deploy"); each content word
with a type is an L3 **facet point** (``correction.timeout``), linked to its facets and to
the episodes that carry it. Every decision reads structure — kinds, targets, tags,
capitalisation — never a list of words fitted to examples.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from reverie.rules.similarity import STOPWORDS, stem, tokens

ENTITY: Final = 4
FACET_POINT: Final = 3
FACET: Final = 2
EPISODE: Final = 1

EDGE_COST: Final = 0.1
"""The cost of one step down the cone, before its fan-out (see the bundle search)."""
KEYWORDS: Final = 8
"""Content words of a unit that become its facet points, in the order said."""
BROAD_CHARS: Final = 600
"""A turn longer than this is a broad episode (a direct hit on it is penalised)."""
_MIN_WORD: Final = 3

ENTRY_HOMES: Final = {
    "user": ("user", "user", "pref"),
    "user_settings": ("user", "user", "setting"),
    "soul": ("system", "agent", "style"),
    "agent_profile": ("system", "agent", "identity"),
    "memory": ("reference", "memory", "note"),
}
"""An entry's target → (entity kind, entity name, type): seed 004's taxonomy (user,
reference; the agent's own voice is the system's)."""


@dataclass(frozen=True, slots=True)
class Scope:
    """An L4 entity: ``kind`` is one of user, project, name, system, skill, feedback,
    reference (and person, tool, … when a configured model names one)."""

    kind: str
    name: str

    @property
    def key(self) -> str:
        return self.kind if self.kind == self.name else f"{self.kind}.{_slug(self.name)}"

    @property
    def label(self) -> str:
        return self.kind if self.kind == self.name else f"{self.kind} {self.name}"


@dataclass(frozen=True, slots=True)
class Unit:
    """A knowledge unit as the graph reads it: ``ref`` is its id as search returns it."""

    key: str
    kind: str
    ref: str
    text: str
    types: tuple[str, ...]
    scopes: tuple[Scope, ...]
    current: bool = True
    broad: bool = False
    said: str | None = None
    """The words its keywords are taken from, when not all of ``text`` (a turn's, without
    its speakers' labels)."""


@dataclass(frozen=True, slots=True)
class Node:
    layer: int
    kind: str
    key: str
    label: str
    ref: str | None = None
    current: bool = True
    broad: bool = False


@dataclass(frozen=True, slots=True)
class Edge:
    src: tuple[int, str]
    """(layer, key) of the higher end."""
    dst: tuple[int, str]
    description: str
    cost: float = EDGE_COST


def _slug(text: str) -> str:
    return re.sub(r"[^\w]+", "-", text.casefold()).strip("-") or "x"


def plural(kind: str) -> str:
    if kind.endswith("y") and not kind.endswith("ey"):
        return kind[:-1] + "ies"
    return kind if kind.endswith("s") else kind + "s"


def keywords(text: str, limit: int = KEYWORDS) -> list[str]:
    """The unit's content words as said (lower-cased), one per stem, first ``limit``."""
    seen: set[str] = set()
    out: list[str] = []
    for token in tokens(text):
        word = token.strip(".,;:!?()[]{}'\"`")
        if len(word) < _MIN_WORD or word in STOPWORDS or not any(c.isalnum() for c in word):
            continue
        if stem(word) not in seen:
            seen.add(stem(word))
            out.append(word)
        if len(out) >= limit:
            break
    return out


_CAPITALISED = re.compile(r"\b([A-Z][a-z]{2,})\b")
_SENTENCE_START = re.compile(r"(?:^|[.!?]\s+|\n\s*|:\s+)$")


def names(text: str, known: frozenset[str] = frozenset()) -> list[str]:
    """People and things a unit names: a capitalised word inside a sentence, or at a
    sentence's start when it is capitalised inside one elsewhere (here or, ``known``, in
    the namespace) — a capital that only opens a sentence says nothing."""
    inside: list[str] = []
    opening: list[str] = []
    for found in _CAPITALISED.finditer(text):
        word = found.group(1)
        if word.casefold() in STOPWORDS:
            continue
        starts = bool(_SENTENCE_START.search(text[: found.start()]))
        (opening if starts else inside).append(word)
    named = [w for w in dict.fromkeys(inside)]
    named += [w for w in dict.fromkeys(opening) if w not in named and (w in known)]
    return named


def nodes_and_edges(unit: Unit) -> tuple[list[Node], list[Edge]]:
    """The unit's cone: its episode, entities, facets and facet points, and the edges
    between them, each described from its two ends."""
    episode = (EPISODE, unit.key)
    nodes = [Node(EPISODE, unit.kind, unit.key, unit.text, unit.ref, unit.current, unit.broad)]
    edges: list[Edge] = []
    words = keywords(unit.text if unit.said is None else unit.said)
    about = f" about {', '.join(words[:3])}" if words else ""
    for i, scope in enumerate(unit.scopes):
        entity = (ENTITY, scope.key)
        nodes.append(Node(ENTITY, scope.kind, scope.key, scope.label))
        relation = "in" if i == 0 else "naming"
        for kind in unit.types:
            facet = (FACET, f"{scope.key}/{kind}")
            nodes.append(Node(FACET, kind, facet[1], f"{plural(kind)} {relation} {scope.name}"))
            edges.append(Edge(entity, facet, f"{scope.label} has {plural(kind)}"))
            edges.append(Edge(facet, episode, f"a {kind} {relation} {scope.name}{about}"))
            if i:
                continue  # a name's facets; the words hang from the home's
            for word in words:
                point = (FACET_POINT, f"{kind}.{stem(word)}")
                nodes.append(Node(FACET_POINT, kind, point[1], f"{kind} {word}"))
                edges.append(Edge(point, facet, f"{word} {plural(kind)} in {scope.name}"))
                edges.append(Edge(point, episode, f"{kind} about {word} in {scope.name}"))
    return nodes, edges


MODEL_KINDS: Final = ("user", "project", "person", "tool", "system", "skill")
"""The entity kinds a model may name (the issue's L4 kinds)."""
NAME_CHARS: Final = 60
"""A model's entity or facet name longer than this is refused."""


def carried(name: str, text: str) -> bool:
    """Whether a proposed name is made only of words ``text`` carries (case aside): a
    model may choose among the source's words, never add one."""
    said = {w.strip(".,;:!?()[]{}'\"`") for w in tokens(text)}
    words = [w.strip(".,;:!?()[]{}'\"`") for w in tokens(name)]
    words = [w for w in words if w]
    return 0 < len(name.strip()) <= NAME_CHARS and bool(words) and set(words) <= said


def named(episode_key: str, kind: str, entity: str, facet: str) -> tuple[list[Node], list[Edge]]:
    """The entity and facet a model named for an episode (already checked by
    :func:`carried`), and the edges down to the episode."""
    scope = Scope(kind, entity)
    top, middle = (ENTITY, scope.key), (FACET, f"{scope.key}/{_slug(facet)}")
    nodes = [Node(ENTITY, kind, scope.key, scope.label), Node(FACET, "named", middle[1], facet)]
    edges = [
        Edge(top, middle, f"{scope.label} has {facet}"),
        Edge(middle, (EPISODE, episode_key), f"{facet} of {scope.label}"),
    ]
    return nodes, edges
