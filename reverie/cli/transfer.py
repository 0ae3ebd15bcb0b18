"""Issue 11's ``export`` and ``import`` commands."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

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
    err,
    out,
)
from reverie.transfer import ImportReport


@app.command()
def export(
    fmt: Annotated[str, typer.Option("--format", "-f", help="jsonl or markdown.")] = "jsonl",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write here, not to stdout.")
    ] = None,
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """A namespace's learning records as JSONL (restorable as they were) or Markdown."""
    edge = _edge(home, config_file, otlp)
    text = _with_ns(edge, namespace, lambda ns: ns.export(fmt))
    if output is None:
        sys.stdout.write(text)
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        edge.fail(f"cannot write {output}: {exc.strerror or exc}", 2)


@app.command("import")
def import_(
    source: Annotated[Path, typer.Argument(help="A .jsonl export, a Hermes or OpenClaw folder.")],
    fmt: Annotated[
        str | None, typer.Option("--format", "-f", help="jsonl, hermes or openclaw.")
    ] = None,
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Import records: an export into an empty namespace is restored as it was; anything
    else goes through the writer's rules. Exit 1 when any line was refused."""
    edge = _edge(home, config_file, otlp, as_json=as_json, existing=False)
    report = _with_ns(edge, namespace, lambda ns: ns.import_records(source, format=fmt))
    _print(report.to_dict(), as_json, lambda: _human(report))
    if report.errors:
        raise typer.Exit(1)


def _human(report: ImportReport) -> None:
    for d in report.decisions:
        where = f"{d.source}:{d.line}" if d.source else f"line {d.line}"
        line = f"{where} {d.decision} {d.id or ''} {d.reason}".rstrip()
        (err if d.decision == "ERROR" else out).print(escape(line), highlight=False)
    counts = ", ".join(f"{k} {v}" for k, v in report.counts.items()) or "nothing"
    out.print(f"{report.format} import ({report.mode}) of {report.source}: {counts}")
    for note in report.notes:
        out.print(escape(note), highlight=False)
