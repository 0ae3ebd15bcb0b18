"""The rules behind consolidate and trim (reverie/skills), at their boundaries: which skills
group, which member names the merge, what a merge keeps and drops, how a trim shortens."""

from __future__ import annotations

from reverie.rules.similarity import jaccard, word_set
from reverie.skills.consolidate import (
    Member,
    groups,
    merge,
    merge_meta,
    merge_proposal,
    ordered,
    summarise,
    trim_proposal,
)
from reverie.skills.document import parse, render


def _member(name: str, body: str, uses: int = 0, created_at: str = "2026-01-01") -> Member:
    return Member(name, body, uses, created_at)


def test_groups_are_connected_components_of_the_overlap_pairs() -> None:
    a = _member("a", "alpha beta gamma delta")
    b = _member("b", "alpha beta gamma delta epsilon")  # a~b
    c = _member("c", "beta gamma delta epsilon zeta")  # b~c, not a~c
    d = _member("d", "coffee grinder kettle water")
    assert jaccard(word_set(a.body), word_set(c.body)) < 0.6
    [group] = groups([a, b, c, d], 0.6)
    assert [m.name for m in group] == ["a", "b", "c"]


def test_a_pair_at_exactly_the_overlap_threshold_groups() -> None:
    a = _member("a", "alpha beta gamma")
    b = _member("b", "alpha beta gamma delta")
    score = jaccard(word_set(a.body), word_set(b.body))
    assert score == 0.75
    assert len(groups([a, b], 0.75)) == 1
    assert groups([a, b], 0.76) == []


def test_the_most_used_then_the_oldest_member_comes_first() -> None:
    old = _member("old", "x", uses=1, created_at="2025-01-01")
    used = _member("used", "x", uses=3, created_at="2026-01-01")
    young = _member("young", "x", uses=1, created_at="2026-02-01")
    assert [m.name for m in ordered([young, old, used])] == ["used", "old", "young"]
    assert [m.name for m in ordered([young, old])] == ["old", "young"]


def test_a_merge_joins_sections_by_heading_and_keeps_code_and_tables_whole() -> None:
    a = "# Tool\n\n## Run\n\n```\nmake a\nmake b\n```\n\n| k | v |\n|---|---|\n| a | 1 |"
    b = "# Tool\n\n## Setup\n\nInstall it.\n\n## Run\n\n```\nmake a\nmake c\n```\n\n| k | v |"
    doc, dropped = merge([parse(a, "a"), parse(b, "b")], ["a", "b"], "a", 0.8)
    body = render(doc)
    assert body.count("## Run") == 1 and body.count("## Setup") == 1
    assert body.index("## Run") < body.index("## Setup")  # first appearance sets the order
    assert "make a\nmake c" in body  # a code line said before is kept inside its block
    assert body.count("| k | v |") == 2  # table rows are never dropped as repeats
    assert dropped == []


def test_the_same_heading_under_different_parents_stays_apart() -> None:
    a = "# Linux\n\n## Install\n\napt install tool"
    b = "# Mac\n\n## Install\n\nbrew install tool"
    doc, _ = merge([parse(a, "a"), parse(b, "b")], ["a", "b"], "a", 0.8)
    assert render(doc).count("## Install") == 2


def test_front_matter_merges_and_a_conflicting_value_is_kept_in_the_body() -> None:
    meta, extra = merge_meta(
        [
            {"name": "a", "tags": ["x"], "owner": "ops"},
            {"name": "b", "tags": ["y"], "owner": "dev"},
        ],
        ["a", "b"],
        "merged",
    )
    assert meta == {"name": "merged", "tags": ["x", "y"], "owner": "ops"}
    assert extra == [("b", "owner", "dev")]
    a = "---\nname: a\nowner: ops\n---\nDo a."
    b = "---\nname: b\nowner: dev\n---\nDo b."
    doc, _ = merge([parse(a, "a"), parse(b, "b")], ["a", "b"], "a", 0.8)
    assert "- b: owner: dev" in render(doc)


def test_front_matter_that_is_not_a_mapping_stays_as_text() -> None:
    body = "---\njust a rule line\n---\nDo it."
    assert parse(body, "a").meta is None
    assert "just a rule line" in render(parse(body, "a"))


def test_a_merge_over_the_cap_is_blocked() -> None:
    a = _member("a", "Run the build.\n\nThen ship it to staging.")
    b = _member("b", "Run the build.\n\nThen ship it to production.")
    body_len = merge_proposal([a, b], 0.8, 10_000).chars_after
    assert merge_proposal([a, b], 0.8, body_len).blocked is None
    assert "limit" in (merge_proposal([a, b], 0.8, body_len - 1).blocked or "")


def test_near_duplicates_by_the_configured_threshold() -> None:
    a = "Deploy the web app with the release script to the staging cluster."
    b = "Deploy the web app with the release script to the production cluster."
    score = jaccard(word_set(a), word_set(b))
    section = f"# X\n\n{a}\n\n{b}"
    _, kept = merge([parse(section, "s")], ["s"], "s", score + 0.01)
    _, cut = merge([parse(section, "s")], ["s"], "s", score)
    assert kept == [] and [d.reason for d in cut] == ["near-duplicate paragraph"]


PROSE = (
    "# Guide\n\nUse the tool, e.g. for backups. It is fast. It also has a flag for dry runs.\n\n"
    "## More\n\nShort one. Two."
)


def test_summarising_keeps_whole_first_sentences_and_stops_within_the_limit() -> None:
    doc = parse(PROSE, "g")
    dropped = summarise(doc, len(render(doc)) - 1)
    body = render(doc)
    assert "Use the tool, e.g. for backups." in body  # "e.g." does not end a sentence
    assert "It is fast." not in body
    assert [d.text for d in dropped] == ["It is fast. It also has a flag for dry runs."]
    assert "Short one. Two." in body  # within the limit after the longest section


def test_a_trim_summarises_only_over_the_threshold() -> None:
    member = _member("g", PROSE)
    assert trim_proposal(member, 0.8, len(PROSE)) is None
    over = trim_proposal(member, 0.8, len(PROSE) - 1)
    assert over is not None and over.chars_after < len(PROSE)
    assert "Short one. Two." in over.body  # only until it is within the threshold
    assert {d.reason for d in over.dropped} == {"summarised"}
