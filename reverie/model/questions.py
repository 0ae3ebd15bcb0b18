"""The questions the stages ask, one builder per stage: the instructions, the data, and the
schema of the answer (reasoning first). The offline model reads ``payload``; a remote model
reads ``user``, which is the same payload as JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

from reverie.model.seam import Field, Prompt, Schema
from reverie.rules.cone import MODEL_KINDS, NAME_CHARS
from reverie.rules.routing import Home

FLUSH: Final = "flush"
DISTILL: Final = "distill"
LINT: Final = "lint"
PROMOTE: Final = "promote"
DREAM: Final = "dream"
GRAPH: Final = "graph"
SKILL_DRAFT: Final = "skill_draft"
ACTOR_OF: Final = {
    FLUSH: "flusher",
    DISTILL: "distiller",
    LINT: "linter",
    PROMOTE: "promoter",
    DREAM: "dreamer",
    GRAPH: "grapher",
    SKILL_DRAFT: "curator",
}
"""The actor that asks each question: its one name in the ledger and in call counts."""

FLUSH_SCHEMA: Final = Schema(
    (
        Field("reasoning", description="Think about each candidate before routing it."),
        Field(
            "routes",
            "array",
            items=(
                Field("id", "integer"),
                Field("home", enum=tuple(h.value for h in Home)),
                Field("topic", description="The topic name when home is 'topic', else ''."),
                Field("content", description="The statement to store, in the user's words."),
                Field("reason"),
            ),
        ),
    )
)

DISTILL_SCHEMA: Final = Schema(
    (
        Field("reasoning"),
        Field(
            "summaries",
            "array",
            items=(
                Field("topic"),
                Field("summary", description="The topic's summary, from its live facts only."),
            ),
        ),
    )
)

LINT_SCHEMA: Final = Schema(
    (
        Field("reasoning"),
        Field(
            "verdicts",
            "array",
            items=(Field("id", "integer"), Field("conflict", "boolean"), Field("why")),
        ),
    )
)

PROMOTE_SCHEMA: Final = Schema(
    (
        Field("reasoning"),
        Field(
            "verdicts",
            "array",
            items=(
                Field("id", "integer"),
                Field("verdict", enum=("promote", "skip")),
                Field("rewrite", description="The rule for MEMORY.md when promoted, else ''."),
                Field("reason"),
            ),
        ),
    )
)

GRAPH_SCHEMA: Final = Schema(
    (
        Field("reasoning"),
        Field(
            "names",
            "array",
            items=(
                Field("id", "integer"),
                Field("kind", enum=MODEL_KINDS),
                Field("entity", max_length=NAME_CHARS, description="Words of the text only."),
                Field("facet", max_length=NAME_CHARS, description="Words of the text only."),
            ),
        ),
    )
)


def _prompt(
    stage: str, system: str, schema: Schema, payload: dict[str, Any], tokens: int
) -> Prompt:
    return Prompt(
        stage=stage,
        system=system,
        user=json.dumps(payload, ensure_ascii=False, indent=1),
        schema=schema,
        max_tokens=tokens,
        payload=payload,
    )


def flush(
    candidates: list[dict[str, Any]], topics: list[dict[str, Any]], max_topics: int
) -> Prompt:
    """``topics``: ``{"name": …, "keywords": […]}`` for each existing topic."""
    return _prompt(
        FLUSH,
        "You keep an agent's long-term memory. Route each verified statement from the "
        "conversation to exactly one home: user_settings (name/timezone, as 'key: value'), "
        "user (preferences), agent_profile (the agent's identity, 'key: value'), soul (reply "
        "style), skill (reusable workflows), memory (environment facts and lessons), topic "
        "(specific facts: addresses, hashes, thresholds), or skip (chatter, transient). "
        "Prefer topics over memory. Never invent: content must be the candidate's own words.",
        FLUSH_SCHEMA,
        {"candidates": candidates, "topics": topics, "max_topics": max_topics},
        1500,
    )


def distill(topic: str, facts: list[dict[str, Any]], max_chars: int) -> Prompt:
    """One topic's question (a round asks about all its topics at once: ``distill_many``)."""
    return distill_many([(topic, facts)], max_chars)


def distill_many(
    topics: list[tuple[str, list[dict[str, Any]]]],
    max_chars: int,
    long_term: Sequence[str] = (),
) -> Prompt:
    """``long_term``: what the long-term store recalled for the round (seed 004), context
    for the model, never a source of the summary's values."""
    payload: dict[str, Any] = {
        "topic_facts": [{"topic": t, "facts": facts} for t, facts in topics],
        "max_chars": max_chars,
    }
    if long_term:
        payload["long_term_memory"] = list(long_term)
    return _prompt(
        DISTILL,
        f"Summarise each topic's live facts in at most {max_chars} characters. Use only the "
        "facts given for that topic; keep their numbers, IDs and paths exactly. The "
        "long-term memory, when given, is what was known before: context, not facts to copy.",
        DISTILL_SCHEMA,
        payload,
        600 * len(topics),
    )


def lint(pairs: list[dict[str, Any]]) -> Prompt:
    return _prompt(
        LINT,
        "For each pair of statements from an agent's memory, say whether they contradict "
        "each other (the same subject with incompatible values or meanings).",
        LINT_SCHEMA,
        {"pairs": pairs},
        800,
    )


def promote(memory: list[str], candidates: list[dict[str, Any]], max_chars: int) -> Prompt:
    return _prompt(
        PROMOTE,
        "Decide for each topic fact whether it should become a rule in MEMORY.md, the small "
        "memory injected into every turn. promote: rewrite it as a general rule of at most "
        f"{max_chars} characters that keeps its numbers, IDs and paths. skip: topic-local "
        "detail, transient, or already said by MEMORY.md. The verdict is final.",
        PROMOTE_SCHEMA,
        {"memory": memory, "candidates": candidates, "max_chars": max_chars},
        1200,
    )


def graph_names(units: list[dict[str, Any]]) -> Prompt:
    """``units``: ``{"id": …, "text": …}`` for each new episode of the graph."""
    return _prompt(
        GRAPH,
        "For each text from an agent's memory, name the one entity it is mainly about (its "
        f"kind: {', '.join(MODEL_KINDS)}) and the facet of that entity it tells (for example "
        "'deploy timeouts'). Use only words that occur in the text; leave out a text with "
        "no clear entity.",
        GRAPH_SCHEMA,
        {"units": units},
        60 * len(units) + 200,
    )
