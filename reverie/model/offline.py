"""The offline model, the embedded default: the same questions, answered by deterministic
rules — rule-based routing, extractive distillation, rule-based lint and promotion verdicts.

It never fails and costs no tokens, so an embedded host needs no server and no key; its
answers still pass through the schema and the stage's checks like a remote model's do.
"""

from __future__ import annotations

from typing import Any

from reverie.model import questions
from reverie.model.seam import Answer, Deferred, Prompt, Usage
from reverie.rules import consolidation
from reverie.rules.routing import Home, Route, TopicHint, route_all


class OfflineModel:
    """Deterministic rules behind the model seam."""

    name = "offline"

    async def judge(self, prompt: Prompt) -> Answer | Deferred:
        answer = self.answer(prompt.stage, prompt.payload)
        if answer is None:
            return Deferred(f"the offline model has no rules for stage {prompt.stage!r}")
        return Answer(data=prompt.schema.validate(answer), usage=Usage(calls=1), model=self.name)

    def answer(self, stage: str, payload: dict[str, Any]) -> dict[str, Any] | None:
        if stage == questions.FLUSH:
            return _flush(payload)
        if stage == questions.DISTILL:
            return _distill(payload)
        if stage == questions.LINT:
            return _lint(payload)
        if stage == questions.PROMOTE:
            return _promote(payload)
        return None


def _flush(payload: dict[str, Any]) -> dict[str, Any]:
    topics = {
        t["name"]: TopicHint(frozenset(t.get("keywords", [])), frozenset(t.get("subjects", [])))
        for t in payload["topics"]
    }
    routes = route_all(payload["candidates"], topics, payload["max_topics"])
    return {"reasoning": "routing rules", "routes": [_offline_route(i, r) for i, r in routes]}


def _offline_route(candidate_id: int, route: Route) -> dict[str, Any]:
    """The rules' route; but a statement they only guess is a lesson or a preference stays
    in the log: what is injected every turn needs a judgement the rules cannot make."""
    if route.sure or route.home is Home.TOPIC or route.home is Home.SKIP:
        return route.as_answer(candidate_id)
    left = Route(Home.SKIP, route.content, "", f"unsure ({route.reason}): left in the log", True)
    return left.as_answer(candidate_id)


def _distill(payload: dict[str, Any]) -> dict[str, Any]:
    limit = int(payload["max_chars"])
    summaries = [
        {
            "topic": item["topic"],
            "summary": consolidation.summarise(
                [(f["content"], int(f["depth"])) for f in item["facts"]], limit
            ),
        }
        for item in payload["topic_facts"]
    ]
    return {"reasoning": "extractive: deepest chains, then newest", "summaries": summaries}


def _lint(payload: dict[str, Any]) -> dict[str, Any]:
    verdicts = []
    for pair in payload["pairs"]:
        conflict = consolidation.contradicts(pair["a"], pair["b"])
        why = "same subject, different value or negation" if conflict else "compatible"
        verdicts.append({"id": pair["id"], "conflict": conflict, "why": why})
    return {"reasoning": "supersede and negation rules", "verdicts": verdicts}


def _promote(payload: dict[str, Any]) -> dict[str, Any]:
    memory = list(payload["memory"])
    limit = int(payload["max_chars"])
    verdicts = []
    for candidate in payload["candidates"]:
        text, topic = candidate["content"], candidate["topic"]
        verdict, rewritten, reason = "promote", "", "a maintained fact, general enough"
        if consolidation.memory_twin(text, memory) is not None:
            verdict, reason = "skip", "MEMORY.md already says this"
        elif consolidation.transient(text):
            verdict, reason = "skip", "transient"
        elif consolidation.narrated(text):
            verdict, reason = "skip", "an event told: no rule the rules can say"
        else:
            rewritten = consolidation.rewrite(text, topic, limit)
            if len(rewritten) > limit:
                verdict, rewritten, reason = "skip", "", f"cannot be said in {limit} chars"
        verdicts.append(
            {"id": candidate["id"], "verdict": verdict, "rewrite": rewritten, "reason": reason}
        )
    return {"reasoning": "rule verdicts", "verdicts": verdicts}
