"""The report: load, cost, writes and learning quality of one simulated run, measured
against the scenario's ground truth through the public API, with the targets it meets or
misses (a miss is reported with its figure, never hidden).

The measures read only what was stored (live facts, entries, user settings, and for
secrets also superseded facts and skills); a value found only in the episode log never
counts as learned. They use their own word matching (``scenario.words``), not the rules
under test."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

import reverie
from reverie.simulation import prefetch
from reverie.simulation.driver import Run
from reverie.simulation.scenario import (
    PREFERENCES,
    STYLES,
    SUBJECTS,
    Identity,
    Never,
    Preference,
    Scenario,
    Truth,
    mentions,
    words,
)
from reverie.skills.scores import TIERS

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
    ("pasted_lines_stored", "==", 0),
    ("secrets_stored", "==", 0),
    ("single_word_topics", "==", 0),
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
        "records": await _records(rv, scenario),
        "dreams": _dreams(ledgers, await _dream_states(rv, scenario)),
        "skills": await _skill_tiers(rv, scenario, run),
    }
    report["targets"] = _targets(report)
    report["prefetch"] = await prefetch.hit_rate(rv, scenario)  # last: its probes are turns
    return report


async def _records(rv: reverie.Reverie, scenario: Scenario) -> dict[str, Any]:
    """Seed 003's learning records over every namespace: how many per tier, the patterns
    found, and the ended sessions the tiers counted."""
    tiers: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    patterns = sessions = 0
    for name in scenario.namespaces:
        status = await rv.namespace(name).status()
        tiers.update(status["tier"])
        kinds.update(status["kind"])
        patterns += status["patterns"]
        sessions += status["sessions"]
    return {
        "tiers": {t: tiers.get(t, 0) for t in ("hot", "warm", "cold")},
        "kinds": dict(sorted(kinds.items())),
        "patterns": patterns,
        "sessions_ended": sessions,
    }


async def _skill_tiers(rv: reverie.Reverie, scenario: Scenario, run: Run) -> dict[str, Any]:
    """Seed 004's skill activity over every namespace at the end: how many skills per tier
    (highest first), the mean score, and the uses the hosts reported, by decision."""
    rows = [row for name in scenario.namespaces for row in await rv.namespace(name).skill_scores()]
    tiers = Counter(row["tier"] for row in rows)
    return {
        "tiers": {band.name: tiers.get(band.name, 0) for band in TIERS},
        "marks": {band.name: band.mark for band in TIERS},
        "registered": len(rows),
        "mean_score": round(sum(r["score"] for r in rows) / len(rows), 1) if rows else None,
        "uses": dict(sorted(run.skill_uses.items())),
    }


async def _dream_states(rv: reverie.Reverie, scenario: Scenario) -> list[dict[str, Any]]:
    return [await rv.namespace(name).dream_status() for name in scenario.namespaces]


def _dreams(ledgers: dict[str, list[Any]], states: list[dict[str, Any]]) -> dict[str, Any]:
    """Seed 004's dream cycle over every namespace: the dreams the review passes ran, the
    health score now (mean, lowest) and the graph's size summed."""
    runs = [r for rows in ledgers.values() for r in rows if r.actor == "dreamer"]
    scores = [state["health"]["score"] for state in states]
    graph: Counter[str] = Counter()
    for state in states:
        graph.update(state["graph"])
    return {
        "dreams": sum(1 for r in runs if r.action == "round"),
        "reports": sum(1 for r in runs if r.action == "round" and r.detail.get("evening")),
        "health_mean": round(sum(scores) / len(scores), 1) if scores else None,
        "health_min": min(scores) if scores else None,
        "graph": dict(graph),
    }


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


# ---- learning quality -------------------------------------------------------------------

ENTRY_TARGETS = ("memory", "user", "soul", "user_settings", "agent_profile")
# Words that cannot name a topic — function words and chat fillers: a topic called "the",
# "it", "sorry" or "x" says nothing about what it holds.
FUNCTION_WORDS = frozenset(
    (
        "a an the this that these those it its i me my we us our you your he she they them "
        "their his her is are was were be been am do does did have has had will would can "
        "could should shall may might must of to in on at by for from with about into over "
        "under as and or but if so not no yes then than there here what which who whom whose "
        "when where why how all any some each every just also very too only now again up down "
        "out off ok okay lol hi hey hello thanks ty thx btw fyi idk iirc smth pls please sorry "
        "wait actually ugh hmm yeah yep nope well oh anyway maybe note update scratch"
    ).split()
)
SECRET_PATTERNS = (
    re.compile(r"AKIA[0-9A-Z]{16}"),
    re.compile(r"ghp_[A-Za-z0-9]{36}"),
    re.compile(r"xox[abprs]-[A-Za-z0-9-]{10,}"),
    re.compile(r"eyJ[\w-]+\.eyJ[\w-]+\.[\w-]+"),
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    re.compile(r"(?i)\b(password|passwd|pw)\s*[=:]\s*\S+"),
)
EXAMPLES = 10


