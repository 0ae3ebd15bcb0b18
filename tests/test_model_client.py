"""The OpenAI-compatible client against a real chat-completions server on 127.0.0.1 with
scripted answers: good, malformed, failing, slow. Every failure is Deferred, never raised."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from reverie.model import Answer, Deferred, Field, OpenAICompatible, Prompt, Schema
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


class Handler(BaseHTTPRequestHandler):
    server: Server

    def do_POST(self) -> None:  # noqa: N802 - the http.server protocol
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(body)
        self.server.headers_seen.append(dict(self.headers))
        kind, value = self.server.script.pop(0) if self.server.script else ("json", GOOD)
        status, payload = 200, ""
        if kind == "sleep":
            time.sleep(value[0])
            kind, value = "json", value[1]
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
        yield running


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
        ([("content", "not json at all")] * 3, 3, "not usable"),
        ([("json", {"verdict": "promote"})] * 3, 3, "lacks 'reasoning'"),
        ([("json", {**GOOD, "verdict": "maybe"})] * 3, 3, "must be one of"),
        ([("json", {**GOOD, "rewrite": "x" * 221})] * 3, 3, "longer than 220"),
        ([("raw", "{truncated")] * 3, 3, "not usable"),
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
    server.script = [("status", 503), ("content", "oops"), ("json", GOOD)]
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
