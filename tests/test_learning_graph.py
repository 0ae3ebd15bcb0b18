"""The learning graph (issue 13): memory × skills as nodes sized by activity, edges from
links the stores hold, drawn as an SVG or a PNG (docs/skills.md#the-learning-graph-picture)."""

from __future__ import annotations

import io
import subprocess
import sys
import xml.etree.ElementTree as ET
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from matplotlib.image import imread

import reverie
from reverie import ManualClock
from reverie.errors import InputError
from reverie.skills import drawing
from reverie.skills.picture import LearningGraph, Node, short
from tests.conftest import ok, rows
from tests.test_cli import cli, jcli

STAGING = "Staging deploys use the blue cluster."
BLUE = (
    "Actually, staging deploys go through the blue cluster, not the green one.",
    "No — staging deploys actually use the blue cluster.",
    "Correction: deploys to staging must go to the blue cluster.",
)
BUILDS = "Builds run with make ci before every release"
RELEASE = f"To release: {BUILDS}, then tag the commit and deploy with scripts/ship.sh."
OLD_TIMEOUT = "The deploy timeout is 30s"
ROLLBACK = (
    f"To roll back: check that {OLD_TIMEOUT} still holds, revert the tag, use pytest again."
    " Prefers terse answers."
)


async def _first_session(ns: reverie.Namespace) -> None:
    """What session s0 writes: a fact, MEMORY and USER entries, the release skill."""
    async with ns.session("s0") as s:
        ok(
            await s.call_tool("topic", {"action": "save", "topic": "staging", "content": STAGING}),
            "ADD",
        )
        ok(
            await s.call_tool("memory", {"action": "add", "target": "memory", "content": BUILDS}),
            "ADD",
        )
        args = {"action": "add", "target": "user", "content": "Prefers terse answers."}
        ok(await s.call_tool("memory", args), "ADD")
        args = {"action": "add", "target": "memory", "content": "Use pytest"}
        ok(await s.call_tool("memory", args), "ADD")
        args = {"action": "add", "target": "memory", "content": "Scratch note to drop later"}
        ok(await s.call_tool("memory", args), "ADD")
        args = {"action": "remove", "target": "memory", "old_text": "Scratch note"}
        ok(await s.call_tool("memory", args), "REMOVED")
        args = {"action": "create", "name": "release", "content": RELEASE}
        ok(await s.call_tool("skill_manage", args), "CREATED")


async def home_with_everything(rv: reverie.Reverie, clock: ManualClock) -> reverie.Namespace:
    """A namespace with known topics, entries, skills (one archived) and a pattern."""
    ns = rv.namespace("a")
    await _first_session(ns)
    async with ns.session("s1") as s:
        for value in ("30s", "45s"):
            args = {
                "action": "save",
                "topic": "deploy",
                "content": f"The deploy timeout is {value}",
            }
            await s.call_tool("topic", args)
        args = {"action": "create", "name": "rollback", "content": ROLLBACK}
        ok(await s.call_tool("skill_manage", args), "CREATED")
        args = {"action": "create", "name": "old-helper", "content": "Run the old helper script."}
        ok(await s.call_tool("skill_manage", args), "CREATED")
    for i, text in enumerate(BLUE):  # one lesson in three sessions: a pattern
        async with ns.session(f"p{i}") as s:
            await s.turn(user=text, assistant="Noted.")
        await rv.wait_idle()
    ok(await ns.pin_skill("release"), "PATCHED")
    ok(await ns.pin_skill("rollback"), "PATCHED")
    clock.advance(timedelta(days=100))
    [archived] = (await ns.curate(apply=True))["archived"]
    assert archived["name"] == "old-helper"
    await rv.wait_idle()
    return ns


