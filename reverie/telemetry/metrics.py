"""Metrics on the host's meter provider (or the global one): model tokens per stage.

``gen_ai.client.token.usage`` is the OpenTelemetry GenAI conventions' histogram, recorded
once per token type (input, output) per model call, with the stage that asked.
"""

from __future__ import annotations

from opentelemetry import metrics

from reverie.version import __version__


def token_usage(provider: metrics.MeterProvider | None) -> metrics.Histogram:
    meter = metrics.get_meter("reverie", __version__, meter_provider=provider)
    return meter.create_histogram(
        "gen_ai.client.token.usage",
        unit="{token}",
        description="Tokens used by each model call of reverie's background stages",
    )


def model_calls(provider: metrics.MeterProvider | None) -> metrics.Counter:
    meter = metrics.get_meter("reverie", __version__, meter_provider=provider)
    return meter.create_counter(
        "reverie.model.calls",
        unit="{call}",
        description="Model calls per stage and outcome (answered or deferred)",
    )