@dataclass(frozen=True, slots=True)
class Item:
    """One stored thing: a fact (``home`` = its topic) or an entry (``home`` = its target)."""

    namespace: str
    store: str  # "fact" or "entry"
    home: str
    id: str
    text: str

    @property
    def context(self) -> str:
        """The text with its topic: a fact is read under its topic's name."""
        return f"{self.home} {self.text}" if self.store == "fact" else self.text

    def show(self) -> str:
        flat = " ".join(self.text.split())
        return f"{self.namespace} {self.store} {self.home}: {flat[:160]}"


def _flat(text: str) -> str:
    return " ".join(text.lower().split())


async def _stored(rv: reverie.Reverie, name: str) -> tuple[list[Item], list[str], list[str]]:
    """A namespace's live facts and entries, its topics, and everything else that holds
    text (superseded facts, skills) — the last only searched for secrets."""
    ns = rv.namespace(name)
    snapshot = await ns.snapshot()
    items: list[Item] = []
    extra: list[str] = []
    for topic in snapshot.topics:
        for f in await ns.facts(topic):
            items.append(Item(name, "fact", topic, f.id, f.content))
            extra += [old.content for old in await ns.chain(f.id) if not old.live]
    for target in ENTRY_TARGETS:
        for e in await ns.entries(target):
            text = e.content if not e.key or e.key in e.content else f"{e.key}: {e.content}"
            items.append(Item(name, "entry", target, e.id, text))
    extra += [s.body for s in await ns.skills(include_archived=True)]
    return items, list(snapshot.topics), extra


async def _quality(rv: reverie.Reverie, scenario: Scenario) -> dict[str, Any]:
    items: list[Item] = []
    topics: dict[str, list[str]] = {}
    extra: dict[str, list[str]] = {}
    for name in scenario.namespaces:
        found, topics[name], extra[name] = await _stored(rv, name)
        items += found
    recall = await _recall(rv, scenario, {(i.namespace, i.id): i for i in items})
    junk = _junk(items, scenario)
    secrets = _secrets(items, extra, scenario)
    odd_topics = sorted(
        f"{ns}/{t}" for ns, names in topics.items() for t in names if _single_word(t)
    )
    counted = [i for i in items if i.home not in {"user_settings", "agent_profile"}]
    duplicates = _duplicates(counted, scenario)
    return {
        "questions": len(scenario.truths),
        "current_fact_recall": recall["recall"],
        "stale_rate": recall["stale"],
        "live_facts": sum(i.store == "fact" for i in items),
        "stored_items": len(items),
        "duplicate_rate": round(len(duplicates) / max(1, len(counted)), 4),
        "junk_rate": round(len(junk["items"]) / max(1, len(items)), 4),
        "junk_stored": junk["by_kind"],
        "pasted_lines_stored": junk["pasted_lines"],
        "junk": junk["items"][:EXAMPLES],
        "secrets_stored": len(secrets),
        "single_word_topics": len(odd_topics),
        **_identities(items, scenario.identities),
        "misrouted": _misrouted(items, scenario),
        "cap_violations": await _caps(rv, scenario, topics),
        "examples": {
            "stale": recall["stale_examples"][:EXAMPLES],
            "missed": recall["missed_examples"][:EXAMPLES],
            "duplicates": duplicates[:EXAMPLES],
            "secrets": secrets[:EXAMPLES],
            "single_word_topics": odd_topics[:EXAMPLES],
        },
    }


async def _caps(rv: reverie.Reverie, scenario: Scenario, topics: dict[str, list[str]]) -> list[str]:
    violations: list[str] = []
    config = rv.config
    for name in scenario.namespaces:
        snapshot = await rv.namespace(name).snapshot()
        for target, block in snapshot.blocks.items():
            if len(block) > getattr(config.caps, target):
                violations.append(f"{name}/{target}: {len(block)} chars")
        if len(topics[name]) > config.writer.max_topics:
            violations.append(f"{name}: {len(topics[name])} topics")
    return violations


