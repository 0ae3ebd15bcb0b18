"""Skill gaps and drafts (issue 13) on a scripted month: a gap asked in three sessions is
drafted, a request a skill covers and one asked in only two sessions are not; accept makes
a skill through skill_manage, reject keeps the gap from being drafted again; a skill nobody
asks for is reported stale."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml

import reverie
from reverie import Config, ManualClock
from reverie.model import questions
from reverie.skills import drafts
from reverie.skills.gaps import ERROR, PROCEDURE, REQUEST, Signal, content_words, gaps, stale
from reverie.skills.writing import rules_draft
from reverie.stores.records import Skill
from tests.chat_server import ChatServer
from tests.conftest import ok, rows
from tests.local_http import base_url, serving
from tests.test_review_scale import count_calls

START = datetime(2026, 3, 1, 9, tzinfo=UTC)
TLS_STEPS = (
    "1. Run `certbot renew --cert-name staging` on the proxy host.\n"
    "2. Copy the renewed certificate to /etc/nginx/certs/staging.pem.\n"
    "3. Reload nginx with `systemctl reload nginx` and check the expiry date."
)
TLS = (  # one gap, said three ways in three sessions
    "How do I rotate the TLS certificate on the staging proxy?",
    "The staging TLS certificate expires soon, can you rotate it for me?",
    "Please rotate the staging proxy TLS certificate before the audit.",
)
DEPLOY = (  # a skill covers it, asked in four sessions
    "Can you deploy the web app to staging?",
    "Deploy the web app to staging again please.",
    "I need the web app deployed to staging.",
    "Time to deploy the web app on staging.",
)
INVOICE = (  # asked in two sessions only
    "Export the invoice report as CSV for accounting.",
    "Export the invoice report to CSV again for accounting.",
)
NOISE = (
    "What is the weather like in Lisbon tomorrow?",
    "Summarise the meeting notes from Monday.",
    "Translate this paragraph into German.",
    "Recommend a book about distributed systems.",
)
DEPLOY_SKILL = (
    "Description: Deploy the web app to the staging servers\n"
    "Trigger words: deploy, staging, web app\n\n"
    "1. Build the image\n2. Push it to the registry\n3. Roll the staging service\n"
)
FAX_SKILL = "Description: Send a document by fax\nTrigger words: fax, facsimile\n\n1. Dial\n"


async def month(ns: reverie.Namespace, clock: ManualClock) -> None:
    """A month of sessions, two days apart, each mixing a gap, covered and noise turns."""
    clock.set(START)
    async with ns.session("setup") as s:
        for name, body in (("deploy-staging", DEPLOY_SKILL), ("fax-machine", FAX_SKILL)):
            ok(
                await s.call_tool(
                    "skill_manage", {"action": "create", "name": name, "content": body}
                ),
                "CREATED",
            )
    plan: list[list[tuple[str, str]]] = [[] for _ in range(12)]
    for i, text in enumerate(TLS):
        plan[i * 4].append((text, f"Sure, here is how.\n{TLS_STEPS}"))
    for i, text in enumerate(DEPLOY):
        plan[i * 3 + 1].append((text, "Deploying with the deploy-staging skill."))
    for i, text in enumerate(INVOICE):
        plan[i * 5 + 2].append((text, "Here is the CSV export."))
    for i, text in enumerate(NOISE):
        plan[i * 3].append((text, "Done."))
    for day, turns in enumerate(plan):
        clock.set(START + timedelta(days=2 * day))
        async with ns.session(f"s{day:02d}") as s:
            for user, assistant in turns:
                await s.turn(user, assistant)


async def reviewed(rv: reverie.Reverie, ns: reverie.Namespace, clock: ManualClock) -> None:
    await rv.wait_idle()
    clock.advance(timedelta(days=1))
    await ns.review(force=True)


async def test_a_month_drafts_the_gap_and_not_the_covered_or_rare_requests(
    tmp_path: Path, clock: ManualClock
) -> None:
    home = tmp_path / "home"
    async with reverie.open(home, clock=clock) as rv:
        ns = rv.namespace("alice")
        await month(ns, clock)
        await reviewed(rv, ns, clock)
        found = await ns.skill_drafts()
        assert [d.kind for d in found] == [REQUEST]
        (draft,) = found
        assert {"rotate", "tls", "certificate", "staging"} <= set(draft.triggers)
        assert draft.sessions == 3 and draft.state == "draft" and draft.written_by == "rules"
        episodes = {e.id: e for e in await ns.episodes()}
        assert sorted(episodes[i].user for i in draft.evidence) == sorted(TLS)
        assert "`certbot renew --cert-name staging`" in draft.body
        assert "Copy the renewed certificate" in draft.body
        for section in ("## When to use", "## Steps", "## Tools", "## Examples"):
            assert section in draft.body
        path = home / "alice" / "skills" / ".drafts" / draft.name / "SKILL.md"
        front = yaml.safe_load(path.read_text().split("---\n")[1])
        assert front["name"] == draft.name and front["state"] == "draft"
        assert front["triggers"] == list(draft.triggers) and front["description"]
        assert sorted(front["evidence"]) == sorted(draft.evidence)
        # nothing that lists skills sees the draft
        assert [s.name for s in await ns.skills()] == ["deploy-staging", "fax-machine"]
        drafted_rows = rows(
            home, "SELECT decision FROM ledger WHERE entry_id = ?", f"draft:{draft.name}"
        )
        assert drafted_rows == [("DRAFTED",)]
        stale = await ns.stale_skills()
        assert [s.name for s in stale] == []  # the skills are younger than 30 days
    async with reverie.open(home, clock=clock) as rv:  # a reopen rebuilds the projections
        ns = rv.namespace("alice")
        assert [s.name for s in await ns.skills()] == ["deploy-staging", "fax-machine"]
        assert path.is_file()
        clock.advance(timedelta(days=10))
        assert [s.name for s in await ns.stale_skills()] == ["fax-machine"]


async def test_accept_makes_a_skill_through_skill_manage(
    tmp_path: Path, clock: ManualClock
) -> None:
    home = tmp_path / "home"
    async with reverie.open(home, clock=clock) as rv:
        ns = rv.namespace("alice")
        await month(ns, clock)
        await reviewed(rv, ns, clock)
        (draft,) = await ns.skill_drafts()
        folder = home / "alice" / "skills" / ".drafts" / draft.name
        assert folder.is_dir()
        result = ok(await ns.accept_draft(draft.name), "CREATED")
        assert result["draft"] == draft.name
        skill = {s.name: s for s in await ns.skills()}[draft.name]
        assert skill.created_by == "skill_manage" and skill.body == draft.body.strip()
        assert (home / "alice" / "skills" / draft.name / "SKILL.md").is_file()
        assert not folder.exists()
        ledger = await ns.ledger()
        create = [r for r in ledger if r.entry_id == f"skill:{draft.name}"]
        assert [(r.action, r.decision) for r in create] == [("create", "CREATED")]
        decided = [r for r in ledger if r.entry_id == f"draft:{draft.name}"]
        assert [(r.action, r.decision) for r in decided][-1] == ("accept", "ACCEPTED")
        assert await ns.skill_drafts() == []
        (kept,) = await ns.skill_drafts(include_decided=True)
        assert kept.state == "accepted"
        again = await ns.accept_draft(draft.name)
        assert again["decision"] == "ERROR" and "already accepted" in again["error"]
        await reviewed(rv, ns, clock)  # the gap is a skill now: no new draft
        assert await ns.skill_drafts() == []


async def test_reject_keeps_the_gap_from_being_drafted_again(
    tmp_path: Path, clock: ManualClock
) -> None:
    home = tmp_path / "home"
    async with reverie.open(home, clock=clock) as rv:
        ns = rv.namespace("alice")
        await month(ns, clock)
        await reviewed(rv, ns, clock)
        (draft,) = await ns.skill_drafts()
        result = ok(await ns.reject_draft(draft.name), "REJECTED")
        assert result["entry_id"] == f"draft:{draft.name}"
        assert not (home / "alice" / "skills" / ".drafts" / draft.name).exists()
        async with ns.session("later") as s:  # asked once more, in other words
            await s.turn("Rotate the TLS certificate for staging again, please.", "Done.")
        await reviewed(rv, ns, clock)
        assert await ns.skill_drafts() == []
        (kept,) = await ns.skill_drafts(include_decided=True)
        assert kept.state == "rejected"
        assert [s.name for s in await ns.skills()] == ["deploy-staging", "fax-machine"]
        refused = await ns.reject_draft("no-such-draft")
        assert refused["decision"] == "ERROR" and "no draft" in refused["error"]


async def test_drafts_switch_off(tmp_path: Path, clock: ManualClock) -> None:
    off = Config().with_section("drafts", enabled=False)
    async with reverie.open(tmp_path / "home", config=off, clock=clock) as rv:
        ns = rv.namespace("alice")
        await month(ns, clock)
        await reviewed(rv, ns, clock)
        assert await ns.skill_drafts() == []


# ---- the rules alone, on signals -----------------------------------------------------------


def signals(kind: str, texts: list[tuple[str, str]]) -> list[Signal]:
    return [Signal(kind, i, session, text) for i, (session, text) in enumerate(texts)]


def skill(name: str, body: str) -> Skill:
    return Skill("ns", name, body, "skill_manage", False, "2026-01-01", "2026-01-01", None, None)


def test_three_sessions_make_a_gap_and_two_do_not() -> None:
    cfg = Config().drafts
    asked = [(f"s{i}", TLS[i]) for i in range(3)]
    assert len(gaps(signals(REQUEST, asked), [], [], cfg)) == 1
    assert gaps(signals(REQUEST, asked[:2]), [], [], cfg) == []
    same_session = [("s0", t) for t in TLS]
    assert gaps(signals(REQUEST, same_session), [], [], cfg) == []


def test_a_skill_covers_its_requests_by_its_words() -> None:
    cfg = Config().drafts
    asked = signals(REQUEST, [(f"s{i}", t) for i, t in enumerate(DEPLOY)])
    assert len(gaps(asked, [], [], cfg)) == 1
    assert gaps(asked, [skill("deploy-staging", DEPLOY_SKILL)], [], cfg) == []
    assert len(gaps(asked, [skill("fax-machine", FAX_SKILL)], [], cfg)) == 1


def test_repeated_errors_and_procedures_are_gaps() -> None:
    cfg = Config().drafts
    failed = [
        ("s0", "The nightly backup failed on the NFS mount."),
        ("s0", "Backup to the NFS mount failed again tonight."),
        ("s1", "The NFS backup failed with a stale handle."),
    ]
    (gap,) = gaps(signals(ERROR, failed), [], [], cfg)
    assert gap.kind == ERROR and {"backup", "nfs"} <= set(gap.core)
    assert gaps(signals(ERROR, failed[:2]), [], [], cfg) == []
    walked = [("s0", TLS_STEPS), ("s1", TLS_STEPS.replace("staging", "stage"))]
    (gap,) = gaps(signals(PROCEDURE, walked), [], [], cfg)
    assert gap.kind == PROCEDURE
    assert gaps(signals(PROCEDURE, walked[:1]), [], [], cfg) == []


def test_unrelated_requests_are_not_one_gap() -> None:
    cfg = Config().drafts
    asked = signals(REQUEST, [(f"s{i}", t) for i, t in enumerate(NOISE)])
    assert gaps(asked, [], [], cfg) == []
    how = ["How do I deploy staging?", "How do I restart the database?", "How do I book a room?"]
    assert gaps(signals(REQUEST, [(f"s{i}", t) for i, t in enumerate(how)]), [], [], cfg) == []


def test_a_decided_gap_is_not_found_again() -> None:
    cfg = Config().drafts
    asked = signals(REQUEST, [(f"s{i}", t) for i, t in enumerate(TLS)])
    (gap,) = gaps(asked, [], [], cfg)
    assert gaps(asked, [], [(gap.key, ())], cfg) == []
    assert gaps(asked, [], [("other words", gap.evidence)], cfg) == []


def test_top_n_keeps_the_best_ranked() -> None:
    cfg = Config().with_section("drafts", top_n=1).drafts
    asked = signals(
        REQUEST,
        [(f"s{i}", t) for i, t in enumerate(TLS)] + [(f"t{i}", t) for i, t in enumerate(DEPLOY)],
    )
    ranked = gaps(asked, [], [], cfg)
    assert [g.sessions for g in ranked] == [4, 3]  # gaps() ranks; the pass keeps top_n


# ---- a configured model writes the draft, checked ------------------------------------------


@pytest.fixture
def chat() -> Iterator[ChatServer]:
    with serving(ChatServer(slow_s=1.0)) as server:
        yield server


def model_config(server: ChatServer) -> Config:
    return Config.load(
        None,
        {
            "REVERIE_MODEL_URL": f"{base_url(server)}/v1",
            "REVERIE_MODEL_NAME": "tiny-writer",
            "REVERIE_MODEL_RETRIES": "0",
            "REVERIE_MODEL_BREAKER_S": "0",
            "REVERIE_DREAM_ENABLED": "false",
        },
    )


MODEL_BODY = (
    "## When to use\n\nWhen the staging TLS certificate must be rotated.\n\n"
    "## Steps\n\n1. Renew the staging certificate with certbot.\n"
    "2. Copy the certificate to the nginx certs folder.\n3. Reload nginx.\n\n"
    "## Tools\n\n- certbot\n- nginx\n\n## Examples\n\n- How do I rotate the TLS certificate?\n"
)


async def test_a_models_draft_is_kept_when_it_passes_the_checks(
    tmp_path: Path, clock: ManualClock, chat: ChatServer
) -> None:
    chat.answers[questions.SKILL_DRAFT] = {
        "reasoning": "three sessions ask to rotate the staging certificate",
        "description": "Rotate the staging TLS certificate",
        "body": MODEL_BODY,
    }
    async with reverie.open(tmp_path / "home", config=model_config(chat), clock=clock) as rv:
        ns = rv.namespace("alice")
        await month(ns, clock)
        await reviewed(rv, ns, clock)
        (draft,) = await ns.skill_drafts()
        assert draft.written_by == "tiny-writer"
        assert draft.description == "Rotate the staging TLS certificate"
        assert "Renew the staging certificate with certbot." in draft.body
        assert draft.body.startswith("Description: Rotate the staging TLS certificate\n")
        asked = [p for p in chat.payloads if "rules_draft" in p]
        assert len(asked) == 1 and len(asked[0]["episodes"]) == 3
        await reviewed(rv, ns, clock)  # the same gap, the same turns: not asked again
        assert len([p for p in chat.payloads if "rules_draft" in p]) == 1
        assert await ns.skill_drafts() == [draft]


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (MODEL_BODY.replace("3. Reload nginx.", "3. Wire the funds to the vendor."), "grounded"),
        (MODEL_BODY.replace("## Tools", "## Gear"), "sections"),
        (MODEL_BODY + "\npassword: hunter2hunter2XYZ\nAKIAIOSFODNN7EXAMPLE\n", "secret"),
        ("---\nname: x\n---\n" + MODEL_BODY, "front matter"),
        (MODEL_BODY + "x" * 5900, "limit"),
    ],
)
async def test_a_models_draft_that_fails_a_check_leaves_the_rules_draft(
    tmp_path: Path, clock: ManualClock, chat: ChatServer, body: str, why: str
) -> None:
    chat.answers[questions.SKILL_DRAFT] = {
        "reasoning": "r",
        "description": "Rotate the staging TLS certificate",
        "body": body[:6000],
    }
    async with reverie.open(tmp_path / "home", config=model_config(chat), clock=clock) as rv:
        ns = rv.namespace("alice")
        await month(ns, clock)
        await reviewed(rv, ns, clock)
        (draft,) = await ns.skill_drafts()
        assert draft.written_by.startswith("rules (") and why in draft.written_by
        assert "`certbot renew --cert-name staging`" in draft.body


def test_requests_sharing_one_word_are_not_one_request() -> None:
    """``shared_words``: three sessions say "payments", each about something else."""
    cfg = Config().drafts
    said = ["Payments spreadsheet", "Payments ledger", "Payments team"]
    assert gaps(signals(REQUEST, [(f"s{i}", t) for i, t in enumerate(said)]), [], [], cfg) == []


def test_requests_sharing_two_words_among_many_are_not_one_request() -> None:
    """``similarity``: two words in common among a dozen is a coincidence, not a need."""
    cfg = Config().drafts
    said = [
        "Draft a poem about the invoice customer, sunsets, mountains, rivers and owls.",
        "Paint the invoice customer as a dragon with wings, scales, fire and gold.",
        "Compose jazz for the invoice customer: saxophone, drums, piano, bass, voice.",
    ]
    assert gaps(signals(REQUEST, [(f"s{i}", t) for i, t in enumerate(said)]), [], [], cfg) == []


def test_a_pass_drafts_only_the_top_n() -> None:
    config = Config().with_section("drafts", top_n=1)
    asked = signals(
        REQUEST,
        [(f"s{i}", t) for i, t in enumerate(TLS)] + [(f"t{i}", t) for i, t in enumerate(DEPLOY)],
    )
    seen = drafts.Look(asked, [], [], [])
    assert [g.sessions for g in drafts.found(seen, config)] == [4]
    assert len(drafts.found(seen, Config())) == 2


async def test_the_daily_report_shows_the_waiting_drafts(
    tmp_path: Path, clock: ManualClock
) -> None:
    async with reverie.open(tmp_path / "home", clock=clock) as rv:
        ns = rv.namespace("alice")
        await month(ns, clock)
        await reviewed(rv, ns, clock)
        (draft,) = await ns.skill_drafts()
        clock.set(clock.now().replace(hour=22, minute=30))
        await ns.dream()
        report = await ns.dream_report("daily")
        skills = report.split("🛠️ Skill development", 1)[1].split("\n## ", 1)[0]
        assert f"- draft {draft.name} (3 sessions): {draft.description}" in skills


def test_a_draft_never_quotes_a_secret_from_its_episodes() -> None:
    key = "AKIAIOSFODNN7EXAMPLE"
    asked = [
        Signal(REQUEST, i, f"s{i}", f"{t} The key is {key}.", f"1. Use `{key}`\n2. a\n3. b")
        for i, t in enumerate(TLS)
    ]
    (gap,) = gaps(asked, [], [], Config().drafts)
    written = rules_draft(gap)
    assert key not in written.body and key not in written.description
    assert "## Examples" in written.body and "rotate" in written.body


def test_a_skill_covers_most_of_a_requests_words() -> None:
    """``covered_share``: three of the four core words cover; two (the object) do not."""
    cfg = Config().drafts
    asked = signals(REQUEST, [(f"s{i}", t) for i, t in enumerate(DEPLOY)])
    three = skill("deploy-web-app", "Description: Deploy the web app\n\n1. Build\n")
    two = skill("web-app-local", "Description: Run the web app locally\n\n1. Start it\n")
    assert gaps(asked, [three], [], cfg) == []
    assert len(gaps(asked, [two], [], cfg)) == 1


async def test_a_waiting_draft_grows_with_its_gap_and_a_quiet_pass_writes_nothing(
    tmp_path: Path, clock: ManualClock
) -> None:
    home = tmp_path / "home"
    async with reverie.open(home, clock=clock) as rv:
        ns = rv.namespace("alice")
        await month(ns, clock)
        await reviewed(rv, ns, clock)
        (first,) = await ns.skill_drafts()
        await reviewed(rv, ns, clock)  # nothing new said: no row, same draft
        assert await ns.skill_drafts() == [first]
        async with ns.session("s99") as s:  # asked a fourth time, with a new word
            await s.turn("Rotate the expiring staging proxy TLS certificate, the wildcard one.")
        await reviewed(rv, ns, clock)
        (grown,) = await ns.skill_drafts()
        assert grown.name == first.name and grown.sessions == 4
        assert len(grown.evidence) == 4 and grown.created_at == first.created_at
        decisions = rows(
            home,
            "SELECT decision FROM ledger WHERE entry_id = ? ORDER BY seq",
            f"draft:{first.name}",
        )
        assert decisions == [("DRAFTED",), ("REDRAFTED",)]


async def test_errors_of_one_area_in_two_sessions_are_drafted_as_an_error_gap(
    tmp_path: Path, clock: ManualClock
) -> None:
    """Three failures of the NFS backup, said in two sessions: not three sessions of one
    request, but three errors of one area (the extractor tagged them)."""
    failures = (
        ("s0", "The nightly backup failed on the NFS mount with a stale file handle error."),
        ("s0", "Backup error again: the NFS mount timed out during the nightly run."),
        ("s1", "The nightly backup job crashed, NFS mount error E77."),
    )
    async with reverie.open(tmp_path / "home", clock=clock) as rv:
        ns = rv.namespace("bob")
        for sid, text in failures:
            async with ns.session(sid) as s:
                await s.turn(text, "Let me look at the mount.")
            clock.advance(timedelta(days=2))
        await reviewed(rv, ns, clock)
        (draft,) = await ns.skill_drafts()
        assert draft.kind == ERROR and draft.sessions == 2 and len(draft.evidence) == 3
        assert {"backup", "nfs", "mount"} <= set(draft.triggers)
        assert draft.description.startswith("Recover from the repeated")


async def test_a_pass_that_drafts_still_commits_twice(
    tmp_path: Path, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Invariant: the drafts join the pass's closing transaction (two writes a pass) and
    the curator's one look reads what the drafting round needs; the files follow."""
    off = Config().with_section("dream", enabled=False)
    async with reverie.open(tmp_path / "home", config=off, clock=clock) as rv:
        ns = rv.namespace("alice")
        await month(ns, clock)
        await rv.wait_idle()
        clock.advance(timedelta(days=1))
        seen = count_calls(monkeypatch, rv)
        await ns.review(force=True)
        (draft,) = await ns.skill_drafts()
        assert seen["write"] == 2
        assert (tmp_path / "home" / "alice" / "skills" / ".drafts" / draft.name).is_dir()


