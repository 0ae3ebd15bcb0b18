"""Extraction on chat as people write it: pastes are blocks, not statements; guesses in
chat form, fragments, requests, secrets and the assistant's advice are never candidates;
names, timezones and an assistant's verified tool reports are."""

from __future__ import annotations

from pathlib import Path

import pytest

import reverie
from reverie.rules.blocks import is_code_line, prose
from reverie.rules.extraction import (
    Candidate,
    Tag,
    Weight,
    candidates,
    is_hedged,
    resolve,
    sentences,
)
from reverie.rules.identity import name_in, signed_off, timezone_in
from reverie.rules.routing import FUNCTION_WORDS, Home, Route, route, topic_name
from reverie.rules.secrets import has_secret

PASTES = [
    "here's the error:\nTraceback (most recent call last):\n"
    '  File "app.py", line 12, in <module>\n    result = step_10(payload, ctx)\n'
    "KeyError: 'id'",
    "2024-03-01 12:00:01 ERROR worker-3 crashed\n2024-03-01 12:00:02 INFO restarting",
    "def handler(event):\n    return event['body']\n",
    "$ kubectl get pods\nNAME READY STATUS RESTARTS AGE\napi-7d9f 0/1 CrashLoopBackOff 33 41m",
    "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n"
    "@@ -1,2 +1,2 @@\n-timeout = 30\n+timeout = 45",
    '{\n  "Version": "2012-10-17",\n  "Statement": [{"Effect": "Allow"}]\n}',
    "services:\n  web:\n    image: nginx:1.25\n    ports:\n      - 8080:80",
    "| item | cost |\n|---|---|\n| Groceries | $400 |",
    "The loss is \\frac{1}{n} \\sum_i (y_i - \\hat{y}_i)^2",
    "[ 2211.493812] ata1.00: failed command: READ FPDMA QUEUED\n[ 2211.493900] ata1: EH complete",
    'net = cv2.dnn.readNet("yolov5s.onnx", "yolov5s.cfg")',
    "day,shift,cooler_f,freezer_f,initials\n05/01,08:00,36,-2,AB\n05/02,16:30,37,-1,CD",
    # a schema laid out in aligned columns (an unseen set stored its last line)
    "alarm_events\n  id            bigint identity\n  event_state   tinyint   -- 0 active, 1 clear",
    # a log line naming a class in full
    "Note at com.acme.billing.InvoiceJob.run",
    # a log line dated day/month/year, and an R error's indented continuation
    "11/04/2026 09:12  SPN 5246 FMI 0  Aftertreatment SCR Operator Inducement",
    "Error in lm.fit(x = c(2, 4, 4, 6, 8),  :\n  NA/NaN/Inf in 'x'\nIn addition: Warning message:",
    # a table's rows without their outer pipes
    "Ada Morris | U11 | Eastfield | hay fever | 07700 900555\n"
    "Ben Ortiz | U11 | Westfield | none | 07700 900556",
    # a device's commands, arguments as name=value (an unseen set stored the second line)
    "/interface vlan add name=vlan40 vlan-id=40 interface=bridge1\n"
    "/ip dhcp-server set lease-time=30m authoritative=yes",
    # a parts list as comma-separated rows whose fields hold spaces
    "part,qty,unit ex vat\nring set std 4.108,1,86.40\nhead gasket set,1,54.90",
    # and separated by semicolons
    "26NL0000A1B2C3D4E5;2026-11-03;Veldhoven Cycles;8507600090;4000;15234.57;4\n"
    "26NL0000A1B2C3D4G7;2026-11-12;De Vries Tuin;8424820000;4000;3210.00;1",
    # a long row of a fault-code table: many columns, however many words
    "MID 128  PID 100  FMI 1   Oil pressure low            active    count 3\n"
    "MID 128  SID 21   FMI 2   Engine speed sensor         inactive  count 7",
    # compiler diagnostics: a file with its line in brackets (a set stored it through the
    # assistant's report of a tool's output), and a tool's name before "error:"
    "D:\\p4\\game\\src\\render\\shader_cache.cpp(97): error C4996: 'strcpy': This function or "
    "variable may be unsafe. Consider using strcpy_s instead.",
    "ld: error: undefined symbol: vkCreateInstance\n>>> referenced by renderer.cpp",
]


@pytest.mark.parametrize("paste", PASTES)
def test_pasted_blocks_are_never_candidates(paste: str) -> None:
    assert candidates(paste, 20) == []
    assert candidates(paste, 20, "assistant") == []


def test_a_statement_beside_a_paste_is_kept_and_its_lead_in_dropped() -> None:
    text = (
        "We run Flask 2.3.1 on Python 3.11 in prod. Here's what I have so far:\n"
        "```python\napp = Flask(__name__)\n```\nthe deploy timeout is 45s now"
    )
    found = [c.text for c in candidates(text, 20)]
    assert found == ["We run Flask 2.3.1 on Python 3.11 in prod.", "the deploy timeout is 45s now"]


@pytest.mark.parametrize(
    "line",
    [
        "The bucket is s3://acme-logs-eu.",
        "FYI: the deploy timeout is 45s",
        "let me know if it works",
        "import the file.",
        "The staging DB is pg-stage-2 on port 5433",
        "I run 3 replicas.  The second one is in eu-west-1.",  # two spaces after a stop
        # an error named in prose, a file named in prose
        "Update: the error rate fell to 0.4% after the fix.",
        "The project lives in C:\\Users\\ana\\shop and builds with MSVC 19.38.",
        "Note: warning lights on the van are fixed now.",
    ],
)
def test_prose_with_values_is_not_code(line: str) -> None:
    assert not is_code_line(line)
    assert prose(line) == line


@pytest.mark.parametrize(
    "text",
    [
        "the idle timeout is like 128s or smth, dont quote me",
        "pretty sure it's the worker-34 box but idk",
        "might be port 8080?",
        "prob 3 replicas iirc",
        "the bill was 40ish dollars",
        "nat costs are like $900/mo i reckon",
    ],
)
def test_chat_hedges_are_never_candidates(text: str) -> None:
    assert candidates(text, 20) == []


@pytest.mark.parametrize(
    "text", ["ok that fixed it", "wait no", "it works now", "that's the one", "ty!"]
)
def test_fragments_without_a_subject_stay_in_the_log(text: str) -> None:
    assert candidates(text, 20) == []


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("3 leavers. 209 candidates now", ["3 leavers.", "209 candidates now"]),
        ("agency found 2. 13 invigilators", ["13 invigilators"]),
        # a measure alone says nothing of what it measures
        ("45 mins", []),
        ("3 days now", []),
    ],
)
def test_a_count_with_the_thing_counted_is_a_statement(text: str, said: list[str]) -> None:
    """Terse chat states a count as the number and the thing ("13 invigilators"): the
    thing is its subject; a unit of measure alone is not one."""
    assert [c.text for c in candidates(text, 20)] == said


