"""Seed 004's Bundle Search over the M-FLOW graph (see docs/graph.md).

1. Cast wide at the cone's tip: BM25 over every layer's labels and over the edges'
   descriptions, at most :data:`PER_LAYER` candidates each (and, when the embedding seam
   has embedded the namespace, the nearest facts, entries and turns as episode hits).
2. Each hit is an entry point with a cost: 0 for the best hit, towards 1 for the weakest
   (its BM25 score against the best's). A hit on an edge's description enters at the
   edge's lower end. A direct hit on a broad episode (a topic summary, a long turn) costs
   :data:`BROAD_PENALTY` more.
3. Cost flows down the cone, layer by layer (edges only go down, so one pass in layer
   order is exact): a step costs the edge's cost times ``1 + log2(fan-out)`` of its upper
   end — a node that leads to everything says little about any one.
4. An episode's cost is its cheapest path (one strong chain suffices; more weak paths add
   nothing and unrelated ones take nothing away); it comes back with that path.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from reverie.embedding.similar import top
from reverie.frozen import quick_init
from reverie.stores import vectors as vector_store
from reverie.stores.db import fetchall
from reverie.stores.search import match_expression

PER_LAYER: Final = 100
"""Candidates taken from each layer (and from the edges) at the tip."""
BROAD_PENALTY: Final = 0.5
"""Added to the cost of a direct hit on a broad episode."""
FANOUT: Final = 1.0
"""How much a step's cost grows with ``log2`` of its upper end's out-degree."""
_PATH_LABEL: Final = 80  # chars of a label or description shown in a path
_VECTOR_KINDS: Final = {1: "fact", 2: "entry", 3: "episode"}  # search rowid % 4 → kind


@quick_init
@dataclass(frozen=True, slots=True)
class BundleHit:
    """One episode bundle search returned: ``id`` as default search gives it (a fact or
    entry id, ``ep-N``, …), its ``cost`` (lower is better) and the ``path`` that justified
    it, tip first (node labels and edge descriptions)."""

    id: str
    kind: str
    text: str
    cost: float
    path: tuple[str, ...]


@dataclass(slots=True)
class _Reach:
    cost: float
    path: tuple[str, ...]
    direct: float = math.inf


_HITS = """
    SELECT rowid, bm25(graph_text) AS rank FROM graph_text
    WHERE graph_text MATCH ? AND namespace = ? AND layer = ? ORDER BY rank LIMIT ?
