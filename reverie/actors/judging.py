"""Every model call of every stage goes through :func:`consult`: one span, the token
metric, and a ledger row, so background cost is counted per stage and never hidden."""

from __future__ import annotations

import sqlite3
from typing import Any

from opentelemetry.trace import SpanKind, Status, StatusCode

from reverie.actors.context import Judge
from reverie.model.breaker import Resting
from reverie.model.questions import ACTOR_OF
from reverie.model.seam import Answer, Deferred, Model, Prompt, Usage
from reverie.stores import ledger
from reverie.stores.records import LedgerRecord
from reverie.telemetry.logs import get_logger
from reverie.telemetry.tracing import trace_id_hex

log = get_logger("reverie.model")


async def consult(judge: Judge, namespace: str, prompt: Prompt) -> Answer | Deferred:
    """Ask the model; never raises (an unexpected error is a Deferred too)."""
    model = judge.model
    with judge.tracer.start_as_current_span(f"chat {model.name}", kind=SpanKind.CLIENT) as span:
        span.set_attribute("gen_ai.operation.name", "chat")
        span.set_attribute("gen_ai.request.model", model.name)
        span.set_attribute("gen_ai.memory.store.id", namespace)
        span.set_attribute("reverie.stage", prompt.stage)
        span.set_attribute("reverie.prompt.chars", len(prompt.system) + len(prompt.user))
        answer = await judge.breaker.call(lambda: _judge(model, prompt))
        if isinstance(answer, Resting):  # not asked: no call to count or record
            span.set_attribute("reverie.model.outcome", "resting")
            return answer
        outcome = "answered" if isinstance(answer, Answer) else "deferred"
        _measure(judge, span, prompt, answer, outcome)
        record = _record(judge, namespace, prompt, answer, outcome)
        try:
            await judge.db.write(lambda conn: ledger.append(conn, record))
        except Exception as exc:  # the count is lost, the answer is not
            log.warning("model_call_not_recorded", stage=prompt.stage, error=repr(exc))
        return answer


def _measure(
    judge: Judge, span: Any, prompt: Prompt, answer: Answer | Deferred, outcome: str
) -> None:
    """The call on its span and in the call and token metrics."""
    usage = answer.usage
    span.set_attribute("gen_ai.usage.input_tokens", usage.input_tokens)
    span.set_attribute("gen_ai.usage.output_tokens", usage.output_tokens)
    span.set_attribute("reverie.model.attempts", usage.calls)
    span.set_attribute("reverie.model.outcome", outcome)
    if isinstance(answer, Deferred):
        span.set_status(Status(StatusCode.ERROR, answer.reason))
    base = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": judge.model.name,
        "reverie.stage": prompt.stage,
        "reverie.actor": ACTOR_OF.get(prompt.stage, prompt.stage),
    }
    judge.model_calls.add(1, {**base, "reverie.model.outcome": outcome})
    judge.token_usage.record(usage.input_tokens, {**base, "gen_ai.token.type": "input"})
    judge.token_usage.record(usage.output_tokens, {**base, "gen_ai.token.type": "output"})


def _record(
    judge: Judge, namespace: str, prompt: Prompt, answer: Answer | Deferred, outcome: str
) -> LedgerRecord:
    """The call's ledger row, under the asking actor's name."""
    usage = answer.usage
    detail: dict[str, Any] = {
        "question": prompt.stage,
        "model": judge.model.name,
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "attempts": usage.calls,
        "prompt_chars": len(prompt.system) + len(prompt.user),
    }
    if isinstance(answer, Deferred):
        detail["reason"] = answer.reason
    return LedgerRecord(
        ts=judge.now(),
        namespace=namespace,
        actor=ACTOR_OF.get(prompt.stage, prompt.stage),
        action="model_call",
        decision=outcome.upper(),
        entry_id=None,
        trace_id=trace_id_hex(),
        detail=detail,
    )


async def _judge(model: Model, prompt: Prompt) -> Answer | Deferred:
    try:
        answer: object = await model.judge(prompt)
    except Exception as exc:  # a model implementation that raises is still contained
        log.error("model_raised", stage=prompt.stage, error=repr(exc))
        return Deferred(f"the model raised {type(exc).__name__}", unavailable=True)
    return _checked(answer, prompt)


def _checked(answer: object, prompt: Prompt) -> Answer | Deferred:
    """A host's own Model is code reverie did not write: an answer of the wrong type, or
    data outside the schema, is a malformed answer (deferred), never a crash in a stage."""
    if not isinstance(answer, Answer | Deferred) or not isinstance(answer.usage, Usage):
        log.error("model_answer_malformed", stage=prompt.stage, type=type(answer).__name__)
        return Deferred(f"the model returned {type(answer).__name__}, not an Answer or a Deferred")
    if isinstance(answer, Answer):
        try:
            prompt.schema.validate(answer.data)
        except ValueError as exc:
            log.error("model_answer_malformed", stage=prompt.stage, error=str(exc))
            return Deferred(f"the model's answer does not fit the schema: {exc}")
    return answer


def calls_per_stage(
    conn: sqlite3.Connection, namespace: str | None = None
) -> dict[str, dict[str, int]]:
    """Model calls, deferrals and tokens per actor, from the ledger (rows written before
    the actors had one name each say the question's name: counted under the actor's)."""
    sql = (
        "SELECT actor, decision, count(*), sum(json_extract(detail, '$.input_tokens')),"
        " sum(json_extract(detail, '$.output_tokens')) FROM ledger WHERE action = 'model_call'"
    )
    params: tuple[str, ...] = ()
    if namespace is not None:
        sql += " AND namespace = ?"
        params = (namespace,)
    out: dict[str, dict[str, int]] = {}
    for actor, decision, count, tokens_in, tokens_out in conn.execute(
        sql + " GROUP BY actor, decision", params
    ):
        row = out.setdefault(
            ACTOR_OF.get(actor, actor),
            {"calls": 0, "deferred": 0, "input_tokens": 0, "output_tokens": 0},
        )
        row["calls"] += count
        if decision == "DEFERRED":
            row["deferred"] += count
        row["input_tokens"] += tokens_in or 0
        row["output_tokens"] += tokens_out or 0
    return out