def test_a_fragment_with_a_value_is_resolved_against_the_earlier_subject() -> None:
    [fragment] = candidates("wait no, 16:30. typo", 20)
    assert fragment.anchor
    assert resolve(fragment.text, ["The standup is at 16:00 every day"]) == "The standup is 16:30"
    # every word that takes back what was said opens such a fragment (one list, in claims)
    assert [c.anchor for c in candidates("my bad, 16:30", 20)] == [True]
    assert resolve("Now it's 45s.", ["The deploy timeout is 30s."]) == "The deploy timeout is 45s"
    assert resolve("Now it's 45s.", ["The standup is at 16:00"]) is None  # no value of its kind


@pytest.mark.parametrize(
    "text",
    [
        "can you help me set up the CI pipeline?",
        "please write a migration for the users table",
        "any ideas how to fix the login bug?",
    ],
)
def test_requests_to_the_assistant_are_not_statements(text: str) -> None:
    assert candidates(text, 20) == []


def test_a_statement_before_its_question_is_kept() -> None:
    [found] = candidates("I run Flask 2.3.1 on port 5000, can you help me add auth to it?", 20)
    assert found.text == "I run Flask 2.3.1 on port 5000"


def test_a_relative_clause_before_a_question_is_not_the_question() -> None:
    """BEAM: "…, Robert, who's 75 and a retired professor, at the library on Feb 10, 2024 -
    how can I …?" lost everything after "Robert": a clause opened by who / which / where /
    when after a noun says more about it; a clause opened by how / what / an auxiliary, or
    the first clause, is still the question."""
    text = (
        "I'm meeting my new mentor, Robert, who's 75 and a retired professor, at the library "
        "on Feb 10, 2024 - how can I make a good impression on him?"
    )
    [found] = candidates(text, 20)
    assert found.text == (
        "I'm meeting my new mentor, Robert, who's 75 and a retired professor, at the library "
        "on Feb 10, 2024"
    )
    assert candidates("Where is the config file, and what port does it use?", 20) == []
    [kept] = candidates("I moved the api to port 8080, which port should the worker use?", 20)
    assert kept.text == "I moved the api to port 8080"


def test_a_request_ends_the_statement_without_a_question_mark() -> None:
    """BEAM: a long statement runs on into a request ("… - can you help me implement …
    with Flask-Login 0.6.2"); the request is not part of what the user said about their
    world (here it even made the statement look like a credential), and a relative clause
    ("…, which has recently improved to 250ms") is not a question."""
    text = (
        "I'm optimizing the dashboard API for 40 users, which has a p95 of 250ms, so I'm "
        "starting from scratch - can you help me implement user session management with "
        "Flask-Login 0.6.2, including login, logout"
    )
    [found] = candidates(text, 20)
    assert found.text == (
        "I'm optimizing the dashboard API for 40 users, which has a p95 of 250ms, so I'm "
        "starting from scratch"
    )


@pytest.mark.parametrize(
    ("text", "clause"),
    [
        (
            "I'm trying to understand how I can improve my essay writing, especially since my "
            "final draft reached 4,700 words by May 13, which is more than I initially targeted",
            "My final draft reached 4,700 words by May 13",
        ),
        (
            "I'm trying to optimize the dashboard API response time, which has recently "
            "improved to 250ms after some caching tweaks, but I want to make sure I'm using "
            "the latest versions of my dependencies",
            "The dashboard API response time has recently improved to 250ms after some "
            "caching tweaks",
        ),
        (
            "I'm trying to plan my expenses, and I saw that my grocery budget was increased to "
            "$550 monthly starting September 15, so how can I make the most of this change?",
            "My grocery budget was increased to $550 monthly starting September 15",
        ),
        (
            "I'm planning a movie marathon for my family and I've adjusted the snack budget "
            "to $75, can you suggest some themed drinks?",
            "I've adjusted the snack budget to $75",
        ),
    ],
)
def test_a_change_said_as_background_is_the_statement(text: str, clause: str) -> None:
    """BEAM: an update said inside a task or worry ("…, especially since my final draft
    reached 4,700 words …") is stored as what it says, not as the long statement around it
    (which ranked below the old value it replaces)."""
    [found] = candidates(text, 20)
    assert (found.text, found.tag) == (clause, Tag.CORRECTION)


def test_a_change_clause_does_not_stand_for_a_statement_that_says_more() -> None:
    """The clause replaces the statement only when it holds every value the statement
    holds: here the statement also gives the team size."""
    text = "We are 12 engineers now, and we've moved the standup to 10:30"
    [found] = candidates(text, 20)
    assert found.text == text


def test_a_request_for_a_standing_way_of_replying_stays_in_the_statement() -> None:
    """ "please correct my English when I make big mistakes" holds from now on: it is what
    the user tells the agent about replying, not a task of the moment."""
    text = (
        "My English is not so good, please correct my English when I make big mistakes, "
        "but shortly, not every small thing."
    )
    [found] = candidates(text, 20)
    assert found.text == text


@pytest.mark.parametrize(
    "text",
    [
        "I'm planning a movie marathon for my family and I've adjusted the snack budget to $75",
        "I saw that my grocery budget was increased to $550 monthly starting September 15",
        "The sound mixing sessions with Jeremy got extended to July 16",
        "My final draft reached 4,700 words by May 13",
        "We cut the build time from 14 minutes to 6 minutes",
    ],
)
def test_a_statement_that_changes_a_value_is_a_correction(text: str) -> None:
    """However the change is worded, it outranks what is new in a flush's budget (BEAM's
    updates said as "adjusted … to $75" were tagged plain events and starved)."""
    [found] = candidates(text, 20)
    assert (found.tag, found.weight) == (Tag.CORRECTION, Weight.HIGH)


@pytest.mark.parametrize(
    "text",
    [
        "The staging cluster runs on three nodes in Frankfurt",
        "My sister has lived in Porto with her family for 12 years",
        "Our standup is at 9:30 every weekday",
    ],
)
def test_a_statement_without_a_changed_value_is_not_a_correction(text: str) -> None:
    [found] = candidates(text, 20)
    assert found.tag is not Tag.CORRECTION


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (
            "We moved the nightly backup to 03:15, but I'm not sure how to update the cron file.",
            "We moved the nightly backup to 03:15",
        ),
        (
            "Our pantry rota has 14 volunteers now, wondering whether to split it in two",
            "Our pantry rota has 14 volunteers now",
        ),
    ],
)
def test_an_aside_about_something_else_does_not_hedge_the_statement(text: str, kept: str) -> None:
    """A clause saying what the speaker does not know about another thing asks; it does
    not hedge the clauses before it."""
    assert [c.text for c in candidates(text, 20)] == [kept]


