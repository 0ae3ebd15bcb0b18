"""The loop's rules, pure: extraction (thalamus filter, verification ladder, tags), routing,
extractive summaries, lint verdicts, promotion rewrites and the checks on a model's answer."""

from __future__ import annotations

import pytest

from reverie.model import questions
from reverie.model.offline import OfflineModel
from reverie.model.seam import Answer, Field, Schema
from reverie.rules import consolidation
from reverie.rules.extraction import Tag, Weight, candidates, is_chatter, is_hedged, tag
from reverie.rules.routing import Home, TopicHint, route, topic_for
from reverie.rules.supersede import keys, restates


@pytest.mark.parametrize(
    "text", ["hi", "Thanks!", "ok cool", "Got it.", "sounds good", "hello there", "yes"]
)
def test_greetings_and_acknowledgements_under_20_chars_are_not_candidates(text: str) -> None:
    assert is_chatter(text, 20)
    assert candidates(text, 20) == []


def test_a_short_sentence_with_a_value_is_kept() -> None:
    assert not is_chatter("Port is 5432.", 20)
    assert [c.text for c in candidates("ok. Port is 5432.", 20)] == ["Port is 5432."]


@pytest.mark.parametrize(
    "text",
    [
        "Maybe the cache is stale.",
        "I think the timeout is 30s.",
        "Should we move the database to eu-west-1?",
        "Is the deploy key rotated",
        "It might be the DNS resolver at 10.0.0.2.",
        "Probably the worker ran out of memory.",
    ],
)
def test_hedged_guesses_and_questions_never_become_candidates(text: str) -> None:
    assert is_hedged(text)
    assert candidates(text, 20) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Actually, the deploy timeout is 45s now.", Tag.CORRECTION),
        ("The build failed with exit code 137.", Tag.ERROR),
        ("We decided to use Postgres 16 for the ledger.", Tag.DECISION),
        ("Deployed release 2.4.1 to production.", Tag.COMPLETED),
        ("Turns out the cron job needs UTC timestamps.", Tag.INSIGHT),
        ("The office is on the third floor of building 7.", Tag.EVENT),
    ],
)
def test_tags_and_weights(text: str, expected: Tag) -> None:
    assert tag(text) is expected
    [found] = candidates(text, 20)
    assert found.weight is (Weight.NORMAL if expected is Tag.EVENT else Weight.HIGH)


def test_injected_snapshot_and_report_blocks_are_never_extracted() -> None:
    text = (
        '<reverie-snapshot namespace="a">\n## MEMORY\nThe deploy timeout is 45s.\n'
        "</reverie-snapshot>\nThe staging host is db-2.internal.\n"
        "<reverie-report>Promoted: backups run at 02:00 UTC.</reverie-report>"
    )
    assert [c.text for c in candidates(text, 20)] == ["The staging host is db-2.internal."]


def test_acknowledgement_prefixes_are_stripped() -> None:
    [found] = candidates("Got it, the API key rotates every 90 days.", 20)
    assert found.text == "the API key rotates every 90 days."


ROUTES = [
    ("user", "My name is Alice Smith.", Home.USER_SETTINGS, "name: Alice Smith"),
    ("user", "My timezone is Europe/Oslo.", Home.USER_SETTINGS, "timezone: Europe/Oslo"),
    ("user", "I'm in UTC+2 this quarter.", Home.USER_SETTINGS, "timezone: UTC+2"),
    ("user", "Your name is Wren.", Home.AGENT_PROFILE, "name: Wren"),
    ("user", "You are my release engineer.", Home.AGENT_PROFILE, "role: release engineer"),
    ("user", "Please reply in short bullet points.", Home.SOUL, None),
    ("user", "No emojis in answers, ever.", Home.SOUL, None),
    ("user", "I prefer pytest over unittest.", Home.USER, None),
    ("assistant", "To release, first tag the commit, then run make publish.", Home.SKILL, None),
    ("assistant", "The deploy timeout is 45s.", Home.TOPIC, None),
    ("user", "The backup bucket is s3://acme-backups/prod.", Home.TOPIC, None),
    ("assistant", "Lesson: always drain the queue before restarting workers.", Home.MEMORY, None),
    ("assistant", "We had a long chat about lunch.", Home.SKIP, None),
]


