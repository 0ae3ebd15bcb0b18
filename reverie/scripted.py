"""A short scripted conversation through the public API: what ``reverie simulate`` runs
until the scenario generator and load driver exist. Every step's decision is real: the tool
calls go through the writer, the turns through the extractor, and the idle at the end runs
the flush and a review pass on the embedded default (the offline model)."""

from __future__ import annotations

import uuid
from typing import Any

from reverie.runtime import Namespace

SCRIPT: tuple[tuple[str, str, dict[str, Any]], ...] = (
    (
        "remember an environment fact",
        "memory",
        {"action": "add", "target": "memory", "content": "The project builds with `make ci`."},
    ),
    (
        "the same fact again, reworded",
        "memory",
        {"action": "add", "target": "memory", "content": "the project builds with `make ci`"},
    ),
    (
        "a user preference",
        "memory",
        {"action": "add", "target": "user", "content": "Prefers short answers with code first."},
    ),
    (
        "the user's timezone",
        "memory",
        {"action": "add", "target": "user_settings", "content": "timezone: Europe/Oslo"},
    ),
    (
        "a specific fact",
        "topic",
        {"action": "save", "topic": "deploy", "content": "The deploy timeout is 30s"},
    ),
    (
        "a related fact",
        "topic",
        {"action": "save", "topic": "deploy", "content": "The deploy script is scripts/deploy.sh"},
    ),
    (
        "a correction days later",
        "topic",
        {"action": "save", "topic": "deploy", "content": "Actually the deploy timeout is 45s"},
    ),
    (
        "a reusable workflow",
        "skill_manage",
        {
            "action": "create",
            "name": "release",
            "content": "1. Run `make ci`.\n2. Tag the release.\n3. Run scripts/deploy.sh.",
        },
    ),
    (
        "the fact proved useful",
        "memory",
        {"action": "reinforce", "target": "memory", "old_text": "make ci"},
    ),
    (
        "a malformed call",
        "topic",
        {"action": "save", "topic": "../etc", "content": "escape attempt"},
    ),
)


async def run_scripted(ns: Namespace) -> dict[str, Any]:
    session_id = f"scripted-{uuid.uuid4().hex[:8]}"
    steps: list[dict[str, Any]] = []
    async with ns.session(session_id) as session:
        await session.turn(user="Hi!", assistant="Hello, how can I help?")
        for step, tool, args in SCRIPT:
            result = await session.call_tool(tool, args)
            note = result.get("error") or result.get("message", "")
            steps.append(
                {
                    "step": step,
                    "tool": tool,
                    "decision": result["decision"],
                    "entry_id": result.get("entry_id"),
                    "note": note,
                }
            )
        for user, assistant in TURNS:
            await session.turn(user=user, assistant=assistant)
        await session.idle()  # L3 flush, then the L8 review pass
    await ns.runtime.wait_idle()
    hits = await ns.search("deploy timeout", k=5)
    ledger = await ns.ledger()
    flushed = [
        {
            "decision": r.decision,
            "home": r.target,
            "entry_id": r.entry_id,
            "content": (r.after or {}).get("content"),
        }
        for r in ledger
        if r.actor == "flusher" and r.action in {"add", "save"}
    ]
    passes = [r.detail for r in ledger if r.action == "review_pass"]
    snapshot = await ns.snapshot()
    return {
        "namespace": ns.name,
        "session_id": session_id,
        "steps": steps,
        "flushed": flushed,
        "review": passes[-1]["stages"] if passes else {},
        "next_snapshot": snapshot.text,
        "search_top": hits[0].text if hits else None,
        "hidden_superseded": hits.hidden_superseded,
        "ledger_rows": len(ledger),
    }


# What the conversation said besides the tool calls: the flush keeps what is verified and
# routes it to its one home; greetings and guesses are never stored.
TURNS: tuple[tuple[str | None, str | None], ...] = (
    ("Deploys keep timing out at 30s.", "The timeout is now 45s; I saved the correction."),
    ("Maybe the cache is stale?", "I think it might be, I will check."),
    ("The staging database is pg-stage-2 on port 5433.", "Got it."),
    (None, "Lesson learned: always run `make ci` before tagging a release."),
    ("Thanks!", "You're welcome."),
)