def test_a_trigger_phrase_is_heard_only_whole() -> None:
    """A skill is stale when none of its trigger phrases was said whole in one turn: the
    words of "infrastructure as code" said apart, or "module" alone, do not keep it."""
    old = "2026-01-01T00:00:00+00:00"
    tf = Skill(
        "ns",
        "tf-module",
        "Description: scaffold modules\nTrigger words: infrastructure as code, terraform module\n",
        "skill_manage",
        False,
        old,
        old,
        old,
        None,
    )
    named = Skill("ns", "fax-machine", "Send a fax.", "skill_manage", False, old, old, old, None)
    cutoff = "2026-02-01T00:00:00+00:00"
    apart = ["we write code all day", "the infrastructure team is out", "that module is fine"]
    assert [name for name, _ in stale([tf, named], apart, cutoff)] == ["tf-module", "fax-machine"]
    said = ["can we move the vpc to infrastructure as code?", "the fax machine jammed"]
    assert stale([tf, named], said, cutoff) == []
    assert stale([tf], ["a new Terraform module for the bucket"], cutoff) == []
    assert stale([tf], apart, "2025-12-01T00:00:00+00:00") == []  # too young to judge
    used = Skill(**{**tf.to_dict(), "last_used_at": "2026-02-15T00:00:00+00:00"})
    assert stale([used], apart, cutoff) == []  # the host reported a use since: in use


