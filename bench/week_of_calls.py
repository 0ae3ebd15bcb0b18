"""How many model calls one simulated week of idle sessions costs, per stage.

A ManualClock walks seven days of five sessions a day (09:00, 11:00, 14:00, 16:30, 20:00);
each session says a handful of things — facts, corrections of earlier values, preferences,
lessons, chatter and hedged guesses — and then goes idle, which runs the flush and the
review bus. The count comes from the ledger, where every call is recorded. The baseline is
the same week with no cooldown and no due-checks (every stage on every idle), measured in
the same run by counting what that schedule would have asked: idle events x 4 stages + the
flushes. Two weeks by default: the promoter is weekly, and its first round (day 0) has no
fact old enough. ``--ask-always`` turns ``rules_first`` off in the flusher and the distiller,
so the model judges every candidate and every summary.
``python -m bench.week_of_calls [--days N] [--model-url URL] [--ask-always]``.
"""

from __future__ import annotations

import argparse
import random
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio

import reverie
from reverie import Config, ManualClock

SUBJECTS = [
    ("deploy", "The deploy timeout is {v}s", [30, 45, 60]),
    ("postgres", "The postgres pool size is {v}", [10, 20, 40]),
    ("redis", "The redis cache TTL is {v} minutes", [5, 15]),
    ("billing", "The billing cutoff day is the {v}th", [25, 28]),
    ("backups", "Backups are kept for {v} days", [14, 30]),
    ("api", "The API rate limit is {v} requests per minute", [600, 1200, 900]),
]
CHATTER = ["hi", "thanks!", "ok", "Got it.", "cool, thanks"]
HEDGES = [
    "Maybe the cache is stale?",
    "I think the worker ran out of memory.",
    "Should we move to eu-west-1?",
]
LESSONS = [
    "Lesson: always drain the queue before restarting workers.",
    "Turns out the cron jobs need UTC timestamps.",
    "Never run migrations during the billing window.",
]
PREFERENCES = ["I prefer short answers with code first.", "Please reply in plain text."]
HOURS = [9, 11, 14, 16.5, 20]


async def weeks(
    home: Path, model_url: str | None, days: int, ask_always: bool
) -> dict[str, object]:
    rng = random.Random(7)
    env = {"REVERIE_MODEL_URL": model_url} if model_url else {}
    if ask_always:  # the model judges every candidate and every summary
        env |= {"REVERIE_FLUSHER_RULES_FIRST": "false", "REVERIE_DISTILLER_RULES_FIRST": "false"}
    config = Config.load(None, env)
    clock = ManualClock(datetime(2026, 3, 2, tzinfo=UTC))
    start = clock.now()
    idles = 0
    async with reverie.open(home, config=config, clock=clock) as rv:
        ns = rv.namespace("bench")
        step = {topic: 0 for topic, _, _ in SUBJECTS}
        for day in range(days):
            for hour in HOURS:
                target = start + timedelta(days=day, hours=hour)
                clock.advance(target - clock.now())
                async with ns.session(f"d{day}-{hour}") as s:
                    for _ in range(rng.randint(3, 6)):
                        kind = rng.random()
                        if kind < 0.45:
                            topic, template, values = rng.choice(SUBJECTS)
                            i = min(step[topic], len(values) - 1)
                            if rng.random() < 0.3 and step[topic] < len(values) - 1:
                                step[topic] += 1
                                i = step[topic]
                                text = "Actually, " + template.format(v=values[i]).lower() + "."
                            else:
                                text = template.format(v=values[i]) + "."
                            await s.turn(user=text, assistant=rng.choice(CHATTER))
                        elif kind < 0.65:
                            await s.turn(user=rng.choice(CHATTER), assistant="Happy to help.")
                        elif kind < 0.8:
                            await s.turn(user=rng.choice(HEDGES), assistant="Let me check.")
                        elif kind < 0.92:
                            await s.turn(assistant=rng.choice(LESSONS))
                        else:
                            await s.turn(user=rng.choice(PREFERENCES), assistant="Noted.")
                    await s.idle()
                    idles += 1
                    await rv.wait_idle()
        ledger = await ns.ledger()
        memory = [e.content for e in await ns.entries("memory")]
    per_week: dict[int, dict[str, dict[str, int]]] = {}
    passes: dict[int, int] = {}
    for record in ledger:
        index = (datetime.fromisoformat(record.ts) - start).days // 7
        if record.action == "review_pass":
            passes[index] = passes.get(index, 0) + 1
        if record.action != "model_call":
            continue
        row = per_week.setdefault(index, {}).setdefault(
            record.actor, {"calls": 0, "deferred": 0, "input_tokens": 0, "output_tokens": 0}
        )
        row["calls"] += 1
        row["deferred"] += record.decision == "DEFERRED"
        row["input_tokens"] += int(record.detail.get("input_tokens", 0))
        row["output_tokens"] += int(record.detail.get("output_tokens", 0))
    return {"idles": idles, "passes": passes, "weeks": per_week, "memory": memory}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model-url", default=None)
    parser.add_argument("--days", type=int, default=14)
    parser.add_argument("--ask-always", action="store_true", help="rules_first off")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        result = anyio.run(weeks, Path(tmp) / "home", args.model_url, args.days, args.ask_always)
    per_week = result["weeks"]
    passes = result["passes"]
    assert isinstance(per_week, dict) and isinstance(passes, dict)
    idles_per_week = len(HOURS) * 7
    naive = idles_per_week * (1 + 3)  # a flush and distill / lint / promote on every idle
    for index in range((args.days + 6) // 7):
        calls = per_week.get(index, {})
        total = sum(row["calls"] for row in calls.values())
        print(f"week {index + 1}: {idles_per_week} idle sessions, {passes.get(index, 0)} passes")
        print(f"  {'stage':10} {'calls':>6} {'deferred':>9} {'in tokens':>10} {'out tokens':>11}")
        for stage in ("flusher", "linter", "distiller", "promoter"):
            row = calls.get(
                stage, {"calls": 0, "deferred": 0, "input_tokens": 0, "output_tokens": 0}
            )
            print(
                f"  {stage:10} {row['calls']:>6} {row['deferred']:>9} "
                f"{row['input_tokens']:>10} {row['output_tokens']:>11}"
            )
        print(
            f"  total {total} model calls; every-stage-on-every-idle baseline {naive}; "
            f"ratio {total / naive:.2f}"
        )
    print(f"MEMORY.md at the end: {result['memory']}")


if __name__ == "__main__":
    main()
