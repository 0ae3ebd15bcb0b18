"""A chat-completions server on 127.0.0.1 for the stage tests: each request takes the next
scripted mode — a good answer (the offline rules applied to the request's data, standing in
for a competent model), HTTP 500, malformed JSON, or a slow answer past the client timeout."""

from __future__ import annotations

import json
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from reverie.model import questions
from reverie.model.offline import OfflineModel
from tests.local_http import send_json

GOOD, FAIL, MALFORMED, SLOW = "good", "500", "malformed", "slow"


def stage_of(payload: dict[str, Any]) -> str:
    if "pairs" in payload:
        return questions.LINT
    if "topic_facts" in payload:
        return questions.DISTILL
    if "memory" in payload:
        return questions.PROMOTE
    return questions.FLUSH


class ChatServer(ThreadingHTTPServer):
    def __init__(self, slow_s: float = 1.0) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.script: dict[str, list[str]] = {}
        self.seen: list[tuple[str, str]] = []  # (stage, mode) per request
        self.slow_s = slow_s

    def mode(self, stage: str) -> str:
        queue = self.script.get(stage, [])
        return queue.pop(0) if queue else GOOD


class _Handler(BaseHTTPRequestHandler):
    server: ChatServer

    def do_POST(self) -> None:  # noqa: N802 - the http.server protocol
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        payload = json.loads(body["messages"][1]["content"])
        stage = stage_of(payload)
        mode = self.server.mode(stage)
        self.server.seen.append((stage, mode))
        status = 200
        if mode == SLOW:
            time.sleep(self.server.slow_s)
        if mode == FAIL:
            status, text = 500, '{"error": "scripted failure"}'
        elif mode == MALFORMED:
            text = _completion('{"reasoning": "cut off mid-answ', body)
        else:
            answer = OfflineModel().answer(stage, payload)
            text = _completion(json.dumps(answer), body)
        send_json(self, status, text)

    def log_message(self, *args: object) -> None:
        pass


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
