"""The driver: runs a scenario's sessions concurrently through the public API only, as a
host would — ``reverie.open``, sessions, turns, the agent's tool calls, idle — on a
ManualClock that moves from one slot of the day to the next, so the daily and weekly
stages really run. It measures what the host sees and keeps every acknowledged write."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from itertools import groupby
from typing import Any

import anyio

import reverie
from reverie.clock import ManualClock
from reverie.simulation.scenario import USED_SKILL, Scenario, SessionPlan, hour_of, words

START = datetime(2026, 3, 2, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Ack:
    """A tool call the store answered (an acknowledged write when it wrote)."""

    namespace: str
    tool: str
    target: str
    decision: str
    entry_id: str | None


@dataclass
class Run:
    """What the driver saw."""

    latencies: dict[str, list[float]] = field(default_factory=dict)
    acks: list[Ack] = field(default_factory=list)
    wall_s: float = 0.0
    sessions: int = 0
    turns: int = 0
    settle_idles: int = 0
    skill_uses: dict[str, int] = field(default_factory=dict)
    """The hosts' reports of skill uses, by the decision they got."""

    def time(self, op: str, seconds: float) -> None:
        self.latencies.setdefault(op, []).append(seconds)


async def drive(
    rv: reverie.Reverie,
    clock: ManualClock,
    scenario: Scenario,
    concurrency: int,
    on_session: Callable[[], None] = lambda: None,
) -> Run:
    """Run every session; sessions of one slot run concurrently (at most ``concurrency``)."""
    run = Run()
    limiter = anyio.CapacityLimiter(max(1, concurrency))
    began = time.perf_counter()
    slots = groupby(
        sorted(scenario.sessions, key=lambda s: (s.day, s.slot, s.session_id)),
        key=lambda s: (s.day, s.slot),
    )
    for (day, slot), plans in slots:
        moment = START + timedelta(days=day, hours=hour_of(slot), minutes=slot)
        if moment > clock.now():
            clock.advance(moment - clock.now())
        async with anyio.create_task_group() as tg:
            for plan in plans:
                tg.start_soon(_session, rv, plan, run, limiter, on_session)
        await rv.wait_idle()  # the flushes and review passes of this slot, before time moves
    await _settle(rv, clock, scenario, run)
    run.wall_s = time.perf_counter() - began
    return run


async def _session(
    rv: reverie.Reverie,
    plan: SessionPlan,
    run: Run,
    limiter: anyio.CapacityLimiter,
    on_session: Callable[[], None],
) -> None:
    async with limiter:
        ns = rv.namespace(plan.namespace)
        async with ns.session(plan.session_id) as s:
            for turn in plan.turns:
                t0 = time.perf_counter()
                await s.turn(user=turn.user, assistant=turn.assistant)
                run.time("turn", time.perf_counter() - t0)
                run.turns += 1
                for use in turn.tools:
                    if use.tool == USED_SKILL:  # the host's report, not the agent's call
                        await _used(s, use.args, run)
                        continue
                    args = _as_agent_would(use.args, s.snapshot)
                    t0 = time.perf_counter()
                    result = await s.call_tool(use.tool, args)
                    run.time("tool_call", time.perf_counter() - t0)
                    target = args.get("topic") or args.get("target") or "skill"
                    run.acks.append(
                        Ack(
                            plan.namespace,
                            use.tool,
                            str(target),
                            result["decision"],
                            result.get("entry_id"),
                        )
                    )
            t0 = time.perf_counter()
            await s.idle()
            run.time("idle", time.perf_counter() - t0)
        run.sessions += 1
        on_session()


async def _used(s: reverie.Session, args: dict[str, Any], run: Run) -> None:
    """A use of a skill, with its outcome (seed 004's activity score counts it)."""
    t0 = time.perf_counter()
    result = await s.used_skill(args["name"], ok=args["ok"])
    run.time("used_skill", time.perf_counter() - t0)
    run.skill_uses[result["decision"]] = run.skill_uses.get(result["decision"], 0) + 1


# words too common to tell one topic from another (the agent's own judgement, not the rules')
_COMMON = frozenset(
    ("the", "a", "an", "is", "are", "was", "now", "not", "of", "to", "in", "on", "and", "for")
)


def _as_agent_would(args: dict[str, Any], snapshot: reverie.Snapshot) -> dict[str, Any]:
    """An agent saves a fact under the topic its snapshot's index shows for that subject,
    when there is one (the flush may have opened it under another name)."""
    topic = args.get("topic")
    if args.get("action") != "save" or not topic or topic in snapshot.topics:
        return args
    said = {w for w in words(str(args.get("content", ""))) if w.isalpha()} - _COMMON
    for line in snapshot.text.splitlines():
        name, _, rest = line.removeprefix("- ").partition(": ")
        if name in snapshot.topics and (name in said or len(said & set(words(rest))) >= 2):
            return {**args, "topic": name}
    return args


SETTLE_IDLES = 3


async def _settle(rv: reverie.Reverie, clock: ManualClock, scenario: Scenario, run: Run) -> None:
    """The next morning every user comes back and goes idle at once (three times): what a
    flush left for its next round is written before the store is measured."""
    last = max(p.day for p in scenario.sessions)
    for round_ in range(SETTLE_IDLES):
        moment = START + timedelta(days=last + 1, hours=9, minutes=round_)
        if moment > clock.now():
            clock.advance(moment - clock.now())
        for name in scenario.namespaces:
            async with rv.namespace(name).session(f"settle-{round_}-{name}") as s:
                await s.idle()
            run.settle_idles += 1
        await rv.wait_idle()
