"""The dream report (``dreams/YYYY-MM-DD.md``, the seed's sections), its line in
``dream-log.md``, and the daily report (``reports/daily-YYYY-MM-DD.md``, the seed's six
sections), rendered from a dream's record — the dict its ledger row keeps, so a report
can be written again from the ledger alone. A section with no data is left out."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

Run = Mapping[str, Any]
"""A dream's record (``Dreamer`` builds it; see docs/dream.md for its keys)."""

_METRIC_NAMES: Final = {
    "freshness": "Freshness",
    "coverage": "Coverage",
    "coherence": "Coherence",
    "connectivity": "Graph connectivity",
    "efficiency": "Efficiency",
    "reachability": "Reachability",
}


def _bullets(lines: list[str]) -> list[str]:
    return [f"- {line}" for line in lines]


def _status(run: Run) -> list[str]:
    day, records = run["day"], run["records"]
    return _bullets(
        [
            f"Episode log: {_n(day['exchanges'], 'exchange')} in {_n(day['sessions'], 'session')}"
            f" since {day['since']}",
            f"Records: {records['short_term']} short-term, {records['long_term']} long-term",
            f"Learnings today: {len(day['learnt'])}; HIGH-weight statements: {len(day['high'])}",
            _index(run["index"]),
        ]
    )


def _index(index: Mapping[str, int]) -> str:
    line = f"MEMORY.md: {index['lines']} lines (cap {index['cap']})"
    if index["lines"] > index["cap"]:
        line += " — over its cap: the promoter should consolidate it"
    return line


def _health(run: Run) -> list[str]:
    health, before = run["health"], run.get("health_before")
    change = "" if before is None else f" ({health['score'] - before:+.1f} since the last dream)"
    lines = [f"**{health['score']:.1f} / 100**{change}", ""]
    lines += ["| metric | weight | value |", "|---|---|---|"]
    for key, name in _METRIC_NAMES.items():
        lines.append(f"| {name} | {health['weights'][key]:.2f} | {health['metrics'][key]:.3f} |")
    return lines


def _graph(run: Run) -> list[str]:
    after = run["after"]
    lines = _bullets(
        [
            f"L4 Entity: {after.get('graph_entities', 0)}",
            f"L3 FacetPoint: {after.get('graph_facetpoints', 0)}",
            f"L2 Facet: {after.get('graph_facets', 0)}",
            f"L1 Episode: {after.get('graph_episodes', 0)}",
            f"Semantic edges: {after.get('graph_edges', 0)}",
        ]
    )
    sample = run.get("sample")
    if sample and sample.get("hits"):
        lines += ["", f"Bundle Search sample: `{sample['query']}`"]
        for hit in sample["hits"]:
            lines.append(f"- {hit['id']} (cost {hit['cost']:.2f}): {' → '.join(hit['path'])}")
    return lines


def _leaderboard(run: Run) -> list[str]:
    """The Top 10 skills by activity score with their tier mark and any tier change since
    the curator's last scoring (a record from before scores: by uses)."""
    board = run.get("skills") or {}
    if any(uses.get("score") is not None for uses in board.values()):
        return _by_activity(board)
    ranked = sorted(board.items(), key=lambda kv: (-kv[1]["total"], kv[0]))
    if not ranked or ranked[0][1]["total"] == 0:
        return []
    lines = []
    for name, uses in ranked[:10]:
        lines.append(f"- {name}: {uses['total']} uses ({uses['today']:+d} today)")
    return lines


def _by_activity(board: Mapping[str, Mapping[str, Any]]) -> list[str]:
    ranked = sorted(board.items(), key=lambda kv: (-(kv[1].get("score") or 0.0), kv[0]))
    lines = []
    for place, (name, row) in enumerate(ranked[:10], start=1):
        line = (
            f"{place}. {row['mark']} {name}: {row['score']:.1f} ({row['tier']}); "
            f"{row['total']} uses ({row['today']:+d} today)"
        )
        before = row.get("tier_before")
        if before and before != row["tier"]:
            line += f" — {before} → {row['tier']}"
        lines.append(line)
    return lines


def _archive(run: Run) -> list[str]:
    return [f"- {c['id']} ({c['kind']}): {c['why']}" for c in run["day"]["cooled"]]


def _recurring(run: Run) -> list[str]:
    return [f"- {p['name']} — seen in {p['sessions']} sessions" for p in run.get("recurring", [])]


def _patterns_updated(run: Run) -> list[str]:
    return [f"- {p['id']}: {p['name']}" for p in run.get("patterns_updated", [])]


