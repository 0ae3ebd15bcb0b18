"""The curator's drafting round (issue 13): find the skill gaps, write each top gap's draft
(by rules, or by the configured model when its draft passes the checks), store and audit
them, and project their files. Fail-silent like the stage it runs in."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

import anyio.to_thread

from reverie.actors.context import Judge
from reverie.actors.judging import consult
from reverie.clock import Clock, iso
from reverie.config import Config
from reverie.model import questions
from reverie.model.seam import Answer, Prompt
from reverie.skills import drafts
from reverie.skills.gaps import Gap
from reverie.skills.writing import DRAFT_SCHEMA, Written, checked, rules_draft
from reverie.stores.drafts import SkillDraft
from reverie.telemetry.logs import get_logger

_log = get_logger("reverie.review")

_SYSTEM = (
    "You write a draft SKILL.md body for an AI agent from the episodes that show users "
    "need it. Use only what the episodes say. The body has the sections '## When to use', "
    "'## Steps' (numbered), '## Tools' and '## Examples' (quotes from the episodes); no "
    "front matter. Answer JSON: reasoning, description (one line), body."
)


def question(gap: Gap, rules: Written) -> Prompt:
    payload = {
        "gap": {"kind": gap.kind, "words": list(gap.core), "sessions": gap.sessions},
        "episodes": [
            {"session": s.session_id, "said": s.text, "answer": s.reply} for s in gap.signals[:8]
        ],
        "rules_draft": rules.body,
    }
    return Prompt(
        stage=questions.SKILL_DRAFT,
        system=_SYSTEM,
        user=json.dumps(payload, ensure_ascii=False),
        schema=DRAFT_SCHEMA,
        max_tokens=1200,
        payload=payload,
    )


async def write(judge: Judge | None, namespace: str, gap: Gap, limit: int) -> Written:
    """The rules' draft, or the model's when one is configured and its draft is sound."""
    rules = rules_draft(gap)
    if judge is None or judge.model.name == "offline":
        return rules
    answer = await consult(judge, namespace, question(gap, rules))
    if not isinstance(answer, Answer):
        return rules
    result = checked(answer.data, gap, rules, limit)
    if isinstance(result, str):
        _log.info("skill_draft_refused", namespace=namespace, why=result)
        return replace(rules, by=f"rules ({result})")
    return replace(result, by=judge.model.name)


@dataclass(frozen=True, slots=True)
class Round:
    """What a drafting round found: the drafts to store (new, or a waiting draft whose gap
    grew) and the stale skills to report."""

    made: list[SkillDraft]
    stale: list[drafts.StaleSkill]

    def record(self) -> dict[str, Any]:
        """The round in the curator's log record."""
        return {"drafted": [d.name for d in self.made], "stale": [s.to_dict() for s in self.stale]}


async def round_(
    namespace: str, seen: drafts.Look, *, clock: Clock, config: Config, judge: Judge | None
) -> Round:
    """One drafting round over what the curator's look read; it writes nothing (the
    curator stores the drafts in the pass's closing transaction)."""
    now = clock.now()
    limit = min(config.writer.max_skill_chars, config.curator.bloat_chars)  # never born bloated
    # the clustering is CPU work (0.35 s for 2000 requests, bench/skill_gaps.py): off the loop
    found = await anyio.to_thread.run_sync(drafts.found, seen, config)
    known = {d.evidence for d in seen.drafts if d.state == "draft"}  # unchanged: not asked again
    unseen = [gap for gap in found if gap.evidence not in known]
    ranked = [(gap, await write(judge, namespace, gap, limit)) for gap in unseen]
    return Round(
        drafts.as_drafts(namespace, seen, ranked, iso(now)), drafts.stale_skills(seen, now, config)
    )
