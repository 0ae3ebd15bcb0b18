"""OpenTelemetry spans and events, and the CLI's logging set-up (the library never
configures logging or telemetry itself)."""
