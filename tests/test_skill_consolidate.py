"""Curator consolidate and patch on real homes: dry runs write nothing, apply archives the
originals reversibly and keeps every non-duplicate line, unmerge / unpatch / restore bring
the originals back, and pinned or preinstalled skills are never touched."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
import yaml

import reverie
from reverie import Config, ManualClock
from reverie.errors import InputError
from reverie.skills.consolidate import line_key
from reverie.stores import skills
from reverie.stores.records import Skill
from tests.conftest import db_counts, ok, rows, tree

STAGING = """# Deploy

Deploy the web app with the release script to the staging cluster.

## Steps

1. Run the tests with `make test`.
2. Build the image with `make image`.
3. Push the image with `make push ENV=staging`.

```
make deploy
```

## Notes

Always check the dashboard after a deploy.
""".strip()

PROD = """# Deploy

Deploy the web app with the release script to the production cluster.

## Steps

1. Run the tests with `make test`.
2. Build the image with `make image`.
3. Push the image with `make push ENV=prod`.
4. Tag the release.

```
make deploy
```

## Notes

Always check the dashboard after a deploy.

## Rollback

Run `make rollback` and check the dashboard again.
""".strip()

OTHER = "# Coffee\n\nGrind the beans, heat the water to 94C, pour slowly."


async def _create(ns: reverie.Namespace, **bodies: str) -> None:
    async with ns.session("s") as s:
        for name, body in bodies.items():
            ok(
                await s.call_tool(
                    "skill_manage", {"action": "create", "name": name, "content": body}
                ),
                "CREATED",
            )


async def _insert(
    rv: reverie.Reverie, name: str, body: str, created_by: str, namespace: str = "default"
) -> None:
    """A skill registered past skill_manage (by the host's installer, or an old home)."""
    now = rv.services.now()
    skill = Skill(namespace, name, body, created_by, False, now, now, now, None)
    await rv.services.db.write(lambda conn: skills.insert(conn, skill))
    rv.services.projector.write_skill(skill)


def _body(home: Path, name: str, where: str = "skills") -> str:
    text = (home / "default" / where / name / "SKILL.md").read_text()
    return text.split("---\n", 2)[2].strip()


async def _homes_with_overlap(rv: reverie.Reverie, clock: ManualClock) -> reverie.Namespace:
    ns = rv.namespace()
    await _create(ns, **{"deploy-prod": PROD})
    clock.advance(timedelta(days=1))
    await _create(ns, **{"deploy-staging": STAGING, "coffee": OTHER})
    await _create(ns, **{"deploy-pinned": PROD.replace("prod", "pinned")})
    ok(await ns.pin_skill("deploy-pinned"), "PATCHED")
    await _insert(rv, "deploy-official", PROD.replace("prod", "official"), "preinstalled")
    await rv.wait_idle()
    return ns


async def test_consolidate_dry_run_lists_the_proposal_and_writes_nothing(
    rv: reverie.Reverie, clock: ManualClock
) -> None:
    ns = await _homes_with_overlap(rv, clock)
    counts, files = db_counts(rv.home), tree(rv.home)
    dry = ok(await ns.consolidate_skills(), "NOOP")
    [proposal] = dry["proposals"]
    assert dry["dry_run"] is True and dry["archived"] == [] and dry["applied"] == []
    # the oldest of two equally used skills gives the name; pinned and preinstalled stay out
    assert proposal["names"] == ["deploy-prod", "deploy-staging"]
    assert proposal["merged_name"] == "deploy-prod" and "oldest" in proposal["why"]
    assert proposal["chars_before"] == len(PROD) + len(STAGING)
    assert proposal["chars_after"] == len(proposal["body"]) < proposal["chars_before"]
    reasons = {(d["source"], d["reason"]) for d in proposal["dropped"]}
    assert ("deploy-staging", "duplicate block") in reasons
    assert ("deploy-staging", "duplicate line") in reasons
    assert await ns.skill_proposals() == [proposal]
    assert db_counts(rv.home) == counts and tree(rv.home) == files


async def test_the_most_used_member_names_the_merge(
    rv: reverie.Reverie, clock: ManualClock
) -> None:
    ns = await _homes_with_overlap(rv, clock)
    async with ns.session("u") as s:
        for _ in range(2):
            ok(await s.used_skill("deploy-staging"), "PATCHED")
    [proposal] = (await ns.consolidate_skills())["proposals"]
    assert proposal["names"] == ["deploy-staging", "deploy-prod"]
    assert proposal["merged_name"] == "deploy-staging" and "2 uses" in proposal["why"]


def _every_line_kept(original: str, merged: str) -> None:
    """Every line of an original's body is in the merged body (a repeat once)."""
    merged_keys = {line_key(x) for x in merged.splitlines()}
    for line in original.splitlines():
        assert not line_key(line) or line_key(line) in merged_keys, line


async def test_apply_archives_the_originals_and_unmerge_brings_them_back(
    rv: reverie.Reverie, clock: ManualClock
) -> None:
    ns = await _homes_with_overlap(rv, clock)
    pinned, official = _body(rv.home, "deploy-pinned"), _body(rv.home, "deploy-official")
    applied = ok(await ns.consolidate_skills(apply=True), "PATCHED")
    [proposal] = applied["proposals"]
    assert applied["applied"] == ["deploy-prod"] and applied["dry_run"] is False
    [moved] = applied["archived"]
    assert moved["name"] == "deploy-staging"
    assert (
        (rv.home / "default" / moved["archive_dir"] / "SKILL.md")
        .read_text()
        .endswith(STAGING + "\n")
    )
    assert not (rv.home / "default" / "skills" / "deploy-staging").exists()
    merged = _body(rv.home, "deploy-prod")
    assert merged == proposal["body"].strip()
    for original in (PROD, STAGING):
        _every_line_kept(original, merged)
    names = sorted(s.name for s in await ns.skills())
    assert names == ["coffee", "deploy-official", "deploy-pinned", "deploy-prod"]
    assert (
        _body(rv.home, "deploy-pinned") == pinned and _body(rv.home, "deploy-official") == official
    )
    [merge_row] = [r for r in await ns.ledger("skill:deploy-prod") if r.action == "merge"]
    assert merge_row.before == {"body": PROD}
    assert merge_row.detail["originals"] == ["deploy-prod", "deploy-staging"]
    assert (await ns.consolidate_skills())["proposals"] == []  # nothing overlaps any more

    back = ok(await ns.unmerge_skill("deploy-prod"), "RESTORED")
    assert back["restored"] == [moved]
    assert _body(rv.home, "deploy-prod") == PROD and _body(rv.home, "deploy-staging") == STAGING
    assert not (rv.home / "default" / moved["archive_dir"]).exists()
    [unmerge_row] = [r for r in await ns.ledger("skill:deploy-prod") if r.action == "unmerge"]
    assert unmerge_row.before == {"body": merged}  # the merged body is kept in the ledger
    counts = db_counts(rv.home)
    ok(await ns.unmerge_skill("deploy-prod"), "ERROR")  # undone already
    assert db_counts(rv.home) == counts


async def test_restore_by_name_brings_an_archived_original_back(
    rv: reverie.Reverie, clock: ManualClock
) -> None:
    ns = await _homes_with_overlap(rv, clock)
    ok(await ns.consolidate_skills(apply=True), "PATCHED")
    ok(await ns.restore_skill("deploy-staging"), "RESTORED")
    assert _body(rv.home, "deploy-staging") == STAGING
    # an unmerge after it leaves the restored original as it is and restores the body
    back = ok(await ns.unmerge_skill("deploy-prod"), "RESTORED")
    assert back["restored"] == [] and _body(rv.home, "deploy-prod") == PROD


async def test_bad_names_are_refused_and_write_nothing(
    rv: reverie.Reverie, clock: ManualClock
) -> None:
    ns = await _homes_with_overlap(rv, clock)
    counts, files = db_counts(rv.home), tree(rv.home)
    for result in (
        await ns.unmerge_skill("ghost"),
        await ns.unmerge_skill("coffee"),  # never merged
        await ns.unmerge_skill("deploy-official"),
        await ns.unpatch_skill("ghost"),
        await ns.unpatch_skill("coffee"),  # never trimmed
    ):
        assert result["decision"] == "ERROR" and result["error"]
    assert "no merge to undo" in (await ns.unmerge_skill("ghost"))["error"]
    with pytest.raises(InputError):
        await ns.unmerge_skill(5)  # type: ignore[arg-type]
    with pytest.raises(InputError):
        await ns.consolidate_skills(apply="yes")  # type: ignore[arg-type]
    with pytest.raises(InputError):
        await ns.patch_skills(apply=1)  # type: ignore[arg-type]
    assert db_counts(rv.home) == counts and tree(rv.home) == files


async def test_a_merge_over_the_skill_cap_is_blocked_and_not_applied(
    tmp_path: Path, clock: ManualClock
) -> None:
    cap = len(PROD) + 40  # each original fits; the two merged do not
    config = Config().with_section("writer", max_skill_chars=cap)
    async with reverie.open(tmp_path / "h", clock=clock, config=config) as rv:
        ns = rv.namespace()
        await _create(ns, **{"deploy-prod": PROD, "deploy-staging": STAGING})
        [proposal] = (await ns.consolidate_skills())["proposals"]
        assert proposal["chars_after"] > cap and "the limit is" in proposal["blocked"]
        counts = db_counts(rv.home)
        applied = ok(await ns.consolidate_skills(apply=True), "NOOP")
        assert applied["applied"] == [] and db_counts(rv.home) == counts


REPEATED = """# Backup

Back up the database every night with `pg_dump` to the bucket.

## Steps

- Stop the writer.
- Dump the database with `pg_dump -Fc`.
- Upload the dump to the bucket.

Run it from the backup host with the ops account.

## Steps

- Dump the database with `pg_dump -Fc`.
- Check the dump's size.

Always run it from the backup host with the ops account.
""".strip()


async def test_trim_dry_run_apply_and_unpatch(rv: reverie.Reverie) -> None:
    ns = rv.namespace()
    await _create(ns, backup=REPEATED, coffee=OTHER, **{"pinned-backup": REPEATED})
    ok(await ns.pin_skill("pinned-backup"), "PATCHED")
    await _insert(rv, "official-backup", REPEATED, "preinstalled")
    await rv.wait_idle()
    counts, files = db_counts(rv.home), tree(rv.home)
    dry = ok(await ns.patch_skills(), "NOOP")
    [proposal] = dry["proposals"]
    assert proposal["names"] == ["backup"] and proposal["kind"] == "patch"
    assert db_counts(rv.home) == counts and tree(rv.home) == files
    body = proposal["body"]
    assert body.count("## Steps") == 1 and body.count("pg_dump -Fc") == 1
    assert "Check the dump's size." in body and "Stop the writer." in body
    dropped = {(d["reason"], d["text"]) for d in proposal["dropped"]}
    assert ("duplicate line", "- Dump the database with `pg_dump -Fc`.") in dropped
    assert (
        "near-duplicate paragraph",
        "Run it from the backup host with the ops account.",
    ) in dropped
    assert "Always run it from the backup host" in body  # the longer of the two stays

    applied = ok(await ns.patch_skills(apply=True), "PATCHED")
    assert applied["applied"] == ["backup"]
    assert _body(rv.home, "backup") == body.strip()
    assert _body(rv.home, "official-backup") == REPEATED
    assert _body(rv.home, "pinned-backup") == REPEATED
    [row] = [r for r in await ns.ledger("skill:backup") if r.action == "trim"]
    assert row.before == {"body": REPEATED} and row.after == {"body": body}
    assert (await ns.patch_skills())["proposals"] == []  # nothing left to trim

    ok(await ns.unpatch_skill("backup"), "RESTORED")
    assert _body(rv.home, "backup") == REPEATED
    assert rows(rv.home, "SELECT body FROM skills WHERE name = 'backup'") == [(REPEATED,)]


LONG = """# Release

Tag the commit with the version. The version comes from pyproject.toml and it must match
the changelog. A mismatch fails the release job, and the job then mails the maintainers.

## Steps

1. Build the wheel. It lands in dist/ and is checked by twine before the upload.
2. Upload with `twine upload dist/*`. Use the token from the vault, never a password.

```
make release VERSION=1.2.3
```
""".strip()


async def test_trim_summarises_the_longest_prose_by_whole_sentences(
    tmp_path: Path, clock: ManualClock
) -> None:
    config = Config().with_section("curator", bloat_chars=300)
    async with reverie.open(tmp_path / "h", clock=clock, config=config) as rv:
        ns = rv.namespace()
        await _create(ns, release=LONG)
        [proposal] = (await ns.patch_skills())["proposals"]
        body = proposal["body"]
        assert "Tag the commit with the version." in body
        assert "make release VERSION=1.2.3" in body  # code is never shortened
        summarised = [d["text"] for d in proposal["dropped"] if d["reason"] == "summarised"]
        assert summarised and all(t[0].isupper() for t in summarised)  # whole sentences
        for line in body.splitlines():
            if line and not line.startswith(("#", "```", "make")):
                assert line.rstrip().endswith((".", ":")), line
        ok(await ns.patch_skills(apply=True), "PATCHED")
        ok(await ns.unpatch_skill("release"), "RESTORED")
        assert _body(rv.home, "release") == LONG


async def test_a_skill_under_the_threshold_without_repeats_gets_no_patch(
    tmp_path: Path, clock: ManualClock
) -> None:
    config = Config().with_section("curator", bloat_chars=len(LONG))
    async with reverie.open(tmp_path / "h", clock=clock, config=config) as rv:
        await _create(rv.namespace(), release=LONG)
        assert (await rv.namespace().patch_skills())["proposals"] == []


async def test_the_review_pass_reports_proposals_and_applies_none(
    rv: reverie.Reverie, clock: ManualClock
) -> None:
    ns = await _homes_with_overlap(rv, clock)
    await rv.review(force=True)
    log = (rv.home / "default" / "logs" / "wiki" / "curator.jsonl").read_text().splitlines()
    found = [yaml.safe_load(line) for line in log if '"proposal"' in line]
    assert [(p["kind"], p["names"]) for p in found] == [
        ("consolidate", ["deploy-prod", "deploy-staging"])
    ]
    assert found[0]["dry_run"] is True
    assert sorted(s.name for s in await ns.skills()) == [
        "coffee",
        "deploy-official",
        "deploy-pinned",
        "deploy-prod",
        "deploy-staging",
    ]
    assert _body(rv.home, "deploy-prod") == PROD


TWINS = """# Deploy

Deploy the web app with the release script to the staging cluster from the build host tonight.

Deploy the web app with the release script to the staging cluster from the build host today.

Deploy the web app with the release script to the production cluster."""


async def test_the_default_near_duplicate_threshold_decides_what_a_trim_drops(
    rv: reverie.Reverie,
) -> None:
    """Two paragraphs at 0.82 (over the default 0.8) are one; at 0.75 they are two."""
    ns = rv.namespace()
    await _create(ns, deploy=TWINS)
    [proposal] = (await ns.patch_skills())["proposals"]
    [dropped] = proposal["dropped"]
    assert dropped["reason"] == "near-duplicate paragraph" and dropped["text"].endswith("today.")
    assert proposal["body"].endswith("to the production cluster.")


async def test_two_trims_are_undone_one_at_a_time(rv: reverie.Reverie) -> None:
    ns = rv.namespace()
    await _create(ns, backup=REPEATED)
    first = ok(await ns.patch_skills(apply=True), "PATCHED")["proposals"][0]["body"]
    async with ns.session("p") as s:
        patch = {"action": "patch", "name": "backup", "old_text": "- Stop the writer."}
        ok(
            await s.call_tool(
                "skill_manage", {**patch, "content": "- Stop the writer.\n- stop the writer"}
            ),
            "PATCHED",
        )
    patched = _body(rv.home, "backup")
    ok(await ns.patch_skills(apply=True), "PATCHED")
    assert _body(rv.home, "backup") == first
    ok(await ns.unpatch_skill("backup"), "RESTORED")
    assert _body(rv.home, "backup") == patched
    ok(await ns.unpatch_skill("backup"), "RESTORED")
    assert _body(rv.home, "backup") == REPEATED
    ok(await ns.unpatch_skill("backup"), "ERROR")


async def test_a_merged_body_failing_create_checks_is_blocked_and_not_applied(
    rv: reverie.Reverie,
) -> None:
    """Skills written past skill_manage (an old home, a hand edit) may hold a credential
    or front matter; the merge of them passes create's checks or is not applied."""
    token = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
    await _insert(rv, "deploy-prod", PROD + f"\n\nPush with {token}.", "skill_manage")
    await _insert(rv, "deploy-staging", STAGING, "skill_manage")
    ns = rv.namespace()
    await rv.wait_idle()
    [proposal] = (await ns.consolidate_skills())["proposals"]
    assert "secret" in proposal["blocked"] and token not in proposal["blocked"]
    counts, files = db_counts(rv.home), tree(rv.home)
    assert ok(await ns.consolidate_skills(apply=True), "NOOP")["applied"] == []
    assert db_counts(rv.home) == counts and tree(rv.home) == files
    await rv.create_namespace("legacy")
    for name, body in (("legacy-a", PROD), ("legacy-b", STAGING)):
        await _insert(rv, name, f"---\nname: {name}\n---\n{body}", "skill_manage", "legacy")
    [proposal] = (await rv.namespace("legacy").consolidate_skills())["proposals"]
    assert "front matter" in proposal["blocked"]
