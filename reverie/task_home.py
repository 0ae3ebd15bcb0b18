"""Where the runtime's task group lives, under any anyio backend.

The actors run in one anyio task group that the runtime owns from ``reverie.open`` to the
end of its ``async with``. Where that group's task is started depends on the host:

- a host that passes its own ``task_group`` gets the actors inside it, under its own
  cancellation scope;
- under trio (and any backend but asyncio) the group is entered by ``async with`` itself,
  in the host's task, so the host's cancel scopes reach the actors. Such a runtime must
  be entered and left in one task, as every trio nursery is;
- under asyncio the group lives in a task of its own, created in the host's context: hosts
  there routinely enter and leave a resource from different tasks (pytest-asyncio sets a
  fixture up and tears it down in two tasks), which a task group entered in the host's
  task would not survive. The ``async with`` still bounds the actors' lives: leaving it,
  cancelled or not, drains them and waits for them to end.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from anyio.abc import TaskGroup

Owner = Callable[[anyio.Event], Awaitable[None]]
"""The runtime's own coroutine: opens its task group, sets the event once it is ready and
returns when the runtime stops."""


class TaskHome:
    """Starts the runtime's owner coroutine where the host's backend wants it, and waits
    for it to end."""

    def __init__(self, host_group: TaskGroup | None = None) -> None:
        self._host_group = host_group
        self._outer: TaskGroup | None = None
        self._task: Any = None  # an asyncio.Task when the owner has a task of its own
        self._ended: anyio.Event | None = None  # made in start(), inside the host's loop

    @property
    def mode(self) -> str:
        """``host`` (the host's group), ``entered`` (entered in the host's task) or
        ``task`` (a task of its own, asyncio)."""
        if self._host_group is not None:
            return "host"
        return "task" if self._task is not None else "entered"

    async def start(self, owner: Owner) -> None:
        """Start ``owner`` and return once it said it is ready."""
        ready, self._ended = anyio.Event(), anyio.Event()
        if self._host_group is not None:
            self._host_group.start_soon(self._run, owner, ready)
        elif (loop := _asyncio_loop()) is not None:
            self._task = loop.create_task(self._run(owner, ready))
        else:
            self._outer = anyio.create_task_group()
            await self._outer.__aenter__()
            self._outer.start_soon(self._run, owner, ready)
        await ready.wait()

    async def _run(self, owner: Owner, ready: anyio.Event) -> None:
        try:
            await owner(ready)
        finally:
            ready.set()  # an owner that failed before it was ready does not hang start()
            assert self._ended is not None
            self._ended.set()

    async def join(self) -> None:
        """Wait for the owner to end (the caller has told it to stop); at once when it
        never started."""
        if self._ended is None:
            return
        await self._ended.wait()
        if self._task is not None:
            await self._task  # its outcome, so nothing it raised goes unseen

    async def leave(self) -> None:
        """Leave the group entered in the host's task (after :meth:`join`), outside any
        cancel scope opened since it was entered, as trio requires."""
        if self._outer is not None:
            outer, self._outer = self._outer, None
            await outer.__aexit__(None, None, None)


def _asyncio_loop() -> asyncio.AbstractEventLoop | None:
    """The running asyncio loop; None under trio (or any other backend)."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
