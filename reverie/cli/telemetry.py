"""Logging and span export for the CLI (the edge): a library host does its own. The SDK and
the OTLP exporter come with the `cli` extra (`pip install 'reverie[cli]'`)."""

from __future__ import annotations

import logging
import sys

import structlog
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor


def configure_logging(verbose: bool = False, json_lines: bool = False) -> None:
    """structlog to stderr, so stdout carries only the command's answer."""
    level = logging.DEBUG if verbose else logging.WARNING
    logging.basicConfig(stream=sys.stderr, level=level, format="%(message)s")
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer()
        if json_lines
        else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )


def otlp_provider(endpoint: str, service_name: str = "reverie") -> TracerProvider:
    """A tracer provider exporting over OTLP/HTTP (protobuf) to ``endpoint``, as
    ``service_name`` (the CLI passes ``OTEL_SERVICE_NAME`` when set)."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    base = endpoint.rstrip("/")
    traces = base if base.endswith("/v1/traces") else f"{base}/v1/traces"
    provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=traces)))
    return provider