async def _recall(
    rv: reverie.Reverie, scenario: Scenario, by_id: dict[tuple[str, str], Item]
) -> dict[str, Any]:
    """Each subject's question against ``ns.search(k=5)``: recalled when a stored fact or
    entry about the subject carries its current value; stale when the best one about it
    carries a replaced value instead. Episode hits never count."""
    found = stale = 0
    stale_examples: list[str] = []
    missed_examples: list[str] = []
    for truth in scenario.truths:
        subject = truth.subject
        hits = await rv.namespace(truth.namespace).search(subject.question, k=5)
        about = []
        for h in hits:
            if h.kind not in {"fact", "entry"}:
                continue
            item = by_id.get((truth.namespace, h.id))
            text = item.context if item else h.text
            if subject.about(text):
                about.append(text)
        if any(subject.carries(t, truth.current) for t in about):
            found += 1
        else:
            shown = about[0][:120] if about else "nothing about it in the top 5"
            missed_examples.append(
                f"{truth.namespace} {subject.noun}: current {truth.current}; best: {shown}"
            )
        best = about[0] if about else None
        if (
            best is not None
            and not subject.carries(best, truth.current)
            and any(subject.carries(best, old) for old in truth.replaced)
        ):
            stale += 1
            stale_examples.append(
                f"{truth.namespace} {subject.noun}: current {truth.current}; best: {best[:120]}"
            )
    n = len(scenario.truths) or 1
    return {
        "recall": round(found / n, 4),
        "stale": round(stale / n, 4),
        "stale_examples": stale_examples,
        "missed_examples": missed_examples,
    }


def _junk_kind(item: Item, nevers: list[Never], lines: list[str]) -> tuple[str, list[str]] | None:
    """Why a stored item is junk (and the pasted lines it holds), or None."""
    flat = _flat(item.text)
    pasted = [line for line in lines if line in flat or (len(flat) >= 24 and flat in line)]
    if pasted:
        return "paste", pasted
    for never in nevers:
        if never.kind == "hedge":
            if mentions(item.text, never.text) and (
                never.subject is None or _subject_about(never.subject, item.context)
            ):
                return "hedge", []
        elif never.kind in {"greeting", "fragment", "ack"}:
            said = _flat(never.text)
            if flat.strip(" .!") == said.strip(" .!") or (len(said) > 20 and said in flat):
                return never.kind, []
    return None


def _subject_about(topic: str, text: str) -> bool:
    return any(s.about(text) for s in SUBJECTS if s.topic == topic)


def _junk(items: list[Item], scenario: Scenario) -> dict[str, Any]:
    """Stored items that are pasted lines, hedged values, greetings, fragments or the
    assistant's acknowledgements, by kind; and how many distinct pasted lines are stored."""
    by_ns: dict[str, list[Never]] = {}
    for never in dict.fromkeys(scenario.never):  # each once, in order
        if never.kind != "secret":
            by_ns.setdefault(never.namespace, []).append(never)
    lines = {
        ns: sorted({_flat(n.text) for n in nevers if n.kind == "paste"})
        for ns, nevers in by_ns.items()
    }
    kinds: Counter[str] = Counter()
    pasted: set[str] = set()
    junk: list[str] = []
    for item in items:
        nevers = [n for n in by_ns.get(item.namespace, []) if n.kind != "paste"]
        why = _junk_kind(item, nevers, lines.get(item.namespace, []))
        if why is not None:
            kinds[why[0]] += 1
            pasted.update(f"{item.namespace}:{line}" for line in why[1])
            junk.append(f"({why[0]}) {item.show()}")
    order = ("paste", "hedge", "greeting", "fragment", "ack")
    return {
        "items": junk,
        "by_kind": {k: kinds[k] for k in order},
        "pasted_lines": len(pasted),
    }


def _secrets(items: list[Item], extra: dict[str, list[str]], scenario: Scenario) -> list[str]:
    """Stored texts holding a secret said in the conversation, or anything shaped like
    one (an AWS key, a GitHub or Slack token, a JWT, a private key, ``password=…``)."""
    said: dict[str, list[str]] = {}
    for never in scenario.never_of("secret"):
        said.setdefault(never.namespace, []).append(never.text.lower())
    texts = [(i.namespace, i.show(), i.text) for i in items]
    texts += [
        (ns, f"{ns} superseded fact or skill: {' '.join(t.split())[:160]}", t)
        for ns, ts in extra.items()
        for t in ts
    ]
    found = []
    for ns, label, text in texts:
        low = text.lower()
        if any(s in low for s in said.get(ns, [])) or any(p.search(text) for p in SECRET_PATTERNS):
            found.append(label)
    return found


def _single_word(topic: str) -> bool:
    """A topic named with a single letter or only function words."""
    parts = [p for p in re.split(r"[-_\s./]+", topic.lower()) if p]
    return all(len(p) <= 1 or p in FUNCTION_WORDS for p in parts)


