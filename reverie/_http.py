"""What the two OpenAI-compatible clients share (chat completions for the model seam,
``/v1/embeddings`` for the embedding seam): one httpx client with a bearer key and a
timeout, an ``async with`` life cycle, and a POST retried with backoff whose every failure
becomes a reason in words, never an exception."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Generic, Self, TypeVar

import anyio
import httpx

T = TypeVar("T")

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


@dataclass(frozen=True, slots=True)
class Reply(Generic[T]):
    """A read answer (``value``), or why there is none (``reason``); and how many requests
    were sent for it."""

    value: T | None
    reason: str
    attempts: int


class JsonClient:
    """An httpx client for one OpenAI-compatible server; ``who`` names it in reasons."""

    who = "the server"

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout_s: float,
        retries: int,
        backoff_s: float,
        transport: httpx.AsyncBaseTransport | None,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must be an http(s) URL, got {base_url!r}")
        if retries < 0:
            raise ValueError("retries must not be negative")
        self.retries = retries
        self.backoff_s = backoff_s
        self._client = httpx.AsyncClient(
            base_url=base_url.rstrip("/"),
            headers={"Authorization": f"Bearer {api_key}"} if api_key else {},
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

    async def post(self, url: str, body: dict[str, Any], read: Callable[[Any], T]) -> Reply[T]:
        """POST ``body`` until ``read`` accepts a 200 answer's JSON (it raises ValueError,
        KeyError, IndexError or TypeError to refuse it), at most ``retries`` times more,
        with exponential backoff; a status that retrying cannot mend ends at once."""
        reason, attempt = "no attempt made", 0
        for attempt in range(1, self.retries + 2):
            if attempt > 1:
                await anyio.sleep(self.backoff_s * 2 ** (attempt - 2))
            try:
                response = await self._client.post(url, json=body)
            except httpx.TimeoutException:
                reason = f"{self.who} did not answer in time"
                continue
            except httpx.HTTPError as exc:
                reason = f"{self.who} could not be reached: {type(exc).__name__}"
                continue
            if response.status_code != 200:
                reason = f"{self.who} answered HTTP {response.status_code}"
                if response.status_code in RETRY_STATUS:
                    continue
                break
            try:
                return Reply(read(response.json()), "", attempt)
            except (ValueError, KeyError, IndexError, TypeError) as exc:
                reason = f"the answer was not usable: {exc}"
        return Reply(None, reason, attempt)
