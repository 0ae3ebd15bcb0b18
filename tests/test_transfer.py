"""Issue 11's import and export: the lossless JSONL round trip (a property test), the
Markdown export, malformed lines, merges through the writer, and the Hermes and OpenClaw
imports (fixtures under tests/data, made from those projects' public documentation)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reverie
from reverie import Config, InputError
from reverie.config import CapsConfig
from reverie.stores import topics
from reverie.transfer import ImportReport
from tests.conftest import db_counts, ok

DATA = Path(__file__).parent / "data"
TOPICS = ("deploy", "billing")
SUBJECTS = ("deploy port", "build timeout", "cache size")
WORDS = ("alpha", "birch", "cedar", "delta", "ember")


def save(topic: str, content: str) -> dict[str, Any]:
    return {"action": "save", "topic": topic, "content": content}


def add(target: str, content: str) -> dict[str, Any]:
    return {"action": "add", "target": target, "content": content}


async def build(home: Path, ops: list[tuple[Any, ...]], ns_name: str = "default") -> None:
    """A namespace made through the real API: facts (some superseding others), entries,
    log records, tier moves, promotions, searches and ended sessions."""
    async with reverie.open(home) as rv:
        ns = rv.namespace(ns_name)
        made: list[str] = []
        for op in ops:
            await _one(rv, ns, op, made)
        await rv.wait_idle()
    # closing wrote the accesses still waiting in memory


async def _one(
    rv: reverie.Reverie, ns: reverie.Namespace, op: tuple[Any, ...], made: list[str]
) -> None:
    kind = op[0]
    if kind in ("fact", "entry"):
        async with ns.session(f"s-{len(made)}") as s:
            if kind == "fact":
                _, topic, subject, value = op
                result = await s.call_tool("topic", save(topic, f"The {subject} is {value}"))
            else:
                _, target, word, n = op
                result = await s.call_tool("memory", add(target, f"The {word} host runs job {n}"))
        if result.get("entry_id"):
            made.append(result["entry_id"])
    elif kind in ("replace", "remove"):
        args: dict[str, Any] = {"action": kind, "target": "memory", "old_text": f"The {op[1]} host"}
        if kind == "replace":
            args["content"] = f"The {op[1]} host runs job {op[2]} now"
        async with ns.session(f"s-{len(made)}") as s:
            result = await s.call_tool("memory", args)
        if result.get("entry_id"):
            made.append(result["entry_id"])
    elif kind == "skill":
        body = f"# {op[1]}\n\n1. Run the {op[1]} checks.\n2. Read the report."
        async with ns.session(f"s-{len(made)}") as s:
            await s.call_tool("skill_manage", {"action": "create", "name": op[1], "content": body})
    elif kind == "restore" and made:
        await ns.restore(made[op[1] % len(made)])
    elif kind == "learn":
        result = await ns.learn(f"Check the {op[1]} queue before {op[2]} runs", op[3], op[4])
        if result.get("entry_id"):
            made.append(result["entry_id"])
    elif kind == "tier" and made:
        await ns.set_tier(made[op[1] % len(made)], op[2])
    elif kind == "promote" and made:
        await ns.promote(made[op[1] % len(made)])
    elif kind == "search":
        await ns.search(op[1], k=5)
    elif kind == "session":
        async with ns.session(f"idle-{len(made)}") as s:
            await s.idle()
        await rv.wait_idle()


async def export(home: Path, ns_name: str = "default", fmt: str = "jsonl") -> str:
    async with reverie.open(home) as rv:
        return await rv.namespace(ns_name).export(fmt)


async def import_into(
    home: Path, source: Path, ns_name: str = "default", **kw: Any
) -> ImportReport:
    async with reverie.open(home) as rv:
        report = await rv.namespace(ns_name).import_records(source, **kw)
        await rv.wait_idle()
        return report


async def round_trip(tmp: Path, ops: list[tuple[Any, ...]]) -> tuple[str, str, ImportReport]:
    await build(tmp / "a", ops)
    first = await export(tmp / "a")
    (tmp / "out.jsonl").write_text(first, encoding="utf-8")
    report = await import_into(tmp / "b", tmp / "out.jsonl")
    return first, await export(tmp / "b"), report


SCENARIO: list[tuple[Any, ...]] = [
    ("fact", "deploy", "deploy port", "8080"),
    ("fact", "deploy", "deploy port", "9090"),  # supersedes the first
    ("fact", "deploy", "deploy port", "7070"),  # and again: a chain of three
    ("fact", "billing", "cache size", "2 GB"),
    ("entry", "memory", "cedar", 1),
    ("entry", "user", "birch", 2),
    ("learn", "alpha", "deploy", "correction", "high"),
    ("learn", "ember", "backup", "insight", "low"),
    ("search", "deploy port"),
    ("search", "deploy port"),
    ("search", "cedar host"),
    ("session",),
    ("replace", "cedar", 5),
    ("entry", "memory", "delta", 3),
    ("remove", "delta", 0),
    ("skill", "release-check"),
    ("tier", 3, "cold"),
    ("tier", 4, "warm"),
    ("promote", 5),
    ("session",),
]


# ---- the lossless JSONL round trip --------------------------------------------------------


async def test_an_export_restored_into_an_empty_namespace_exports_the_same(tmp_path: Path) -> None:
    first, second, report = await round_trip(tmp_path, SCENARIO)
    assert report.mode == "restore" and report.errors == []
    assert second == first
    lines = [json.loads(line) for line in first.splitlines()]
    assert lines[0]["format"] == "reverie.records" and lines[0]["sessions"] >= 2
    facts = [r for r in lines[1:] if r["kind"] == "fact" and r["place"] == "deploy"]
    assert [f["status"] for f in facts] == ["superseded", "superseded", "active"]
    assert facts[0]["chain"]["superseded_by"] == facts[1]["id"]
    assert {r["tier"] for r in lines[1:]} >= {"cold", "warm", "hot"}
    assert any(r["accesses"] for r in lines[1:])
    async with reverie.open(tmp_path / "b") as rv:  # the restored home works as any other
        ns = rv.namespace()
        assert [f.id for f in await ns.chain(facts[0]["id"])] == [f["id"] for f in facts]
        hits = await ns.search("deploy port")
        assert facts[2]["id"] in [h.id for h in hits] and facts[0]["id"] not in [h.id for h in hits]
        assert "cedar host" in (tmp_path / "b" / "default" / "MEMORY.md").read_text()


async def test_an_export_given_as_lines_is_restored_the_same(tmp_path: Path) -> None:
    await build(tmp_path / "a", SCENARIO)
    first = await export(tmp_path / "a")
    async with reverie.open(tmp_path / "b") as rv:
        report = await rv.namespace().import_records(first.splitlines())
        await rv.wait_idle()
        assert (report.mode, report.errors) == ("restore", [])
        assert await rv.namespace().export() == first
        with pytest.raises(reverie.InputError, match="strings"):
            await rv.namespace("c").import_records(["{}", 7])  # type: ignore[list-item]


OPS = st.lists(
    st.one_of(
        st.tuples(
            st.just("fact"),
            st.sampled_from(TOPICS),
            st.sampled_from(SUBJECTS),
            st.sampled_from(("1", "2", "3 GB", "45s")),
        ),
        st.tuples(
            st.just("entry"),
            st.sampled_from(("memory", "user")),
            st.sampled_from(WORDS),
            st.integers(1, 3),
        ),
        st.tuples(
            st.just("learn"),
            st.sampled_from(WORDS),
            st.sampled_from(WORDS),
            st.sampled_from(("insight", "error", "correction", "lesson")),
            st.sampled_from(("low", "medium", "high", "critical")),
        ),
        st.tuples(st.just("tier"), st.integers(0, 20), st.sampled_from(("hot", "warm", "cold"))),
        st.tuples(st.just("promote"), st.integers(0, 20)),
        st.tuples(st.just("search"), st.sampled_from((*SUBJECTS, *WORDS))),
        st.tuples(st.just("session")),
        st.tuples(
            st.sampled_from(("replace", "remove")), st.sampled_from(WORDS), st.integers(4, 6)
        ),
        st.tuples(st.just("skill"), st.sampled_from(("release-check", "triage"))),
        st.tuples(st.just("restore"), st.integers(0, 20)),
    ),
    min_size=1,
    max_size=14,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=OPS)
def test_the_jsonl_round_trip_is_lossless_for_any_namespace(ops: list[tuple[Any, ...]]) -> None:
    """Invariant: an export imported into an empty namespace of a fresh home and exported
    again is byte for byte the same (records, chains, tiers, access counts and history)."""
    with tempfile.TemporaryDirectory() as tmp:
        first, second, report = anyio.run(round_trip, Path(tmp), ops)
    assert report.errors == [] and report.mode == "restore"
    assert second == first


# ---- malformed lines ----------------------------------------------------------------------


async def test_a_malformed_line_is_reported_by_number_and_nothing_else_is_lost(
    tmp_path: Path,
) -> None:
    await build(tmp_path / "a", SCENARIO[:6])
    lines = (await export(tmp_path / "a")).splitlines()
    good = len(lines) - 1
    entry = json.loads(next(line for line in lines if '"kind":"entry"' in line))
    bad = [
        "{not json",
        json.dumps({k: v for k, v in entry.items() if k != "content"} | {"id": "ent-x1"}),
        json.dumps(entry | {"id": "ent-x2", "kind": "telegram"}),
        json.dumps(
            entry | {"id": "ent-x3", "content": "token ghp_16C7e42F292c6912E7710c838347Ae178B4a"}
        ),
        lines[1],  # the same record twice
    ]
    source = tmp_path / "bad.jsonl"
    source.write_text("\n".join([*lines, *bad]) + "\n", encoding="utf-8")
    report = await import_into(tmp_path / "b", source)
    errors = {d.line: d.reason for d in report.errors}
    n = len(lines)
    assert sorted(errors) == [n + 1, n + 2, n + 3, n + 4, n + 5]
    assert "not JSON" in errors[n + 1] and "'content'" in errors[n + 2]
    assert "unknown kind" in errors[n + 3] and "already on line 2" in errors[n + 5]
    assert "ghp_16C7" not in errors[n + 4]
    assert report.counts["ADD"] == good
    assert await export(tmp_path / "b") == "\n".join(lines) + "\n"


async def test_names_times_and_stored_columns_are_checked_line_by_line(tmp_path: Path) -> None:
    """A line cannot name a file outside the home (a topic, a skill, a session log named by
    its time) nor give a store column a value it cannot hold: each is that line's ERROR."""
    await build(tmp_path / "a", SCENARIO[:6])
    lines = (await export(tmp_path / "a")).splitlines()
    entry = json.loads(next(line for line in lines if '"kind":"entry"' in line))
    fact = json.loads(next(line for line in lines if '"kind":"fact"' in line))
    bad = [
        json.dumps(fact | {"id": "fct-x1", "place": "../../../escaped"}),
        json.dumps(entry | {"id": "ent-x2", "created_at": "x/../../../escaped_T00"}),
        json.dumps(entry | {"id": "ent-x3", "stored": entry["stored"] | {"reinforce": "abc"}}),
        json.dumps(entry | {"id": "ent-x4", "stored": entry["stored"] | {"status": "bogus"}}),
        json.dumps(entry | {"id": "ent-x5", "stored": entry["stored"] | {"key": {"a": 1}}}),
        json.dumps(entry | {"id": "ent-x6", "accesses": [{"at": "yesterday", "how": "search"}]}),
    ]
    source = tmp_path / "bad.jsonl"
    source.write_text("\n".join([*lines, *bad]) + "\n", encoding="utf-8")
    report = await import_into(tmp_path / "b", source)
    n = len(lines)
    errors = {d.line: d.reason for d in report.errors}
    assert sorted(errors) == list(range(n + 1, n + 7)), errors
    assert "place" in errors[n + 1] and "created_at" in errors[n + 2]
    assert "reinforce" in errors[n + 3] and "status" in errors[n + 4]
    assert "'key'" in errors[n + 5] and "at" in errors[n + 6]
    assert report.counts["ADD"] == len(lines) - 1
    assert not list(tmp_path.rglob("escaped*"))


