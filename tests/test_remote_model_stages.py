"""The stages against a real chat-completions server on 127.0.0.1 (selected by config, as
``REVERIE_MODEL_URL`` would): failing, malformed and slow answers defer the work, the host
never sees an exception, nothing is lost or invented, and the next round retries it. Every
call is counted per stage with its tokens: ledger, span and ``gen_ai.client.token.usage``."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import reverie
from reverie import Config, ManualClock
from reverie.model import OpenAICompatible
from tests.chat_server import FAIL, MALFORMED, SLOW, ChatServer
from tests.conftest import review_stage
from tests.local_http import base_url, serving


@pytest.fixture
def chat() -> Iterator[ChatServer]:
    with serving(ChatServer(slow_s=1.0)) as server:
        yield server


def remote_config(server: ChatServer) -> Config:
    return Config.load(
        None,
        {
            "REVERIE_MODEL_URL": f"{base_url(server)}/v1",
            "REVERIE_MODEL_NAME": "tiny-judge",
            "REVERIE_MODEL_API_KEY": "sk-test",
            "REVERIE_MODEL_TIMEOUT_S": "0.4",
            "REVERIE_MODEL_RETRIES": "1",
            "REVERIE_MODEL_BACKOFF_S": "0.01",
            "REVERIE_MODEL_BREAKER_S": "0",  # no rest after a failure: each call meets the server
            # ask the model about everything, so every stage meets the server
            "REVERIE_FLUSHER_RULES_FIRST": "false",
            "REVERIE_FLUSHER_ASK_BATCH": "1",
            "REVERIE_DISTILLER_RULES_FIRST": "false",
        },
    )


def token_points(reader: InMemoryMetricReader) -> dict[tuple[str, str], int]:
    data = reader.get_metrics_data()
    assert data is not None
    out: dict[tuple[str, str], int] = {}
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name != "gen_ai.client.token.usage":
                    continue
                for point in metric.data.data_points:  # type: ignore[union-attr]
                    key = (
                        str(point.attributes["reverie.stage"]),
                        str(point.attributes["gen_ai.token.type"]),
                    )
                    out[key] = out.get(key, 0) + int(point.sum)  # type: ignore[union-attr]
    return out


async def test_config_selects_the_remote_model(tmp_path: Path, chat: ChatServer) -> None:
    async with reverie.open(tmp_path / "h", config=remote_config(chat)) as rv:
        assert isinstance(rv.model, OpenAICompatible) and rv.model.name == "tiny-judge"
    async with reverie.open(tmp_path / "h") as rv:
        assert rv.model.name == "offline"


async def test_degraded_answers_defer_and_are_retried(
    tmp_path: Path,
    clock: ManualClock,
    chat: ChatServer,
    spans: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    provider, exporter = spans
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    chat.script = {
        "flush": [FAIL, FAIL],  # both attempts fail: the flush is deferred
        "distill": [MALFORMED],  # not asked again at temperature 0
        "promote": [SLOW],  # a timed-out request is not sent again
    }
    async with reverie.open(
        tmp_path / "h",
        config=remote_config(chat),
        clock=clock,
        tracer_provider=provider,
        meter_provider=meters,
    ) as rv:
        ns = rv.namespace("a")
        async with ns.session("s") as s:
            await s.turn(user="The deploy timeout is 30s.")
            await s.idle()  # never raises, whatever the model does
            await rv.wait_idle()
            assert await ns.facts("deploy") == []  # deferred: nothing written yet
            await s.idle()
            await rv.wait_idle()
            assert [f.content for f in await ns.facts("deploy")] == ["The deploy timeout is 30s."]
            await s.call_tool(
                "topic",
                {
                    "action": "save",
                    "topic": "deploy",
                    "content": "Actually, the deploy timeout is 45s.",
                },
            )
        clock.advance(timedelta(days=7))  # the idle pass started the promoter's week
        first = await rv.review()
        assert review_stage(first, "distiller")["topics"][0]["status"] == "deferred"
        assert review_stage(first, "promoter")["deferred"] == 1
        assert await ns.entries("memory") == []
        assert not (tmp_path / "h" / "a" / "topics" / "deploy" / "summary.md").exists()
        clock.advance(timedelta(days=7))
        second = await rv.review()
        assert review_stage(second, "distiller")["distilled"] == 1
        assert review_stage(second, "promoter")["promoted"] == 1
        [entry] = await ns.entries("memory")
        assert "45s" in entry.content
        calls = await rv.model_calls("a")
    assert calls["flusher"]["calls"] >= 2 and calls["flusher"]["deferred"] == 1
    assert calls["distiller"] == {**calls["distiller"], "calls": 2, "deferred": 1}
    assert calls["promoter"]["calls"] == 2 and calls["promoter"]["deferred"] == 1
    assert all(c["input_tokens"] > 0 for c in calls.values())
    assert ("flush", "500") in chat.seen and ("promote", "slow") in chat.seen
    points = token_points(reader)
    for name in ("flush", "distill", "promote"):
        assert points[(name, "input")] > 0 and points[(name, "output")] > 0
    assert points[("flush", "input")] == calls["flusher"]["input_tokens"]
    chats = [sp for sp in exporter.get_finished_spans() if sp.name == "chat tiny-judge"]
    assert {sp.attributes["reverie.stage"] for sp in chats} >= {"flush", "distill", "promote"}
    assert any(sp.attributes["reverie.model.outcome"] == "deferred" for sp in chats)
    assert all("gen_ai.usage.input_tokens" in sp.attributes for sp in chats)
    meters.shutdown()
