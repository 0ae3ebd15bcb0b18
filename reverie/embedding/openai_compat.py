"""An OpenAI-compatible ``/v1/embeddings`` client (Ollama, vLLM, llama.cpp's server, hosted
APIs) behind the embedding seam: timeouts, retries with backoff, checked vectors.

Every failure ends as :class:`~reverie.model.seam.Deferred` — a timeout, a refused or
failing server, an answer that is not JSON, holds the wrong number of vectors or the wrong
dimension — so search never sees an exception from here and never stores a bad vector.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType
from typing import Any, Self

import anyio
import httpx

from reverie.embedding.seam import Vector, checked
from reverie.model.seam import Deferred
from reverie.telemetry.logs import get_logger

log = get_logger("reverie.embedding")

_RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


def embeddings_url(base_url: str) -> str:
    """``{base_url}/v1/embeddings``; a ``base_url`` that already ends in ``/v1`` (as the
    model seam's does) is not given a second one."""
    base = base_url.rstrip("/")
    return f"{base}/embeddings" if base.endswith("/v1") else f"{base}/v1/embeddings"


class OpenAIEmbedder:
    """``POST {base_url}/v1/embeddings``; ``dim`` 0 takes the first answer's dimension and
    holds every later answer to it."""

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
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must be an http(s) URL, got {base_url!r}")
        if dim < 0 or retries < 0:
            raise ValueError("dim and retries must not be negative")
        self.name = model
        self.dim = dim
        self.retries = retries
        self.backoff_s = backoff_s
        self._url = embeddings_url(base_url)
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(
            headers=headers,
            timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 10.0)),
            transport=transport,
        )

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._client.aclose()

    async def embed(self, texts: Sequence[str]) -> list[Vector] | Deferred:
        """One vector per text, unit length, in order; or Deferred saying why not."""
        if not texts:
            return []
        body = {"model": self.name, "input": list(texts)}
        reason = "no attempt made"
        for attempt in range(self.retries + 1):
            if attempt:
                await anyio.sleep(self.backoff_s * 2 ** (attempt - 1))
            try:
                response = await self._client.post(self._url, json=body)
            except httpx.TimeoutException:
                reason = "the embedder did not answer in time"
                continue
            except httpx.HTTPError as exc:
                reason = f"the embedder could not be reached: {type(exc).__name__}"
                continue
            if response.status_code != 200:
                reason = f"the embedder answered HTTP {response.status_code}"
                if response.status_code in _RETRY_STATUS:
                    continue
                break
            try:
                vectors = checked(_vectors(response.json()), len(texts), self.dim)
            except ValueError as exc:  # json.JSONDecodeError is a ValueError
                reason = f"the answer was not usable: {exc}"
                continue
            self.dim = self.dim or len(vectors[0])
            return vectors
        log.warning("embedding_deferred", embedder=self.name, texts=len(texts), reason=reason)
        return Deferred(reason=reason)


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