def _linked(run: Run) -> list[str]:
    lines = []
    for link in run.get("linked", []):
        for hit in link["hits"][:1]:
            lines.append(f"- {link['text'][:100]} → {hit['id']} via {' → '.join(hit['path'])}")
    return lines


def _recalled(run: Run) -> list[str]:
    return [f"- {r['id']} ({r['kind']}): {r['text']}" for r in run.get("recalled", [])]


DREAM_SECTIONS: Final[tuple[tuple[str, Callable[[Run], list[str]]], ...]] = (
    ("🧠 System status", _status),
    ("🫀 Health score", _health),
    ("🧠 M-FLOW graph", _graph),
    ("🏆 Skill leaderboard", _leaderboard),
    ("💡 What I learned", lambda run: _bullets(list(run["learnt"]["insights"]))),
    ("🎯 Tomorrow's focus", lambda run: _bullets(list(run["learnt"]["actions"]))),
    ("🔗 Linked into the graph", _linked),
    ("📚 Recalled from long-term memory", _recalled),
    ("🔁 Recurring patterns (≥ 3 sessions)", _recurring),
    ("🗄️ Archive candidates", _archive),
    ("Patterns updated", _patterns_updated),
)


def _document(
    title: str, sections: tuple[tuple[str, Callable[[Run], list[str]]], ...], run: Run
) -> str:
    out = [f"# {title}", ""]
    for heading, render in sections:
        lines = render(run)
        if lines:  # a section with no data is left out
            out += [f"## {heading}", "", *lines, ""]
    return "\n".join(out).rstrip() + "\n"


def dream(run: Run) -> str:
    """The dream report, the seed's sections in the seed's order."""
    return _document(f"🌙 Dream Report — {run['date']}", DREAM_SECTIONS, run)


def log_line(run: Run) -> str:
    """The dream's summary line in ``dream-log.md``."""
    after = run["after"]
    return (
        f"- {run['date']} {run['slot']} — health {run['health']['score']:.1f}; "
        f"{len(run['learnt']['insights'])} insights, {len(run['learnt']['actions'])} actions; "
        f"graph {after.get('graph_entities', 0)} entities, {after.get('graph_episodes', 0)} "
        f"episodes, {after.get('graph_edges', 0)} edges\n"
    )


def _summary(run: Run) -> list[str]:
    day = run["day"]
    done = ", ".join(f"{action} ×{n}" for action, n in sorted(day["writes"].items()))
    lines = _bullets([f"Work done: {done or 'no writes'} in {_n(day['sessions'], 'session')}."])
    if day["open_errors"]:
        lines.append(
            f"- Unfinished: {_n(len(day['open_errors']), 'error')} still open, newest first:"
        )
        lines += [f"  - {e['text']}" for e in day["open_errors"][:5]]
    refused = day.get("refused", 0)
    if refused:
        lines.append(f"- Blockers: {_n(refused, 'write')} refused by the write path's checks.")
    return lines


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _skill_development(run: Run) -> list[str]:
    changed = run["day"].get("skills_changed") or {}
    lines = [f"- {name}: {', '.join(actions)}" for name, actions in sorted(changed.items())]
    for draft in run.get("drafts") or ():  # issue 13: gaps drafted, waiting for a verdict
        lines.append(
            f"- draft {draft['name']} ({draft['sessions']} sessions): {draft['description']}"
            " — `reverie skill accept|reject`"
        )
    return lines


def _reflection(run: Run) -> list[str]:
    day, health = run["day"], run["health"]
    corrections = sum(1 for s in day["learnt"] if s["kind"] == "correction")
    lines = []
    if corrections:
        lines.append(f"I was corrected {_n(corrections, 'time')} today; the new values now stand.")
    weakest = min(_METRIC_NAMES, key=lambda name: health["metrics"][name])  # ties: in order
    value = health["metrics"][weakest]
    lines.append(f"My weakest health metric is {_METRIC_NAMES[weakest].lower()} ({value:.2f}).")
    if run.get("recalled"):
        lines.append(f"{len(run['recalled'])} old memories came back into use.")
    return _bullets(lines)


DAILY_SECTIONS: Final[tuple[tuple[str, Callable[[Run], list[str]]], ...]] = (
    ("📝 Today's summary", _summary),
    ("📋 Tomorrow's plan", lambda run: _bullets(list(run["learnt"]["actions"]))),
    ("🛠️ Skill development", _skill_development),
    ("📈 Skill scores", _leaderboard),
    ("🎯 What was learned", lambda run: _bullets(list(run["learnt"]["insights"]))),
    ("💭 Reflection", _reflection),
)


def daily(run: Run) -> str:
    """The daily report, the seed's six sections."""
    return _document(f"📅 Daily Report — {run['daily_date']}", DAILY_SECTIONS, run)