@pytest.mark.parametrize(("speaker", "text", "home", "content"), ROUTES)
def test_routing_discipline_gives_each_fact_one_home(
    speaker: str, text: str, home: Home, content: str | None
) -> None:
    [found] = candidates(text, 20) or [None]
    assert found is not None, text
    routed = route(found.text, found.tag, speaker=speaker, topics=[], max_topics=10)
    assert routed.home is home, routed
    if content is not None:
        assert routed.content == content


def test_a_specific_value_prefers_a_topic_over_memory() -> None:
    routed = route(
        "Lesson: the retry limit must stay at 5.",
        Tag.INSIGHT,
        speaker="assistant",
        topics=[],
        max_topics=10,
    )
    assert routed.home is Home.TOPIC


def test_topic_choice_reuses_a_named_topic_and_respects_the_cap() -> None:
    assert topic_for("The deploy timeout is 45s", ["deploy", "billing"], 10) == "deploy"
    assert topic_for("Redis runs on port 6380", ["deploy"], 10) == "redis"
    assert topic_for("Redis runs on port 6380", [f"t{i}" for i in range(10)], 10) is None

    # every slot taken: the topic sharing a word with it keeps it findable; none, skipped
    full = {f"t{i}": TopicHint(frozenset({f"w{i}"})) for i in range(9)}
    full["pharmacy"] = TopicHint(frozenset({"prescription", "repeat"}))
    said = "also moving his prescriptions to Pharmacy2U."
    assert topic_for(said, full, 10) == "pharmacy"
    assert topic_for("Redis runs on port 6380", full, 10) is None
    assert topic_for(said, dict(list(full.items())[1:]), 10) == "notes"  # one slot left


def test_summary_is_extractive_within_budget_and_keeps_whole_facts() -> None:
    facts = [(f"Fact number {i} says value {i * 7}", 1) for i in range(80)]
    facts.append(("Actually, the corrected timeout is 45s", 3))
    summary = consolidation.summarise(facts, 300)
    assert len(summary) <= 300
    assert (
        summary.startswith("The corrected timeout is 45s") or "corrected timeout is 45s" in summary
    )
    for part in summary.split("; "):
        assert any(part.lower() in f.lower() for f, _ in facts), part


def test_summary_check_refuses_invented_values_and_overlong_text() -> None:
    live = ["The deploy timeout is 45s"]
    assert consolidation.summary_problem("Deploys time out at 45s", live, 1000) is None
    assert "values" in (consolidation.summary_problem("Timeout is 30s", live, 1000) or "")
    assert "limit" in (consolidation.summary_problem("x" * 1001, live, 1000) or "")
    assert consolidation.summary_problem("  ", live, 1000) == "the summary is empty"


def test_rewrite_keeps_numbers_ids_and_paths_and_fits() -> None:
    content = "Actually, backups of /var/lib/pg run at 02:00 UTC with retention 14"
    text = consolidation.rewrite(content, "backups", 220)
    assert len(text) <= 220
    assert consolidation.rewrite_problem(text, content, "backups", 220) is None
    assert "drops" in (
        consolidation.rewrite_problem("Backups run nightly", content, "b", 220) or ""
    )
    invented = "Backups of /var/lib/pg run at 02:00 UTC with retention 14 on host-9"
    assert "adds" in (consolidation.rewrite_problem(invented, content, "b", 220) or "")
    assert "limit" in (consolidation.rewrite_problem("y" * 221, content, "b", 220) or "")


@pytest.mark.parametrize(
    ("a", "b", "conflict"),
    [
        ("The deploy timeout is 30s", "The deploy timeout is 45s", True),
        ("Staging uses feature flags", "Staging does not use feature flags", True),
        ("The deploy timeout is 30s", "The build cache lives in /tmp/cache", False),
        ("Backups run nightly", "Backups run nightly at 02:00", False),
    ],
)
def test_lint_verdict_rule(a: str, b: str, conflict: bool) -> None:
    assert consolidation.contradicts(a, b) is conflict


