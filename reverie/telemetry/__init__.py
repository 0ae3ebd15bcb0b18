"""OpenTelemetry spans and events through the API alone (the library never configures
logging or telemetry itself; the CLI's set-up is ``reverie.cli.telemetry``)."""
