"""A chat-completions server on 127.0.0.1 for the stage tests: each request takes the next
scripted mode — a good answer (the offline rules applied to the request's data, standing in
for a competent model), HTTP 500, malformed JSON, a slow answer past the client timeout, or
a hung one (held until the server is released). It counts requests in flight, and can hold
each until ``together`` are in flight at once (concurrency tests, no timing)."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from reverie.model import questions
from reverie.model.offline import OfflineModel
from tests.local_http import send_json

GOOD, FAIL, MALFORMED, SLOW, HOLD = "good", "500", "malformed", "slow", "hold"


PROFILE = "profiler"


def stage_of(payload: dict[str, Any]) -> str:
    if "profile_sources" in payload:
        return PROFILE
    if "pairs" in payload:
        return questions.LINT
    if "topic_facts" in payload:
        return questions.DISTILL
    if "memory" in payload:
        return questions.PROMOTE
    if "learnings" in payload:
        return questions.DREAM
    if "rules_draft" in payload:
        return questions.SKILL_DRAFT
    return questions.FLUSH


class ChatServer(ThreadingHTTPServer):
    def __init__(self, slow_s: float = 1.0) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.script: dict[str, list[str]] = {}
        self.seen: list[tuple[str, str]] = []  # (stage, mode) per request
        self.answers: dict[str, dict[str, Any]] = {}  # a stage's answer, given as is
        self.payloads: list[dict[str, Any]] = []  # what each request asked
        self.slow_s = slow_s
        self.release = threading.Event()  # HOLD requests answer once this is set
        self.held = threading.Event()  # set when a HOLD request arrived
        self.together = 0  # > 0: a request waits until this many are in flight
        self.inflight = 0
        self.max_inflight = 0
        self._count = threading.Condition()

    def shutdown(self) -> None:
        self.release.set()  # a held request answers, so the server can stop
        super().shutdown()

    def enter(self) -> None:
        with self._count:
            self.inflight += 1
            self.max_inflight = max(self.max_inflight, self.inflight)
            self._count.notify_all()
            if self.together:  # bounded, so a broken limiter fails its test instead of hanging
                self._count.wait_for(lambda: self.inflight >= self.together, timeout=5)

    def leave(self) -> None:
        with self._count:
            self.inflight -= 1

    def mode(self, stage: str) -> str:
        queue = self.script.get(stage, [])
        return queue.pop(0) if queue else GOOD


class _Handler(BaseHTTPRequestHandler):
    server: ChatServer

    def do_POST(self) -> None:  # noqa: N802 - the http.server protocol
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        payload = json.loads(body["messages"][1]["content"])
        stage = stage_of(payload)
        self.server.payloads.append(payload)
        mode = self.server.mode(stage)
        self.server.seen.append((stage, mode))
        self.server.enter()
        try:
            self._answer(body, payload, stage, mode)
        finally:
            self.server.leave()

    def _answer(self, body: dict[str, Any], payload: dict[str, Any], stage: str, mode: str) -> None:
        status = 200
        if mode == SLOW:
            time.sleep(self.server.slow_s)  # a slow model server is what SLOW tests
        if mode == HOLD:
            self.server.held.set()
            self.server.release.wait(30)
        if mode == FAIL:
            status, text = 500, '{"error": "scripted failure"}'
        elif mode == MALFORMED:
            text = _completion('{"reasoning": "cut off mid-answ', body)
        else:
            answer = self.server.answers.get(stage) or _offline(stage, payload)
            text = _completion(json.dumps(answer), body)
        send_json(self, status, text)

    def log_message(self, *args: object) -> None:
        pass


def _offline(stage: str, payload: dict[str, Any]) -> Any:
    """The offline rules' answer; for the profile, which has no offline question, each
    source said in its own words and cited, while they fit (a competent model's answer)."""
    if stage != PROFILE:
        return OfflineModel().answer(stage, payload)
    sentences, used = [], 0
    for source in payload["profile_sources"]:
        text = source["text"].rstrip(".") + "."
        if used + len(text) + 1 > payload["max_chars"]:
            break
        sentences.append({"text": text, "sources": source["id"]})
        used += len(text) + 1
    return {"reasoning": "each source in its own words", "sentences": sentences}


def _completion(content: str, request: dict[str, Any]) -> str:
    prompt_chars = sum(len(m["content"]) for m in request["messages"])
    return json.dumps(
        {
            "id": "chatcmpl-test",
            "model": request["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": prompt_chars // 4, "completion_tokens": len(content) // 4},
        }
    )
