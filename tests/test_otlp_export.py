"""The CLI exports spans over OTLP/HTTP: a real receiver on 127.0.0.1 decodes the protobuf."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from tests.local_http import base_url, serving

pytestmark = pytest.mark.slow


class Receiver(ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.requests: list[ExportTraceServiceRequest] = []
        self.paths: list[str] = []


class Handler(BaseHTTPRequestHandler):
    server: Receiver

    def do_POST(self) -> None:  # noqa: N802 - the http.server protocol
        body = self.rfile.read(int(self.headers["Content-Length"]))
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        self.server.requests.append(request)
        self.server.paths.append(self.path)
        payload = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with serving(Receiver()) as running:
        yield running


def spans_of(receiver: Receiver) -> list[tuple[str, dict[str, object]]]:
    found = []
    for request in receiver.requests:
        for resource in request.resource_spans:
            for scope in resource.scope_spans:
                for span in scope.spans:
                    attrs = {}
                    for kv in span.attributes:
                        value = kv.value
                        attrs[kv.key] = value.string_value or value.int_value
                    found.append((span.name, attrs))
    return found


@pytest.mark.parametrize("how", ["flag", "env"])
def test_cli_exports_spans_over_otlp_http(tmp_path: Path, receiver: Receiver, how: str) -> None:
    endpoint = base_url(receiver)
    args = [
        sys.executable,
        "-m",
        "reverie",
        "topic",
        "save",
        "deploy",
        "The deploy timeout is 30s",
        "--home",
        str(tmp_path),
        "--namespace",
        "alice",
    ]
    env = dict(os.environ)
    env.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    if how == "flag":
        args += ["--otlp-endpoint", endpoint]
    else:
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = endpoint
    proc = subprocess.run(args, capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr
    assert receiver.paths and set(receiver.paths) == {"/v1/traces"}
    spans = dict(spans_of(receiver))
    tool = spans["execute_tool topic"]
    assert tool["gen_ai.operation.name"] == "execute_tool"
    assert tool["gen_ai.memory.store.id"] == "alice"
    assert tool["reverie.decision"] == "ADD"
    assert spans["reverie.writer ToolCall"]["reverie.actor"] == "writer"
    resource = receiver.requests[0].resource_spans[0].resource
    assert any(
        kv.key == "service.name" and kv.value.string_value == "reverie"
        for kv in resource.attributes
    )


def test_cli_honours_otel_service_name(tmp_path: Path, receiver: Receiver) -> None:
    env = {
        **os.environ,
        "OTEL_EXPORTER_OTLP_ENDPOINT": base_url(receiver),
        "OTEL_SERVICE_NAME": "billing-agent",
    }
    proc = subprocess.run(
        [sys.executable, "-m", "reverie", "memory", "add", "x is 1", "--home", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    resource = receiver.requests[0].resource_spans[0].resource
    names = [kv.value.string_value for kv in resource.attributes if kv.key == "service.name"]
    assert names == ["billing-agent"]
