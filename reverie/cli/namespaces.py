"""``reverie namespace create|list|show|archive|restore|set``: namespace management, each
namespace with its own caps and tier numbers (see docs/records.md, "Namespaces")."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from reverie.cli.app import (
    DEFAULT_HOME,
    ConfigFile,
    Home,
    Json,
    Otlp,
    _edge,
    _print,
    app,
    fail,
    out,
)
from reverie.config import NAMESPACE_KEYS, override_value
from reverie.errors import ConfigError

namespace_app = typer.Typer(
    help="Namespaces: create, list, show, archive (reversibly), restore, and their settings.",
    no_args_is_help=True,
)
app.add_typer(namespace_app, name="namespace")

Settings = Annotated[
    list[str] | None,
    typer.Option("--set", help=f"key=value, any of: {', '.join(NAMESPACE_KEYS)}"),
]


def _settings(pairs: list[str], as_json: bool, *, removable: bool) -> dict[str, Any]:
    """``key=value`` pairs as overrides; ``key=`` removes one (``set`` only). A bad pair is
    one line and exit 2, before anything is opened."""
    found: dict[str, Any] = {}
    for pair in pairs:
        key, eq, raw = pair.partition("=")
        if not eq:
            fail(f"{pair!r} is not key=value", 2, as_json)
        try:
            found[key] = None if removable and not raw else override_value(key, raw)
        except ConfigError as exc:
            fail(str(exc), 2, as_json)
    return found


def _show(info: dict[str, Any], as_json: bool) -> None:
    def human() -> None:
        state = f"archived since {info['archived_at']}" if info["archived"] else "active"
        out.print(
            f"[bold]{info['namespace']}[/bold]: {state}, created {info['created_at'] or '?'}, "
            f"{info['sessions']} sessions ended, last heartbeat "
            f"{info['last_heartbeat'] or 'never'}"
        )
        for key, change in info["settings"].items():
            out.print(f"  {key} = {change['value']} (home: {change['home']})", markup=False)
        if not info["settings"]:
            out.print("  settings: the home's", markup=False)
        for column, counts in info["records"].items():
            shown = ", ".join(f"{k} {v}" for k, v in counts.items()) or "none"
            out.print(f"  {column}: {shown}", markup=False, highlight=False)

    _print(info, as_json, human)


@namespace_app.command("create")
def create(
    name: str,
    settings: Settings = None,
    home: Home = DEFAULT_HOME,
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """A new namespace, optionally with its own settings (--set key=value, repeatable)."""
    wanted = _settings(settings or [], as_json, removable=False)
    edge = _edge(home, config_file, otlp, as_json=as_json, existing=False)
    _show(edge.run(lambda rv: rv.create_namespace(name, wanted)), as_json)


@namespace_app.command("list")
def listing(
    all_namespaces: Annotated[bool, typer.Option("--all", help="Archived ones too.")] = False,
    home: Home = DEFAULT_HOME,
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """The namespaces of the home (archived ones with --all)."""
    edge = _edge(home, config_file, otlp, as_json=as_json)

    async def every(rv: Any) -> list[dict[str, Any]]:
        names = await rv.namespaces(include_archived=all_namespaces)
        return [await rv.namespace_info(name) for name in names]

    found = edge.run(every)

    def human() -> None:
        for info in found:
            state = " (archived)" if info["archived"] else ""
            out.print(f"{info['namespace']}{state}", markup=False, highlight=False)

    brief = [
        {k: info[k] for k in ("namespace", "archived", "archived_at", "created_at", "sessions")}
        for info in found
    ]
    _print(brief, as_json, human)


@namespace_app.command("show")
def show(
    name: str,
    home: Home = DEFAULT_HOME,
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Sessions, created/archived times, settings overrides, record counts per tier."""
    edge = _edge(home, config_file, otlp, as_json=as_json)
    _show(edge.run(lambda rv: rv.namespace_info(name)), as_json)


@namespace_app.command("archive")
def archive(
    name: str,
    home: Home = DEFAULT_HOME,
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Make a namespace read-only (reversible with `restore`; nothing is deleted)."""
    edge = _edge(home, config_file, otlp, as_json=as_json)
    _show(edge.run(lambda rv: rv.archive_namespace(name)), as_json)


@namespace_app.command("restore")
def restore(
    name: str,
    home: Home = DEFAULT_HOME,
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Undo `archive`: the namespace takes writes again."""
    edge = _edge(home, config_file, otlp, as_json=as_json)
    _show(edge.run(lambda rv: rv.restore_namespace(name)), as_json)


@namespace_app.command("set")
def set_settings(
    name: str,
    pairs: Annotated[list[str], typer.Argument(help="key=value (key= removes the override)")],
    home: Home = DEFAULT_HOME,
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Change a namespace's own settings; they apply from its next write on."""
    changes = _settings(pairs, as_json, removable=True)
    edge = _edge(home, config_file, otlp, as_json=as_json)
    _show(edge.run(lambda rv: rv.set_namespace_settings(name, changes)), as_json)
