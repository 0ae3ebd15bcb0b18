"""``reverie graph --format svg|png -o FILE``: the learning graph drawn (issue 13; see
docs/skills.md#the-learning-graph-picture). The ``graph`` command itself is seed 004's
(``reverie.cli.dream``); with ``-o`` it draws instead of projecting the M-FLOW graph."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from reverie.cli.app import Edge, _print, _with_ns, out
from reverie.skills import drawing
from reverie.skills.picture import DEFAULT_MAX_NODES as DEFAULT_MAX_NODES

Format = Annotated[
    str | None,
    typer.Option("--format", help="svg or png (default: the file's suffix) — draws with -o."),
]
Output = Annotated[
    Path | None,
    typer.Option("-o", "--output", help="Draw the learning graph (memory × skills) into FILE."),
]
MaxNodes = Annotated[
    int,
    typer.Option("--max-nodes", min=1, help="Draw the most active nodes only; the rest counted."),
]


def wanted_format(fmt: str | None, output: Path | None, edge: Edge) -> str:
    """The picture's format: ``--format``, else the file's suffix; refused before any home
    is opened, so a bad one writes nothing."""
    if output is None:
        edge.fail("--format draws the learning graph: give the file with -o FILE")
    chosen = fmt if fmt is not None else output.suffix.lstrip(".").lower()
    if chosen not in drawing.FORMATS:
        edge.fail(f"--format must be one of {', '.join(drawing.FORMATS)}; got {chosen!r}")
    if drawing.missing_requirement() is not None:
        edge.fail(drawing.INSTALL_HINT)
    return chosen


def draw(edge: Edge, namespace: str, output: Path, fmt: str, max_nodes: int, as_json: bool) -> None:
    """Draw, and say what: the file, the nodes and edges, how many left out."""
    drawn = _with_ns(
        edge, namespace, lambda ns: ns.draw_learning_graph(output, fmt, max_nodes=max_nodes)
    )

    def human() -> None:
        kinds: dict[str, int] = {}
        for node in drawn["nodes"]:
            kinds[node["kind"]] = kinds.get(node["kind"], 0) + 1
        said = ", ".join(f"{k} {n}" for k, n in kinds.items()) or "nothing: empty"
        left = f"; {drawn['left_out']} less active left out" if drawn["left_out"] else ""
        out.print(f"learning graph of {drawn['namespace']} → {escape(drawn['path'])}")
        out.print(f"nodes: {said}; edges {len(drawn['edges'])}{left}")

    _print(drawn, as_json, human)
