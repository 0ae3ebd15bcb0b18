"""Spans on the host's tracer provider: one per tool call and per actor run, GenAI memory
attributes, and the ledger's trace id pointing at the trace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from structlog.testing import capture_logs

import reverie
from tests.conftest import both_backends, ok

pytestmark = both_backends


async def test_tool_call_span_and_writer_span(tmp_path: Path, spans: Any) -> None:
    provider, exporter = spans
    async with reverie.open(tmp_path, tracer_provider=provider) as rv:
        async with rv.namespace("alice").session("s-9") as s:
            added = ok(
                await s.call_tool(
                    "memory", {"action": "add", "target": "memory", "content": "Spans are exported"}
                ),
                "ADD",
            )
            ok(await s.call_tool("memory", {"action": "nope", "target": "memory"}), "ERROR")
        ledger = await rv.namespace("alice").ledger()
    finished = exporter.get_finished_spans()
    tool_spans = [x for x in finished if x.name == "execute_tool memory"]
    assert len(tool_spans) == 2
    good, bad = tool_spans
    attrs = dict(good.attributes or {})
    assert attrs["gen_ai.operation.name"] == "execute_tool"
    assert attrs["gen_ai.tool.name"] == "memory"
    assert attrs["gen_ai.memory.store.id"] == "alice"
    assert attrs["gen_ai.conversation.id"] == "s-9"
    assert attrs["reverie.memory.operation"] == "create_memory"
    assert attrs["reverie.decision"] == "ADD" and attrs["reverie.entry_id"] == added["entry_id"]
    assert bad.attributes["reverie.decision"] == "ERROR"
    assert bad.status.status_code.name == "ERROR"
    writer = next(x for x in finished if x.name == "reverie.writer ToolCall")
    assert writer.parent is not None and writer.parent.span_id == good.context.span_id
    assert ledger[0].trace_id == format(good.context.trace_id, "032x")


async def test_search_and_turn_spans(tmp_path: Path, spans: Any) -> None:
    provider, exporter = spans
    async with reverie.open(tmp_path, tracer_provider=provider) as rv:
        async with rv.namespace().session("s") as s:
            await s.turn(user="the build is green")
        await rv.namespace().search("build")
    names = [x.name for x in exporter.get_finished_spans()]
    assert "reverie.turn" in names and "reverie.search" in names
    assert "reverie.writer TurnRecord" in names
    search = next(x for x in exporter.get_finished_spans() if x.name == "reverie.search")
    assert search.attributes["gen_ai.operation.name"] == "search_memory"
    assert search.attributes["reverie.search.hits"] == 1


async def test_library_logs_are_structlog_events(tmp_path: Path) -> None:
    async with reverie.open(tmp_path) as rv:
        with capture_logs() as logs:
            async with rv.namespace().session("s") as s:
                await s.call_tool(
                    "memory", {"action": "add", "target": "memory", "content": "logged"}
                )
    event = next(e for e in logs if e["event"] == "tool_call")
    assert event["decision"] == "ADD" and event["tool"] == "memory"


def test_importing_reverie_configures_no_logging() -> None:
    import logging

    root = logging.getLogger()
    assert not any(type(h).__module__.startswith("reverie") for h in root.handlers)
    assert logging.getLogger("reverie").handlers[0].__class__ is logging.NullHandler
