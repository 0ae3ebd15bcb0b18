"""A real HTTP server on 127.0.0.1 for the tests that need a peer (OTLP, chat completions)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TypeVar

S = TypeVar("S", bound=ThreadingHTTPServer)


@contextmanager
def serving(server: S) -> Iterator[S]:
    """Serve in a background thread for the duration of the block, then shut down."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def base_url(server: ThreadingHTTPServer) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"


def send_json(handler: BaseHTTPRequestHandler, status: int, text: str) -> None:
    """Answer a request with a JSON body; a client that timed out first is not an error."""
    data = text.encode()
    try:
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
    except (BrokenPipeError, ConnectionResetError):
        pass