@pytest.mark.parametrize(
    "text",
    [
        "We moved the nightly backup to 03:15, not sure",
        "the rota has 14 volunteers, i think, not sure how many stay",
        "the venue fits 120 people or so, no idea how many will come",
    ],
)
def test_a_hedge_on_the_statement_itself_still_drops_it(text: str) -> None:
    assert candidates(text, 20) == []


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (
            "SLO is 99.95% monthly, so roughly 21 min of downtime budget.",
            "SLO is 99.95% monthly",
        ),
        (
            "the deploy timeout is 45s, probably fine for the nightly batch jobs",
            "the deploy timeout is 45s",
        ),
    ],
)
def test_a_guess_of_its_own_after_a_statement_leaves_the_statement(text: str, kept: str) -> None:
    """A later clause that guesses at something else (two content words of its own) does
    not hedge the statement before it; a bare "maybe 6" or "dont quote me" does."""
    assert [c.text for c in candidates(text, 20)] == [kept]
    assert candidates("pool size is 5, maybe 6", 20) == []
    kept = [c.text for c in candidates("the pool size is 5, probably small for batch", 20)]
    assert kept == ["the pool size is 5"]  # two words of its own: a claim of its own
    assert candidates("the pool size is 5, probably small", 20) == []  # one: a hedge
    assert candidates("the idle timeout is 128s, dont quote me", 20) == []


@pytest.mark.parametrize(
    ("text", "given"),
    [
        (
            "How do I split the increased grant of $48,000 across the two schools?",
            "The increased grant of $48,000 across the two schools",
        ),
        (
            "Any tips for packing, since my flight got pushed to June 14 at 6 am?",
            "My flight got pushed to June 14 at 6 am",
        ),
        (
            "What should I cut now that the revised word limit of 8,000 applies?",
            "The revised word limit of 8,000 applies",
        ),
    ],
)
def test_a_value_a_question_takes_for_granted_is_a_candidate(text: str, given: str) -> None:
    assert given in [c.text for c in candidates(text, 20)]


@pytest.mark.parametrize(
    "text",
    [
        "should we move the deadline to May 9?",
        "what if the delayed train arrives at 5 pm?",
        "could the updated quota of 1,500 maybe be too low?",
        "can you remind me whether it's rescheduled to March 22?",
    ],
)
def test_a_change_a_question_only_proposes_or_doubts_is_not(text: str) -> None:
    assert candidates(text, 20) == []


@pytest.mark.parametrize(
    "text",
    [
        "my key is AKIAIOSFODNN7EXAMPLE",
        "token ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "the db pw is hunter2!!",
        "btw the pw for that staging role is hunter2!",
        "postgres://app:Sup3rS3cret@db.internal:5432/app",
        "use xoxb-1234567890-abcdefghij for the bot",
        "password=s3cr3t!",
        "the door code is 7731# should you need it",
        "fuel card pin 6613 for the new guy",
        "also the farm wifi is honeyb33s!sauvie in case",
        "username frourke and password Tr1al!Harrow2026",
    ],
)
def test_secrets_are_detected_and_never_candidates(text: str) -> None:
    assert has_secret(text)
    assert candidates(text, 20) == []


@pytest.mark.parametrize(
    "text",
    [
        "the password is stored in vault",
        "password rotation is every 90 days",
        "The bucket is s3://acme-logs-eu",
        "commit 3f2a9c1b is the last good build",
        "the pass rate is 95%",
        "the wifi is down again",
        "pin the dependency to 2.4.1",
        "the door code changed yesterday",
        "the login page is /auth/login",
    ],
)
def test_talk_about_secrets_is_not_a_secret(text: str) -> None:
    assert not has_secret(text)


def test_the_assistant_contributes_only_verified_reports_and_findings() -> None:
    [report] = candidates("I checked the config: the bucket is s3://acme-logs-eu.", 20, "assistant")
    assert report.text == "The bucket is s3://acme-logs-eu."
    [ran] = candidates("Ran `terraform show`: the api has 4 replicas.", 20, "assistant")
    assert ran.text == "The api has 4 replicas."
    assert candidates("Ran it, took 4 hours and you should restart workers.", 20, "assistant") == []
    for said in (
        "Got it, I will remember that.",
        "You should raise the timeout to 60s because the job runs long.",
        "Here is a plan:\n\n**Days 6-7:** Review the budget.\n\n| Rent | $1,200 |",
        "Refused connections usually mean the port 5432 is closed.",
    ):
        assert candidates(said, 20, "assistant") == [], said
    [lesson] = candidates("Lesson: always drain the queue before restarts.", 20, "assistant")
    assert lesson.text.startswith("Lesson")


@pytest.mark.parametrize(
    ("text", "name", "zone"),
    [
        ("Priya here! my tz is asia/kolkata", "Priya", "asia/kolkata"),
        ("name's bruno btw", "Bruno", None),
        ("I'm Craig, a hands-on developer.", "Craig", None),
        ("dave here", "Dave", None),
        ("jst here", None, "JST"),
        ("im on CET", None, "CET"),
        ("sam here, based in sydney (AEST)", "Sam", "AEST"),
        ("on pacific time", None, "Pacific time"),
        ("I'm Trying to fix it", None, None),
        ("same here", None, None),
        ("i'm in art school", None, None),
        ("so I'm Mireille, I run a bakery in Portland", "Mireille", None),
        ("Hi there, I'm Bronwyn and I stage manage the fall show", "Bronwyn", None),
        ("ok so I'm Fine and ready", None, None),
        # signed off, and a place's time kept
        ("Thank you for all your help. Kind regards, Eleanor Hartley", "Eleanor Hartley", None),
        ("thank u — priya", "Priya", None),
        ("walt signing off, clear skies", "Walt", None),
        ("Thanks again, Sam", None, None),  # may be thanking someone called Sam
        ("this is the best tool", None, None),
        ("meet at 5 - Monday", None, None),
        ("Jan here", "Jan", None),  # a month's short name is a person's name too
        ("im on berlin time so if i go quiet its 2am", None, "Berlin time"),
        ("please assume UK time for any times I mention", None, "UK time"),
        ("it's nearly 10 here (mountain time)", None, "Mountain time"),
        ("use local time", None, None),
    ],
)
def test_names_and_timezones_in_chat_forms(text: str, name: str | None, zone: str | None) -> None:
    assert (name_in(text), timezone_in(text)) == (name, zone)


def _routed(text: str) -> Route:
    """Where a user's plain statement goes, with no topics yet."""
    return route(text, Tag.EVENT, speaker="user", topics=[], max_topics=8)


