"""The actor vocabulary (pykka's): ``on_start``, ``on_receive``, ``on_failure``, ``on_stop``."""

from __future__ import annotations

from typing import Any, ClassVar

from reverie.bus.messages import Envelope, Message


class Actor:
    """One unit of background or serialised work, bound to one namespace.

    The bus creates an actor when a message for it arrives and stops it when its mailbox is
    empty. ``on_receive`` runs once per message, inside its own span and time budget.
    """

    name: ClassVar[str] = "actor"
    handles: ClassVar[tuple[type[Message], ...]] = ()

    def __init__(self, namespace: str) -> None:
        self.namespace = namespace

    @property
    def enabled(self) -> bool:
        """The kill switch; a disabled actor's messages are dropped (asks get an error)."""
        return True

    @property
    def budget_s(self) -> float:
        """The time budget of one unit of work."""
        return 60.0

    async def on_start(self) -> None:
        """Called before the first message of a run."""

    async def on_receive(self, envelope: Envelope) -> Any:
        """Handle one message; the return value answers an ask."""
        raise NotImplementedError

    async def on_failure(self, envelope: Envelope, error: BaseException) -> None:
        """Called when ``on_receive`` raised; the error is already logged and on the span."""

    async def on_stop(self) -> None:
        """Called when the mailbox is empty and the actor goes away."""
