"""Spans on the host's tracer provider: one per tool call and per actor run, GenAI memory
attributes, and the ledger's trace id pointing at the trace."""

from __future__ import annotations

import logging
import subprocess
import sys
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


IMPORT_AND_USE = """
import logging, sys
import anyio, structlog
import reverie

async def main(home):
    async with reverie.open(home) as rv:
        async with rv.namespace().session("s") as s:
            await s.call_tool("memory", {"action": "add", "target": "memory", "content": "x 1"})

anyio.run(main, sys.argv[1])
root, ours = logging.getLogger(), logging.getLogger("reverie")
print(len(root.handlers), root.level, [type(h).__name__ for h in ours.handlers], ours.level)
print(structlog.is_configured(), logging.getLogger("reverie.runtime").handlers)
"""


def test_importing_and_using_reverie_configures_no_logging(tmp_path: Path) -> None:
    """In a fresh interpreter (pytest's own process has handlers of its own on the root):
    importing and using the library leaves the root logger and structlog as they were,
    and gives its ``reverie`` logger one NullHandler."""
    proc = subprocess.run(
        [sys.executable, "-c", IMPORT_AND_USE, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        f"0 {logging.WARNING} ['NullHandler'] {logging.NOTSET}",
        "False []",
    ]
