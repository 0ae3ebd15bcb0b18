"""What a topic save does with the topic's live facts, decided without the database:
NOOP on a twin, SUPERSEDE of the fact it corrects, or ADD (docs/supersede.md). The writer
reads the candidates, asks :func:`decide`, and writes what it says."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from reverie.rules.similarity import near_duplicate, normalise
from reverie.rules.supersede import pick_superseded, restates
from reverie.rules.value_slots import restates_values

Action = Literal["noop", "supersede", "add"]


@dataclass(frozen=True, slots=True)
class SaveDecision:
    """``fact_id`` is the twin (noop) or the corrected fact (supersede); ``detail`` says
    how a twin matched (its tier, and its similarity where it has one)."""

    action: Action
    fact_id: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)


def decide(content: str, live: Sequence[tuple[str, str]], threshold: float) -> SaveDecision:
    """Of the topic's live ``(fact_id, text)`` candidates, oldest first: an exact twin
    first (normalised text), then the fact the new one corrects, then a fact that already
    states it (the same claim, the same values, or a near-duplicate at ``threshold``)."""
    key = normalise(content)
    for fact_id, text in live:
        if normalise(text) == key:
            return SaveDecision("noop", fact_id, {"tier": "exact", "similarity": 1.0})
    old_id = pick_superseded(content, live)
    if old_id is not None:
        return SaveDecision("supersede", old_id)
    for fact_id, text in live:
        if restates(content, text) or restates_values(content, text):
            return SaveDecision("noop", fact_id, {"tier": "claim"})
        match = near_duplicate(content, text, threshold)
        if match is not None:
            detail = {"tier": match.tier.value, "similarity": round(match.similarity, 3)}
            return SaveDecision("noop", fact_id, detail)
    return SaveDecision("add")
