"""The ``reverie`` command: the in-session stores (``reverie.cli.app``), the background loop
(``loop``) and ``simulate`` register their subcommands on one typer application.

typer, rich, the OpenTelemetry SDK and its OTLP exporter come with the ``cli`` extra, so
this package imports them only when the command runs (``main``): a host that embeds the
library never needs them. Without them the command says how to get them, in one line, and
exits 1.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

__all__ = ["main"]

CLI_REQUIREMENTS = (
    "typer",
    "rich",
    "opentelemetry.sdk",
    "opentelemetry.exporter.otlp.proto.http",
)
INSTALL_HINT = "reverie: the command needs the cli extra: pip install 'reverie[cli]'"


def _missing_requirement() -> str | None:
    """The first of the CLI's requirements that cannot be imported, if any."""
    for name in CLI_REQUIREMENTS:
        try:
            importlib.import_module(name)
        except ImportError:
            return name
    return None


def _commands() -> ModuleType:
    """``reverie.cli.app`` with every subcommand registered on it."""
    from reverie.cli import app as commands
    from reverie.cli import consolidate as _consolidate  # noqa: F401
    from reverie.cli import drafts as _drafts  # noqa: F401
    from reverie.cli import dream as _dream  # noqa: F401
    from reverie.cli import loop as _loop  # noqa: F401  (registers its subcommands)
    from reverie.cli import namespaces as _namespaces  # noqa: F401
    from reverie.cli import profile as _profile  # noqa: F401
    from reverie.cli import records as _records  # noqa: F401
    from reverie.cli import scores as _scores  # noqa: F401
    from reverie.cli import simulate as _simulate  # noqa: F401
    from reverie.cli import transfer as _transfer  # noqa: F401

    return commands


def main() -> None:
    """The console script: run the command, or one line naming the missing extra, exit 1."""
    try:
        commands = _commands()
    except ImportError:
        if _missing_requirement() is None:
            raise  # not a missing extra: a real bug, with its traceback
        sys.stderr.write(INSTALL_HINT + "\n")
        sys.exit(1)
    commands.main()
