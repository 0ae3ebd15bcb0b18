"""Seed 004's M-FLOW graph: the interface the dream cycle and the facade read (counts,
health, build, bundle search), and its projection to ``<ns>/graph/*.json``.

The graph is an inverted cone of four layers — L4 entities at the tip, L3 facet points,
L2 facets, L1 episodes (the knowledge units returned) at the base — stored in SQLite
(migration 10), built by :mod:`reverie.stores.graph_build`, searched by
:mod:`reverie.stores.bundle`. See docs/graph.md.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from reverie.clock import iso
from reverie.frozen import quick_init
from reverie.stores import graph_build, learning
from reverie.stores.bundle import PER_LAYER, BundleHit, bundle
from reverie.stores.db import fetchall
from reverie.stores.projection import Projector, atomic_write
from reverie.stores.records import SearchHit

__all__ = [
    "BundleHit",
    "GraphHealth",
    "build",
    "bundle",
    "counts",
    "due",
    "health",
    "rebuild",
    "search_hits",
    "write_files",
]

LAYER_NAMES: Final = {4: "entities", 3: "facetpoints", 2: "facets", 1: "episodes"}


def counts(conn: sqlite3.Connection, namespace: str) -> dict[str, int]:
    """Nodes of each layer and edges: keys ``entities``, ``facets``, ``facetpoints``,
    ``episodes``, ``edges`` (an episode counts while it is current)."""
    found = dict.fromkeys(("entities", "facets", "facetpoints", "episodes", "edges"), 0)
    rows = fetchall(
        conn,
        "SELECT layer, count(*) FROM graph_nodes WHERE namespace = ?"
        " AND (layer != 1 OR current = 1) GROUP BY layer",
        (namespace,),
    )
    for layer, n in rows:
        found[LAYER_NAMES[int(layer)]] = int(n)
    row = conn.execute("SELECT count(*) FROM graph_edges WHERE namespace = ?", (namespace,))
    found["edges"] = int(row.fetchone()[0])
    return found


@quick_init
@dataclass(frozen=True, slots=True)
class GraphHealth:
    """What the health score reads off the graph: current ``episodes``, those with at least
    one semantic edge (``linked``), every node, the connected components of the whole
    graph (edges undirected), and the episodes ``reachable`` down the cone from an entity."""

    episodes: int
    linked: int
    nodes: int
    components: int
    reachable: int


def _components(nodes: list[int], edges: list[tuple[int, int]]) -> int:
    parent = {n: n for n in nodes}

    def root(n: int) -> int:
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    for a, b in edges:
        if a in parent and b in parent:
            parent[root(a)] = root(b)
    return len({root(n) for n in nodes})


def _reachable(layers: dict[int, int], edges: list[tuple[int, int]]) -> set[int]:
    """Nodes reached from the entities, going down edges only."""
    down: dict[int, list[int]] = {}
    for a, b in edges:
        if a in layers and b in layers and layers[a] > layers[b]:
            down.setdefault(a, []).append(b)
    seen = {n for n, layer in layers.items() if layer == 4}
    stack = list(seen)
    while stack:
        for nxt in down.get(stack.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


def health(conn: sqlite3.Connection, namespace: str) -> GraphHealth:
    """The graph's share of the health score (seed 004: coherence, connectivity,
    reachability); not-current episodes are left out of every figure."""
    rows = fetchall(
        conn,
        "SELECT id, layer FROM graph_nodes WHERE namespace = ? AND (layer != 1 OR current = 1)",
        (namespace,),
    )
    layers = {int(r[0]): int(r[1]) for r in rows}
    edges = [
        (int(a), int(b))
        for a, b in fetchall(
            conn, "SELECT src, dst FROM graph_edges WHERE namespace = ?", (namespace,)
        )
    ]
    episodes = {n for n, layer in layers.items() if layer == 1}
    linked = {b for a, b in edges if b in episodes and a in layers}
    reached = _reachable(layers, edges) & episodes
    return GraphHealth(
        episodes=len(episodes),
        linked=len(linked),
        nodes=len(layers),
        components=_components(list(layers), edges),
        reachable=len(reached),
    )


def build(conn: sqlite3.Connection, namespace: str, now: datetime) -> int:
    """Bring the graph up to date with the stores, incrementally; the nodes and edges
    added or changed (0 when nothing was new: running it again changes nothing)."""
    return graph_build.build(conn, namespace, iso(now))


def due(conn: sqlite3.Connection, namespace: str) -> bool:
    """Whether the stores changed since the graph's last build."""
    return graph_build.due(conn, namespace)


