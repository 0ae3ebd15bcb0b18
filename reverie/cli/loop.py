"""The background loop from the command line: ``reverie review``, ``reverie curator`` and
``reverie skill``."""

from __future__ import annotations

from typing import Annotated, Any

import typer
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
    app,
    fail,
    out,
)
from reverie.runtime import Reverie

skill_app = typer.Typer(help="Skills: list, pin, unpin, record a use.", no_args_is_help=True)
app.add_typer(skill_app, name="skill")


def _detail(stage: dict[str, Any]) -> str:
    """One line saying what a stage did."""
    name, status = stage["stage"], stage["status"]
    if status == "not_due":
        return f"next due {stage.get('next_due')}"
    if status in {"failed", "over_budget", "disabled"}:
        return str(stage.get("error", ""))
    if name == "linter":
        return f"{stage.get('new', 0)} new conflicts, {stage.get('unclear', 0)} asked the model"
    if name == "distiller":
        return f"{stage.get('distilled', 0)} distilled, {stage.get('retry_next_round', 0)} retry"
    if name == "promoter":
        counts = {k: v for k, v in stage.items() if isinstance(v, int) and k != "candidates"}
        return f"{stage.get('candidates', 0)} candidates: {counts}"
    if name == "curator":
        return f"{len(stage.get('candidates', []))} candidates (dry run), " + (
            f"{len(stage.get('issues', []))} overlap/bloat reports"
        )
    return ""


@app.command()
def review(
    force: Annotated[bool, typer.Option("--force", help="Skip the 6 h cooldown.")] = False,
    home: Home = DEFAULT_HOME,
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Run one review pass (lint, distill, promote, curate) over every namespace now."""
    edge = _edge(home, config_file, otlp, as_json=as_json)

    async def body(rv: Reverie) -> dict[str, Any]:
        report = await rv.review(force=force)
        report["model_calls"] = await rv.model_calls()
        return report

    report = edge.run(body)

    def human() -> None:
        if not report["namespaces"]:
            out.print(f"nothing to review: {report.get('reason', '')}")
        for ns in report["namespaces"]:
            if not ns["ran"]:
                out.print(f"[bold]{ns['namespace']}[/bold]: no pass — {ns.get('reason', '')}")
                continue
            table = Table("stage", "status", "what it did", title=f"review of {ns['namespace']}")
            for stage in ns["stages"]:
                table.add_row(stage["stage"], stage["status"], _detail(stage))
            out.print(table)
        calls = report["model_calls"]
        if calls:
            table = Table(
                "stage",
                "calls",
                "deferred",
                "input tokens",
                "output tokens",
                title="model calls so far",
            )
            for stage, row in sorted(calls.items()):
                table.add_row(
                    stage,
                    str(row["calls"]),
                    str(row["deferred"]),
                    str(row["input_tokens"]),
                    str(row["output_tokens"]),
                )
            out.print(table)

    _print(report, as_json, human)


@app.command()
def curator(
    apply: Annotated[bool, typer.Option("--apply", help="Archive the candidates.")] = False,
    restore: Annotated[
        str | None, typer.Option("--restore", help="Bring an archived skill back.")
    ] = None,
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Skills idle past the limit: list them (dry run), archive them, or restore one."""
    if apply and restore:
        fail("--apply and --restore are exclusive", 2, as_json)
    edge = _edge(home, config_file, otlp, as_json=as_json)
    if restore is not None:
        name = restore
        _decision(_with_ns(edge, namespace, lambda ns: ns.restore_skill(name)), as_json)
        return
    result = _with_ns(edge, namespace, lambda ns: ns.curate(apply=apply))
    if result["decision"] == "ERROR":
        _decision(result, as_json)
        return

    def human() -> None:
        if apply:
            for item in result["archived"]:
                out.print(f"archived {item['name']} → {item['archive_dir']}")
            if not result["archived"]:
                out.print("no skill to archive")
        else:
            table = Table("skill", "idle since", title="curator candidates (dry run)")
            for item in result["candidates"]:
                table.add_row(item["name"], item["idle_since"])
            out.print(table)
            out.print("archive them with `reverie curator --apply`")

    _print(result, as_json, human)


@skill_app.command("list")
def skill_list(
    archived: Annotated[bool, typer.Option("--archived", help="Include archived skills.")] = False,
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """The skills of a namespace."""
    edge = _edge(home, config_file, otlp, as_json=as_json)
    found = _with_ns(edge, namespace, lambda ns: ns.skills(include_archived=archived))

    def human() -> None:
        table = Table("skill", "created by", "pinned", "last used", "archived")
        for s in found:
            table.add_row(
                s.name,
                s.created_by,
                "yes" if s.pinned else "",
                s.last_used_at or "",
                s.archived_at or "",
            )
        out.print(table)

    _print([s.to_dict() for s in found], as_json, human)


def _flag(
    name: str, pinned: bool, home: Any, namespace: str, as_json: bool, config_file: Any, otlp: Any
) -> None:
    edge = _edge(home, config_file, otlp, as_json=as_json)
    _decision(_with_ns(edge, namespace, lambda ns: ns.pin_skill(name, pinned)), as_json)


@skill_app.command("pin")
def skill_pin(
    name: str,
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Pin a skill: the curator never retires it."""
    _flag(name, True, home, namespace, as_json, config_file, otlp)


@skill_app.command("use")
def skill_use(
    name: str,
    ok: Annotated[
        bool | None,
        typer.Option("--ok/--failed", help="How the use went (default: not known)."),
    ] = None,
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Record that the agent used a skill, and how it went (a host normally calls
    ``s.used_skill(name, ok=...)``)."""
    edge = _edge(home, config_file, otlp, as_json=as_json)

    async def body(rv: Reverie) -> dict[str, Any]:
        async with rv.namespace(namespace).session("cli") as session:
            return await session.used_skill(name, ok=ok)

    _decision(edge.run(body), as_json)


@skill_app.command("unpin")
def skill_unpin(
    name: str,
    home: Home = DEFAULT_HOME,
    namespace: Ns = "default",
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Unpin a skill."""
    _flag(name, False, home, namespace, as_json, config_file, otlp)