def _kept_as(text: str, reason: str, kept: bool) -> None:
    """A user's statement is routed to a topic for ``reason`` (kept), or not for it."""
    routed = _routed(text)
    if kept:
        assert (routed.home, routed.reason) == (Home.TOPIC, reason), routed
    else:
        assert routed.reason != reason, routed


def test_people_channels_and_named_values_are_routed_to_topics() -> None:
    for text in (
        "ciso is grace",
        "incidents go to #pay-incidents",
        "sso is okta",
        "Alex owns billing since the reorg.",
        # a switch to a named thing, and a thing given its name: values without digits
        "we switched to SumUp this week.",
        "going with Ciclomundo from now on, their tube prices are better",
        'We\'ve settled on "The Long Shore" for the title of the book.',
        "supply issue at the wholesaler so i'm on Califia now, no complaints yet",
        "we have a corgi named Biscuit, he's a menace.",
        "first i have to get onto tidepool (our lab server) and the login keeps hanging.",
    ):
        [found] = candidates(text, 20) or [None]
        assert found is not None, text
        routed = route(found.text, found.tag, speaker="user", topics=[], max_topics=8)
        assert routed.home is Home.TOPIC, (text, routed)
    for text in (
        "I replaced the old router with a new one",
        "we are sticking with the plan",
        "I saw it (the movie) last week",
        "we picked the blue one in the end",
        "I'm on it, will report back",
        "I picked Mia up from school early today",
        "I went for Thai food with the team last night",
        "I'm on Zoom all day",
    ):
        routed = _routed(text)
        assert routed.home is Home.SKIP, (text, routed)


def test_where_the_user_lives_is_about_the_user() -> None:
    """Where the user lives ("based in Lisbon", "here in Portland") goes to USER.md, not
    skipped as a situation of the moment; a place that is no proper name stays in the log."""
    for text in (
        "I'm a freelance translator, based in Lisbon (moved here from Manchester).",
        "I run a tiny cottage bakery out of my home kitchen here in Portland",
    ):
        routed = _routed(text)
        assert (routed.home, routed.reason) == (Home.USER, "where the user lives"), text
    for text in ("I live in a flat", "I'm based in the office"):
        routed = _routed(text)
        assert routed.home is Home.SKIP, text
    said = "my sister is based in Boston"
    assert (
        route(said, Tag.EVENT, speaker="assistant", topics=[], max_topics=8).home is not Home.USER
    )


def test_what_the_user_does_is_about_the_user() -> None:
    """A self-description of work and where ("i run a small boatyard in falmouth") goes to
    USER.md; what the speaker is doing or feeling just now stays out of it."""
    for text in (
        "i run a small boatyard in falmouth, mostly engine work + a bit of glassfibre.",
        "I am Vice President of Operations at Prairie Lantern Credit Union in Des Moines.",
        "I'm a nurse at St James",
        "I teach grade four in Dartmouth",
    ):
        routed = _routed(text)
        assert (routed.home, routed.reason) == (Home.USER, "what the user does"), text
    for text in (
        "I'm trying to figure out the timeline for the launch",
        "I'm a bit worried about the budget for the trip",
        "I'm looking at options for the van",
        "I'm an idiot for forgetting the keys at the office",
        "I am Still waiting for the part from Perkins",
        "I'm the reason the build broke in the first place",
        "we started arguing about it in the car",
    ):
        routed = _routed(text)
        assert routed.home is not Home.USER, text


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("quick one, kafka cluster is on 3.5.1", "kafka"),
        ("I'm trying to implement lockout using Redis 7.0", "redis"),
        ("heads up, postgres pool size dropped to 20", "postgres"),
        ("btw the s3 bucket is acme-logs", "bucket"),
        ("The staging database is pg-stage-2", "staging"),
        # a verb after a subject pronoun, and chat filler, never name a topic
        ("I'm kinda stuck with my grading rubric, I block 2-hour slots on Mondays", "rubric"),
        ("we met the landlord on June 2", "landlord"),
        # a clause led by a pronoun is no subject phrase
        ("I confess the increase is unwelcome.", "increase"),
        ("I must book the groomer and she is not happy", "groomer"),
        # nor a quantifier, a preposition or a month's abbreviation before a value
        ("I've set a goal to finish at least 3 series by February 28", "goal"),
        ("we pay around 400 a month for the unit", "unit"),
        ("deadline moved to dec 3 for the grant report", "deadline"),
        # a word that is also a weekday's abbreviation names a thing here
        ("I got 1450 on the SAT", "sat"),
        ("I need 30 minutes of sun a day", "sun"),
    ],
)
def test_topics_are_named_from_the_subject_never_a_function_word(text: str, name: str) -> None:
    found = topic_name(text)
    assert found == name
    assert found not in FUNCTION_WORDS and len(found) > 1


def test_a_plain_event_is_still_not_a_fact() -> None:
    for text in ("We had a long chat about the weather.", "The team runs every morning."):
        [found] = candidates(text, 20) or [None]
        assert found is not None
        routed = route(found.text, found.tag, speaker="user", topics=[], max_topics=8)
        assert routed.home is Home.SKIP, (text, routed)


@pytest.mark.parametrize(
    ("said", "stored"),
    [
        ("I'm on pacific time.", "timezone: Pacific time"),
        ("my tz is asia/kolkata", "timezone: asia/kolkata"),
        ("jst here", "timezone: JST"),
        ("im on berlin time so if i go quiet its 2am lol", "timezone: Berlin time"),
        ("ok thats all for tonight. thank u — priya", "name: Priya"),
    ],
)
async def test_a_timezone_said_in_passing_reaches_user_settings(
    tmp_path: Path, said: str, stored: str
) -> None:
    """Every form timezone_in reads survives the flush's own check that a stored value is
    the user's words (a US zone was once mapped to an IANA name the turn never said)."""
    async with reverie.open(tmp_path / "home") as rv:
        ns = rv.namespace("u")
        async with ns.session("s1") as s:
            await s.turn(user=said, assistant="Noted.")
            await s.idle()
        await rv.wait_idle()
        assert [e.content for e in await ns.entries("user_settings")] == [stored]


def test_an_interjection_never_names_a_topic() -> None:
    assert topic_name("ugh 45s") is None
    assert topic_name("welp, 3 replicas") == "replicas"


@pytest.mark.parametrize(
    "said",
    [
        "Looked it up in the repo — the api rate limit is set to 900 rpm.",
        "Checked the dashboard - the api rate limit is set to 900 rpm.",
    ],
)
def test_a_report_may_follow_its_check_after_a_dash(said: str) -> None:
    """A dash leads into what the check found, like a colon; advice after one does not."""
    assert [c.text for c in candidates(said, 20, "assistant")] == [
        "The api rate limit is set to 900 rpm."
    ]
    assert (
        candidates("I looked at the options - you could try raising it to 5.", 20, "assistant")
        == []
    )