def rebuild(conn: sqlite3.Connection, namespace: str, now: datetime) -> int:
    """The namespace's graph made again from scratch (``reverie reindex``)."""
    graph_build.reset(conn, namespace)
    return build(conn, namespace, now)


_WHERE: Final = {
    "fact": "SELECT id, topic, NULL, NULL, NULL, created_at FROM facts WHERE id IN ({})",
    "entry": "SELECT id, NULL, target, NULL, NULL, updated_at FROM entries WHERE id IN ({})",
    "episode": "SELECT 'ep-' || id, NULL, NULL, session_id, turn, ts FROM episodes"
    " WHERE id IN ({})",
}


def search_hits(
    conn: sqlite3.Connection,
    namespace: str,
    query: str,
    k: int,
    query_vector: Sequence[float] | None = None,
    embedder: str | None = None,
    include_cold: bool = True,
) -> list[SearchHit]:
    """Bundle search's hits as the facade returns every search's: a score that grows as
    the cost falls (``1 / (1 + cost)``), the path, and the fields default search gives
    each kind (a turn's session and place, a fact's topic, an entry's target)."""
    pool = k if include_cold else k + PER_LAYER
    hits = bundle(conn, namespace, query, pool, query_vector=query_vector, embedder=embedder)
    if not include_cold:
        cold = learning.cold(conn, namespace)
        hits = [h for h in hits if h.id not in cold][:k]
    details: dict[str, tuple[Any, ...]] = {}
    for kind, sql in _WHERE.items():
        ids: list[Any] = [h.id for h in hits if h.kind == kind]
        if kind == "episode":
            ids = [int(i.removeprefix("ep-")) for i in ids]
        if ids:
            for row in conn.execute(sql.format(",".join("?" * len(ids))), ids):
                details[str(row[0])] = tuple(row)[1:]
    out = []
    for h in hits:
        topic, target, session, turn, written = details.get(h.id, (None,) * 5)
        out.append(
            SearchHit(h.kind, h.id, h.text, 1.0 / (1.0 + h.cost), topic=topic, target=target,
                      session_id=session, turn=turn, written_at=written, path=h.path)
        )  # fmt: skip
    return out


def render(conn: sqlite3.Connection, namespace: str) -> dict[str, str]:
    """The six files of ``<ns>/graph/``, by name, as the database holds the graph now."""
    rows = fetchall(
        conn,
        "SELECT id, layer, kind, key, label, ref, current, broad, created_at, updated_at"
        " FROM graph_nodes WHERE namespace = ? ORDER BY layer DESC, id",
        (namespace,),
    )
    files: dict[str, list[dict[str, Any]]] = {name: [] for name in LAYER_NAMES.values()}
    for r in rows:
        node = {k: r[k] for k in r.keys()}  # noqa: SIM118 (a Row is not a mapping)
        node["current"], node["broad"] = bool(node["current"]), bool(node["broad"])
        files[LAYER_NAMES[int(r["layer"])]].append(node)
    edges = [
        {k: r[k] for k in r.keys()}  # noqa: SIM118
        for r in fetchall(
            conn,
            "SELECT id, src, dst, description, cost, created_at FROM graph_edges"
            " WHERE namespace = ? ORDER BY id",
            (namespace,),
        )
    ]
    index = {
        "namespace": namespace,
        "counts": counts(conn, namespace),
        "watermarks": graph_build.marks(conn, namespace),
    }
    out = {f"{name}.json": _dump(nodes) for name, nodes in files.items()}
    out["edges.json"] = _dump(edges)
    out["index.json"] = _dump(index)
    return out


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1) + "\n"


def write_files(projector: Projector, conn: sqlite3.Connection, namespace: str) -> list[str]:
    """``<home>/<ns>/graph/{entities,facets,facetpoints,episodes,edges,index}.json`` in line
    with the database (each rewritten atomically when its text changed); the names written."""
    folder = projector.namespace_dir(namespace) / "graph"
    files = render(conn, namespace)

    def run() -> list[str]:
        written = []
        for name, text in files.items():
            path = folder / name
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                atomic_write(path, text)
                written.append(f"graph/{name}")
        return written

    return projector.locked(run)