"""


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _PATH_LABEL else text[: _PATH_LABEL - 1] + "…"


def _lexical(conn: sqlite3.Connection, namespace: str, expression: str) -> list[tuple[int, float]]:
    """(graph_text rowid, score) of each layer's best hits and the edges' best."""
    found: list[tuple[int, float]] = []
    for layer in (4, 3, 2, 1, 0):
        rows = fetchall(conn, _HITS, (expression, namespace, layer, PER_LAYER))
        found += [(int(r[0]), -float(r[1])) for r in rows]
    return found


def _nodes(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, sqlite3.Row]:
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    sql = (
        f"SELECT id, layer, kind, label, ref, current, broad FROM graph_nodes WHERE id IN ({marks})"
    )
    return {int(r["id"]): r for r in fetchall(conn, sql, list(ids))}


def _edges(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, sqlite3.Row]:
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    sql = f"SELECT id, src, dst, description, cost FROM graph_edges WHERE id IN ({marks})"
    return {int(r["id"]): r for r in fetchall(conn, sql, list(ids))}


def _vector_hits(
    conn: sqlite3.Connection, namespace: str, query_vector: Sequence[float], embedder: str
) -> list[tuple[int, float]]:
    """Episode nodes of the facts, entries and turns nearest the query, as (node id,
    similarity)."""
    near = top(query_vector, vector_store.live(conn, namespace, embedder), PER_LAYER)
    refs: dict[str, float] = {}
    for rid, similarity in near:
        kind = _VECTOR_KINDS.get(rid % 4)
        if kind == "episode":
            refs[f"ep-{rid // 4}"] = similarity
        elif kind is not None:
            table = "facts" if kind == "fact" else "entries"
            row = conn.execute(f"SELECT id FROM {table} WHERE rowid = ?", (rid // 4,)).fetchone()
            if row is not None:
                refs[str(row[0])] = similarity
    if not refs:
        return []
    marks = ",".join("?" * len(refs))
    rows = fetchall(
        conn,
        f"SELECT id, ref FROM graph_nodes WHERE namespace = ? AND layer = 1 AND ref IN ({marks})",
        (namespace, *refs),
    )
    return [(int(r["id"]), refs[str(r["ref"])]) for r in rows]


def _entries(
    conn: sqlite3.Connection,
    namespace: str,
    query: str,
    query_vector: Sequence[float] | None,
    embedder: str | None,
) -> tuple[dict[int, _Reach], dict[int, sqlite3.Row]]:
    """The entry points: each hit node's cost and one-step path, and the nodes read."""
    expression = match_expression(query)
    scored = _lexical(conn, namespace, expression) if expression else []
    best = max((s for _, s in scored), default=0.0)
    node_cost = {rid // 2: 1.0 - s / best for rid, s in scored if rid % 2 == 0 and best > 0}
    edge_cost = {rid // 2: 1.0 - s / best for rid, s in scored if rid % 2 == 1 and best > 0}
    if query_vector is not None and embedder is not None:
        for node_id, similarity in _vector_hits(conn, namespace, query_vector, embedder):
            node_cost[node_id] = min(node_cost.get(node_id, 1.0), max(0.0, 1.0 - similarity))
    edges = _edges(conn, list(edge_cost))
    nodes = _nodes(conn, list({*node_cost, *(int(e["dst"]) for e in edges.values())}))
    reach: dict[int, _Reach] = {}
    for node_id, cost in node_cost.items():
        node = nodes.get(node_id)
        if node is None:
            continue
        if node["layer"] == 1 and node["broad"]:
            cost += BROAD_PENALTY
        reach[node_id] = _Reach(cost, (_short(node["label"]),), direct=cost)
    for edge_id, cost in edge_cost.items():
        edge = edges[edge_id]
        dst, total = int(edge["dst"]), cost + float(edge["cost"])
        if dst in nodes and (dst not in reach or total < reach[dst].cost):
            path = (_short(edge["description"]), _short(nodes[dst]["label"]))
            reach[dst] = _Reach(total, path, reach[dst].direct if dst in reach else math.inf)
    return reach, nodes


def _flow(
    conn: sqlite3.Connection, reach: dict[int, _Reach], nodes: dict[int, sqlite3.Row]
) -> None:
    """Cost down the cone, one layer at a time (every edge goes down a layer or more)."""
    for layer in (4, 3, 2):
        sources = [n for n in reach if nodes[n]["layer"] == layer]
        if not sources:
            continue
        marks = ",".join("?" * len(sources))
        rows = fetchall(
            conn,
            f"SELECT src, dst, description, cost FROM graph_edges WHERE src IN ({marks})",
            sources,
        )
        fanout: dict[int, int] = {}
        for r in rows:
            fanout[int(r["src"])] = fanout.get(int(r["src"]), 0) + 1
        unseen = [int(r["dst"]) for r in rows if int(r["dst"]) not in nodes]
        nodes.update(_nodes(conn, list(dict.fromkeys(unseen))))
        for r in rows:
            src, dst = int(r["src"]), int(r["dst"])
            step = float(r["cost"]) * (1.0 + FANOUT * math.log2(fanout[src]))
            total = reach[src].cost + step
            if dst in reach and reach[dst].cost <= total:
                continue
            path = (*reach[src].path, _short(r["description"]), _short(nodes[dst]["label"]))
            direct = reach[dst].direct if dst in reach else math.inf
            reach[dst] = _Reach(total, path, direct)


def bundle(
    conn: sqlite3.Connection,
    namespace: str,
    query: str,
    k: int,
    *,
    now: datetime | None = None,
    query_vector: Sequence[float] | None = None,
    embedder: str | None = None,
) -> list[BundleHit]:
    """The ``k`` current episodes of least path cost for ``query``, cheapest first (ties:
    the better direct hit, then the newer node). ``now`` is accepted for the interface's
    sake: the graph's costs do not age."""
    del now
    if k <= 0:
        return []
    reach, nodes = _entries(conn, namespace, query, query_vector, embedder)
    _flow(conn, reach, nodes)
    found = [
        (r.cost, r.direct, -node_id, node_id)
        for node_id, r in reach.items()
        if nodes[node_id]["layer"] == 1 and nodes[node_id]["current"]
    ]
    found.sort()
    hits = []
    for cost, _, _, node_id in found[:k]:
        node = nodes[node_id]
        hits.append(
            BundleHit(str(node["ref"]), str(node["kind"]), node["label"], cost, reach[node_id].path)
        )
    return hits
