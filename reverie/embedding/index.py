"""Keeping a namespace's vectors current, lazily: rows are embedded when a search needs
them (or when a host calls :func:`embed_pending`), in bounded batches, never on the write
path — a write costs the same with the seam on or off.

An embedder failure leaves the rows pending and search falls back to BM25 for them.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from datetime import UTC, datetime

import anyio

from reverie.clock import iso
from reverie.config import Config
from reverie.embedding.seam import Embedder, Vector
from reverie.embedding.similar import Neighbour, nearest
from reverie.errors import StoreError
from reverie.model.seam import Deferred
from reverie.stores import vectors as vector_store
from reverie.stores.db import Database, fetchone
from reverie.telemetry.logs import get_logger

log = get_logger("reverie.embedding")

_TOKEN = """
    SELECT (SELECT max(seq) FROM ledger WHERE namespace = ?),
           (SELECT max(id) FROM episodes WHERE namespace = ?)
"""


def _token(conn: sqlite3.Connection, namespace: str) -> tuple[object, ...]:
    """Changes whenever a namespace's searchable rows may have: every fact or entry write
    leaves a ledger row, every turn an episode."""
    row = fetchone(conn, _TOKEN, (namespace, namespace))
    return tuple(row) if row is not None else ()


@dataclass
class VectorIndex:
    """One embedder's vectors in one home; remembers which namespaces were complete at
    which change token, so a search of an unchanged namespace does not look for work.

    A search waits for the embedder at most ``budget_s``; after a failure the embedder is
    left alone for ``breaker_s``, so a down server costs one timeout, not one per search."""

    db: Database
    embedder: Embedder
    batch: int = 64
    budget_s: float = 5.0
    breaker_s: float = 30.0
    complete: dict[str, tuple[object, ...]] = field(default_factory=dict)
    paused_until: float = float("-inf")

    async def embed_pending(self, namespace: str, limit: int, now: str) -> int | Deferred:
        """Embed up to ``limit`` of the namespace's rows that have no vector yet; how many
        were stored, or Deferred when the embedder failed (those rows stay pending)."""
        token = await self.db.read(lambda conn: _token(conn, namespace))
        if self.complete.get(namespace) == token:
            return 0
        rows = await self.db.read(
            lambda conn: vector_store.missing(conn, namespace, self.embedder.name, limit)
        )
        stored = 0
        for start in range(0, len(rows), max(1, self.batch)):
            chunk = rows[start : start + max(1, self.batch)]
            vectors = await self.embedder.embed([text for _, text in chunk])
            if isinstance(vectors, Deferred):
                return vectors
            pairs = [(rid, v) for (rid, _), v in zip(chunk, vectors, strict=True)]
            stored += await self._save(namespace, pairs, now)
        if len(rows) < limit:
            self.complete[namespace] = token
        return stored

    async def _save(self, namespace: str, pairs: list[tuple[int, Vector]], now: str) -> int:
        name = self.embedder.name
        return await self.db.write(
            lambda conn: vector_store.save(conn, namespace, name, pairs, now)
        )

    async def query_vector(self, query: str) -> Vector | None:
        """The query's vector, or None (BM25 alone) when the embedder cannot give one."""
        vectors = await self.embedder.embed([query])
        return None if isinstance(vectors, Deferred) else vectors[0]

    async def nearest(
        self,
        namespace: str,
        text: str,
        *,
        kind: str | None = None,
        k: int = 5,
        min_similarity: float = 0.0,
        limit: int = 512,
        now: str = "",
    ) -> list[Neighbour]:
        """The live rows of ``namespace`` nearest ``text`` (of one ``kind`` if given), best
        first — for paraphrase, same-subject and routing decisions. Embeds up to ``limit``
        pending rows first. An empty list when the embedder cannot answer: callers fall
        back to their rules."""
        stamp = now or iso(datetime.now(UTC))
        vector = await self.for_search(namespace, text, limit, stamp)
        if vector is None:
            return []
        name = self.embedder.name
        return await self.db.read(
            lambda conn: nearest(
                conn, namespace, vector, name, kind=kind, k=k, min_similarity=min_similarity
            )
        )

    async def for_search(self, namespace: str, query: str, limit: int, now: str) -> Vector | None:
        """Before a search: embed up to ``limit`` pending rows, then the query. None means
        "BM25 alone" — the embedder failed or was slow, or the store was busy; never an
        exception."""
        if anyio.current_time() < self.paused_until:
            return None
        vector: Vector | None = None
        with anyio.move_on_after(self.budget_s):
            try:
                pending = await self.embed_pending(namespace, limit, now)
            except StoreError as exc:
                log.warning("embedding_not_stored", namespace=namespace, error=str(exc))
                pending = Deferred(reason=str(exc))
            if isinstance(pending, Deferred):
                self.paused_until = anyio.current_time() + self.breaker_s
                return None
            vector = await self.query_vector(query)
            if vector is None:
                self.paused_until = anyio.current_time() + self.breaker_s
        return vector


def configured_embedder(config: Config) -> Embedder | None:
    """The embedder the config asks for: None unless ``embedder.enabled``; the packaged
    offline model without a ``url`` (None, with a warning, if the extra is missing)."""
    settings = config.embedder
    if not settings.enabled:
        return None
    if settings.url:
        from reverie.embedding.openai_compat import OpenAIEmbedder

        return OpenAIEmbedder(
            settings.url,
            settings.name or "default",
            settings.api_key,
            dim=settings.dim,
            timeout_s=settings.timeout_s,
            retries=settings.retries,
            backoff_s=settings.backoff_s,
        )
    from reverie.embedding.wordllama_embedder import WordLlamaEmbedder, wordllama_installed

    if not wordllama_installed():
        log.warning("embedder_unavailable", reason="pip install 'reverie[embed]' for wordllama")
        return None
    return WordLlamaEmbedder(batch=settings.batch)
