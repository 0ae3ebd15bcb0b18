"""``quick_init``: a frozen record built faster is still the record ``@dataclass`` makes."""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import InitVar, dataclass, field
from typing import Any

import pytest

from reverie.frozen import quick_init
from reverie.reports import StageReport, TopicResult
from reverie.stores.records import LedgerRecord


@dataclass(frozen=True, slots=True)
class Plain:
    name: str
    size: int = 3
    tags: list[str] = field(default_factory=list)
    note: str | None = None


@quick_init
@dataclass(frozen=True, slots=True)
class Quick:
    name: str
    size: int = 3
    tags: list[str] = field(default_factory=list)
    note: str | None = None


CALLS: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    (("a",), {}),
    (("a", 5), {}),
    (("a",), {"note": "n", "tags": ["x"]}),
    ((), {"name": "b", "size": 0, "tags": [], "note": None}),
    (("a", 1, ["t"], "n"), {}),
]


@pytest.mark.parametrize(("args", "kwargs"), CALLS)
def test_a_quick_record_holds_what_the_dataclass_would(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    plain, quick = Plain(*args, **kwargs), Quick(*args, **kwargs)
    assert dataclasses.asdict(quick) == dataclasses.asdict(plain)
    assert repr(quick) == repr(plain).replace("Plain(", "Quick(", 1)
    assert quick == Quick(*args, **kwargs)
    assert quick != Quick("other")


def test_a_quick_record_stays_frozen_and_hashable() -> None:
    quick = Quick("a", note="n")
    with pytest.raises(dataclasses.FrozenInstanceError):
        quick.name = "b"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del quick.note
    assert not hasattr(quick, "__dict__")  # still slotted
    hashable = Quick("a", tags=None)  # type: ignore[arg-type]
    assert hash(hashable) == hash(Quick("a", tags=None))  # type: ignore[arg-type]
    assert {hashable, Quick("a", tags=None)} == {hashable}  # type: ignore[arg-type]


def test_a_factory_default_is_fresh_for_each_record_and_a_given_value_kept() -> None:
    one, two = Quick("a"), Quick("b")
    assert one.tags == [] and one.tags is not two.tags
    given = ["x"]
    assert Quick("c", tags=given).tags is given


def test_a_quick_init_takes_the_same_arguments_as_the_dataclass() -> None:
    plain = inspect.signature(Plain).parameters
    quick = inspect.signature(Quick).parameters
    assert list(quick) == list(plain)
    assert quick["name"].default is inspect.Parameter.empty and quick["size"].default == 3
    assert repr(quick["tags"].default) == "<factory>" == repr(plain["tags"].default)
    wrong: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        ((), {}),
        (("a", 1, [], None, "extra"), {}),
        (("a",), {"colour": 1}),
    ]
    for args, kwargs in wrong:
        with pytest.raises(TypeError):
            Plain(*args, **kwargs)
        with pytest.raises(TypeError):
            Quick(*args, **kwargs)
    with pytest.raises(TypeError, match="multiple values"):
        Quick("a", name="b")  # type: ignore[misc]


def test_reverie_records_built_quickly_round_trip() -> None:
    record = LedgerRecord(
        ts="t",
        namespace="a",
        actor="reviewer",
        action="review_pass",
        decision="DONE",
        entry_id=None,
    )
    assert LedgerRecord(**dataclasses.asdict(record)) == record
    assert record.target is None and record.detail == {} and record.seq == 0
    topic = TopicResult("deploy", "distilled", facts=2)
    assert StageReport("distiller", "ran", None).to_dict() == {
        "stage": "distiller",
        "status": "ran",
    }
    assert topic.to_dict()["facts"] == 2
    assert LedgerRecord.__init__.__qualname__ == "LedgerRecord.__init__"


def _refused(make: Any) -> None:
    with pytest.raises(TypeError, match="quick_init"):
        quick_init(make())


def test_what_quick_init_cannot_build_as_well_is_refused_when_decorated() -> None:
    def thawed() -> type:
        @dataclass(slots=True)
        class Thawed:
            a: int

        return Thawed

    def unslotted() -> type:
        @dataclass(frozen=True)
        class Unslotted:
            a: int

        return Unslotted

    def post_init() -> type:
        @dataclass(frozen=True, slots=True)
        class PostInit:
            a: int

            def __post_init__(self) -> None:
                pass

        return PostInit

    def keyword_only() -> type:
        @dataclass(frozen=True, slots=True, kw_only=True)
        class KeywordOnly:
            a: int

        return KeywordOnly

    def init_only() -> type:
        @dataclass(frozen=True, slots=True)
        class InitOnly:
            a: int
            b: InitVar[int] = 0

        return InitOnly

    def not_in_init() -> type:
        @dataclass(frozen=True, slots=True)
        class NotInInit:
            a: int
            b: int = field(default=0, init=False)

        return NotInInit

    for make in (thawed, unslotted, post_init, keyword_only, init_only, not_in_init):
        _refused(make)
    _refused(lambda: int)
