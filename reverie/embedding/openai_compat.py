"""An OpenAI-compatible ``/v1/embeddings`` client (Ollama, vLLM, llama.cpp's server, hosted
APIs) behind the embedding seam: timeouts, retries with backoff, checked vectors.

Every failure ends as :class:`~reverie.model.seam.Deferred` — a timeout, a refused or
failing server, an answer that is not JSON, holds the wrong number of vectors or the wrong
dimension — so search never sees an exception from here and never stores a bad vector.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx

from reverie._http import JsonClient
from reverie.embedding.seam import Vector, checked
from reverie.model.seam import Deferred
from reverie.telemetry.logs import get_logger

log = get_logger("reverie.embedding")


def embeddings_url(base_url: str) -> str:
    """``{base_url}/v1/embeddings``; a ``base_url`` that already ends in ``/v1`` (as the
    model seam's does) is not given a second one."""
    base = base_url.rstrip("/")
    return f"{base}/embeddings" if base.endswith("/v1") else f"{base}/v1/embeddings"


class OpenAIEmbedder(JsonClient):
    """``POST {base_url}/v1/embeddings``; ``dim`` 0 takes the first answer's dimension and
    holds every later answer to it."""

    who = "the embedder"

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str = "",
        *,
        dim: int = 0,
        timeout_s: float = 30.0,
        retries: int = 2,
        backoff_s: float = 0.5,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if dim < 0:
            raise ValueError("dim must not be negative")
        super().__init__(
            base_url,
            api_key,
            timeout_s=timeout_s,
            retries=retries,
            backoff_s=backoff_s,
            transport=transport,
        )
        self.name = model
        self.dim = dim
        self._url = embeddings_url(base_url)

    async def embed(self, texts: Sequence[str]) -> list[Vector] | Deferred:
        """One vector per text, unit length, in order; or Deferred saying why not."""
        if not texts:
            return []
        body = {"model": self.name, "input": list(texts)}
        reply = await self.post(
            self._url, body, lambda payload: checked(_vectors(payload), len(texts), self.dim)
        )
        if reply.value is None:
            log.warning(
                "embedding_deferred", embedder=self.name, texts=len(texts), reason=reply.reason
            )
            return Deferred(reason=reply.reason)
        self.dim = self.dim or len(reply.value[0])
        return reply.value


def _vectors(payload: Any) -> list[Any]:
    """The ``embedding`` lists of an OpenAI answer, put back in ``index`` order."""
    if not isinstance(payload, dict) or not isinstance(payload.get("data"), list):
        raise ValueError("the answer has no 'data' list")
    items = payload["data"]
    if not all(isinstance(item, dict) and "embedding" in item for item in items):
        raise ValueError("an item of 'data' has no 'embedding'")
    indexed = [item.get("index", i) for i, item in enumerate(items)]
    if not all(isinstance(n, int) for n in indexed) or sorted(indexed) != list(range(len(items))):
        raise ValueError("the items' 'index' values are not 0..n-1")
    ordered = sorted(zip(indexed, items, strict=True), key=lambda pair: pair[0])
    return [item["embedding"] for _, item in ordered]
