"""What a stage asks a model, and what it gets back: a validated answer, or "deferred".

A model call never raises into a stage and never invents data: a failed, slow or malformed
answer is a :class:`Deferred`, which the stage retries in a later round.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

_TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
    "array": list,
}


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a structured answer."""

    name: str
    type: str = "string"
    enum: tuple[str, ...] | None = None
    max_length: int | None = None
    description: str = ""
    items: tuple[Field, ...] = ()
    """For an ``array`` field: the fields of each item (a flat object)."""
    max_items: int | None = None


@dataclass(frozen=True, slots=True)
class Schema:
    """A flat JSON object schema whose first field is the model's reasoning.

    Small models judge better when they reason before they decide (Graphiti's gate went
    from 7/15 to right once the reasoning came first), so the reasoning field always leads."""

    fields: tuple[Field, ...]

    def __post_init__(self) -> None:
        if not self.fields or self.fields[0].name != "reasoning":
            raise ValueError("a Schema's first field must be 'reasoning'")
        _check_fields(self.fields)

    def json_schema(self) -> dict[str, Any]:
        return _object_schema(self.fields)

    def validate(self, data: object) -> dict[str, Any]:
        """The answer if it fits the schema; ValueError naming the first problem if not."""
        return _validate_object(self.fields, data, "the answer")


def _check_fields(fields: tuple[Field, ...]) -> None:
    for item in fields:
        if item.type not in _TYPES:
            raise ValueError(f"unknown field type {item.type!r}")
        if (item.type == "array") != bool(item.items):
            raise ValueError(f"{item.name!r}: items are given for array fields, and only there")
        _check_fields(item.items)


def _object_schema(fields: tuple[Field, ...]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for item in fields:
        prop: dict[str, Any] = {"type": item.type}
        if item.enum:
            prop["enum"] = list(item.enum)
        if item.max_length:
            prop["maxLength"] = item.max_length
        if item.description:
            prop["description"] = item.description
        if item.items:
            prop["items"] = _object_schema(item.items)
            if item.max_items is not None:
                prop["maxItems"] = item.max_items
        properties[item.name] = prop
    return {
        "type": "object",
        "properties": properties,
        "required": [item.name for item in fields],
        "additionalProperties": False,
    }


def _validate_object(fields: tuple[Field, ...], data: object, where: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ValueError(f"{where} is not a JSON object")
    clean: dict[str, Any] = {}
    for item in fields:
        if item.name not in data:
            raise ValueError(f"{where} lacks {item.name!r}")
        value = data[item.name]
        expected = _TYPES[item.type]
        if isinstance(value, bool) and item.type in {"integer", "number"}:
            raise ValueError(f"{item.name!r} must be {item.type}")
        if not isinstance(value, expected):
            raise ValueError(f"{item.name!r} must be {item.type}")
        if item.enum is not None and value not in item.enum:
            raise ValueError(f"{item.name!r} must be one of {list(item.enum)}")
        if item.max_length is not None and isinstance(value, str):
            if len(value) > item.max_length:
                raise ValueError(f"{item.name!r} is longer than {item.max_length}")
        if item.type == "array":
            if item.max_items is not None and len(value) > item.max_items:
                raise ValueError(f"{item.name!r} has more than {item.max_items} items")
            checked = []
            for i, element in enumerate(value):
                try:
                    checked.append(_validate_object(item.items, element, "the item"))
                except ValueError as exc:
                    raise ValueError(f"{item.name}[{i}]: {exc}") from None
            value = checked
        clean[item.name] = value
    return clean


@dataclass(frozen=True, slots=True)
class Prompt:
    """One bounded question from one stage."""

    stage: str
    system: str
    user: str
    schema: Schema
    max_tokens: int = 512
    payload: dict[str, Any] = field(default_factory=dict)
    """The question as data: what the offline rules read (``user`` renders it for a
    remote model)."""


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens one call cost, counted per stage in the ledger, spans and metrics."""

    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0


@dataclass(frozen=True, slots=True)
class Answer:
    data: dict[str, Any]
    usage: Usage
    model: str


@dataclass(frozen=True, slots=True)
class Deferred:
    """No usable answer; the work stays pending and is retried next round.
    ``unavailable``: the server itself failed (unreachable, timed out, an error status), so
    the runtime's breaker rests it; ``retry_after_s``: how long it asked us to wait."""

    reason: str
    usage: Usage = field(default_factory=Usage)
    unavailable: bool = False
    retry_after_s: float | None = None


class Model(Protocol):
    """The seam: the offline rules or a remote model behind one call."""

    name: str

    async def judge(self, prompt: Prompt) -> Answer | Deferred: ...
