"""``reverie skill drafts|accept|reject``: the skill drafts the review pass wrote, and a
person's verdict on each (issue 13)."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Column, Table

from reverie.cli.app import (
    DEFAULT_HOME,
    ConfigFile,
    Home,
    Json,
    Ns,
    Otlp,
    _decision,
    _edge,
    _print,
    _with_ns,
    out,
)
from reverie.cli.loop import skill_app
from reverie.runtime import Namespace


@skill_app.command("drafts")
def skill_drafts(
    decided: Annotated[
        bool, typer.Option("--all", help="Include accepted and rejected drafts.")
    ] = False,
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Skill drafts for gaps no skill covers, and the skills nobody asks for lately."""
    edge = _edge(home, config_file, otlp, as_json=as_json)

    async def read(ns: Namespace) -> dict[str, Any]:
        found = await ns.skill_drafts(include_decided=decided)
        stale = await ns.stale_skills()
        return {"drafts": [d.to_dict() for d in found], "stale": [s.to_dict() for s in stale]}

    report = _with_ns(edge, namespace, read)

    def human() -> None:
        table = Table("state", "kind", "sessions", "score", "description")
        table.columns.insert(0, Column("draft", no_wrap=True))  # a name is typed back whole
        for d in report["drafts"]:
            table.add_row(
                d["name"],
                d["state"],
                d["kind"],
                str(d["sessions"]),
                str(d["score"]),
                d["description"],
            )
        out.print(table)
        for s in report["stale"]:
            out.print(f"stale: {s['name']} — none of {s['words']} said in {s['days']:g} days")
        if report["drafts"]:
            out.print("accept one with `reverie skill accept NAME`, or `reverie skill reject NAME`")

    _print(report, as_json, human)


@skill_app.command("accept")
def skill_accept(
    name: str,
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Make a draft a skill (through skill_manage create: caps, scanning, ledger)."""
    edge = _edge(home, config_file, otlp, as_json=as_json)
    _decision(_with_ns(edge, namespace, lambda ns: ns.accept_draft(name)), as_json)


@skill_app.command("reject")
def skill_reject(
    name: str,
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Reject a draft: its gap is never drafted again."""
    edge = _edge(home, config_file, otlp, as_json=as_json)
    _decision(_with_ns(edge, namespace, lambda ns: ns.reject_draft(name)), as_json)