def test_transient_statements_are_not_rules() -> None:
    assert consolidation.transient("The payments API is down today")
    assert not consolidation.transient("The payments API lives at api.pay.internal")


def test_array_fields_validate_each_item() -> None:
    schema = Schema((Field("reasoning"), Field("items", "array", items=(Field("id", "integer"),))))
    assert schema.validate({"reasoning": "r", "items": [{"id": 1}]}) == {
        "reasoning": "r",
        "items": [{"id": 1}],
    }
    with pytest.raises(ValueError, match=r"items\[1\]"):
        schema.validate({"reasoning": "r", "items": [{"id": 1}, {"id": "x"}]})
    with pytest.raises(ValueError, match="items"):
        Schema((Field("reasoning"), Field("items", "array")))
    assert schema.json_schema()["properties"]["items"]["items"]["required"] == ["id"]


async def test_offline_model_answers_every_stage_within_its_schema() -> None:
    model = OfflineModel()
    prompts = [
        questions.flush(
            [
                {
                    "id": 1,
                    "text": "The deploy timeout is 45s.",
                    "tag": "event",
                    "weight": "normal",
                    "speaker": "user",
                }
            ],
            [],
            10,
        ),
        questions.distill("deploy", [{"id": "f", "content": "Timeout is 45s", "depth": 1}], 1000),
        questions.lint([{"id": 0, "a": "Timeout is 30s", "b": "Timeout is 45s"}]),
        questions.promote(
            [],
            [{"id": 0, "content": "The deploy timeout is 45s", "topic": "deploy", "depth": 2}],
            220,
        ),
    ]
    answers = [await model.judge(p) for p in prompts]
    assert all(isinstance(a, Answer) for a in answers)
    flush, distill, lint, promote = (a.data for a in answers if isinstance(a, Answer))
    assert flush["routes"][0]["home"] == "topic" and flush["routes"][0]["topic"] == "deploy"
    assert distill["summaries"] == [{"topic": "deploy", "summary": "Timeout is 45s"}]
    assert lint["verdicts"] == [{"id": 0, "conflict": True, "why": lint["verdicts"][0]["why"]}]
    assert promote["verdicts"][0]["verdict"] == "promote"
    assert "45s" in promote["verdicts"][0]["rewrite"]
    for prompt in prompts:  # the reasoning field leads every schema
        assert next(iter(prompt.schema.json_schema()["properties"])) == "reasoning"


def test_the_agent_narrating_its_own_action_is_not_stored() -> None:
    routed = route(
        "I saved the correction to the deploy topic.",
        Tag.CORRECTION,
        speaker="assistant",
        topics=[],
        max_topics=10,
    )
    assert routed.home is Home.SKIP


def test_a_topic_is_found_by_its_subjects_then_its_words() -> None:
    topics = {
        "auth": TopicHint(
            frozenset({"minutes"}),
            frozenset({str(keys("The access token lifetime is 15 minutes").subject)}),
        ),
        "billing": TopicHint(frozenset({"invoice", "cutoff", "day"})),
    }
    # the same subject as a live fact: that fact's topic, whatever the words
    assert topic_for("Actually, the access token lifetime is 60 minutes", topics, 10) == "auth"
    # two shared words are enough; one generic word ("minutes") is not
    assert topic_for("The invoice cutoff is the 28th", topics, 10) == "billing"
    assert (
        topic_for(
            "The access token lifetime is 60 minutes",
            {"auth": TopicHint(frozenset({"access", "token"}))},
            10,
        )
        == "auth"
    )
    assert topic_for("The redis cache TTL is 5 minutes", topics, 10) == "redis"
    # a new topic is named after the subject, not after what happened to it
    assert topic_for("We decided to use Postgres 16 for the ledger", {}, 10) == "postgres"


