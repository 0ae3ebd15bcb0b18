"""Skill activity (seed 004): ``activity = calls × quality × decay`` on 0–100, and its tier.

Pure: no I/O and no clock; the caller passes the counts and the days since the last use.

- **calls** are the uses within :data:`WINDOW_DAYS` (365) of now. A window, because a skill
  used heavily two years ago and once yesterday is not as active as one used every week;
  a long one, because the decay steps (30 and 90 days) and the 180-day archive act on
  an idle skill's real count — a window shorter than 90 days would zero an idle skill's
  score before its ×0.2 step could ever show. The count becomes a term in [0, 1] by
  ``1 − exp(−calls / CALLS_SCALE)``: each use adds less than the one before, and with
  :data:`CALLS_SCALE` = 10 the term is 0.63 at 10 uses, 0.80 at 16 and 0.95 at 30 — a skill
  needs about weekly use over a few months (and good outcomes) to reach 🔥.
- **quality** is the success ratio under a Beta prior of :data:`PRIOR_SUCCESSES` (3)
  successes and :data:`PRIOR_FAILURES` (1) failure: ``(s + 3) / (s + f + 4)``. With few
  calls the prior dominates (one failure is 0.6, not 0); it trusts a skill the agent wrote
  from a success at 0.75 until outcomes say otherwise. An unknown outcome (the host did not
  say) is neither: it counts as a call, not as evidence of quality.
- **decay** by whole days since the last use: 1 below 30 days, 0.5 from 30, 0.2 from 90.

``score = round(100 × calls_term × quality × decay, 1)``; the tier is read from that rounded
score, so the number shown and its mark always agree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final

WINDOW_DAYS: Final = 365
"""Uses older than this do not count as calls."""
CALLS_SCALE: Final = 10.0
"""Uses at which the calls term reaches 1 − 1/e (0.63)."""
PRIOR_SUCCESSES: Final = 3.0
PRIOR_FAILURES: Final = 1.0
DECAY_STEPS: Final = ((90, 0.2), (30, 0.5))
"""(days idle at least, factor), longest first; below the last, the factor is 1."""


@dataclass(frozen=True, slots=True)
class Tier:
    """One of the five activity bands: its floor score, name and mark."""

    floor: float
    name: str
    mark: str


TIERS: Final = (
    Tier(80.0, "active", "🔥"),
    Tier(60.0, "steady", "📈"),
    Tier(40.0, "low", "💤"),
    Tier(20.0, "dormant", "🗄️"),
    Tier(0.0, "retired", "⚰️"),
)
"""Highest first; a score is in the first tier whose floor it reaches."""
TIER_MARKS: Final = {t.name: t.mark for t in TIERS}


@dataclass(frozen=True, slots=True)
class Activity:
    """A skill's score and what it was made of."""

    score: float
    tier: str
    mark: str
    calls: int
    successes: int
    failures: int
    calls_term: float
    quality: float
    decay: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "score": self.score,
            "tier": self.tier,
            "mark": self.mark,
            "calls": self.calls,
            "successes": self.successes,
            "failures": self.failures,
            "calls_term": self.calls_term,
            "quality": self.quality,
            "decay": self.decay,
        }


def calls_term(calls: int) -> float:
    """The saturating call-count term: 0 at no calls, approaching 1."""
    return 1.0 - math.exp(-calls / CALLS_SCALE)


def quality(successes: int, failures: int) -> float:
    """The success ratio under the Beta prior (unknown outcomes are not passed in)."""
    return (successes + PRIOR_SUCCESSES) / (successes + failures + PRIOR_SUCCESSES + PRIOR_FAILURES)


def decay(idle_days: float) -> float:
    """The time decay for a skill last used ``idle_days`` ago."""
    for days, factor in DECAY_STEPS:
        if idle_days >= days:
            return factor
    return 1.0


def tier(score: float) -> Tier:
    """The band a score falls in."""
    for band in TIERS:
        if score >= band.floor:
            return band
    return TIERS[-1]


def activity(calls: int, successes: int, failures: int, idle_days: float) -> Activity:
    """A skill's activity from its uses in the window (of which ``successes`` and
    ``failures`` had a known outcome) and the days since its last use."""
    if min(calls, successes, failures) < 0 or successes + failures > calls:
        raise ValueError(
            f"counts must be non-negative with successes + failures <= calls, got "
            f"calls={calls} successes={successes} failures={failures}"
        )
    if not idle_days >= 0:  # NaN too
        raise ValueError(f"idle_days must be a non-negative number, got {idle_days!r}")
    term, q, d = calls_term(calls), quality(successes, failures), decay(idle_days)
    score = round(100.0 * term * q * d, 1)
    band = tier(score)
    return Activity(
        score, band.name, band.mark, calls, successes, failures, round(term, 4), round(q, 4), d
    )
