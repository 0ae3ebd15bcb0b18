"""Seed 004's health score, 0–100: six metrics, each in [0, 1], weighted as the seed
weighs them. Pure arithmetic over counts (:class:`Counts`); ``reverie.stores.dream``
reads the counts."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from types import MappingProxyType
from typing import Any, Final

from reverie.frozen import quick_init

WEIGHTS: Final = MappingProxyType(
    {
        "freshness": 0.20,
        "coverage": 0.20,
        "coherence": 0.20,
        "connectivity": 0.20,
        "efficiency": 0.10,
        "reachability": 0.10,
    }
)
CATEGORIES: Final = 10
"""Coverage's denominator: the seed's ten categories (a namespace's ten topics)."""
INDEX_LINES: Final = 500
"""Efficiency's scale: an index of this many lines scores 0."""


@quick_init
@dataclass(frozen=True, slots=True)
class Counts:
    """What the metrics are computed from."""

    records: int
    """Active records (entries, facts, skills, log records)."""
    referenced: int
    """… of which referenced (accessed or written) in the last 30 days."""
    categories: int
    """Topics with a fact written in the last 14 days."""
    episodes: int
    linked: int
    """Graph episodes with at least one semantic edge."""
    nodes: int
    components: int
    reachable: int
    """Graph episodes reachable from some entity."""
    index_lines: int
    """Lines of MEMORY.md."""


def _share(part: int, whole: int) -> float:
    return min(1.0, part / whole) if whole > 0 else 0.0


def metrics(c: Counts) -> dict[str, float]:
    """Each metric in [0, 1]: an empty store scores 0 on what it has nothing of."""
    if c.nodes > 1:
        connectivity = 1.0 - (c.components - 1) / (c.nodes - 1)
    else:
        connectivity = float(c.nodes)  # one node is one component; none is nothing
    return {
        "freshness": _share(c.referenced, c.records),
        "coverage": _share(c.categories, CATEGORIES),
        "coherence": _share(c.linked, c.episodes),
        "connectivity": max(0.0, connectivity),
        "efficiency": max(0.0, 1.0 - c.index_lines / INDEX_LINES),
        "reachability": _share(c.reachable, c.episodes),
    }


@quick_init
@dataclass(frozen=True, slots=True)
class Health:
    """The score and what made it."""

    score: float
    metrics: dict[str, float]
    counts: Counts

    def to_dict(self) -> dict[str, Any]:
        return {
            "score": self.score,
            "metrics": {k: round(v, 4) for k, v in self.metrics.items()},
            "weights": dict(WEIGHTS),
            "counts": asdict(self.counts),
        }


def score(c: Counts) -> Health:
    """The weighted sum, on 0–100 (one decimal)."""
    found = metrics(c)
    total = sum(WEIGHTS[name] * value for name, value in found.items())
    return Health(round(100.0 * total, 1), found, c)