async def test_the_nodes_are_the_live_records(rv: reverie.Reverie, clock: ManualClock) -> None:
    """Topics, live MEMORY/USER entries, registered skills and patterns, nothing else:
    no archived skill, no removed entry, no SOUL.md or user_settings entry."""
    ns = await home_with_everything(rv, clock)
    graph = await ns.learning_graph()
    kinds = {n["id"]: n["kind"] for n in graph["nodes"]}
    topics = {
        f"topic:{name}"
        for (name,) in rows(rv.home, "SELECT name FROM topics WHERE namespace = 'a'")
    }
    entries = {e.id: e.target for t in ("memory", "user") for e in await ns.entries(t)}
    skills = {f"skill:{k.name}" for k in await ns.skills()}
    patterns = {p.id for p in await ns.patterns()}
    assert {"topic:staging", "topic:deploy"} <= topics and len(patterns) == 1
    assert skills == {"skill:release", "skill:rollback"}
    assert set(kinds) == topics | set(entries) | skills | patterns
    assert all(kinds[e] == target for e, target in entries.items())
    assert "Scratch note to drop later" not in {e.content for e in await ns.entries("memory")}
    assert graph["left_out"] == 0
    labels = {n["label"] for n in graph["nodes"]}
    assert {"staging", "deploy", "release", "rollback", "Prefers terse answers."} <= labels


async def test_each_kind_of_edge_is_found_from_real_links(
    rv: reverie.Reverie, clock: ManualClock
) -> None:
    ns = await home_with_everything(rv, clock)
    graph = await ns.learning_graph()
    edges = {(e["src"], e["dst"], e["kind"]) for e in graph["edges"]}
    [builds] = [e.id for e in await ns.entries("memory") if e.content == BUILDS]
    [terse] = [e.id for e in await ns.entries("user")]
    [pattern] = await ns.patterns()
    # session: the skill was created in s0, which also wrote these
    assert {
        ("skill:release", "topic:staging", "session"),
        ("skill:release", builds, "session"),
        ("skill:release", terse, "session"),
    } <= edges
    assert ("skill:release", builds, "quotes") in edges  # its body holds the entry's text
    assert ("skill:release", "topic:deploy", "names") in edges
    assert (pattern.id, "topic:staging", "member") in edges  # the same lesson as the fact
    assert (pattern.id, "topic:staging", "names") in edges
    # the rollback skill quotes a superseded fact: no link from that
    assert [f.content for f in await ns.facts("deploy")] == ["The deploy timeout is 45s"]
    assert ("skill:rollback", "topic:deploy", "quotes") not in edges
    assert ("skill:rollback", "topic:deploy", "names") in edges
    # it quotes the user's three words, and two words are said everywhere: not a quote
    assert ("skill:rollback", terse, "quotes") in edges
    [two] = [e.id for e in await ns.entries("memory") if e.content == "Use pytest"]
    assert ("skill:rollback", two, "quotes") not in edges
    assert {k for _, _, k in edges} == {"session", "member", "names", "quotes"}


async def test_activity_counts_accesses_tiers_uses_and_occurrences(
    rv: reverie.Reverie, clock: ManualClock
) -> None:
    ns = await home_with_everything(rv, clock)
    before = {n["id"]: n["activity"] for n in (await ns.learning_graph())["nodes"]}
    async with ns.session("s9") as s:
        for _ in range(3):
            ok(await s.used_skill("release"), "PATCHED")
    [terse] = await ns.entries("user")
    cold = await ns.set_tier(terse.id, "cold")
    middle = {n["id"]: n["activity"] for n in (await ns.learning_graph())["nodes"]}
    hot = await ns.recall(terse.id)  # back to HOT, and one more access
    after = {n["id"]: n["activity"] for n in (await ns.learning_graph())["nodes"]}
    scored = {row["name"]: row["score"] for row in await ns.skill_scores()}
    assert after["skill:release"] > before["skill:release"]  # three more uses
    assert after["skill:release"] == 1 + scored["release"] / 5  # its activity score
    assert after["skill:rollback"] == before["skill:rollback"]
    assert middle[terse.id] == 1 + cold.access_count  # COLD: no tier bonus
    assert after[terse.id] == 1 + hot.access_count + 2  # HOT: two more
    [pattern] = await ns.patterns()
    assert after[pattern.id] == pattern.sessions + pattern.access_count


