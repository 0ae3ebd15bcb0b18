"""The package version, below everything that reports it (spans, metrics, the CLI)."""

__version__ = "0.1.0.dev0"
