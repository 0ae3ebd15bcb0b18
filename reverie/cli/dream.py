"""Seed 004's commands: ``reverie dream`` (now; ``--dry-run``), ``dream status``, ``graph``,
``dream search Q`` (Bundle Search), ``dream longterm``, and ``reverie report daily|dream``
(the latest report, or one day's)."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from reverie.cli import picture
from reverie.cli.app import (
    DEFAULT_HOME,
    ConfigFile,
    Home,
    Json,
    Ns,
    Otlp,
    _edge,
    _print,
    _with_ns,
    app,
    out,
)

dream_app = typer.Typer(
    help="Seed 004's dream cycle: run it now, or see its graph, health and long-term store.",
    invoke_without_command=True,
)
report_app = typer.Typer(help="The dream and daily reports.", no_args_is_help=True)
app.add_typer(dream_app, name="dream")
app.add_typer(report_app, name="report")

DryRun = Annotated[
    bool, typer.Option("--dry-run", help="Work the dream out and show it; write nothing.")
]
Date = Annotated[
    str | None, typer.Option("--date", help="The report's date, YYYY-MM-DD (default: latest).")
]


@dream_app.callback()
def dream(
    ctx: typer.Context,
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    dry_run: DryRun = False,
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Dream now, due or not: the report's sections, health and the files written."""
    if ctx.invoked_subcommand is not None:
        return
    edge = _edge(home, config_file, otlp, as_json=as_json)
    run = _with_ns(edge, namespace, lambda ns: ns.dream(dry_run=dry_run))

    def human() -> None:
        health = run["health"]
        out.print(f"[bold]dream {run['date']} {run['slot']}[/bold] — health {health['score']}")
        for line in run["learnt"]["insights"]:
            out.print(f"  💡 {escape(line)}")
        for line in run["learnt"]["actions"]:
            out.print(f"  🎯 {escape(line)}")
        written = ", ".join(run["files"]) or "nothing (dry run)"
        out.print(f"written: {escape(written)}")

    _print(run, as_json, human)


@dream_app.command("status")
def status(
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Graph size, health (each metric and weight), patterns, last and next dream."""
    edge = _edge(home, config_file, otlp, as_json=as_json)
    found = _with_ns(edge, namespace, lambda ns: ns.dream_status())
    _print(found, as_json, lambda: _status_table(found))


def _status_table(found: dict[str, Any]) -> None:
    health = found["health"]
    table = Table("metric", "weight", "value", title=f"health {health['score']}")
    for name, value in health["metrics"].items():
        table.add_row(name, f"{health['weights'][name]:.2f}", f"{value:.3f}")
    out.print(table)
    graph = ", ".join(f"{k} {v}" for k, v in found["graph"].items())
    out.print(f"graph: {graph}; patterns {found['patterns']}")
    out.print(f"next dream due: {found['next_due'] or 'now'}")


@dream_app.command("search")
def search(
    q: Annotated[str, typer.Argument(help="What to look for.")],
    k: Annotated[int, typer.Option("-k", min=1, max=100, help="How many results.")] = 10,
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Bundle Search over the M-FLOW graph: each hit with the path that justified it."""
    edge = _edge(home, config_file, otlp, as_json=as_json)
    hits = _with_ns(edge, namespace, lambda ns: ns.search(q, k, mode="bundle"))
    found = [h.to_dict() for h in hits]

    def human() -> None:
        for hit in found:
            out.print(f"[bold]{hit['id']}[/bold] ({hit['kind']}) {escape(hit['text'][:160])}")
            if hit.get("path"):
                out.print(f"    via {escape(' → '.join(hit['path']))}")

    _print(found, as_json, human)


@dream_app.command("longterm")
def longterm(
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Short- and long-term counts, recalls and the last recall."""
    edge = _edge(home, config_file, otlp, as_json=as_json)
    found = _with_ns(edge, namespace, lambda ns: ns.dream_status())["longterm"]
    _print(found, as_json, lambda: out.print(", ".join(f"{k} {v}" for k, v in found.items())))


def _report(
    kind: str, home: Any, namespace: str, date: str | None, as_json: bool, config_file: Any
) -> None:
    edge = _edge(home, config_file, None, as_json=as_json)
    text = _with_ns(edge, namespace, lambda ns: ns.dream_report(kind, date))
    shown = {"kind": kind, "date": date, "text": text}
    _print(shown, as_json, lambda: out.print(text, markup=False, highlight=False, end=""))


def _report_command(kind: str, about: str) -> None:
    def command(
        home: Home = DEFAULT_HOME,
        namespace: Ns = "default",
        date: Date = None,
        as_json: Json = False,
        config_file: ConfigFile = None,
    ) -> None:
        _report(kind, home, namespace, date, as_json, config_file)

    command.__doc__ = about
    report_app.command(kind)(command)


_report_command("daily", "The daily report (written with the first dream after the evening).")
_report_command("dream", "The dream report.")


@app.command("graph")
def graph(
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Make it again from scratch.")] = False,
    fmt: picture.Format = None,
    output: picture.Output = None,
    max_nodes: picture.MaxNodes = picture.DEFAULT_MAX_NODES,
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """The M-FLOW graph brought up to date and written to <ns>/graph/: its layers' sizes.
    With -o FILE: the learning graph (memory × skills) drawn as an SVG or PNG instead."""
    edge = _edge(home, config_file, otlp, as_json=as_json)
    if output is not None or fmt is not None:
        chosen = picture.wanted_format(fmt, output, edge)
        assert output is not None
        picture.draw(edge, namespace, output, chosen, max_nodes, as_json)
        return
    found = _with_ns(edge, namespace, lambda ns: ns.graph(rebuild=rebuild))

    def human() -> None:
        counts = ", ".join(f"{k} {v}" for k, v in found["counts"].items())
        out.print(f"graph of {found['namespace']}: {counts} ({found['changed']} changed)")
        out.print(f"files: {escape(found['files'])}")

    _print(found, as_json, human)
