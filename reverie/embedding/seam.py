"""What search asks an embedder, and what it gets back: one vector per text, or "deferred".

An embedder never raises into the host: a failed, slow or malformed answer is a
:class:`~reverie.model.seam.Deferred` (the model seam's own failure value), and the rows it
would have embedded stay pending for a later pass — search falls back to BM25 meanwhile.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

from reverie.model.seam import Deferred

Vector = list[float]


class Embedder(Protocol):
    """The seam: the packaged offline model or a remote ``/v1/embeddings`` server.

    ``name`` is stored beside every vector, so changing the model re-embeds; ``dim`` is the
    vector length (0 while a remote embedder has not yet answered once)."""

    name: str
    dim: int

    async def embed(self, texts: Sequence[str]) -> list[Vector] | Deferred: ...


def unit(vector: Sequence[float]) -> Vector:
    """``vector`` scaled to length 1 (a zero vector stays zero), so cosine is a dot product."""
    norm = math.sqrt(sum(x * x for x in vector))
    return [float(x) / norm for x in vector] if norm > 0 else [0.0 for _ in vector]


def checked(vectors: object, count: int, dim: int) -> list[Vector]:
    """Unit vectors if ``vectors`` holds ``count`` finite vectors of length ``dim`` (any
    length when ``dim`` is 0, but all equal); ValueError naming the first problem if not."""
    if not isinstance(vectors, list) or len(vectors) != count:
        raise ValueError(f"expected {count} vectors")
    want = dim
    out: list[Vector] = []
    for i, vector in enumerate(vectors):
        if not isinstance(vector, list) or not vector:
            raise ValueError(f"vector {i} is not a list of numbers")
        if want and len(vector) != want:
            raise ValueError(f"vector {i} has {len(vector)} dimensions, expected {want}")
        want = len(vector)
        if not all(isinstance(x, int | float) and not isinstance(x, bool) for x in vector):
            raise ValueError(f"vector {i} holds a value that is not a number")
        if not all(math.isfinite(x) for x in vector):
            raise ValueError(f"vector {i} holds a value that is not finite")
        out.append(unit(vector))
    return out