@pytest.mark.parametrize(
    ("new", "old", "same"),
    [
        ("Deploy timeout: 30s", "The deploy timeout is 30s", True),
        ("The deploy timeout is set to 30s", "The deploy timeout is 30s", True),
        ("Just to confirm: the deploy timeout is still 30s.", "The deploy timeout is 30s", True),
        ("FYI, the deploy timeout is 30s.", "The deploy timeout is 30s", True),
        ("The deploy timeout is 45s", "The deploy timeout is 30s", False),
        ("worker 0 item 3 is ok", "worker 3 item 0 is ok", False),
        ("The build timeout is 30s", "The deploy timeout is 30s", False),
    ],
)
def test_a_restated_claim_is_the_same_fact(new: str, old: str, same: bool) -> None:
    assert restates(new, old) is same


def test_reports_of_events_gather_by_kind_and_lessons_said_as_lessons_are_sure() -> None:
    failed = route(
        "The build failed with exit code 137 on ci-4.",
        Tag.ERROR,
        speaker="assistant",
        topics=["deploy"],
        max_topics=10,
    )
    assert (failed.home, failed.topic) == (Home.TOPIC, "incidents")
    decided = route(
        "We decided to keep 3 replicas.", Tag.DECISION, speaker="user", topics=[], max_topics=10
    )
    assert decided.topic == "decisions"
    marked = route(
        "Lesson: always drain the queue first.",
        Tag.INSIGHT,
        speaker="assistant",
        topics=[],
        max_topics=10,
    )
    assert (marked.home, marked.sure) == (Home.MEMORY, True)
    unmarked = route(
        "The deploys broke when the proxy cache was cold.",
        Tag.ERROR,
        speaker="assistant",
        topics=[],
        max_topics=10,
    )
    assert (unmarked.home, unmarked.sure) == (Home.MEMORY, False)


def test_a_rewrite_drops_filler_prefixes() -> None:
    text = "Just to confirm: the deploy timeout is 45s."
    assert consolidation.rewrite(text, "deploy", 220) == "The deploy timeout is 45s."


def test_a_rewrite_states_the_rule_without_a_trailing_now() -> None:
    text = "Actually, the backup retention is 30 days now."
    assert consolidation.rewrite(text, "backup", 220) == "The backup retention is 30 days."


def test_the_last_topic_slot_is_kept_for_what_fits_nowhere_else() -> None:
    """A report of an event opens its kind's topic only while a slot beside the general
    one is free: in the last slot it goes to the general topic, and with every slot taken
    by then, a specific fact still has a home instead of being skipped."""
    nine = [f"area{i}" for i in range(9)]
    text = "We decided to keep 3 replicas."
    late = route(text, Tag.DECISION, speaker="user", topics=nine, max_topics=10)
    assert (late.home, late.topic) == (Home.TOPIC, "notes")
    full = route(text, Tag.DECISION, speaker="user", topics=[*nine, "notes"], max_topics=10)
    assert (full.home, full.topic) == (Home.TOPIC, "notes")
    early = route(text, Tag.DECISION, speaker="user", topics=nine[:8], max_topics=10)
    assert early.topic == "decisions"


def test_the_offline_promoter_does_not_copy_a_told_event_into_memory() -> None:
    """The offline model cannot generalise "Graham took the lid off and found the label"
    into a rule, so it skips it (the fact stays in its topic); a statement of how things
    are is still promoted, and a passive "is limited to" is not an event told."""
    from reverie.model.offline import _promote

    said = {
        "a": "Graham finally took the lid off and found the label: a 300 watt heater",
        "b": "The deploy timeout is 45s",
        "c": "The cache is limited to 2GB",
    }
    payload = {
        "memory": [],
        "max_chars": 220,
        "candidates": [{"id": k, "content": v, "topic": "t"} for k, v in said.items()],
    }
    verdicts = {v["id"]: v["verdict"] for v in _promote(payload)["verdicts"]}
    assert verdicts == {"a": "skip", "b": "promote", "c": "promote"}
