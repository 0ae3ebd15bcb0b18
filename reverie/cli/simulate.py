"""``reverie simulate``: the main job — seeded conversations through the whole loop, the
load they put on it, and how well it learned (see ``reverie.simulation``)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any

import anyio
import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

import reverie
from reverie.cli.app import ConfigFile, Edge, Home, Json, Otlp, _edge, _print, app, fail, out
from reverie.clock import ManualClock
from reverie.errors import ConfigError, HomeError, ReverieError
from reverie.simulation import driver, report
from reverie.simulation.scenario import Scenario, generate

SIMULATE_HOME = Path("demo")


@app.command()
def simulate(
    home: Home = SIMULATE_HOME,
    sessions: Annotated[int, typer.Option("--sessions", min=1, help="Sessions to run.")] = 40,
    days: Annotated[int, typer.Option("--days", min=1, help="Days the clock walks.")] = 14,
    turns: Annotated[int, typer.Option("--turns", min=1, help="Turns per session.")] = 20,
    users: Annotated[int, typer.Option("--users", min=1, help="Users / projects.")] = 4,
    concurrency: Annotated[int, typer.Option("--concurrency", min=1)] = 8,
    seed: Annotated[int, typer.Option("--seed")] = 7,
    model_url: Annotated[
        str | None,
        typer.Option(
            "--model-url",
            help="An OpenAI-compatible server instead of the offline "
            "model (also REVERIE_MODEL_URL).",
        ),
    ] = None,
    as_json: Json = False,
    config_file: ConfigFile = None,
    otlp: Otlp = None,
) -> None:
    """Simulated users talk to an agent over days; every stage of the loop runs; the report
    says how fast, how costly, and how well it learned."""
    if (home / "reverie.db").exists():
        # the scenario's clock starts on a fixed day and its report reconciles the whole
        # ledger: an existing home would mix old and new and be measured wrongly
        fail(
            f"{home} already holds a reverie home; simulate into a new directory "
            "(nothing was changed)",
            2,
            as_json,
        )
    if model_url:
        os.environ["REVERIE_MODEL_URL"] = model_url
    edge = _edge(home, config_file, otlp, as_json=as_json, existing=False)
    scenario = generate(seed=seed, sessions=sessions, days=days, turns=turns, users=users)
    settings = {
        "home": str(home),
        "sessions": sessions,
        "days": days,
        "turns": turns,
        "users": users,
        "concurrency": concurrency,
        "seed": seed,
        "model": edge.config.model.url or "offline",
        "first_namespace": scenario.namespaces[0],
    }
    result = _run(home, edge, scenario, concurrency, settings, as_json)
    _print(result, as_json, lambda: render(result, home))
    if result["lost_writes"]:
        raise typer.Exit(1)


def _progress_bar(as_json: bool) -> Progress:
    """Sessions done, on stderr, only for a person at a terminal (never under --json)."""
    return Progress(
        TextColumn("simulating"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        disable=as_json or not sys.stderr.isatty(),
        transient=True,
    )


def _run(
    home: Path,
    edge: Edge,
    scenario: Scenario,
    concurrency: int,
    settings: dict[str, Any],
    as_json: bool,
) -> dict[str, Any]:
    """Drives the scenario through a real reverie home and builds the report; a library
    error becomes the CLI's exit code, and spans are flushed either way."""
    progress = _progress_bar(as_json)

    async def main() -> dict[str, Any]:
        clock = ManualClock(driver.START)
        async with reverie.open(
            home, config=edge.config, clock=clock, tracer_provider=edge.provider
        ) as rv:
            task = progress.add_task("sessions", total=len(scenario.sessions))
            with progress:
                run = await driver.drive(
                    rv, clock, scenario, concurrency, lambda: progress.advance(task)
                )
            return await report.build(rv, scenario, run, settings)

    try:
        result = anyio.run(main)
    except ReverieError as exc:
        fail(str(exc), 2 if isinstance(exc, ConfigError | HomeError) else 1, as_json)
    finally:
        if edge.provider is not None:
            edge.provider.shutdown()
    return result


