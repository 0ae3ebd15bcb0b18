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
}


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a structured answer."""

    name: str
    type: str = "string"
    enum: tuple[str, ...] | None = None
    max_length: int | None = None
    description: str = ""


@dataclass(frozen=True, slots=True)
class Schema:
    """A flat JSON object schema whose first field is the model's reasoning.

    Small models judge better when they reason before they decide (Graphiti's gate went
    from 7/15 to right once the reasoning came first), so the reasoning field always leads."""

    fields: tuple[Field, ...]

    def __post_init__(self) -> None:
        if not self.fields or self.fields[0].name != "reasoning":
            raise ValueError("a Schema's first field must be 'reasoning'")
        for item in self.fields:
            if item.type not in _TYPES:
                raise ValueError(f"unknown field type {item.type!r}")

    def json_schema(self) -> dict[str, Any]:
        properties: dict[str, Any] = {}
        for item in self.fields:
            prop: dict[str, Any] = {"type": item.type}
            if item.enum:
                prop["enum"] = list(item.enum)
            if item.max_length:
                prop["maxLength"] = item.max_length
            if item.description:
                prop["description"] = item.description
            properties[item.name] = prop
        return {
            "type": "object",
            "properties": properties,
            "required": [item.name for item in self.fields],
            "additionalProperties": False,
        }

    def validate(self, data: object) -> dict[str, Any]:
        """The answer if it fits the schema; ValueError naming the first problem if not."""
        if not isinstance(data, dict):
            raise ValueError("the answer is not a JSON object")
        clean: dict[str, Any] = {}
        for item in self.fields:
            if item.name not in data:
                raise ValueError(f"the answer lacks {item.name!r}")
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
    """No usable answer; the work stays pending and is retried next round."""

    reason: str
    usage: Usage = field(default_factory=Usage)


class Model(Protocol):
    """The seam: the offline rules or a remote model behind one call."""

    name: str

    async def judge(self, prompt: Prompt) -> Answer | Deferred: ...