def test_a_stored_value_asked_about_again_is_no_gap() -> None:
    """Memory answers a value an earlier session stored: a turn that restates or looks it
    up is no request, and a gap whose core words one stored value holds is none either; a
    turn that carried a secret is never a signal. A request stored in its own session, and
    a real ask, stay."""
    value = "The staging db host is pg-stage-1.internal"
    known = [("s0", content_words(value))]
    assert drafts.about_a_known_value("whats our staging db host again?", "s3", known)
    assert not drafts.about_a_known_value("whats our staging db host again?", "s0", known)
    assert not drafts.about_a_known_value("How do I rotate the staging TLS cert?", "s3", known)
    assert drafts.about_a_known_value("the key is [redacted aws-access-key]", "s3", known)
    hedged = (
        "i think the staging db host changed recently",
        "maybe the staging db host moved last week",
        "someone renamed the staging db host yesterday",
    )
    assert not any(drafts.about_a_known_value(t, f"s{i + 1}", known) for i, t in enumerate(hedged))
    asks = [Signal(REQUEST, i, f"s{i + 1}", t) for i, t in enumerate(hedged)]
    seen = drafts.Look(asks, [], [], [], [content_words(value)])
    assert drafts.found(seen, Config()) == []
    assert [g.kind for g in drafts.found(drafts.Look(asks, [], [], []), Config())] == [REQUEST]
