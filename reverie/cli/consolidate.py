"""``reverie skill consolidate | trim | unmerge | untrim``: the curator's proposals for
agent-made skills, shown (dry run) or applied, and their undo."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

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

Apply = Annotated[bool, typer.Option("--apply", help="Carry the proposals out (reversibly).")]
Verbose = Annotated[bool, typer.Option("--show", help="Print each proposed body and drop.")]


def _proposals(result: dict[str, Any], show: bool) -> None:
    """The proposals as a table, and with ``show`` each body and what it drops."""
    table = Table("skills", "becomes", "chars before → after", "dropped", "note")
    for p in result["proposals"]:
        before, after = p["chars_before"], p["chars_after"]
        note = p["blocked"] or p["why"]
        table.add_row(
            ", ".join(p["names"]),
            p["merged_name"],
            f"{before} → {after}",
            str(len(p["dropped"])),
            escape(note),
        )
    out.print(table)
    if show:
        for p in result["proposals"]:
            out.rule(escape(p["merged_name"]))
            out.print(escape(p["body"]), highlight=False)
            for d in p["dropped"]:
                out.print(
                    f"[dim]dropped ({d['reason']}, {escape(d['source'])}):[/dim] "
                    f"{escape(d['text'])}",
                    highlight=False,
                )


def _run(kind: str, apply: bool, show: bool, edge_args: tuple[Any, ...], namespace: str) -> None:
    home, config_file, otlp, as_json = edge_args
    edge = _edge(home, config_file, otlp, as_json=as_json)
    if kind == "consolidate":
        result = _with_ns(edge, namespace, lambda ns: ns.consolidate_skills(apply=apply))
    else:
        result = _with_ns(edge, namespace, lambda ns: ns.patch_skills(apply=apply))
    if result["decision"] == "ERROR":
        _decision(result, as_json)

    def human() -> None:
        title = "applied" if apply else "proposed (dry run)"
        out.print(f"[bold]{kind}[/bold] {title}: {len(result['proposals'])}")
        _proposals(result, show)
        for item in result["archived"]:
            out.print(f"archived {item['name']} → {item['archive_dir']}")
        if not apply and result["proposals"]:
            flag = "consolidate" if kind == "consolidate" else "trim"
            out.print(f"apply them with `reverie skill {flag} --apply`")

    _print(result, as_json, human)


@skill_app.command("consolidate")
def skill_consolidate(
    apply: Apply = False,
    show: Verbose = False,
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Merge overlapping agent-made skills: list the proposals, or apply them."""
    _run("consolidate", apply, show, (home, config_file, otlp, as_json), namespace)


@skill_app.command("trim")
def skill_trim(
    apply: Apply = False,
    show: Verbose = False,
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Trim bloated agent-made skills (repetition, then long prose): propose or apply."""
    _run("patch", apply, show, (home, config_file, otlp, as_json), namespace)


def _undo(name: str, change: str, edge_args: tuple[Any, ...], namespace: str) -> None:
    home, config_file, otlp, as_json = edge_args
    edge = _edge(home, config_file, otlp, as_json=as_json)
    if change == "merge":
        result = _with_ns(edge, namespace, lambda ns: ns.unmerge_skill(name))
    else:
        result = _with_ns(edge, namespace, lambda ns: ns.unpatch_skill(name))
    if result["decision"] == "ERROR":
        _decision(result, as_json)

    def human() -> None:
        out.print(f"[bold]RESTORED[/bold] {escape(name)}: its body before the {change}")
        for item in result["restored"]:
            out.print(f"restored {escape(item['name'])} ← {item['archive_dir']}")

    _print(result, as_json, human)


@skill_app.command("unmerge")
def skill_unmerge(
    name: str,
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Undo a merge: the skill's body before it, and the other originals restored."""
    _undo(name, "merge", (home, config_file, otlp, as_json), namespace)


@skill_app.command("untrim")
def skill_untrim(
    name: str,
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Undo the last trim of a skill: its body before the trim."""
    _undo(name, "trim", (home, config_file, otlp, as_json), namespace)
