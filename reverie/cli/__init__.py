"""The ``reverie`` command: the in-session stores (``app``) and the background loop
(``loop``) register their subcommands on one typer application."""

from reverie.cli import loop as loop
from reverie.cli import simulate as simulate
from reverie.cli.app import app, main

__all__ = ["app", "main"]