async def test_the_bound_keeps_the_most_active_and_counts_the_rest(
    rv: reverie.Reverie, clock: ManualClock
) -> None:
    ns = await home_with_everything(rv, clock)
    whole = await ns.learning_graph()
    kept = await ns.learning_graph(max_nodes=3)
    assert [n["id"] for n in kept["nodes"]] == [n["id"] for n in whole["nodes"][:3]]
    assert kept["left_out"] == len(whole["nodes"]) - 3
    activity = [n["activity"] for n in whole["nodes"]]
    assert activity == sorted(activity, reverse=True)
    ids = {n["id"] for n in kept["nodes"]}
    assert all(e["src"] in ids and e["dst"] in ids for e in kept["edges"])
    with pytest.raises(InputError, match="max_nodes"):
        await ns.learning_graph(max_nodes=0)


def _svg_texts(data: bytes) -> list[str]:
    root = ET.fromstring(data)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    return ["".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text")]


async def test_the_svg_is_valid_and_labels_every_node(
    rv: reverie.Reverie, clock: ManualClock, tmp_path: Path
) -> None:
    ns = await home_with_everything(rv, clock)
    drawn = await ns.draw_learning_graph(tmp_path / "g.svg", "svg")
    data = (tmp_path / "g.svg").read_bytes()
    texts = _svg_texts(data)
    assert all(n["label"] in texts for n in drawn["nodes"])
    assert any(t.startswith("learning graph of a:") for t in texts)
    assert {"session", "member", "names", "quotes"} <= set(texts)  # the legend
    assert len(data) < 300_000


async def test_the_png_decodes_to_a_picture(
    rv: reverie.Reverie, clock: ManualClock, tmp_path: Path
) -> None:
    ns = await home_with_everything(rv, clock)
    await ns.draw_learning_graph(str(tmp_path / "g.png"), format="png")
    data = (tmp_path / "g.png").read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    pixels = imread(io.BytesIO(data), format="png")
    assert pixels.shape[:2] == (1050, 1400)
    assert pixels[..., :3].min() < 0.5  # something was drawn on the white


async def test_two_drawings_of_one_graph_are_the_same_file(
    rv: reverie.Reverie, clock: ManualClock, tmp_path: Path
) -> None:
    ns = await home_with_everything(rv, clock)
    for fmt in ("svg", "png"):
        await ns.draw_learning_graph(tmp_path / f"1.{fmt}", fmt)
        await ns.draw_learning_graph(tmp_path / f"2.{fmt}", fmt)
        assert (tmp_path / f"1.{fmt}").read_bytes() == (tmp_path / f"2.{fmt}").read_bytes()


async def test_an_empty_namespace_is_a_picture_saying_so(
    rv: reverie.Reverie, tmp_path: Path
) -> None:
    ns = rv.namespace("nobody")
    drawn = await ns.draw_learning_graph(tmp_path / "e.svg")
    assert drawn["nodes"] == [] and drawn["edges"] == []
    texts = _svg_texts((tmp_path / "e.svg").read_bytes())
    assert any("nobody is empty" in t for t in texts)


@pytest.mark.parametrize(
    ("name", "fmt", "error"),
    [
        ("g.gif", "gif", "format must be one of svg, png"),
        ("g.svg", None, "format must be one of svg, png"),
        ("missing/g.svg", "svg", "no directory"),
        (".", "svg", "is a directory"),
        ("g\0.svg", "svg", "NUL"),
        ("x" * 5000 + ".svg", "svg", "too long"),
    ],
)
async def test_a_bad_format_or_path_is_refused_and_nothing_is_written(
    rv: reverie.Reverie, clock: ManualClock, tmp_path: Path, name: str, fmt: Any, error: str
) -> None:
    ns = await home_with_everything(rv, clock)
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(InputError, match=error):
        await ns.draw_learning_graph(out / name, fmt)
    assert list(out.iterdir()) == []


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
async def test_an_unwritable_folder_is_refused_and_nothing_is_written(
    rv: reverie.Reverie,
) -> None:
    """/proc takes no new file, even from root (a chmod would not stop root)."""
    with pytest.raises(InputError, match="cannot write"):
        await rv.namespace("a").draw_learning_graph("/proc/g.svg")
    assert not Path("/proc/g.svg").exists()


def test_labels_are_short_single_lines() -> None:
    assert short("a  b\nc") == "a b c"
    said = short("Lesson: always drain the queue before restarting the workers.")
    assert said == "Lesson: always drain the…" and len(said) <= 28
    assert short("x" * 40) == "x" * 27 + "…"


def test_node_areas_are_bounded_whatever_the_activity() -> None:
    """One very busy node never swallows the picture, the least active stays visible."""
    assert drawing._area(1.0, 10_000.0) >= drawing.MIN_AREA
    assert drawing._area(10_000.0, 10_000.0) == pytest.approx(drawing.MAX_AREA)
    assert drawing.MAX_AREA <= 1000 and drawing.MIN_AREA >= 40


def test_the_layout_is_seeded() -> None:
    graph = LearningGraph("x", tuple(Node(f"n{i}", "topic", f"t{i}", 1.0) for i in range(4)), ())
    assert drawing._layout(graph) == drawing._layout(graph)


async def test_the_command_draws_and_keeps_the_mflow_graph(
    rv: reverie.Reverie, clock: ManualClock, tmp_path: Path
) -> None:
    await home_with_everything(rv, clock)
    target = tmp_path / "g.png"
    said = cli(rv.home, "graph", "-n", "a", "-o", str(target))
    assert "learning graph of a" in said and target.read_bytes().startswith(b"\x89PNG")
    drawn = jcli(rv.home, "graph", "-n", "a", "-o", str(tmp_path / "g.svg"), "--max-nodes", "2")
    assert len(drawn["nodes"]) == 2 and drawn["format"] == "svg" and drawn["left_out"] > 0
    assert "-o FILE" in jcli(rv.home, "graph", "-n", "a", "--format", "svg", code=1)["error"]
    gif = tmp_path / "g.gif"
    assert "svg, png" in jcli(rv.home, "graph", "-n", "a", "-o", str(gif), code=1)["error"]
    assert not gif.exists()
    mflow = jcli(rv.home, "graph", "-n", "a")
    assert mflow["counts"]["episodes"] > 0 and mflow["namespace"] == "a"


BLOCK = """
import sys

class NoPictureExtra:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("matplotlib", "networkx"):
            raise ImportError(f"blocked for this test: {name}", name=name)
        return None

sys.meta_path.insert(0, NoPictureExtra())
"""
LIBRARY = """
import anyio, reverie
from reverie.errors import ConfigError

async def main(home, out):
    async with reverie.open(home) as rv:
        ns = rv.namespace("a")
        assert (await ns.learning_graph())["nodes"] == []
        try:
            await ns.draw_learning_graph(out)
        except ConfigError as exc:
            print(exc)

anyio.run(main, sys.argv[1], sys.argv[2])
assert "matplotlib" not in sys.modules and "networkx" not in sys.modules
"""


@pytest.mark.slow
def test_without_the_picture_extra_the_data_works_and_drawing_says_how_to_get_it(
    tmp_path: Path,
) -> None:
    out = tmp_path / "g.svg"
    run = [sys.executable, "-c", BLOCK + LIBRARY, str(tmp_path / "home"), str(out)]
    proc = subprocess.run(run, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [drawing.INSTALL_HINT] and not out.exists()
    command = "from reverie.cli import main\nsys.argv = ['reverie', *sys.argv[1:]]\nmain()\n"
    args = ["graph", "--home", str(tmp_path / "home"), "-o", str(out)]
    proc = subprocess.run(
        [sys.executable, "-c", BLOCK + command, *args], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 1 and not out.exists()
    assert [" ".join(line.split()) for line in proc.stderr.splitlines()] == [
        f"error: {drawing.INSTALL_HINT}"
    ]