def _claim(item: Item, truths: list[Truth]) -> str | None:
    """What a stored item says by the ground truth: a subject's value, or a preference."""
    for truth in truths:
        subject = truth.subject
        if not subject.about(item.context):
            continue
        carried = [f[0] for f in subject.values if subject.carries(item.text, f[0])]
        if carried:  # "45s (was 30s)" says something else than "45s" alone
            return f"{subject.topic}={'+'.join(carried)}"
    pref = _preference_of(item.text)
    return f"pref:{pref.key}" if pref else None


def _preference_of(text: str) -> Preference | None:
    return next((p for p in PREFERENCES + STYLES if p.about(text)), None)


def _jaccard(a: str, b: str) -> float:
    x, y = set(words(a)), set(words(b))
    return len(x & y) / len(x | y) if x | y else 1.0


def _duplicates(items: list[Item], scenario: Scenario) -> list[str]:
    """Items beyond the first, in one namespace and one kind of store (facts; entries),
    that say the same thing: the same subject with the same value or the same preference
    (ground truth), or a near-duplicate (word-set Jaccard ≥ 0.8) of another item."""
    truths: dict[str, list[Truth]] = {}
    for truth in scenario.truths:
        truths.setdefault(truth.namespace, []).append(truth)
    seen: set[tuple[str, str, str]] = set()
    others: list[Item] = []
    extra: list[str] = []
    for item in items:
        claim = _claim(item, truths.get(item.namespace, []))
        if claim is not None:
            key = (item.namespace, item.store, claim)
            if key in seen:
                extra.append(f"({claim}) {item.show()}")
            seen.add(key)
            continue
        if any(
            o.namespace == item.namespace
            and o.store == item.store
            and _jaccard(o.text, item.text) >= 0.8
            for o in others
        ):
            extra.append(f"(near-duplicate) {item.show()}")
        others.append(item)
    return extra


def _identities(items: list[Item], identities: list[Identity]) -> dict[str, Any]:
    """Users whose name and timezone, said in passing, got stored (anywhere; and in
    user_settings, their one home)."""
    name = tz = both = home = 0
    for ident in identities:
        mine = [i for i in items if i.namespace == ident.namespace]
        named = [i for i in mine if mentions(i.text, ident.name)]
        zoned = [i for i in mine if any(mentions(i.text, f) for f in ident.timezone)]
        name += bool(named)
        tz += bool(zoned)
        both += bool(named and zoned)
        home += any(i.home == "user_settings" for i in named) and any(
            i.home == "user_settings" for i in zoned
        )
    n = len(identities) or 1
    return {
        "names_learned": round(both / n, 4),
        "identity": {
            "name": round(name / n, 4),
            "timezone": round(tz / n, 4),
            "in_user_settings": round(home / n, 4),
        },
    }


def _misrouted(items: list[Item], scenario: Scenario) -> dict[str, Any]:
    """Items stored away from their one home: preferences outside USER.md, reply styles
    outside SOUL.md, a name or timezone outside user_settings, a subject's value in
    USER.md, SOUL.md or the settings."""
    idents = {i.namespace: i for i in scenario.identities}
    wrong: list[str] = []
    for item in items:
        ident = idents.get(item.namespace)
        pref = _preference_of(item.text)
        says_identity = ident is not None and (
            mentions(item.text, ident.name) or any(mentions(item.text, f) for f in ident.timezone)
        )
        subject = any(s.about(item.context) for s in SUBJECTS)
        if says_identity and item.home != "user_settings":
            wrong.append(f"(identity) {item.show()}")
        elif pref is not None and item.home != pref.target:
            wrong.append(f"({pref.target}) {item.show()}")
        elif subject and item.home in {"user", "soul", "user_settings", "agent_profile"}:
            wrong.append(f"(fact) {item.show()}")
    return {"count": len(wrong), "examples": wrong[:EXAMPLES]}


def _targets(report: dict[str, Any]) -> list[dict[str, Any]]:
    quality = report["quality"]
    values = {
        "lost_writes": report["lost_writes"],
        "model_calls_per_1000_turns": report["model_calls_per_1000_turns"],
        "cap_violations": len(quality["cap_violations"]),
        **{
            k: quality[k]
            for k in (
                "current_fact_recall",
                "stale_rate",
                "duplicate_rate",
                "junk_rate",
                "pasted_lines_stored",
                "secrets_stored",
                "single_word_topics",
            )
        },
    }
    out = []
    for name, op, bound in TARGETS:
        value = values[name]
        met = {"==": value == bound, "<=": value <= bound, ">=": value >= bound}[op]
        out.append({"measure": name, "target": f"{op} {bound:g}", "value": value, "met": met})
    return out