async def test_patterns_and_the_sessions_of_restatements_survive_the_round_trip(
    tmp_path: Path,
) -> None:
    blue = (
        "Actually, staging deploys go through the blue cluster, not the green one.",
        "No — staging deploys actually use the blue cluster.",
        "Correction: deploys to staging must go to the blue cluster.",
    )
    async with reverie.open(tmp_path / "a") as rv:
        ns = rv.namespace()
        for i, text in enumerate(blue):
            async with ns.session(f"s{i}") as s:
                await s.turn(user=text, assistant="Noted.")
                await s.turn(user=blue[0], assistant="Noted.")  # restated: s{i} counts
            await rv.wait_idle()
        [pattern] = await ns.patterns()
        first = await ns.export()
    assert '"session":"s1"' in first
    async with reverie.open(tmp_path / "b") as rv:
        ns = rv.namespace()
        report = await ns.import_records(first.splitlines())
        assert report.mode == "restore" and report.errors == []
        assert await ns.patterns() == [pattern]
        async with ns.session("later"):
            pass
        await rv.wait_idle()
        [again] = await ns.patterns()  # the library is known: no second pattern
        assert again.id == pattern.id


async def test_what_a_fact_was_found_by_is_restored_with_it(tmp_path: Path) -> None:
    """A live fact's chain row in the search index holds its former texts and what its
    session said and collapsed into it ("30s … no wait, 45s"); nothing else keeps those,
    so the export carries the row and a restore puts it back."""
    await build(tmp_path / "a", SCENARIO[:3])  # a chain of three deploy ports
    async with reverie.open(tmp_path / "a") as rv:
        [head] = [f for f in await rv.namespace().facts("deploy") if f.live]
        await rv.services.db.write(
            lambda conn: topics.index_formerly(conn, head.id, ["gateway listens on 6060"])
        )
        assert [h.id for h in await rv.namespace().search("gateway listens")][:1] == [head.id]
    first = await export(tmp_path / "a")
    assert "gateway listens on 6060" in first
    async with reverie.open(tmp_path / "b") as rv:
        report = await rv.namespace().import_records(first.splitlines())
        assert report.mode == "restore" and report.errors == []
        assert [h.id for h in await rv.namespace().search("gateway listens")][:1] == [head.id]
        assert await rv.namespace().export() == first
    secret = json.loads(next(line for line in first.splitlines() if "former_text" in line))
    secret["stored"]["former_text"] = "token ghp_16C7e42F292c6912E7710c838347Ae178B4a"
    async with reverie.open(tmp_path / "c") as rv:
        lines = [*first.splitlines()[:1], json.dumps(secret)]
        report = await rv.namespace().import_records(lines)
        [refused] = report.decisions
        assert refused.decision == "ERROR" and "former_text" in refused.reason


