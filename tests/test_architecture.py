"""The architecture as the code has it: docs/architecture.md's picture is the code's, every
actor the design card names is on the bus and in spans, and imports point one way."""

from __future__ import annotations

import ast
import re
from functools import partial
from pathlib import Path
from typing import Any

import reverie
from reverie import architecture
from reverie.actors.judging import consult
from reverie.model.questions import ACTOR_OF
from reverie.model.seam import Answer, Field, Prompt, Schema, Usage
from reverie.runtime import ACTORS
from tests.conftest import both_backends

PACKAGE = Path(reverie.__file__).resolve().parent
DOC = PACKAGE.parent / "docs" / "architecture.md"
CARD = {"writer", "extractor", "flusher", "distiller", "linter", "promoter", "curator"}


def test_the_documented_picture_is_the_codes() -> None:
    """Regenerate with ``python -m reverie.architecture`` when this fails."""
    block = re.search(r"```mermaid\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert block is not None
    assert block.group(1) == architecture.mermaid()


def test_every_message_has_a_sender_and_a_receiver() -> None:
    """No message is published that nobody hears, and none is heard that nobody sends."""
    names = set(architecture.message_types())
    assert set(architecture.receivers()) == names
    assert set(architecture.senders()) == names
    assert "SessionEnded" in names  # it has a subscriber now


class Sure:
    """A model that answers every question with its reasoning alone."""

    name = "sure"

    async def judge(self, prompt: Prompt) -> Answer:
        return Answer({"reasoning": "r"}, Usage(1, 1, 1), self.name)


@both_backends
async def test_every_named_actor_is_on_the_bus_and_in_spans(tmp_path: Path, spans: Any) -> None:
    provider, exporter = spans
    on = reverie.Config().with_section("profiler", enabled=True)  # off by default
    async with reverie.open(tmp_path, tracer_provider=provider, model=Sure(), config=on) as rv:
        table = rv.services.bus.subscriptions()
        for question in ACTOR_OF:  # each question asked once, as its actor asks it
            prompt = Prompt(question, "system", "user", Schema((Field("reasoning"),)))
            await consult(rv.services.judge, "a", prompt)
        async with rv.namespace("a").session("s") as s:
            await s.call_tool("topic", {"action": "save", "topic": "deploy", "content": "x 1"})
            await s.turn(user="The deploy port is 8080.")
            await s.idle()
        await rv.wait_idle()
        await rv.review(force=True)
        ledger = await rv.namespace("a").ledger()
        calls = await rv.model_calls("a")
    # one name per actor: the ledger and the call counts use the actors' own names
    asked = {r.actor for r in ledger if r.action == "model_call"}
    # the profiler's question is its own (not one of ACTOR_OF's): asked in its pass
    assert asked == {
        "flusher",
        "linter",
        "distiller",
        "promoter",
        "dreamer",
        "grapher",
        "curator",
        "profiler",
    }
    assert set(calls) == asked
    assert {r.actor for r in ledger if r.action == "round"} == CARD - {
        "writer",
        "extractor",
        "flusher",
    } | {"dreamer", "profiler"}
    beyond = {"reviewer", "learner", "grapher", "dreamer", "profiler"}  # beyond seed 000's card
    subscribed = {actor for _, actor in table}
    assert CARD | beyond == subscribed
    traced = {span.name.split(" ")[0] for span in exporter.get_finished_spans()}
    assert {f"reverie.{actor}" for actor in CARD | beyond} <= traced


def imports(path: Path) -> set[str]:
    """The reverie modules a file imports (``from reverie.x import y`` counts as both
    ``reverie.x`` and ``reverie.x.y``, as y may be a module)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return {name for name in found if name == "reverie" or name.startswith("reverie.")}


def module_path(module: str) -> Path:
    return PACKAGE.parent / (module.replace(".", "/") + ".py")


def test_no_actor_imports_another() -> None:
    actor_modules = {actor.__module__ for actor in ACTORS}
    assert len(actor_modules) == len(ACTORS)
    for module in actor_modules:
        others = imports(module_path(module)) & (actor_modules - {module})
        assert not others, f"{module} imports {others}"


def test_the_bus_knows_no_tool_and_no_actor() -> None:
    for path in (PACKAGE / "bus").glob("*.py"):
        wrong = {
            name
            for name in imports(path)
            if name.startswith(("reverie.tools", "reverie.actors", "reverie.runtime"))
        }
        assert not wrong, f"{path.name} imports {wrong}"


HOSTS = ("cli", "simulation")
"""The command and the simulation use the library as any host does, through its root."""


def test_nothing_below_the_facade_imports_the_package_root() -> None:
    for path in PACKAGE.rglob("*.py"):
        if path.name == "__init__.py" and path.parent == PACKAGE:
            continue
        if path.relative_to(PACKAGE).parts[0] in HOSTS:
            continue
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                assert "reverie" not in {a.name for a in node.names}, path
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                assert node.module != "reverie", path


def test_no_connection_is_left_to_the_garbage_collector() -> None:
    """``with sqlite3.connect(...)`` commits but never closes: Python 3.13 reports the
    connection (a ResourceWarning, an error under this suite's filterwarnings), at whatever
    later test the collector happens to run in. Close through ``contextlib.closing``."""
    offenders = [
        f"{path.relative_to(PACKAGE.parent)}:{number}"
        for folder in ("reverie", "tests", "bench")
        for path in sorted((PACKAGE.parent / folder).rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.match(r"\s*(async )?with sqlite3\.connect\(", line)
    ]
    assert offenders == []


CAPABILITIES = {"db", "projector", "bus", "clock", "judge", "vectors", "look_ahead", "book"}
"""What an actor may be given beyond its settings: each a narrow capability."""


def reads_of_self(cls: type) -> set[str]:
    """The ``self.<name>`` attributes read anywhere in ``cls``'s own module and the reverie
    modules of its bases (``self.now()`` reads the clock)."""
    names: set[str] = set()
    for base in cls.__mro__:
        if not base.__module__.startswith("reverie."):
            continue
        tree = ast.parse(module_path(base.__module__).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "self"
            ):
                names.add("clock" if node.attr == "now" else node.attr)
    return names


async def test_each_actor_is_given_only_what_it_uses(rv: reverie.Reverie) -> None:
    """No locator: the runtime wires each actor with the capabilities it reads, and an
    actor that stopped reading one would not be given it."""
    given_to: dict[str, set[str]] = {}
    for actor in ACTORS:
        factory = rv.factories[actor]
        assert isinstance(factory, partial) and factory.func is actor
        given = set(factory.keywords)
        assert given - {"config", "settings"} <= CAPABILITIES, actor.name
        assert given & CAPABILITIES <= reads_of_self(actor), actor.name
        given_to[actor.name] = given & CAPABILITIES
    assert given_to["extractor"] == {"db", "bus", "clock"}
    assert given_to["learner"] == {"db", "projector", "bus", "clock", "book"}
    assert given_to["curator"] == {"db", "projector", "clock", "judge"}  # the drafts' model
    assert given_to["grapher"] == {"db", "projector", "clock", "judge"}
    assert "judge" not in given_to["writer"] and "bus" not in given_to["linter"]
    for path in (PACKAGE / "actors").glob("*.py"):
        source = path.read_text(encoding="utf-8")
        assert "Parts" not in source and "services" not in source, path.name
