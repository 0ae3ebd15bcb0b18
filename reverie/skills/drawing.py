"""The learning graph drawn (``reverie graph --format svg|png -o FILE``): matplotlib's
object API on its Agg canvas — no pyplot, no backend chosen for the host — and networkx's
spring layout with a fixed seed, so the same graph gives the same file.

matplotlib and networkx come with the ``picture`` extra; they are imported only when a
picture is drawn, and without them :func:`draw` says in one line how to get them.
"""

from __future__ import annotations

import importlib
import io
import math
import os
import tempfile
from pathlib import Path
from typing import Any, Final

from reverie.errors import ConfigError, InputError, quoted
from reverie.skills.picture import EDGE_KINDS, NODE_KINDS, LearningGraph

FORMATS: Final = ("svg", "png")
PICTURE_REQUIREMENTS: Final = ("matplotlib", "networkx")
INSTALL_HINT: Final = (
    "the learning-graph picture needs the picture extra: pip install 'reverie[picture]'"
)
LAYOUT_SEED: Final = 7
MIN_AREA: Final = 60.0
MAX_AREA: Final = 900.0
"""Node areas (points²): the least active node and the most active one, log-scaled between,
so one busy topic never swallows the picture."""
FIGURE_INCHES: Final = (14.0, 10.5)
PNG_DPI: Final = 100
RING_RADIUS: Final = 1.75
MIDDLE_SCALE: Final = 1.0
GROUP_SCALE: Final = 0.16
VIEW: Final = (2.65, 2.05)
"""Half the drawing's width and height in layout units: the ring, and labels outward of it."""
_COLOURS: Final = {
    "topic": "#4e79a7",
    "memory": "#59a14f",
    "user": "#edc948",
    "skill": "#e15759",
    "pattern": "#b07aa1",
}
_EDGE_STYLES: Final[dict[str, tuple[str, Any]]] = {
    "session": ("#7f7f7f", "--"),
    "member": ("#b07aa1", "-"),
    "names": ("#4e79a7", ":"),
    "quotes": ("#e15759", "-."),
}
_Point = tuple[float, float]


def missing_requirement() -> str | None:
    """The first of the picture's libraries that cannot be imported, if any."""
    for name in PICTURE_REQUIREMENTS:
        try:
            importlib.import_module(name)
        except ImportError:
            return name
    return None


def check_format(fmt: object) -> str:
    if not isinstance(fmt, str) or fmt not in FORMATS:
        raise InputError(f"format must be one of {', '.join(FORMATS)}; got {quoted(fmt, 40)}")
    return fmt


def check_path(path: object) -> Path:
    """A file that can be written: its folder exists, and it is not a folder itself."""
    if not isinstance(path, str | os.PathLike):
        raise InputError(f"path must be a file path; got {quoted(path, 60)}")
    target = Path(path)
    if "\0" in str(target):
        raise InputError(f"path {quoted(str(target), 120)} holds a NUL character")
    try:
        folder, parent = target.is_dir(), target.parent.is_dir()
    except OSError as exc:  # a name too long, say
        raise InputError(f"path {quoted(str(target), 120)}: {exc.strerror}") from None
    if folder:
        raise InputError(f"path {quoted(str(target), 120)} is a directory, not a file")
    if not parent:
        raise InputError(f"no directory {quoted(str(target.parent), 120)} to write the picture in")
    return target


def _area(activity: float, most: float) -> float:
    return MIN_AREA + (MAX_AREA - MIN_AREA) * math.log1p(activity) / math.log1p(most)


def _spring(g: Any, scale: float) -> dict[str, _Point]:
    import networkx as nx

    if len(g) == 1:
        return {next(iter(g)): (0.0, 0.0)}
    found = nx.spring_layout(
        g, k=1.5 / math.sqrt(len(g)), iterations=300, seed=LAYOUT_SEED, scale=scale
    )
    return {nid: (float(x), float(y)) for nid, (x, y) in found.items()}


def _layout(graph: LearningGraph) -> tuple[dict[str, _Point], dict[str, _Point]]:
    """Each node's place, and the point its label faces away from. The largest linked
    group by a seeded spring layout in the middle; every other group, and each unlinked
    node, in its own place on a ring around it (in one spring layout, the groups pushed
    one another apart and each shrank to a knot). A label faces away from the middle, or
    in a group on the ring from that group's centre, so neighbours' labels part."""
    import networkx as nx

    g: nx.Graph[str] = nx.Graph()
    g.add_nodes_from(n.id for n in graph.nodes)  # most active first: a stable order
    g.add_edges_from((e.src, e.dst) for e in graph.edges)
    rank = {n.id: i for i, n in enumerate(graph.nodes)}
    groups = sorted(
        (sorted(c, key=rank.__getitem__) for c in nx.connected_components(g)),
        key=lambda c: (-len(c), rank[c[0]]),
    )
    middle = groups.pop(0) if len(groups[0]) > 1 else []
    pos = _spring(g.subgraph(middle), MIDDLE_SCALE) if middle else {}
    away = dict.fromkeys(pos, (0.0, 0.0))
    ring = RING_RADIUS if middle else 1.0
    share = [1 + len(group) for group in groups]  # a bigger group, a wider slot
    for i, group in enumerate(groups):
        middle_of_slot = sum(share[:i]) + share[i] / 2
        angle = math.pi / 2 - 2 * math.pi * middle_of_slot / sum(share)
        cx, cy = ring * math.cos(angle), ring * math.sin(angle)
        small = _spring(g.subgraph(group), GROUP_SCALE * math.sqrt(len(group)))
        pos.update({nid: (cx + x, cy + y) for nid, (x, y) in small.items()})
        away.update(dict.fromkeys(small, (cx, cy) if len(group) > 1 else (0.0, 0.0)))
    return pos, away


