"""An ``/v1/embeddings`` server on 127.0.0.1 for the embedding tests: each request takes the
next scripted mode — a good answer, HTTP 500, malformed JSON, the wrong dimension, or a slow
answer past the client timeout. A good answer embeds by concept: words listed in
``CONCEPTS`` share an axis (so "automobile" is near "car"), other words hash to their own."""

from __future__ import annotations

import json
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.local_http import send_json

GOOD, FAIL, MALFORMED, WRONG_DIM, SLOW = "good", "500", "malformed", "wrong-dim", "slow"
DIM = 64
CONCEPTS = {
    "car": 0,
    "automobile": 0,
    "vehicle": 0,
    "tires": 1,
    "wheels": 1,
    "terse": 2,
    "brief": 2,
    "short": 2,
}


def embed(text: str, dim: int = DIM) -> list[float]:
    vector = [0.0] * dim
    for word in text.lower().replace(".", " ").replace(",", " ").split():
        axis = CONCEPTS.get(word)
        if axis is None:
            axis = 4 + zlib.crc32(word.encode()) % (dim - 4)
        vector[axis] += 1.0
    return vector


class EmbedServer(ThreadingHTTPServer):
    def __init__(self, slow_s: float = 1.0) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.script: list[str] = []
        self.seen: list[tuple[str, str, int]] = []  # (path, mode, number of inputs)
        self.slow_s = slow_s

    def mode(self) -> str:
        return self.script.pop(0) if self.script else GOOD


class _Handler(BaseHTTPRequestHandler):
    server: EmbedServer

    def do_POST(self) -> None:  # noqa: N802 - the http.server protocol
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        mode = self.server.mode()
        self.server.seen.append((self.path, mode, len(texts)))
        status, text = 200, _answer(texts, body.get("model", ""), DIM)
        if mode == SLOW:
            time.sleep(self.server.slow_s)  # a slow embedding server is what SLOW tests
        elif mode == FAIL:
            status, text = 500, '{"error": "scripted failure"}'
        elif mode == MALFORMED:
            text = text[: len(text) // 2]
        elif mode == WRONG_DIM:
            text = _answer(texts, body.get("model", ""), DIM + 1)
        send_json(self, status, text)

    def log_message(self, *args: object) -> None:
        pass


def _answer(texts: list[str], model: str, dim: int) -> str:
    data: list[dict[str, Any]] = [
        {"object": "embedding", "index": i, "embedding": embed(t, dim)} for i, t in enumerate(texts)
    ]
    data.reverse()  # servers may answer out of order; the index says where each belongs
    return json.dumps({"object": "list", "data": data, "model": model})