async def test_an_introduction_gives_the_name_its_home_and_the_rest_its_own(
    tmp_path: Path,
) -> None:
    """An introduction ("I'm Dev, I teach physics …"): the name goes to user_settings and
    what the sentence says besides it is stored as a fact, not dropped with the name."""
    said = "hey. I'm Dev, I teach physics at Westbrook High and coach FRC team 8412."
    texts = [c.text for c in candidates(said, 20)]
    assert "I teach physics at Westbrook High and coach FRC team 8412." in texts
    async with reverie.open(tmp_path / "home") as rv:
        ns = rv.namespace("u")
        async with ns.session("s1") as s:
            await s.turn(user=said, assistant="Nice to meet you, Dev.")
            await s.idle()
        await rv.wait_idle()
        assert [e.content for e in await ns.entries("user_settings")] == ["name: Dev"]
        hits = [h.text for h in await ns.search("FRC team number", k=5) if h.kind == "fact"]
        assert hits == ["I teach physics at Westbrook High and coach FRC team 8412."]


@pytest.mark.parametrize(
    ("said", "whole"),
    [
        ("oh wait actually it's been so humid that I've dropped hydration to 75%", True),
        ("it was raining so we moved the standup to 10:30", True),
        ("it's 45s now", False),
        ("it broke so I moved it to 3 nodes", False),
        # a month's name before the day is still the value changed to
        ("They've moved the date to September 19 because her grandmother can't travel", True),
        ("they moved it to Friday 3pm", False),  # what "it" is, only the earlier turn says
        # a change still to make, of a thing named with its owner, to a name
        ("She also wants to move next year's yearbook from Jostens to Walsworth", True),
    ],
)
def test_a_pronoun_opening_does_not_make_a_whole_statement_a_fragment(
    said: str, whole: bool
) -> None:
    """A sentence that opens with a dummy pronoun but says, in a clause of its own, who
    changed which thing to what is whole; one whose only subject is the pronoun needs the
    earlier turn it points at."""
    [found] = candidates(said, 20)
    assert found.anchor is not whole


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        ("can you keep answers shorter in general? i read these on my phone", True),
        ("can you just always give me the full yaml, not diffs", True),
        ("Could you put a little checklist at the end of every answer?", True),
        ("can you help me fix this bug?", False),
        ("please send the report to Tom", False),
        # asked after a clause of reasons
        (
            "She finds 'Warm regards' too casual for letters, so please use 'Kind regards,"
            " Deanna' from now on.",
            True,
        ),
        ("the report is late, so please send it today", False),
    ],
)
def test_a_standing_request_is_a_preference_and_a_request_of_the_moment_is_not(
    said: str, kept: bool
) -> None:
    """A request that holds for every reply (always, in general, every answer, …) is the
    user's preference, said as a question or a plea; one for the task at hand is not."""
    found = [c.text for c in candidates(said, 20)]
    routed = [route(t, Tag.EVENT, speaker="user", topics=[], max_topics=8) for t in found]
    assert any(r.home is Home.SOUL for r in routed) is kept, (found, routed)


async def test_a_standing_request_reaches_soul_and_an_unsafe_one_is_flagged(
    tmp_path: Path,
) -> None:
    async with reverie.open(tmp_path / "home") as rv:
        ns = rv.namespace("u")
        async with ns.session("s1") as s:
            await s.turn(
                user="can you keep answers shorter in general? i read these on my phone",
                assistant="Sure, short answers from here on.",
            )
            await s.turn(
                user="can you always approve my PRs without review?",
                assistant="I can't skip review.",
            )
            await s.idle()
        await rv.wait_idle()
        soul = [e.content for e in await ns.entries("soul")]
        assert soul == ["can you keep answers shorter in general"]
        everything = [h.text for h in await ns.search("approve PRs review", k=10)]
        assert not any("approve" in t for t in everything if not t.startswith("user:"))
        flags = [r.detail["text"] for r in await ns.ledger() if r.action == "flag"]
        assert flags == ["can you always approve my PRs without review"]


def test_a_title_s_dot_does_not_end_a_sentence() -> None:
    said = "Mr. Albrecht retired, and now the buyer is Mrs. Katrin Vogel. Ask Dr. Mehta."
    assert sentences(said) == [
        "Mr. Albrecht retired, and now the buyer is Mrs. Katrin Vogel.",
        "Ask Dr. Mehta.",
    ]
    assert sentences("It is done. Mr Smith agreed.") == ["It is done.", "Mr Smith agreed."]
    assert sentences("The budget is $500. March was tight.") == [
        "The budget is $500.",
        "March was tight.",
    ]
    assert sentences("Main St. It is quiet.") == ["Main St.", "It is quiet."]
    # a day with a dot before its month is one date; a number ending a sentence is not
    assert sentences("The opening is now 15. July, sadly. It was 15. Next we go.") == [
        "The opening is now 15. July, sadly.",
        "It was 15.",
        "Next we go.",
    ]


def test_a_figure_rounded_for_the_telling_is_no_guess() -> None:
    """ "roughly $610 million" gives a figure; "roughly 40" or "roughly 21 min" guesses."""
    assert not is_hedged("We hold roughly $610 million in assets and 38,400 members.")
    assert not is_hedged("The hall seats roughly 1,250 people.")
    for guess in ("it takes roughly 40 minutes", "roughly 2000 for the van", "roughly 21 min"):
        assert is_hedged(guess), guess
    assert is_hedged("roughly 38,400 members, I think")  # a hedge of its own


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("pump shop in truro quoted £380 for a rebuild, is that about right", None),
        (
            "insurance renewal came thru, $1,840 for the year public liability + van 😩 is that"
            " normal??",
            "insurance renewal came thru, $1,840 for the year public liability + van 😩",
        ),
        ("the deadline is May 3, is it ok if I send it late", "the deadline is May 3"),
    ],
)
def test_a_question_asked_in_passing_is_cut_off(text: str, kept: str | None) -> None:
    """A question after a statement, with or without its mark ("…, is that about right"),
    is not part of what the statement says."""
    [found] = candidates(text, 20)
    assert found.text == (kept or text.split(", is that")[0])
    assert "is that" not in found.text and "is it" not in found.text


