"""Gap detection (issue 13) on conversation sets someone who never read the rules wrote: a
month of one user's sessions per set, with the needs planted in it labelled — recurring
needs no skill covers (should be drafted), needs a skill covers and needs asked in only two
sessions (should not), and one skill nobody needs any more (should be flagged stale).

    python -m bench.gapsets DIR [DIR/…json]

Each set (JSON, schema in the sets' own README or below) runs through the public API on a
ManualClock, as a host would: each skill created with ``skill_manage``, each session's
turns recorded, an idle after each session (the review passes run when due, as they do in
a host), then one forced pass at the month's end. Printed per set and overall: recurring
needs drafted (recall), drafts that are a recurring need (precision), covered needs and
near misses drafted (false alarms), and whether the stale skill — and only it — is flagged.

A set: ``{"start", "skills": [{"name", "body"}], "sessions": [{"id", "day", "turns":
[{"user", "assistant"}]}], "labels": {"recurring" | "covered" | "near_miss": [{"need",
"sessions"}], "stale_skill"}}``. A draft is a labelled need when at least two of the
sessions its evidence came from are that need's sessions.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import reverie

MIN_SHARED_SESSIONS = 2


async def run_set(data: dict[str, Any], home: Path) -> dict[str, Any]:
    start = datetime.fromisoformat(data["start"]).replace(tzinfo=UTC)
    clock = reverie.ManualClock(start)
    async with reverie.open(home, clock=clock) as rv:
        ns = rv.namespace("gaps")
        async with ns.session("setup") as s:
            for skill in data["skills"]:
                args = {"action": "create", "name": skill["name"], "content": skill["body"]}
                result = await s.call_tool("skill_manage", args)
                assert result["decision"] == "CREATED", result
        episode_session: dict[int, str] = {}
        for session in data["sessions"]:
            target = start + timedelta(days=session["day"], hours=9)
            clock.advance(max(target - clock.now(), timedelta(hours=1)))
            async with ns.session(session["id"]) as s:
                for turn in session["turns"]:
                    episode = await s.turn(user=turn["user"], assistant=turn["assistant"])
                    episode_session[episode.id] = session["id"]
                await s.idle()
            await rv.wait_idle()
        clock.advance(timedelta(days=1))
        await ns.review(force=True)
        drafts = await ns.skill_drafts()
        stale = [x.name for x in await ns.stale_skills()]
    return score(data["labels"], drafts, stale, episode_session)


def score(
    labels: dict[str, Any], drafts: list[Any], stale: list[str], where: dict[int, str]
) -> dict[str, Any]:
    def need_of(draft: Any) -> tuple[str, str] | None:
        sessions = {where.get(e) for e in draft.evidence}
        for kind in ("recurring", "covered", "near_miss"):
            for need in labels[kind]:
                if len(sessions & set(need["sessions"])) >= MIN_SHARED_SESSIONS:
                    return kind, need["need"]
        return None

    matched = [(d.name, need_of(d)) for d in drafts]
    recurring = {m[1] for _, m in matched if m and m[0] == "recurring"}
    return {
        "drafts": len(drafts),
        "recurring_found": len(recurring),
        "recurring": len(labels["recurring"]),
        "drafts_on_recurring": sum(1 for _, m in matched if m and m[0] == "recurring"),
        "covered_drafted": sum(1 for _, m in matched if m and m[0] == "covered"),
        "near_miss_drafted": sum(1 for _, m in matched if m and m[0] == "near_miss"),
        "unlabelled_drafts": [n for n, m in matched if m is None],
        "stale_flagged": labels["stale_skill"] in stale,
        "other_stale": [n for n in stale if n != labels["stale_skill"]],
        "names": [(n, m[1] if m else None) for n, m in matched],
    }


def main(argv: list[str]) -> None:
    paths: list[Path] = []
    for arg in argv or ["."]:
        p = Path(arg)
        paths += sorted(p.glob("*.json")) if p.is_dir() else [p]
    totals = {"found": 0, "needs": 0, "drafts": 0, "on": 0, "false": 0, "stale": 0}
    for path in paths:
        with tempfile.TemporaryDirectory() as tmp:
            found = asyncio.run(run_set(json.loads(path.read_text()), Path(tmp)))
        print(f"{path.stem}: {json.dumps(found, ensure_ascii=False)}")
        totals["found"] += found["recurring_found"]
        totals["needs"] += found["recurring"]
        totals["drafts"] += found["drafts"]
        totals["on"] += found["drafts_on_recurring"]
        totals["false"] += found["covered_drafted"] + found["near_miss_drafted"]
        totals["stale"] += int(found["stale_flagged"])
    precision = totals["on"] / totals["drafts"] if totals["drafts"] else 0.0
    print(
        f"recurring needs drafted {totals['found']}/{totals['needs']}, precision"
        f" {precision:.2f} ({totals['on']}/{totals['drafts']} drafts), covered or near-miss"
        f" drafted {totals['false']}, stale skill flagged {totals['stale']}/{len(paths)}"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
