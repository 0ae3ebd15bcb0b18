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


def get_logger(name: str) -> Any:
    """A structlog logger writing to the stdlib logger ``name`` (under ``reverie``)."""
    return structlog.wrap_logger(logging.getLogger(name))