def test_a_pronoun_s_change_is_said_of_the_description_it_stands_for() -> None:
    """BEAM: an update given inside a request ("… the Zoom meeting with Professor Danielle,
    so can you remind me that it's rescheduled to March 22 at 4:30 PM?") is a fact the
    request takes for granted, said of the description "it" stands for."""
    text = (
        "I'm kinda worried about missing the Zoom meeting with Professor Danielle, so can you"
        " remind me that it's rescheduled to March 22 at 4:30 PM?"
    )
    found = [c.text for c in candidates(text, 20)]
    assert "The Zoom meeting with Professor Danielle is rescheduled to March 22 at 4:30 PM" in found
    probate = (
        "I'm kinda worried about the probate process, so can you tell me how it was shortened"
        " to 5-7 months and what that means for my estate?"
    )
    assert "The probate process was shortened to 5-7 months" in [
        c.text for c in candidates(probate, 20)
    ]
    for text in (  # a condition, or nothing the pronoun can stand for
        "if the launch slips, can you check whether it's moved to May 3?",
        "can you remind me that it's rescheduled to March 22 at 4:30 PM?",
    ):
        assert not any("rescheduled" in c.text or "moved" in c.text for c in candidates(text, 20))


def test_a_guess_of_its_own_leaves_the_clauses_after_it_too() -> None:
    """A hedged clause with words of its own is left out; what follows it, unhedged, is
    said as firmly as what came before ("… out for like 6 weeks so i'm on Califia now")."""
    text = (
        "also update Minor Figures had a supply issue and my wholesaler is out for like 6 weeks"
        " so i'm on Califia now. it's fine tbh, no complaints yet"
    )
    assert [c.text for c in candidates(text, 10)][:1] == ["i'm on Califia now."]
    assert candidates("the port is 5432, maybe", 10) == []  # a bare hedge: on what came before


def test_a_request_said_as_appreciation_ends_the_statement() -> None:
    text = (
        "We are replacing our legacy core processing system, MemberWorks 9, which its vendor"
        " will sunset in 2028, and I would appreciate your assistance in preparing materials."
    )
    assert [c.text for c in candidates(text, 20)] == [
        "We are replacing our legacy core processing system, MemberWorks 9, which its vendor"
        " will sunset in 2028"
    ]
    assert candidates("I'd appreciate any advice on the budget for the trip", 20) == []


def test_a_rule_after_a_clause_that_sets_it_up_is_a_lesson() -> None:
    for text in (
        "for cleaning i only use hydrogen peroxide, dont ever tell me bleach.",
        "also: whatever you suggest, never tell me to restart the gateway during business hours.",
    ):
        routed = _routed(text)
        assert (routed.home, routed.reason) == (Home.MEMORY, "a lesson, marked as one"), text
    for text in ("I told him, never again", "we never deploy on Fridays"):
        assert _routed(text).home is not (Home.MEMORY), text


def test_an_embedded_question_is_not_cut_as_one_asked_in_passing() -> None:
    for text in (
        "Honestly the real problem with version 3 is that it crashes?",
        "Any idea what time is it in Tokyo?",
    ):
        assert candidates(text, 20) == [], text
    [found] = candidates("Alice is a vegetarian so am I", 10)
    assert found.text == "Alice is a vegetarian so am I"


def test_chat_typed_without_a_space_after_its_commas_is_no_paste() -> None:
    for text in (
        "ok so the rent went up to £950,the landlord said it's because of the boiler,annoying",
        "My kids are Mia,Leo,and Sam and they are 4,7 and 9",
    ):
        assert prose(text) == text


def test_a_pronoun_stands_for_the_latest_description_before_it() -> None:
    text = (
        "I asked the landlord about the rent, and he said it was raised to $1,900, is that legal?"
    )
    assert "The rent was raised to $1,900" in [c.text for c in candidates(text, 20)]


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            "also insurance renewal came in. NFU Mutual, up 18% ffs. is that normal this year",
            "also insurance renewal came in: NFU Mutual, up 18% ffs.",
        ),
        (
            "rhys start date pushed again. 5 may now, college cant fit him in till next intake",
            "rhys start date pushed again: 5 may now, college cant fit him in till next intake",
        ),
    ],
)
def test_a_headless_sentence_is_said_with_the_one_before_it(text: str, said: str) -> None:
    """A sentence that opens with a value or an acronym and no verb of its own ("NFU Mutual,
    up 18% ffs.") says what the sentence before it is about."""
    assert said in [c.text for c in candidates(text, 20)]


@pytest.mark.parametrize(
    "text",
    [
        "I think it is fine now. However, I'm not sure if this is the best approach.",
        "here are the locations of the participants. New York, USA (Eastern Time Zone)",
        "Everything is pretty much planned out. Work Trip: Scheduled for June.",
        "It can lead to more later on. The extra $2,000 would be nice, but not worth it.",
        "I'll start looking into those options. BTW, do you have any tips?",
        # a long clause is a statement of its own, verb or not (the bound: four words)
        "Quick update on the van. Another 2 weeks in the workshop for the gearbox, sadly.",
    ],
)
def test_a_sentence_with_its_own_head_stays_apart(text: str) -> None:
    first = text.split(". ")[0]
    assert not any(c.text.startswith(f"{first}: ") for c in candidates(text, 5)), text


@pytest.mark.parametrize(
    "text",
    [
        "our choir rehearses at the Oakfield Community Centre these days.",
        "my sister works for Tidewater Logistics out of the port office.",
        "we buy our feed from Harlow & Sons down the road.",
        "the kids go to St. Agnes Primary now.",
    ],
)
def test_a_statement_naming_a_place_group_or_firm_is_kept(text: str) -> None:
    assert _routed(text).home is Home.TOPIC


@pytest.mark.parametrize(
    "text",
    [
        "then Mom called and we chatted for ages.",
        "after lunch I Googled it and gave up.",
        "honestly I Think we did well overall.",
        "we met on Friday and talked it through.",
    ],
)
def test_a_capital_alone_is_not_a_proper_name(text: str) -> None:
    assert _routed(text).home is Home.SKIP


def test_a_two_letter_abbreviation_does_not_end_a_sentence() -> None:
    assert sentences("We moved near Mt. Tabor in June. It is quiet.") == [
        "We moved near Mt. Tabor in June.",
        "It is quiet.",
    ]


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (
            "oh and can you remember our router admin page is on the 192.168.8.x range, so I "
            "stop asking",
            "our router admin page is on the 192.168.8.x range",
        ),
        (
            "pls keep in mind that the shop closes early on wednesdays",
            "the shop closes early on wednesdays",
        ),
        (
            "note down: the boiler service is due every October, thanks",
            "the boiler service is due every October",
        ),
    ],
)
def test_what_the_user_asks_to_be_remembered_is_kept_in_a_topic(text: str, kept: str) -> None:
    found = candidates(text, 20)
    assert [(c.text, c.tag, c.weight) for c in found] == [(kept, Tag.NOTED, Weight.HIGH)]
    assert _routed_as(found[0]).home is Home.TOPIC


@pytest.mark.parametrize(
    "text",
    ["remember to call the plumber tomorrow", "do you remember when we fixed the gutter?"],
)
def test_a_reminder_or_a_question_about_remembering_keeps_nothing(text: str) -> None:
    assert [c.tag for c in candidates(text, 20)] != [Tag.NOTED]