async def test_an_archived_namespace_takes_no_import(tmp_path: Path) -> None:
    await build(tmp_path / "a", SCENARIO[:8])
    lines = (await export(tmp_path / "a")).splitlines()
    async with reverie.open(tmp_path / "b") as rv:
        ok(await rv.namespace("arch").learn("A lesson learnt by hand", "lesson"), "ADD")
        assert "arch" in await rv.namespaces()  # a namespace holding only a log record
        await rv.archive_namespace("arch")
        await rv.create_namespace("empty")
        await rv.archive_namespace("empty")
        with pytest.raises(reverie.NamespaceArchived):
            await rv.namespace("empty").import_records(lines)  # a restore
        with pytest.raises(reverie.NamespaceArchived):
            await rv.namespace("arch").import_records(lines)  # a merge: its log records
        assert await rv.namespace("empty").query("") == []
        assert [r.kind for r in await rv.namespace("arch").query("")] == ["lesson"]


async def test_a_fact_whose_successor_is_refused_is_refused_with_it(tmp_path: Path) -> None:
    """Invariant: a restored chain never points at a fact that is not there."""
    await build(tmp_path / "a", SCENARIO[:3])  # one chain: 8080 -> 9090 -> 7070
    lines = (await export(tmp_path / "a")).splitlines()
    middle = json.loads(lines[2])
    lines[2] = json.dumps(middle | {"content": "ghp_16C7e42F292c6912E7710c838347Ae178B4a"})
    (tmp_path / "x.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = await import_into(tmp_path / "b", tmp_path / "x.jsonl")
    assert [(d.line, d.decision) for d in report.decisions] == [
        (2, "ERROR"),
        (3, "ERROR"),
        (4, "ADD"),
    ]
    assert "superseded by" in report.decisions[0].reason
    async with reverie.open(tmp_path / "b") as rv:
        [live] = await rv.namespace().facts("deploy")
        assert live.content == "The deploy port is 7070" and live.supersedes is None


# ---- merging into a namespace that holds records ------------------------------------------


async def test_an_export_into_a_namespace_with_records_goes_through_the_writer(
    tmp_path: Path,
) -> None:
    await build(tmp_path / "a", SCENARIO[:7])
    (tmp_path / "out.jsonl").write_text(await export(tmp_path / "a"), encoding="utf-8")
    await build(
        tmp_path / "b", [("entry", "memory", "cedar", 1), ("fact", "billing", "cache size", "4 GB")]
    )
    report = await import_into(tmp_path / "b", tmp_path / "out.jsonl")
    assert report.mode == "merge" and "not empty" in report.notes[0]
    by_reason = [(d.decision, d.reason) for d in report.decisions]
    assert sum(1 for d, r in by_reason if d == "NOOP" and "superseded in the export" in r) == 2
    decisions = [d.decision for d in report.decisions]
    assert "NOOP" in decisions and "ADD" in decisions and "ERROR" not in decisions
    async with reverie.open(tmp_path / "b") as rv:
        ns = rv.namespace()
        assert [f.content for f in await ns.facts("deploy")] == ["The deploy port is 7070"]
        assert len(await ns.entries("memory")) == 1  # the twin was a NOOP


async def test_a_second_namespace_of_the_same_home_is_merged_as_ids_are_taken(
    tmp_path: Path,
) -> None:
    await build(tmp_path / "a", SCENARIO[:5])
    (tmp_path / "out.jsonl").write_text(await export(tmp_path / "a"), encoding="utf-8")
    report = await import_into(tmp_path / "a", tmp_path / "out.jsonl", "copy")
    assert report.mode == "merge" and "already used" in report.notes[0]
    assert report.errors == [] and report.counts.get("ADD", 0) >= 3


# ---- Markdown ------------------------------------------------------------------------------


async def test_the_markdown_export_follows_seed_003s_layout(tmp_path: Path) -> None:
    await build(tmp_path / "a", SCENARIO)
    text = await export(tmp_path / "a", fmt="markdown")
    records = json.loads("[" + ",".join((await export(tmp_path / "a")).splitlines()[1:]) + "]")
    assert text.startswith("# Learning records — default\n")
    assert text.count("\n## ID: ") == len(records)
    first = text.split("\n## ID: ")[1]
    for label in ("Priority", "Status", "Namespace", "Tier", "Content", "Created", "Updated"):
        assert f"- **{label}**: " in first
    assert "### Access history" in first and " - created" in first
    searched = next(r for r in records if r["accesses"])
    block = text.split(f"## ID: {searched['id']}")[1].split("\n## ID: ")[0]
    access = searched["accesses"][0]
    assert f"- {access['at'].replace('T', ' ')[:19]} - {access['how']}" in block


# ---- Hermes and OpenClaw -------------------------------------------------------------------


async def test_a_hermes_home_is_imported_through_the_writer(tmp_path: Path) -> None:
    report = await import_into(tmp_path / "h", DATA / "hermes")
    assert report.format == "hermes" and report.mode == "merge"
    got = [(d.source, d.line, d.decision) for d in report.decisions]
    assert ("memories/MEMORY.md", 1, "ADD") in got
    assert ("memories/MEMORY.md", 8, "NOOP") in got  # the same entry again
    assert ("memories/USER.md", 5, "ERROR") in got  # a token: refused, the rest still in
    assert ("SOUL.md", 1, "ADD") in got
    async with reverie.open(tmp_path / "h") as rv:
        ns = rv.namespace()
        memory = [e.content for e in await ns.entries("memory")]
        assert len(memory) == 3 and any("crates/" in m and "\n" in m for m in memory)
        assert len(await ns.entries("user")) == 2
        assert len(await ns.entries("soul")) == 1
    assert "ghp_" not in (tmp_path / "h" / "default" / "USER.md").read_text()


async def test_an_import_past_a_cap_is_refused_line_by_line(tmp_path: Path) -> None:
    config = Config(caps=CapsConfig(memory=150))
    async with reverie.open(tmp_path / "h", config=config) as rv:
        report = await rv.namespace().import_records(DATA / "hermes")
    memory = [d for d in report.decisions if d.source == "memories/MEMORY.md"]
    assert [d.decision for d in memory] == ["ADD", "ADD", "ERROR", "NOOP"]
    assert "full" in memory[2].reason and "USER.md" not in memory[2].reason


async def test_an_openclaw_workspace_is_imported_through_the_writer(tmp_path: Path) -> None:
    report = await import_into(tmp_path / "o", DATA / "openclaw")
    assert report.format == "openclaw" and report.errors == []
    by_source: dict[str, list[Any]] = {}
    for d in report.decisions:
        by_source.setdefault(d.source or "", []).append(d)
    assert [d.decision for d in by_source["MEMORY.md"]] == ["ADD", "ADD", "ADD"]
    assert [d.decision for d in by_source["USER.md"]] == ["ADD"]
    daily = by_source["memory/2026-03-14.md"]
    assert [d.line for d in daily] == [3, 4, 7] and all("2026-03-14" in d.reason for d in daily)
    later = by_source["memory/2026-03-15-session.md"]
    assert [d.decision for d in later] == ["ADD", "NOOP"]  # the same note as the day before
    assert [d.line for d in by_source["memory/projects/bindery-site.md"]] == [6, 7]
    async with reverie.open(tmp_path / "o") as rv:
        ns = rv.namespace()
        facts = await ns.facts("projects-bindery-site")
        assert [f.content for f in facts][0] == "The site is built with Hugo 0.121."
        notes = await ns.query("kind:note limit:10")
        assert any("(it restarts every January)" in r.content for r in notes)
        assert len(await ns.entries("memory")) == 3


async def test_the_format_can_be_named_and_bad_sources_write_nothing(tmp_path: Path) -> None:
    async with reverie.open(tmp_path / "h") as rv:
        ns = rv.namespace()
        await ns.learn("Check the alpha queue first")
        await rv.wait_idle()
        before = db_counts(tmp_path / "h")
        for source, kw in [
            (tmp_path / "missing.jsonl", {}),
            (DATA / "hermes", {"format": "csv"}),
            (tmp_path, {"format": "jsonl"}),  # a folder is not a JSONL file
            (DATA / "hermes" / "SOUL.md", {"format": "openclaw"}),
            (DATA / "hermes" / "SOUL.md", {}),  # a file, but no export
            (Path(__file__).parent / "fixtures_nothing_here", {}),
            (DATA / "openclaw" / "memory" / "projects", {"format": "openclaw"}),
        ]:
            with pytest.raises(InputError):
                await ns.import_records(source, **kw)
        empty = tmp_path / "empty"
        empty.mkdir()
        with pytest.raises(InputError, match="neither a Hermes"):
            await ns.import_records(empty)
        with pytest.raises(InputError):
            await ns.export("yaml")
        future = tmp_path / "future.jsonl"
        future.write_text('{"format": "reverie.records", "version": 2}\n', encoding="utf-8")
        with pytest.raises(InputError, match="version 1"):
            await ns.import_records(future)
        assert db_counts(tmp_path / "h") == before  # nothing was written
        # a Hermes home read as an OpenClaw workspace, by name: MEMORY.md's lines as notes
        report = await ns.import_records(DATA / "hermes" / "memories", format="openclaw")
        assert report.format == "openclaw" and report.counts["ADD"] >= 1


# ---- the command ----------------------------------------------------------------------------


def cli(home: Path, *args: str, code: int = 0, stream: str = "stdout") -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "reverie", *args, "--home", str(home)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert proc.returncode == code, (proc.stdout, proc.stderr)
    return str(getattr(proc, stream))


def test_the_export_and_import_commands(tmp_path: Path) -> None:
    home, copy = tmp_path / "a", tmp_path / "b"
    anyio.run(build, home, SCENARIO[:8])
    out = tmp_path / "x.jsonl"
    assert cli(home, "export", "-o", str(out)) == ""
    assert out.read_text().startswith('{"format":"reverie.records"')
    report = json.loads(cli(copy, "import", str(out), "--json"))
    assert report["mode"] == "restore" and report["counts"] == {
        "ADD": len(out.read_text().splitlines()) - 1
    }
    assert cli(copy, "export") == out.read_text()
    assert cli(copy, "export", "--format", "markdown").startswith("# Learning records — default")
    refused = cli(
        tmp_path / "h", "import", str(DATA / "hermes"), "-n", "agent", code=1, stream="stderr"
    )
    assert "memories/USER.md:5 ERROR" in refused
    missing = cli(tmp_path / "h", "import", str(tmp_path / "nope"), code=2, stream="stderr")
    assert "no file or folder" in missing