def render(result: dict[str, Any], home: Path) -> None:
    s = result["settings"]
    ns = s["first_namespace"]
    out.print(
        f"[bold]reverie simulate[/bold] — {result['sessions']} sessions, {result['turns']} "
        f"turns, {s['users']} users over {s['days']} days (seed {s['seed']}, model "
        f"{s['model']}): {result['wall_s']} s, {result['turns_per_s']} turns/s"
    )
    out.print(_latency_table(result))
    out.print(_calls_table(result))
    out.print(_writes_table(result))
    q = result["quality"]
    out.print(_quality_table(result))
    records = result["records"]
    out.print(
        "learning records: "
        + ", ".join(f"{n} {tier}" for tier, n in records["tiers"].items())
        + f"; {records['patterns']} patterns; {records['sessions_ended']} sessions ended"
    )
    dreams = result["dreams"]
    graph = ", ".join(f"{n} {kind}" for kind, n in dreams["graph"].items())
    out.print(
        f"dreams: {dreams['dreams']} ({dreams['reports']} with a daily report); health "
        f"mean {dreams['health_mean']}, lowest {dreams['health_min']}; graph: {graph}"
    )
    skills = result["skills"]
    tiers = ", ".join(f"{skills['marks'][t]} {t} {n}" for t, n in skills["tiers"].items())
    uses = skills["uses"]
    answers = ", ".join(f"{d} {n}" for d, n in uses.items()) or "none"
    out.print(
        f"skill tiers: {tiers} ({skills['registered']} skills, mean score "
        f"{skills['mean_score']}); {sum(uses.values())} uses reported (answers: {answers})"
    )
    out.print(_prefetch_line(result["prefetch"]))
    if q["junk"]:
        out.print(f"junk stored: {q['junk']}")
    if q["cap_violations"]:
        out.print(f"cap violations: {q['cap_violations']}")
    out.print(
        f"explore: `reverie show --home {home} -n {ns}`, "
        f"`reverie search 'deploy timeout' --home {home} -n {ns}`, "
        f"`reverie audit ledger --home {home} -n {ns}`"
    )


def _prefetch_line(found: dict[str, Any]) -> str:
    """The next-round prefetch's hit rate on the report's questions (docs/simulate.md)."""
    if not found["enabled"]:
        return "prefetch: off (prefetch.enabled = false)"
    return (
        f"prefetch: hit rate {found['hit_rate']} on {found['questions']} questions "
        f"(the current value in the block after the question's turn); "
        f"{found['mean_hits_shown']} hits, {found['mean_chars']} chars per block"
    )


def _latency_table(result: dict[str, Any]) -> Table:
    """Per-operation latency percentiles."""
    latency = Table("operation", "n", "p50 ms", "p95 ms", "p99 ms", "max ms", title="latency")
    for op, row in result["latency"].items():
        latency.add_row(
            op,
            str(row.get("n", 0)),
            *(str(row.get(k, "")) for k in ("p50_ms", "p95_ms", "p99_ms", "max_ms")),
        )
    return latency


def _calls_table(result: dict[str, Any]) -> Table:
    """Model calls and tokens per stage: what the loop costs."""
    calls = Table(
        "stage",
        "calls",
        "deferred",
        "input tokens",
        "output tokens",
        title=f"model calls ({result['model_calls_per_1000_turns']} per 1000 turns, "
        f"{result['review_passes']} review passes)",
    )
    for stage, row in sorted(result["model_calls"].items()):
        calls.add_row(
            stage, *(str(row[k]) for k in ("calls", "deferred", "input_tokens", "output_tokens"))
        )
    return calls


def _writes_table(result: dict[str, Any]) -> Table:
    """Write decisions by source, and whether they reconcile with the ledger."""
    writes = result["writes"]
    table = Table(
        "source",
        "decisions",
        title=f"writes (reconciled with the ledger: "
        f"{'yes' if writes['reconciled'] else 'NO'}; lost: {result['lost_writes']})",
    )
    table.add_row("agent tool calls", _counts(writes["acknowledged"]))
    for actor, counts in writes["background"].items():
        table.add_row(actor, _counts(counts))
    return table


def _quality_table(result: dict[str, Any]) -> Table:
    """How well it learned, each measure against its target."""
    q = result["quality"]
    quality = Table(
        "measure",
        "value",
        "target",
        "met",
        title=(
            f"learning quality ({q['questions']} questions, {q['live_facts']} live facts, "
            f"{q['stored_items']} stored items)"
        ),
    )
    for target in result["targets"]:
        met = "[green]yes[/green]" if target["met"] else "[red]NO[/red]"
        quality.add_row(target["measure"], str(target["value"]), target["target"], met)
    return quality


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items()) or "-"


__all__ = ["simulate"]