def _draw_edges(ax: Any, graph: LearningGraph, pos: dict[str, _Point]) -> None:
    for edge in graph.edges:
        colour, style = _EDGE_STYLES[edge.kind]
        (x0, y0), (x1, y1) = pos[edge.src], pos[edge.dst]
        ax.plot(
            [x0, x1], [y0, y1], color=colour, linestyle=style, linewidth=1.2, alpha=0.7, zorder=1
        )


def _draw_nodes(
    ax: Any, graph: LearningGraph, pos: dict[str, _Point], away: dict[str, _Point]
) -> None:
    most = max(n.activity for n in graph.nodes)
    for kind in NODE_KINDS:
        shown = [n for n in graph.nodes if n.kind == kind]
        if not shown:
            continue
        ax.scatter(
            [pos[n.id][0] for n in shown],
            [pos[n.id][1] for n in shown],
            s=[_area(n.activity, most) for n in shown],
            c=_COLOURS[kind],
            edgecolors="white",
            linewidths=1.0,
            zorder=2,
        )
    for n in graph.nodes:
        x, y = pos[n.id]
        gap = math.sqrt(_area(n.activity, most)) / 2 + 2  # points: just off the disc
        ox, oy = x - away[n.id][0], y - away[n.id][1]
        norm = math.hypot(ox, oy) or 1.0
        dx, dy = (ox / norm, oy / norm) if math.hypot(ox, oy) else (0.0, 1.0)
        ax.annotate(
            n.label,
            (x, y),
            xytext=(dx * gap, dy * gap),
            textcoords="offset points",
            ha="left" if dx > 0.35 else "right" if dx < -0.35 else "center",
            va="bottom" if dy > 0.35 else "top" if dy < -0.35 else "center",
            fontsize=7.5,
            zorder=3,
            bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.75},
        )


def _legend(ax: Any, graph: LearningGraph) -> None:
    from matplotlib.lines import Line2D

    shown = {n.kind for n in graph.nodes}
    handles = [
        Line2D([], [], marker="o", linestyle="", color=_COLOURS[k], markersize=8, label=k)
        for k in NODE_KINDS
        if k in shown
    ]
    handles += [
        Line2D([], [], color=_EDGE_STYLES[k][0], linestyle=_EDGE_STYLES[k][1], label=k)
        for k in sorted({e.kind for e in graph.edges}, key=EDGE_KINDS.index)
    ]
    ax.legend(handles=handles, loc="lower left", fontsize=8, frameon=False, ncols=2)


def _title(graph: LearningGraph) -> str:
    said = f"learning graph of {graph.namespace}: {len(graph.nodes)} nodes, {len(graph.edges)}"
    said += " edges (size = activity)"
    if graph.left_out:
        said += f"; {graph.left_out} less active left out"
    return said


def render(graph: LearningGraph, fmt: str) -> bytes:
    """The picture's bytes: an SVG (its labels as text) or a PNG; an empty graph is a
    picture saying so."""
    from matplotlib import rc_context
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=FIGURE_INCHES)
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0.02, 0.02, 0.96, 0.92))
    ax.set_axis_off()
    fig.suptitle(_title(graph), fontsize=11)
    if graph.nodes:
        pos, away = _layout(graph)
        _draw_edges(ax, graph, pos)
        _draw_nodes(ax, graph, pos, away)
        _legend(ax, graph)
        ax.set_xlim(-VIEW[0], VIEW[0])  # room for the ring's labels, outward of it
        ax.set_ylim(-VIEW[1], VIEW[1])
    else:
        said = f"namespace {graph.namespace} is empty: no topics, entries, skills or patterns yet"
        ax.text(0.5, 0.5, said, ha="center", va="center", fontsize=12, transform=ax.transAxes)
    buf = io.BytesIO()
    metadata = {"Date": None} if fmt == "svg" else {"Software": None}
    # a fixed salt for the SVG's ids and its labels as text; restored on exit, so the
    # host's own settings are never changed
    with rc_context({"svg.hashsalt": "reverie-learning-graph", "svg.fonttype": "none"}):
        fig.savefig(buf, format=fmt, dpi=PNG_DPI, metadata=metadata)
    return buf.getvalue()


def draw(graph: LearningGraph, path: object, fmt: object = "svg") -> Path:
    """Draw ``graph`` into ``path`` (written whole: a temp file renamed over it). A bad
    format, an unwritable path or a missing extra: a clear error, nothing written."""
    fmt = check_format(fmt)
    target = check_path(path)
    if missing_requirement() is not None:
        raise ConfigError(INSTALL_HINT)
    data = render(graph, fmt)
    try:
        fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    except OSError as exc:
        where = quoted(str(target.parent), 120)
        raise InputError(f"cannot write in {where}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(temp, 0o644)  # mkstemp's 0600 is for secrets; a picture is shared
        os.replace(temp, target)
    except OSError as exc:
        Path(temp).unlink(missing_ok=True)
        raise InputError(f"cannot write {quoted(str(target), 120)}: {exc.strerror}") from None
    return target
