"""The simulation's prefetch measure (issue 13): once everything else is measured, each
(user, subject) question is sent as the next user turn and the block the prefetch shows
after it is read — a hit when a fact or entry in it is about the subject and carries its
current value, as ``current_fact_recall`` reads the top 5 of a search (episode hits never
count; a hedged value is never a current value). Public API only; the scenario's own word
matching, not the rules under test."""

from __future__ import annotations

from typing import Any

import reverie
from reverie.simulation.scenario import Scenario, Truth

PROBE_SESSION = "prefetch-probe"


def _carries_current(truth: Truth, found: reverie.Prefetch | None) -> bool:
    if found is None:
        return False
    for hit in found.hits:
        if hit.kind not in {"fact", "entry"}:
            continue
        text = f"{hit.topic} {hit.text}" if hit.kind == "fact" else hit.text
        if truth.subject.about(text) and truth.subject.carries(text, truth.current):
            return True
    return False


async def hit_rate(rv: reverie.Reverie, scenario: Scenario) -> dict[str, Any]:
    """The share of questions whose prefetched block holds the current value, with the
    block's mean size; the probe turns go to a session of their own per user."""
    if not rv.config.prefetch.enabled:
        return {"enabled": False, "questions": len(scenario.truths)}
    hits = shown = chars = 0
    missed: list[str] = []
    for name in scenario.namespaces:
        mine = [t for t in scenario.truths if t.namespace == name]
        if not mine:
            continue
        async with rv.namespace(name).session(PROBE_SESSION) as s:
            for truth in mine:
                await s.turn(user=truth.subject.question)
                await s.wait_prefetch()
                found = s.prefetch_result
                shown += len(found.hits) if found else 0
                chars += len(s.prefetched)
                if _carries_current(truth, found):
                    hits += 1
                else:
                    missed.append(f"{name} {truth.subject.noun}: current {truth.current}")
    n = len(scenario.truths) or 1
    return {
        "enabled": True,
        "questions": len(scenario.truths),
        "hit_rate": round(hits / n, 4),
        "mean_hits_shown": round(shown / n, 2),
        "mean_chars": round(chars / n, 1),
        "missed_examples": missed[:10],
    }


__all__ = ["hit_rate"]