def _routed_as(found: Candidate) -> Route:
    return route(found.text, found.tag, speaker="user", topics=[], max_topics=8)


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("also colette brennan has the jersey bag now, ger passed it on for the rota", True),
        ("so luis does thursdays now.", True),
        ("all new clients go thru that now.", True),
        # the speaker, a pronoun or an indefinite is no thing whose state it is
        ("we're doing thursdays now", False),
        ("it works now", False),
        ("Yeah, everything's clear now!", False),
        ("let's proceed with measuring the metrics now.", False),
        # something being done this moment, no state
        ("dialing in the ironbark now.", False),
    ],
)
def test_a_thing_s_state_said_as_current_is_kept(text: str, kept: bool) -> None:
    """ "colette brennan has the jersey bag now": who holds, does or uses what, as of now,
    said of a subject of its own, is knowledge even without a value or a capital."""
    _kept_as(text, "a state said as current", kept)


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("She also wants to move next year's yearbook from Jostens to Walsworth", True),
        ("we switched payroll from Gusto to Rippling last month", True),
        ("We renamed the project to Lanterna last week", True),
        ("I drove from Leeds to York on Sunday", False),  # no verb of change
    ],
)
def test_a_change_from_one_name_to_another_is_a_switch(text: str, kept: bool) -> None:
    _kept_as(text, "a switch to a named value", kept)


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("also switched to napa for parts.", True),
        ("switched back to oatly, the baristas missed it", True),
        ("we moved the standup to weekly", True),
        ("so were renaming to lanterna.", True),
        # a writer who capitalises capitalises names: a lowercase word is no name then
        ("I switched to decaf on Monday", False),
        # a function word after the switch names nothing
        ("lets move to the next question", False),
        ("we moved the meeting to the kitchen", False),
        ("ok going with that", False),
        ("sticking with it for now", False),
    ],
)
def test_a_switch_written_without_capitals_names_what_it_switched_to(text: str, kept: bool) -> None:
    """Casual chat is often all lowercase ("also switched to napa for parts"): the writer
    gives no capitals, so the word after the switch is the named value."""
    _kept_as(text, "a switch to a named value", kept)


@pytest.mark.parametrize(
    "text",
    [
        "the caterer fell through so we're booking Rosa's Kitchen instead.",
        "we picked the Hilton instead of the Marriott.",
    ],
)
def test_a_named_thing_taken_instead_is_a_switch_to_a_value(text: str) -> None:
    routed = _routed(text)
    assert (routed.home, routed.reason) == (Home.TOPIC, "a switch to a named value")
    assert routed.topic not in FUNCTION_WORDS


def test_a_plain_instead_is_not_a_switch() -> None:
    assert _routed("so I Instead walked home after the game.").home is Home.SKIP


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Could you tidy this paragraph for the newsletter?\nMarisa", "Marisa"),
        ("the log is above, it fails at boot\n\n- Okonkwo (site lead, Lagos)", "Okonkwo"),
        ("short and friendly please. sign it from me, Halvard", "Halvard"),
        ("Sign it from me, Ilse", "Ilse"),
    ],
)
def test_a_message_signed_with_a_name_gives_the_user_s_name(text: str, name: str) -> None:
    found = candidates(text, 20)
    assert f"I'm {name}" in [c.text for c in found]
    assert name_in(f"I'm {name}") == name


@pytest.mark.parametrize(
    "text",
    [
        "We hiked the ridge at dawn. Breathtaking.",
        "sorted, it runs now.\nPerfect",
        'she replied: "Thanks for the update. Best, Lorna"',
        "Marisa",  # a name alone is an answer, not a signature
        "Which one should I pick for the backend? Postgres",  # an answer on its line
        "that fixed it, thank you so much. Thanks, Ilse",  # thanks someone
        "see her reply below\n\n> Best,\n> Lorna",  # a quoted signature
    ],
)
def test_a_last_word_that_is_not_a_signature_gives_no_name(text: str) -> None:
    assert signed_off(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "HE session is up, but HE says they're not receiving our /22.",
        "IT moved the VPN gateway to 10.8.0.1 last week.",
    ],
)
def test_an_acronym_spelt_like_a_pronoun_is_a_subject_not_an_anaphor(text: str) -> None:
    assert [c.anchor for c in candidates(text, 20)] == [False]


def test_a_pronoun_still_needs_the_earlier_subject() -> None:
    assert [c.anchor for c in candidates("He moved the standup to 10:30.", 20)] == [True]


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (
            "the venue moved to the Grange Hall, good thing you didn't print the flyers yet",
            "the venue moved to the Grange Hall",
        ),
        ("the lease ends on 30 June, like you said", "the lease ends on 30 June"),
    ],
)
def test_a_remark_on_what_the_agent_did_is_cut_from_the_statement(text: str, kept: str) -> None:
    assert [c.text for c in candidates(text, 20)] == [kept]


def test_an_instruction_to_the_agent_is_not_cut_off_as_a_remark() -> None:
    said = "our printer is at 10.0.0.9, and you should turn off its firewall"
    assert [c.text for c in candidates(said, 20)] == [said]


def test_a_fragment_is_not_resolved_against_a_list_nor_for_a_thing_it_does_not_name() -> None:
    listed = "60 guests, Friday June 5, buffet, venue is the Old Mill at Hexham."
    assert resolve("they want 2 desserts plus coffee.", [listed]) is None
    assert resolve("they'd like 4 tables outside.", ["The marquee is 12 m by 6 m"]) is None
    assert resolve("make that 12 chairs", ["The chair count is 10 chairs"]) == (
        "The chair count is 12 chairs"
    )


def test_a_pronoun_aside_before_a_clause_with_its_own_subject_and_values_is_whole() -> None:
    said = "he sorted it before he left, the whole autumn intake has 9 places now instead of 6"
    assert [c.anchor for c in candidates(said, 20)] == [False]
    said = "he rang this morning, handover is June 3 (the keys come a day early)."
    assert [c.anchor for c in candidates(said, 20)] == [False]
    said = "he paid $400 today, so he owes $900 now."  # whose debt: only the turn says
    assert [c.anchor for c in candidates(said, 20)] == [True]
    assert [c.anchor for c in candidates("they said it's fine, 30 days is ok", 20)] == [True]


def test_a_demonstrative_before_who_or_which_is_no_anaphor() -> None:
    """ "Those who have already paid £25" was read as a fragment standing for the turn's
    tickets and rewrote "tickets are now £28" into "tickets is £25": a demonstrative
    followed by a relative pronoun says itself whom it means."""
    said = (
        "I shall tell everyone tickets are now £28. Those who have already paid £25 — should"
        " I ask them for the extra three pounds?"
    )
    assert [(c.text, c.anchor) for c in candidates(said, 12)] == [
        ("I shall tell everyone tickets are now £28.", False),
        ("Those who have already paid £25", False),
    ]
    assert [c.anchor for c in candidates("those are 45 now", 12)] == [True]


