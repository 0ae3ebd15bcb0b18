"""The OpenAI-compatible client against a real chat-completions server on 127.0.0.1 with
scripted answers: good, malformed, failing, slow. Every failure is Deferred, never raised."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anyio
import pytest

from reverie import Config
from reverie._http import retry_after
from reverie.config import DEFAULT_RETRY_AFTER_MAX_S, ModelConfig
from reverie.model import Answer, Deferred, Field, OpenAICompatible, Prompt, Schema
from reverie.model.breaker import Breaker, Health, Resting
from reverie.runtime import _configured_model
from tests.local_http import base_url, send_json, serving

VERDICT = Schema(
    (
        Field("reasoning"),
        Field("verdict", enum=("promote", "skip")),
        Field("rewrite", max_length=220),
    )
)
PROMPT = Prompt(
    stage="promotion", system="Judge the fact.", user="Deploy timeout is 45s", schema=VERDICT
)
GOOD = {"reasoning": "durable", "verdict": "promote", "rewrite": "Deploys time out at 45s"}


def completion(content: str, tokens: tuple[int, int] = (30, 12)) -> dict[str, Any]:
    return {
        "id": "x",
        "model": "tiny-judge",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": tokens[0], "completion_tokens": tokens[1]},
    }


class Server(ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.script: list[tuple[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.headers_seen: list[dict[str, str]] = []
        self.arrived: list[float] = []  # the server's own clock, per request
        self.release = threading.Event()  # a "hold" request hangs until this is set


class Handler(BaseHTTPRequestHandler):
    server: Server

    def do_POST(self) -> None:  # noqa: N802 - the http.server protocol
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.arrived.append(time.monotonic())
        self.server.requests.append(body)
        self.server.headers_seen.append(dict(self.headers))
        kind, value = self.server.script.pop(0) if self.server.script else ("json", GOOD)
        status, payload = 200, ""
        if kind == "sleep":  # a slow server is the scenario (the client's timeout and retries)
            time.sleep(value[0])
            kind, value = "json", value[1]
        if kind == "hold":  # a hung server: answers only when the test is over
            self.server.release.wait(30)
            kind, value = "json", GOOD
        if kind == "retry_after":
            status, wait = value
            self.send_response(status)
            self.send_header("Retry-After", wait)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")
            return
        if kind == "json":
            payload = json.dumps(completion(json.dumps(value)))
        elif kind == "content":
            payload = json.dumps(completion(value))
        elif kind == "status":
            status, payload = value, '{"error": "scripted"}'
        elif kind == "raw":
            payload = value
        send_json(self, status, payload)  # a client that gave up (the timeout tests) is fine

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[Server]:
    with serving(Server()) as running:
        try:
            yield running
        finally:
            running.release.set()


def client(server: Server, **kwargs: Any) -> OpenAICompatible:
    address = f"{base_url(server)}/v1"
    options: dict[str, Any] = {"timeout_s": 2.0, "retries": 2, "backoff_s": 0.01, **kwargs}
    return OpenAICompatible(address, "tiny-judge", api_key="sk-test", **options)


async def test_a_good_answer_is_validated_and_counted(server: Server) -> None:
    async with client(server) as model:
        answer = await model.judge(PROMPT)
    assert isinstance(answer, Answer)
    assert answer.data == GOOD and answer.model == "tiny-judge"
    assert (answer.usage.input_tokens, answer.usage.output_tokens, answer.usage.calls) == (
        30,
        12,
        1,
    )
    sent = server.requests[0]
    assert sent["model"] == "tiny-judge" and sent["temperature"] == 0
    assert sent["messages"][1]["content"] == "Deploy timeout is 45s"
    assert '"reasoning"' in sent["messages"][0]["content"]
    assert server.headers_seen[0]["Authorization"] == "Bearer sk-test"


async def test_code_fences_and_chatter_around_the_json_are_tolerated(server: Server) -> None:
    server.script = [("content", "Sure!\n```json\n" + json.dumps(GOOD) + "\n```")]
    async with client(server) as model:
        assert isinstance(await model.judge(PROMPT), Answer)


@pytest.mark.parametrize(
    ("script", "calls", "why"),
    [
        ([("status", 500)] * 3, 3, "HTTP 500"),
        # an answer that does not fit, at temperature 0: asking again gets the same answer
        ([("content", "not json at all")] * 3, 1, "not usable"),
        ([("json", {"verdict": "promote"})] * 3, 1, "lacks 'reasoning'"),
        ([("json", {**GOOD, "verdict": "maybe"})] * 3, 1, "must be one of"),
        ([("json", {**GOOD, "rewrite": "x" * 221})] * 3, 1, "longer than 220"),
        ([("raw", "{truncated")] * 3, 3, "not usable"),  # the body itself broke: retried
        ([("status", 401)], 1, "HTTP 401"),  # not retried: a retry cannot fix it
    ],
)
async def test_failures_end_deferred_after_bounded_retries(
    server: Server, script: list[tuple[str, Any]], calls: int, why: str
) -> None:
    server.script = list(script)
    async with client(server) as model:
        result = await model.judge(PROMPT)
    assert isinstance(result, Deferred)
    assert why in result.reason
    assert result.usage.calls == calls == len(server.requests)


async def test_a_failure_then_success_is_an_answer(server: Server) -> None:
    server.script = [("status", 503), ("raw", "{truncated"), ("json", GOOD)]
    async with client(server) as model:
        answer = await model.judge(PROMPT)
    assert isinstance(answer, Answer) and answer.usage.calls == 3


async def test_a_slow_answer_within_the_timeout_is_used(server: Server) -> None:
    server.script = [("sleep", (0.3, GOOD))]
    async with client(server, timeout_s=2.0) as model:
        assert isinstance(await model.judge(PROMPT), Answer)


async def test_a_timeout_is_deferred_not_raised(server: Server) -> None:
    server.script = [("sleep", (1.0, GOOD))] * 2
    async with client(server, timeout_s=0.3, retries=1) as model:
        result = await model.judge(PROMPT)
    assert isinstance(result, Deferred) and "in time" in result.reason


async def test_an_unreachable_server_is_deferred() -> None:
    async with OpenAICompatible("http://127.0.0.1:9", "m", retries=1, backoff_s=0.01) as model:
        result = await model.judge(PROMPT)
    assert isinstance(result, Deferred) and "could not be reached" in result.reason


def test_schema_puts_reasoning_first() -> None:
    with pytest.raises(ValueError, match="reasoning"):
        Schema((Field("verdict"), Field("reasoning")))
    assert list(VERDICT.json_schema()["properties"]) == ["reasoning", "verdict", "rewrite"]
    with pytest.raises(ValueError):
        OpenAICompatible("ftp://x", "m")


async def test_a_hung_server_is_asked_once_not_once_per_try(server: Server) -> None:
    """D13: a request that timed out is not sent again (the next would hang as long)."""
    server.script = [("hold", None)] * 3
    async with client(server, timeout_s=0.3, retries=2) as model:
        result = await model.judge(PROMPT)
    assert isinstance(result, Deferred) and result.unavailable
    assert len(server.requests) == 1 and result.usage.calls == 1


def test_the_default_client_has_a_short_timeout() -> None:
    """D13: the defaults a host gets from ``REVERIE_MODEL_URL`` alone cost a few seconds
    against a hung server, not 30 s x 3 tries."""
    model = _configured_model(Config(model=ModelConfig(url="http://127.0.0.1:9/v1")))
    assert isinstance(model, OpenAICompatible)
    assert model.timeout.read_s == ModelConfig().timeout_s <= 10.0
    assert model.timeout.connect_s == ModelConfig().connect_timeout_s <= 5.0
    assert model.retry_after_max_s == DEFAULT_RETRY_AFTER_MAX_S


async def test_retry_after_in_seconds_is_waited_for(server: Server) -> None:
    server.script = [("retry_after", (429, "1")), ("json", GOOD)]
    async with client(server, backoff_s=0.0) as model:  # the default cap on Retry-After
        answer = await model.judge(PROMPT)
    assert isinstance(answer, Answer) and answer.usage.calls == 2
    assert server.arrived[1] - server.arrived[0] >= 1.0  # as the server saw it


async def test_retry_after_past_the_cap_ends_the_call_and_is_reported(server: Server) -> None:
    wait = DEFAULT_RETRY_AFTER_MAX_S + 1
    server.script = [("retry_after", (503, str(int(wait))))] * 3
    async with client(server, backoff_s=0.0) as model:
        result = await model.judge(PROMPT)
    assert isinstance(result, Deferred) and result.unavailable
    assert result.retry_after_s == int(wait) and len(server.requests) == 1


def test_retry_after_forms() -> None:
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert retry_after("7", now) == 7.0
    assert retry_after("Thu, 01 Jan 2026 12:00:30 GMT", now) == 30.0
    assert retry_after("Thu, 01 Jan 2026 11:00:00 GMT", now) == 0.0  # past: no wait
    assert retry_after("soon", now) is None and retry_after(None, now) is None


async def test_a_schema_invalid_answer_is_retried_only_above_temperature_0(
    server: Server,
) -> None:
    bad = ("json", {"verdict": "promote"})
    server.script = [bad] * 3
    async with client(server, temperature=0.7) as model:
        result = await model.judge(PROMPT)
    assert isinstance(result, Deferred) and not result.unavailable
    assert len(server.requests) == 3 and server.requests[0]["temperature"] == 0.7


async def test_the_breaker_asks_a_hung_server_once_per_round(server: Server) -> None:
    """D13: of many concurrent calls, one meets the hung server; the rest are deferred at
    once, until the next round probes it again."""
    server.script = [("hold", None)]
    breaker = Breaker(rest_s=3600)
    results: list[Answer | Deferred] = []
    async with client(server, timeout_s=0.3) as model:

        async def one() -> None:
            results.append(await breaker.call(lambda: model.judge(PROMPT)))

        async with anyio.create_task_group() as tg:
            for _ in range(6):
                tg.start_soon(one)
        assert len(server.requests) == 1 and breaker.health is Health.RESTING
        assert sum(isinstance(r, Resting) for r in results) == 5
        assert isinstance(await breaker.call(lambda: model.judge(PROMPT)), Resting)
        breaker.new_round()
        assert isinstance(await breaker.call(lambda: model.judge(PROMPT)), Answer)
        assert len(server.requests) == 2 and breaker.health is Health.HEALTHY


async def test_a_long_retry_after_outlasts_a_new_round(server: Server) -> None:
    server.script = [("retry_after", (429, "600"))]
    breaker = Breaker(rest_s=0)
    async with client(server) as model:
        first = await breaker.call(lambda: model.judge(PROMPT))
        breaker.new_round()
        second = await breaker.call(lambda: model.judge(PROMPT))
    assert isinstance(first, Deferred) and isinstance(second, Resting)
    assert len(server.requests) == 1
