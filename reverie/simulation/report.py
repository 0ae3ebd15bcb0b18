"""The report: load, cost, writes and learning quality of one simulated run, measured
against the scenario's ground truth through the public API, with the targets it meets or
misses (a miss is reported with its figure, never hidden)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import reverie
from reverie.rules.similarity import near_duplicate, normalise, tokens
from reverie.rules.supersede import parse
from reverie.simulation.driver import Run
from reverie.simulation.scenario import Scenario, Truth

# Decisions that wrote something, by what they left in the store.
_FACT_WRITES = frozenset({"ADD", "SUPERSEDE"})
_ENTRY_WRITES = frozenset({"ADD", "REPLACED"})
TARGETS: tuple[tuple[str, str, float], ...] = (
    ("lost_writes", "==", 0),
    ("model_calls_per_1000_turns", "<=", 10),
    ("current_fact_recall", ">=", 0.9),
    ("stale_rate", "<=", 0.05),
    ("duplicate_rate", "<=", 0.02),
    ("junk_rate", "==", 0),
    ("cap_violations", "==", 0),
)


def percentiles(samples: list[float]) -> dict[str, float]:
    if not samples:
        return {"n": 0}
    ordered = sorted(samples)

    def at(p: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))] * 1000, 3)

    return {
        "n": len(ordered),
        "p50_ms": at(50),
        "p95_ms": at(95),
        "p99_ms": at(99),
        "max_ms": round(ordered[-1] * 1000, 3),
    }


async def build(
    rv: reverie.Reverie, scenario: Scenario, run: Run, settings: dict[str, Any]
) -> dict[str, Any]:
    calls = await rv.model_calls()
    ledgers = {ns: await rv.namespace(ns).ledger() for ns in scenario.namespaces}
    passes = [r for rows in ledgers.values() for r in rows if r.action == "review_pass"]
    latency = {op: percentiles(samples) for op, samples in sorted(run.latencies.items())}
    latency["review_pass"] = percentiles([r.detail.get("duration_ms", 0) / 1000 for r in passes])
    total_calls = sum(row["calls"] for row in calls.values())
    quality = await _quality(rv, scenario)
    report: dict[str, Any] = {
        "settings": settings,
        "sessions": run.sessions,
        "settle_idles": run.settle_idles,
        "turns": run.turns,
        "wall_s": round(run.wall_s, 3),
        "turns_per_s": round(run.turns / run.wall_s, 1) if run.wall_s else None,
        "latency": latency,
        "model_calls": calls,
        "model_calls_per_1000_turns": round(1000 * total_calls / max(1, run.turns), 2),
        "tokens": {
            "input": sum(row["input_tokens"] for row in calls.values()),
            "output": sum(row["output_tokens"] for row in calls.values()),
        },
        "review_passes": len(passes),
        "writes": _writes(run, ledgers),
        "lost_writes": await _lost(rv, run),
        "quality": quality,
    }
    report["targets"] = _targets(report)
    return report


def _writes(run: Run, ledgers: dict[str, list[Any]]) -> dict[str, Any]:
    """The agent's acknowledged decisions against the ledger's rows for them, and the
    background stages' writes."""
    acknowledged = Counter(a.decision for a in run.acks)
    in_ledger: Counter[str] = Counter()
    background: dict[str, Counter[str]] = {}
    for rows in ledgers.values():
        for r in rows:
            if r.actor == "writer":
                in_ledger[r.decision] += 1
            elif r.action in {"add", "save"} and r.actor in {"flusher", "promoter"}:
                background.setdefault(r.actor, Counter())[r.decision] += 1
    # an ERROR writes nothing and has no ledger row; everything else must match one to one
    written = {k: v for k, v in acknowledged.items() if k != "ERROR"}
    return {
        "acknowledged": dict(sorted(acknowledged.items())),
        "ledger": dict(sorted(in_ledger.items())),
        "reconciled": written == dict(in_ledger),
        "background": {k: dict(sorted(v.items())) for k, v in sorted(background.items())},
    }


async def _lost(rv: reverie.Reverie, run: Run) -> int:
    """Acknowledged writes whose row is not in the store."""
    lost = 0
    present: dict[tuple[str, str], set[str]] = {}
    for ack in run.acks:
        ns = rv.namespace(ack.namespace)
        if ack.tool == "topic" and ack.decision in _FACT_WRITES:
            lost += not await ns.chain(str(ack.entry_id))
        elif ack.tool == "memory" and ack.decision in _ENTRY_WRITES:
            key = (ack.namespace, ack.target)
            if key not in present:
                present[key] = {e.id for e in await ns.entries(ack.target)}
            lost += ack.entry_id not in present[key]
        elif ack.tool == "skill_manage" and ack.decision == "CREATED":
            names = {s.name for s in await ns.skills(include_archived=True)}
            lost += str(ack.entry_id).removeprefix("skill:") not in names
    return lost


