"""Loggers for a guest: structlog bound loggers over stdlib ``reverie.*`` loggers.

Events go through whatever structlog processors the host configured (tests read them with
``structlog.testing.capture_logs()``) and end in the stdlib logger ``reverie.<name>``, which
carries only a ``NullHandler``: with no logging set up by the host, reverie prints nothing.
"""

from __future__ import annotations

import logging
from typing import Any

import structlog

logging.getLogger("reverie").addHandler(logging.NullHandler())


def debug_wanted(name: str) -> bool:
    """Whether a per-call debug event would reach anyone: the host configured structlog (or
    captures logs), or enabled DEBUG on the stdlib logger. Hot paths check before logging."""
    return structlog.is_configured() or logging.getLogger(name).isEnabledFor(logging.DEBUG)


def info_wanted(name: str) -> bool:
    """Like :func:`debug_wanted`, at INFO: per-namespace events of a review round (one per
    stage of each of thousands of namespaces) are rendered only when someone listens."""
    return structlog.is_configured() or logging.getLogger(name).isEnabledFor(logging.INFO)


def get_logger(name: str) -> Any:
    """A structlog logger writing to the stdlib logger ``name`` (under ``reverie``)."""
    return structlog.wrap_logger(logging.getLogger(name))
