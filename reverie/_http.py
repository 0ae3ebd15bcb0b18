"""What the two OpenAI-compatible clients share (chat completions for the model seam,
``/v1/embeddings`` for the embedding seam): one httpx client with a bearer key and a
:class:`Timeout`, an ``async with`` life cycle, and a POST retried with backoff whose every
failure becomes a reason in words, never an exception.

A hung server costs one read timeout, not one per try: a timed-out request is not sent
again (the next would hang as long). ``Retry-After`` is honoured, in seconds or as an
HTTP date, up to a cap; a longer wait ends the call and is reported to the caller."""

from __future__ import annotations

import email.utils
import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Generic, Self, TypeVar

import anyio
import httpx

from reverie.config import DEFAULT_MODEL_CONNECT_S, DEFAULT_RETRY_AFTER_MAX_S

T = TypeVar("T")

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


@dataclass(frozen=True, slots=True)
class Timeout:
    """How long one request may take: ``connect_s`` to reach the server (a dead host is
    known fast), ``read_s`` for its answer."""

    read_s: float
    connect_s: float = DEFAULT_MODEL_CONNECT_S

    def __post_init__(self) -> None:
        if self.read_s <= 0 or self.connect_s <= 0:
            raise ValueError("timeouts must be positive")

    def httpx(self) -> httpx.Timeout:
        return httpx.Timeout(self.read_s, connect=min(self.connect_s, self.read_s))


class Refused(ValueError):
    """The server answered, and asking again would get the same answer (a deterministic
    answer that does not fit): the call ends without a retry."""


@dataclass(frozen=True, slots=True)
class Reply(Generic[T]):
    """A read answer (``value``), or why there is none (``reason``); how many requests were
    sent for it; whether the server itself failed (``unavailable``: unreachable, timed out,
    an error status) and how long it asked us to wait (``retry_after_s``)."""

    value: T | None
    reason: str
    attempts: int
    unavailable: bool = False
    retry_after_s: float | None = None


def retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds a ``Retry-After`` header asks for: delay-seconds or an HTTP date (RFC 9110);
    ``None`` when absent or unreadable, never negative."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    if text.isdigit():
        return float(int(text))
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


class JsonClient:
    """An httpx client for one OpenAI-compatible server; ``who`` names it in reasons."""

    who = "the server"

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout_s: float | Timeout,
        retries: int,
        backoff_s: float,
        transport: httpx.AsyncBaseTransport | None,
        retry_after_max_s: float = DEFAULT_RETRY_AFTER_MAX_S,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must be an http(s) URL, got {base_url!r}")
        if retries < 0:
            raise ValueError("retries must not be negative")
        self.retries = retries
        self.backoff_s = backoff_s
        self.retry_after_max_s = retry_after_max_s
        self.timeout = timeout_s if isinstance(timeout_s, Timeout) else Timeout(timeout_s)
        self._client = httpx.AsyncClient(
            base_url=base_url.rstrip("/"),
            headers={"Authorization": f"Bearer {api_key}"} if api_key else {},
            timeout=self.timeout.httpx(),
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

    def _pause(self, attempt: int) -> float:
        """Exponential backoff with jitter, so clients that failed together do not retry
        together."""
        return float(self.backoff_s * 2 ** (attempt - 1) * random.uniform(0.5, 1.0))

    async def post(self, url: str, body: dict[str, Any], read: Callable[[Any], T]) -> Reply[T]:
        """POST ``body`` until ``read`` accepts a 200 answer's JSON (it raises ValueError,
        KeyError, IndexError or TypeError to refuse it, :class:`Refused` to end the call),
        at most ``retries`` times more. A timeout, a status that retrying cannot mend, or a
        ``Retry-After`` past the cap ends the call at once."""
        reason, attempt, pause = "no attempt made", 0, 0.0
        for attempt in range(1, self.retries + 2):
            if pause > 0:
                await anyio.sleep(pause)
            pause = self._pause(attempt)
            try:
                response = await self._client.post(url, json=body)
            except httpx.TimeoutException:
                return Reply(None, f"{self.who} did not answer in time", attempt, True)
            except httpx.HTTPError as exc:
                reason = f"{self.who} could not be reached: {type(exc).__name__}"
                continue
            if response.status_code != 200:
                reason = f"{self.who} answered HTTP {response.status_code}"
                wait = retry_after(response.headers.get("Retry-After"))
                if response.status_code not in RETRY_STATUS:
                    return Reply(None, reason, attempt, True)
                if wait is not None:
                    if wait > self.retry_after_max_s:
                        reason = f"{reason}, retry after {wait:.0f} s"
                        return Reply(None, reason, attempt, True, wait)
                    pause = wait
                continue
            try:
                return Reply(read(response.json()), "", attempt)
            except Refused as exc:
                return Reply(None, f"the answer was not usable: {exc}", attempt)
            except (ValueError, KeyError, IndexError, TypeError) as exc:
                reason = f"the answer was not usable: {exc}"
        unavailable = not reason.startswith("the answer")
        return Reply(None, reason, attempt, unavailable)
