"""Pure similarity helpers over unit vectors, for paraphrase NOOPs, same-subject detection
and topic routing; ``nearest`` reads stored vectors from one namespace.

Vectors from the seam are unit length, so cosine is their dot product; ``cosine`` still
divides by the norms, so it is right for any vectors.
"""

from __future__ import annotations

import heapq
import math
import operator
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from reverie.stores import vectors as vector_store


def dot(a: Sequence[float], b: Sequence[float]) -> float:
    total: float = sum(map(operator.mul, a, b))
    return total


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity in [-1, 1]; 0.0 when either vector is zero or lengths differ."""
    if len(a) != len(b) or not a:
        return 0.0
    norms = math.sqrt(dot(a, a)) * math.sqrt(dot(b, b))
    return dot(a, b) / norms if norms > 0 else 0.0


def top(
    query: Sequence[float], candidates: Iterable[tuple[int, Sequence[float]]], k: int
) -> list[tuple[int, float]]:
    """The ``k`` candidates most similar to ``query`` (unit vectors), best first, as
    ``(key, cosine)``."""
    scored = ((dot(query, vector), key) for key, vector in candidates if len(vector) == len(query))
    return [(key, score) for score, key in heapq.nlargest(k, scored)]


@dataclass(frozen=True, slots=True)
class Neighbour:
    """A stored row near a vector: its kind ("fact", "entry", "episode"), its id, its text."""

    kind: str
    id: str
    text: str
    similarity: float


def nearest(
    conn: sqlite3.Connection,
    namespace: str,
    vector: Sequence[float],
    embedder: str,
    *,
    kind: str | None = None,
    k: int = 5,
    min_similarity: float = 0.0,
) -> list[Neighbour]:
    """The ``k`` live rows of ``namespace`` (of one ``kind`` if given) nearest to ``vector``
    among those ``embedder`` has embedded, best first. Synchronous: run it inside
    ``db.read`` (``await db.read(lambda c: nearest(c, ns, v, embedder.name))``)."""
    rows = vector_store.live(conn, namespace, embedder, kind=vector_store.kind_code(kind))
    ranked = [(rid, s) for rid, s in top(vector, rows, k) if s >= min_similarity]
    described = vector_store.describe(conn, [rid for rid, _ in ranked])
    return [
        Neighbour(*described[rid], similarity=score) for rid, score in ranked if rid in described
    ]
