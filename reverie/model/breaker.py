"""One breaker per runtime in front of the model: a dead or hung server is asked once, not
once per namespace and stage, and a live one sees at most ``concurrency`` requests at once.

While the server's health is unknown (at start, after a rest, at a new review round) one
call goes first and the others wait for its outcome; after the server failed (unreachable,
timed out, an error status), every call is answered ``Deferred`` at once until the rest is
over or a new review round begins — except that a ``Retry-After`` the server sent is always
respected. A stage's deferred work keeps its watermark and is retried next round."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import Enum

import anyio

from reverie.config import DEFAULT_MODEL_CONCURRENCY
from reverie.model.seam import Answer, Deferred

DEFAULT_BREAKER_S = 60.0
MAX_REST_S = 3600.0
"""The longest a ``Retry-After`` may rest the model."""


@dataclass(frozen=True, slots=True)
class Resting(Deferred):
    """Deferred by the breaker, without asking the model."""


class Health(Enum):
    UNKNOWN = "unknown"
    HEALTHY = "healthy"
    RESTING = "resting"


class Breaker:
    """Shared by every stage of one runtime; state lives in memory only (a restart probes
    the server afresh, which costs one call)."""

    def __init__(
        self, rest_s: float = DEFAULT_BREAKER_S, concurrency: int = DEFAULT_MODEL_CONCURRENCY
    ) -> None:
        self.rest_s = rest_s
        self.concurrency = concurrency
        self._slots: anyio.CapacityLimiter | None = None  # made in the loop, on first use
        self.health = Health.UNKNOWN
        self._until = 0.0
        self._asked_until = 0.0  # what the server itself asked for (Retry-After)
        self._why = ""
        self._probe: anyio.Event | None = None
        self.skipped = 0
        """Calls answered Deferred without asking (tests, diagnostics)."""

    def new_round(self) -> None:
        """A review round begins: a resting server is tried again, once, unless it asked
        for a longer wait."""
        if self.health is Health.RESTING and anyio.current_time() >= self._asked_until:
            self.health = Health.UNKNOWN

    async def call(self, ask: Callable[[], Awaitable[Answer | Deferred]]) -> Answer | Deferred:
        """``ask`` the model, or answer for it while it rests."""
        while True:
            if self.health is Health.RESTING:
                if anyio.current_time() < self._until:
                    self.skipped += 1
                    return Resting(
                        f"the model failed moments ago ({self._why}); not asked again before "
                        "its rest is over or the next review round"
                    )
                self.health = Health.UNKNOWN
            if self.health is Health.HEALTHY:
                return self._record(await self._asked(ask))
            if self._probe is None:
                break
            await self._probe.wait()  # another call is finding out; its outcome decides
        self._probe = probe = anyio.Event()
        try:
            return self._record(await self._asked(ask))
        finally:
            self._probe = None
            probe.set()

    async def _asked(self, ask: Callable[[], Awaitable[Answer | Deferred]]) -> Answer | Deferred:
        """``ask`` once one of the ``concurrency`` slots is free."""
        if self._slots is None:
            self._slots = anyio.CapacityLimiter(self.concurrency)
        async with self._slots:
            return await ask()

    def _record(self, answer: Answer | Deferred) -> Answer | Deferred:
        if isinstance(answer, Deferred) and answer.unavailable:
            now = anyio.current_time()
            asked = min(answer.retry_after_s or 0.0, MAX_REST_S)
            self._asked_until = now + asked
            self._until = now + max(self.rest_s, asked)
            self._why = answer.reason
            self.health = Health.RESTING
        else:
            self.health = Health.HEALTHY
        return answer
