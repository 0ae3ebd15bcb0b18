"""Checks of what a host hands ``reverie.open``: a home path and the objects plugged into the
seams (model, clock, embedder, telemetry providers), refused at once with an InputError that
names the argument, instead of a raw TypeError or a failure deep inside a background stage.

The seams are Protocols, so the checks are structural: any object with the members the
Protocol names is accepted, whatever its class.
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import Any

from anyio.abc import TaskGroup

from reverie.config import Config
from reverie.errors import InputError, check_text, quoted

# Protocol → (what it must be, its members: attribute name → the type it holds, or None for
# a method)
_MEMBERS: dict[str, tuple[str, dict[str, type | None]]] = {
    "model": (
        "a reverie Model (a `name` str and an async `judge(prompt)`), or None for the "
        "offline model",
        {"name": str, "judge": None},
    ),
    "clock": (
        "a reverie Clock (a `now()` method returning an aware datetime), or None for the "
        "system clock",
        {"now": None},
    ),
    "embedder": (
        "a reverie Embedder (a `name` str, a `dim` int and an async `embed(texts)`), or None",
        {"name": str, "dim": int, "embed": None},
    ),
    "tracer_provider": (
        "an OpenTelemetry TracerProvider (with `get_tracer`), or None for the global one",
        {"get_tracer": None},
    ),
    "meter_provider": (
        "an OpenTelemetry MeterProvider (with `get_meter`), or None for the global one",
        {"get_meter": None},
    ),
}


def home_path(home: object) -> Path:
    """The home as a path; refuses what is not a non-empty path (``''`` would make a home of
    the working directory without anyone having asked for one)."""
    if not isinstance(home, str | os.PathLike):
        raise InputError(
            f"home must be a path (str or os.PathLike) naming a directory, got "
            f"{type(home).__name__} {quoted(home, 60)}"
        )
    text = os.fspath(home)
    if not isinstance(text, str):  # a bytes path
        raise InputError(f"home must be a str path, got bytes {quoted(text, 60)}")
    if not text.strip():
        raise InputError(
            "home must name a directory, got an empty path; pass '.' to use the working "
            "directory on purpose"
        )
    if "\x00" in text:
        raise InputError(f"home must not contain a NUL character, got {quoted(text, 60)}")
    check_text("home", text)
    return Path(text)


def check_plugged(arguments: dict[str, Any]) -> None:
    """Refuse a config that is not a Config, and any seam object lacking its Protocol's
    members; None always means "the default"."""
    config = arguments.get("config")
    if config is not None and not isinstance(config, Config):
        raise InputError(
            f"config must be a reverie.Config (e.g. Config.load(path)) or None, got "
            f"{type(config).__name__} {quoted(config, 60)}"
        )
    create = arguments.get("create", True)
    if not isinstance(create, bool):
        raise InputError(f"create must be True or False, got {quoted(create, 60)}")
    for name, (wanted, members) in _MEMBERS.items():
        value = arguments.get(name)
        if value is None:
            continue
        if isinstance(value, type):
            raise InputError(
                f"{name} must be {wanted}; got the class {value.__name__}, pass an instance"
            )
        missing = [m for m, kind in members.items() if not _has(value, m, kind)]
        if missing:
            raise InputError(
                f"{name} must be {wanted}; got {type(value).__name__}, which lacks "
                + ", ".join(f"`{m}`" for m in missing)
            )
    group = arguments.get("task_group")
    if group is not None and not isinstance(group, TaskGroup):
        raise InputError(
            "task_group must be an anyio task group (anyio.create_task_group()) or None, "
            f"got {type(group).__name__}"
        )
    _check_clock(arguments.get("clock"))


def _check_clock(clock: Any) -> None:
    """Every timestamp reverie stores comes from the clock: a naive or non-datetime answer
    would fail (or mis-order) much later, inside a stage, so it is asked once here."""
    if clock is None:
        return
    try:
        now = clock.now()
    except Exception as exc:
        raise InputError(f"clock.now() raised {type(exc).__name__}: {exc}") from exc
    if not isinstance(now, datetime) or now.tzinfo is None:
        raise InputError(
            f"clock.now() must return an aware datetime (tzinfo=UTC), got {quoted(now, 60)}"
        )


def _has(value: object, member: str, kind: type | None) -> bool:
    try:
        attribute = getattr(value, member)
    except Exception:  # a property that raises lacks the member, as far as reverie can use it
        return False
    if kind is None:
        return callable(attribute)
    return isinstance(attribute, kind) and not isinstance(attribute, bool)