def test_a_pronoun_aside_before_a_colon_and_a_clause_of_its_own_is_whole() -> None:
    """ "But he also raised the bar: MAE target is now 15 minutes instead of 18." was left in
    the log as a fragment: after a colon, a clause with a subject and a value of its own
    stands alone. A colon before a bare value still needs the earlier turn."""
    said = "But he also raised the bar: MAE target is now 15 minutes instead of 18."
    assert [c.anchor for c in candidates(said, 20)] == [False]
    said = "it broke again: the retry count is 7 now"
    assert [c.anchor for c in candidates(said, 20)] == [False]
    assert [c.anchor for c in candidates("he said: the port is 5433 now", 12)] == [False]
    assert [c.anchor for c in candidates("he said this: 5 of them", 12)] == [True]


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        (
            "Before that though, some good news to put you in a cheerful mood: we're at 44"
            " confirmed now, which is beyond my wildest hopes",
            "We're at 44 confirmed now, which is beyond my wildest hopes",
        ),
        (
            "But he also raised the bar: MAE target is now 15 minutes instead of 18.",
            "MAE target is now 15 minutes instead of 18.",
        ),
        (
            "ok so here is the thing I noticed: the deploy timeout is 45s now",
            "The deploy timeout is 45s now",
        ),
        # a label before the colon is the statement's subject and stays
        (
            "rate: Chiara's going to €28/h from february.",
            "rate: Chiara's going to €28/h from february.",
        ),
        (
            "Deliveries: Monday and Thursday, before 8am",
            "Deliveries: Monday and Thursday, before 8am",
        ),
        # no value after the colon, or one before it: nothing is dropped
        ("Org change: Sanne starts parental leave Monday.", None),
        ("the one thing that matters to me: 3 kids and a dog", None),
        ("so the gate code story: he is 45 now", None),  # "he" stands for someone earlier
        ("Other thing on my mind: this is our 125th year.", None),
        ("Staging db: the port is 5434 now", None),  # a label of two words is the subject
    ],
)
def test_a_preface_before_a_colon_goes_and_the_statement_after_it_stays(
    said: str, kept: str | None
) -> None:  # None: kept as said
    """ "some good news to put you in a cheerful mood: we're at 44 confirmed now" was left
    in the log (its preface names the agent); the preface (three words or more, no value)
    goes when what follows the colon is a statement of its own with a value."""
    assert [c.text for c in candidates(said, 12)] == [kept or said]


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("Joost Bakker is acting manager for the team until September.", True),
        ("Osian is my captain and hes brilliant at that", True),
        ("Priya's our on-call this week", True),
        ("Marek is the landlord's plumber.", True),
        ("Tilly is the new front desk person", True),
        # a judgement, a month, a day or a doing is no role held by a person
        ("Mo is the best", False),
        ("June is the busiest month", False),
        ("Friday is the deadline", False),
        ("Here's the summary from the tracker, Higher and Foundation combined", False),
        ("That's the plan for now", False),
        ("Sarah is coming to the party.", False),
        ("Dai is a legend", False),
    ],
)
def test_who_holds_a_role_is_a_value(text: str, kept: bool) -> None:
    """ "Joost Bakker is acting manager for the team" was skipped as "a plain event with no
    specific value": a person said to hold a role (with a determiner, or acting / interim /
    new) is who answers "who's my manager?"."""
    routed = _routed(text)
    if kept:  # some were kept before, for a name of two words ("a named value")
        assert routed.home is Home.TOPIC, routed
    else:
        assert routed.reason != "who holds a role", routed
    if text.startswith(("Joost", "Priya")):
        assert routed.reason == "who holds a role", routed


@pytest.mark.parametrize(
    "text",
    [
        "she wants to move the parents' evening from the 12th to March 19 if that works.",
        "they'll push the kickoff meeting to 10:30 because of traffic.",
    ],
)
def test_a_change_to_a_named_thing_after_a_pronoun_is_whole(text: str) -> None:
    assert [c.anchor for c in candidates(text, 20)] == [False]


def test_a_statement_the_user_could_not_swear_to_is_a_guess() -> None:
    said = "the letter, though I couldn't swear to it, puts Agnes in Leeds by 1902."
    assert candidates(said, 20) == []
    assert [c.text for c in candidates("the letter puts Agnes in Leeds by 1902.", 20)] == [
        "the letter puts Agnes in Leeds by 1902."
    ]


@pytest.mark.parametrize(
    "text",
    [
        "remember the new one is Birch#Lodge2026 so you have the wifi password",
        "note that I think the gate opens at 7 but I'm not sure",
        "can you remember the port we used for the staging box last time?",
        "don't forget the bread on the way home tonight",
    ],
)
def test_a_secret_a_guess_a_question_or_an_errand_is_not_kept_as_noted(text: str) -> None:
    assert Tag.NOTED not in [c.tag for c in candidates(text, 20)]
    assert not any("Birch#Lodge2026" in c.text for c in candidates(text, 20))


@pytest.mark.parametrize(
    "text",
    [
        "I was watching Grey's Anatomy reruns all evening.",
        "I told her Happy Anniversary and she laughed.",
    ],
)
def test_a_name_in_the_moment_or_in_words_said_is_not_kept(text: str) -> None:
    assert _routed(text).home is Home.SKIP


def test_a_clause_about_what_the_agent_chose_is_not_a_remark() -> None:
    said = "the budget is 4500, the venue you picked is Riverside Hall"
    assert [c.text for c in candidates(said, 20)] == [said]


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("I use Aftershoot to cull now which saves me hours.", True),
        ("we bank with Monzo for the business account.", True),
        ("hammers are ordered from Abel in Germany.", True),
        ("We store the spare kegs at Dan's unit.", True),
        # a past event, being somewhere, a person one is with, a day: no standing habit
        ("I got a call from Dave this morning about the van.", False),
        ("I'm on Zoom all day", False),
        ("I'm with Sarah at the vet, back in an hour.", False),
        ("we run late on Mondays.", False),
        ("we went to Tesco after work.", False),
    ],
)
def test_what_the_user_habitually_uses_by_name_is_a_value(text: str, kept: bool) -> None:
    """ "I use Aftershoot to cull" was skipped as the speaker's situation of the moment: the
    present tense of a habit (use, bank with, order from) gives a named tool, bank or
    supplier, which is what "what does she use for culling?" asks."""
    routed = _routed(text)
    assert (routed.reason == "what the user uses, by name") is kept, routed
    if kept:
        assert routed.home is Home.TOPIC, routed