def _mentions(text: str, value: str) -> bool:
    return value.lower() in tokens(text)


async def _quality(rv: reverie.Reverie, scenario: Scenario) -> dict[str, Any]:
    found = stale = 0
    for truth in scenario.truths:
        hits = await rv.namespace(truth.namespace).search(truth.subject.question, k=5)
        stored = [h for h in hits if h.kind in {"fact", "entry"}]
        if any(_mentions(h.text, truth.current) for h in stored):
            found += 1
        best = next((h for h in stored if _about(h.text, truth)), None)
        if (
            best is not None
            and not _mentions(best.text, truth.current)
            and any(_mentions(best.text, old) for old in truth.replaced)
        ):
            stale += 1
    facts: list[tuple[str, str]] = []
    stored_texts: list[str] = []
    cap_violations: list[str] = []
    config = rv.config
    for name in scenario.namespaces:
        ns = rv.namespace(name)
        snapshot = await ns.snapshot()
        for topic in snapshot.topics:
            facts += [(name, f.content) for f in await ns.facts(topic)]
        for target, block in snapshot.blocks.items():
            if len(block) > getattr(config.caps, target):
                cap_violations.append(f"{name}/{target}: {len(block)} chars")
            stored_texts += [e.content for e in await ns.entries(target)]
        if len(snapshot.topics) > config.writer.max_topics:
            cap_violations.append(f"{name}: {len(snapshot.topics)} topics")
    stored_texts += [text for _, text in facts]
    truths = len(scenario.truths) or 1
    junk = [t for t in stored_texts if _is_junk(t, scenario.junk)]
    return {
        "questions": len(scenario.truths),
        "current_fact_recall": round(found / truths, 4),
        "stale_rate": round(stale / truths, 4),
        "live_facts": len(facts),
        "duplicate_rate": round(_duplicates(facts, scenario) / max(1, len(facts)), 4),
        "stored_items": len(stored_texts),
        "junk_rate": round(len(junk) / max(1, len(stored_texts)), 4),
        "junk": junk[:10],
        "cap_violations": cap_violations,
    }


def _about(text: str, truth: Truth) -> bool:
    """Whether a stored text speaks of the truth's subject (its claim's subject words)."""
    subject = parse(truth.subject.say(truth.current)).subject
    return bool(subject) and subject <= parse(text).subject | parse(text).skeleton


def _duplicates(facts: list[tuple[str, str]], scenario: Scenario) -> int:
    """Live facts beyond the first that say the same thing: the same subject with the same
    value (ground truth), or a near-duplicate of another live fact."""
    subjects = {
        (t.namespace, frozenset(parse(t.subject.say(t.current)).subject)): t
        for t in scenario.truths
    }
    seen: set[tuple[str, frozenset[str], frozenset[str]]] = set()
    others: list[tuple[str, str]] = []
    extra = 0
    for ns, text in facts:
        claim = parse(text)
        if (ns, claim.subject) in subjects and claim.value:
            key = (ns, claim.subject, claim.value)
            extra += key in seen
            seen.add(key)
        else:
            extra += any(o_ns == ns and near_duplicate(text, o, 0.8) for o_ns, o in others)
            others.append((ns, text))
    return extra


def _is_junk(text: str, junk: frozenset[str]) -> bool:
    key = normalise(text)
    return any(key == normalise(j) or (len(j) > 20 and normalise(j) in key) for j in junk)


def _targets(report: dict[str, Any]) -> list[dict[str, Any]]:
    values = {
        "lost_writes": report["lost_writes"],
        "model_calls_per_1000_turns": report["model_calls_per_1000_turns"],
        "cap_violations": len(report["quality"]["cap_violations"]),
        **{
            k: report["quality"][k]
            for k in ("current_fact_recall", "stale_rate", "duplicate_rate", "junk_rate")
        },
    }
    out = []
    for name, op, bound in TARGETS:
        value = values[name]
        met = {"==": value == bound, "<=": value <= bound, ">=": value >= bound}[op]
        out.append({"measure": name, "target": f"{op} {bound:g}", "value": value, "met": met})
    return out
