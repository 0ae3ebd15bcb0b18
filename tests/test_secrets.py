"""Secrets never become memory (issue 9, D5): the scanner on a labelled set, tool calls
carrying a credential refused with nothing written, turns logged with the credential
redacted, and no secret reaching a snapshot, a projection file, a log or the database."""

from __future__ import annotations

import json
import random
import re
import socket
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from structlog.testing import capture_logs

import reverie
from reverie import Config, ManualClock
from reverie.model.offline import OfflineModel
from reverie.model.seam import Answer, Deferred, Prompt
from reverie.rules import secret_formats
from reverie.rules.secrets import (
    MARKER,
    OVERLAP,
    SNAP,
    WINDOW,
    findings,
    has_secret,
    redact,
    refusal,
    secret_kind,
    windows,
)
from tests.conftest import db_counts, ok, tree
from tests.data.make_secrets_labelled import FORMS, SECRETS

LABELLED = Path(__file__).parent / "data" / "secrets_labelled.jsonl"
CAUGHT_AIM = 0.95  # issue 9: at least 95 % of secrets caught
FALSE_POSITIVE_BOUND = 0.02  # of the hard negatives, which are built to look like secrets


def labelled() -> list[dict[str, Any]]:
    return [json.loads(line) for line in LABELLED.read_text().splitlines()]


def sample(rng: random.Random, kind: str) -> tuple[str, str]:
    """A chat message carrying a fresh fake secret of a kind, and the secret itself."""
    secret = SECRETS[kind](rng)
    form = rng.choice([f for f in FORMS[kind] if "{b}" not in f])
    return form.format(s=secret), secret


def leaked(piece: str, text: str) -> bool:
    """Whether a secret piece occurs in text. A short piece (a 4-digit gate code) counts only
    as a token of its own: '9834' inside a random hex id or a duration is not that code."""
    if len(piece) >= 12:
        return piece in text
    return re.search(rf"(?<![\w.]){re.escape(piece)}(?!\w)", text) is not None


def test_a_short_secret_is_found_as_a_token_not_inside_an_id() -> None:
    assert leaked("9834", "the gate code is 9834.") and leaked("9834", "code=9834")
    assert not leaked("9834", "fct-ab9834cd0e") and not leaked("9834", '"ms": 5.9834')
    assert leaked("x" * 20, "idx" + "x" * 20 + "y")


def raw_store(home: Path) -> bytes:
    """Every byte a home holds: the database, its WAL, and every projection and log file."""
    return b"".join(p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file())


# ---- the scanner ---------------------------------------------------------------------------


def test_the_labelled_set_covers_every_kind_with_hard_negatives() -> None:
    rows = labelled()
    kinds = {r["kind"] for r in rows if r["secret"]}
    assert len(rows) >= 200
    assert kinds == set(SECRETS)
    assert all(sum(r["kind"] == k for r in rows) >= 4 for k in kinds)
    assert sum(not r["secret"] for r in rows) >= 100


def test_labelled_set_caught_and_false_positives() -> None:
    rows = labelled()
    positives = [r for r in rows if r["secret"]]
    negatives = [r for r in rows if not r["secret"]]
    caught = [r for r in positives if secret_kind(r["text"]) is not None]
    flagged = [r["text"] for r in negatives if secret_kind(r["text"]) is not None]
    assert len(caught) / len(positives) >= CAUGHT_AIM
    assert len(flagged) / len(negatives) <= FALSE_POSITIVE_BOUND, flagged


def test_the_eleventh_round_block_is_caught_whole_and_flags_nothing() -> None:
    """What two chat sets stored: one-time codes listed in dashed groups ("recovery codes:
    8h2k-p9xq-4mzt, 3jd7-w2rc-q81n"), a bank's memorable word and a password named by
    who gave it ("the memorable word they asked for is …"). Every one is caught with its
    kind; talk about them ("the recovery codes for two-factor", "the password you gave me
    is wrong") is not."""
    block = [r for r in labelled() if r.get("block") == "eleventh-round"]
    positives = [r for r in block if r["secret"]]
    assert len(positives) >= 6 and len(block) - len(positives) >= 7
    for row in block:
        assert secret_kind(row["text"]) == row["kind"], row["text"]


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (
            "here's my key AKIA" + "Q" * 8 + "7" * 8 + ", can you check why boto fails",
            "aws-access-key",
        ),
        ("export GITHUB_TOKEN=ghp_" + "aB3" * 12, "github-token"),
        ("DATABASE_URL=postgres://app:Sup3rS3cret@db.internal:5432/app", "connection-string"),
        ("password=s3cr3t!", "password-assignment"),
        ("the door code is 7731# should you need it", "access-code"),
        # a code said after its place, a comma, "it's" or "its" (an unseen set stored these)
        ("the gate code for the side entrance at the hall is 4471, ask Jo", "access-code"),
        ("dave always forgets his fuel card pin, its 5093.", "access-code"),
        ("the office wifi, it's Kestrel!2031, and the guest one is open", "access-code"),
        # a code said as what the lock is (an unseen set stored this one)
        ("Oh, the lockbox on the side door is 4471 by the way, the crew needs it", "access-code"),
        ("the keypad at the back: 90210#", "access-code"),
        ("the lockbox on the porch is 5829, I told Kevin too", "access-code"),
        ("whoever locks up has to set the alarm, the code is 62091", "access-code"),
        # a code after its lock and a comma (an unseen set stored this one)
        ("go in with the key box at the sacristy door, code 3091.", "access-code"),
        ("the side gate, use the padlock with code 4471.", "access-code"),
        # a lock's combination (an unseen set stored this one)
        (
            "the equipment room, Darren gave me the combo, 12-34-08, so i can grab the pucks.",
            "access-code",
        ),
        ("the combo for the shed is 10 20 30", "access-code"),
        ("combo to the shed lock is 12 34 56", "access-code"),
        # a panel between the lock and its code, and a login said as user / password
        ("alarm panel code for the zamboni room is 4471# if you need it", "access-code"),
        (
            "for the portal I log in with marloes.v / Rdam!2026haven but it's locked",
            "password-assignment",
        ),
        # a password said as what the user types, in passing
        ("it keeps rejecting my password. I'm typing Pastel#Nata88", "password-assignment"),
        # a lock's code said later in its sentence (an unseen set stored these)
        (
            "there's a key safe on the barn wall, the code's 2719, pull the lever down",
            "access-code",
        ),
        (
            "can you remind me the alarm code for when mia opens on monday while i'm off,"
            " it's 6630",
            "access-code",
        ),
        # a lock's code said as "it" in the next sentence (an unseen set stored this one)
        (
            "the cleaner asked about the lockbox again. I texted her it is 7315 but she lost it",
            "access-code",
        ),
        # what is typed, said after a pause (an unseen set stored this one)
        ("the login fails, I type it right, is Marisco#2027 I am sure", "password-assignment"),
        # an account given a password's value
        (
            'the club\'s shared Canva account is "Tidewater!77" if you need it',
            "password-assignment",
        ),
        # a token near its label, ending the sentence: the full stop is not part of a host
        ("Admin token currently zq_live_" + "7hR2kXw9Lm4Tq8Vb", "token-assignment"),
        ("Admin token currently zq_live_" + "7hR2kXw9Lm4Tq8Vb.", "token-assignment"),
        (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEow"
            + "x" * 40
            + "\n-----END RSA PRIVATE KEY-----",
            "private-key",
        ),
        # a card number made up (no Luhn check) is still one, written in fours after a card
        ("my card 4921 8830 1157 2204 has been charged twice", "payment-card"),
        # a box's code after a pause, ending the sentence; a padlock's combination said a
        # few words after the padlock
        ("agent says theres a key safe by the side gate, 4471.", "access-code"),
        (
            "I must give her the combination for the storeroom padlock at the market, which "
            "is 3-9-1-7, and explain the float.",
            "access-code",
        ),
        # words between the padlock and a dial's numbers, no "is": only the combo rule reads it
        ("the combination to the bike shed padlock by the back gate: 12 34 56", "access-code"),
        ("the combination for the locker at the pool 12 34 56 please", "access-code"),
        # a lock named, then its code a sentence later
        (
            "the key box by the door is for late guests. The code at present is 7316.",
            "access-code",
        ),
        # whose code it is between the determiner and "code"; a password as "it" after a
        # pause
        ("front door is a schlage encode, I made Rosa a user code, 8142.", "access-code"),
        ("front door is a schlage, the user code is 8142", "access-code"),
        ("The host key for our university licence is 731904", "access-code"),
        ("i had to give zara my card, told her the pin (6093) over text lol.", "access-code"),
        # a plain lock of a place; a PIN in brackets as "it"; a code ending its sentence
        ("the lock on the honey house is 2719, same as the shed one", "access-code"),
        ("got a new PIN for the joint account (it's 5830) so it's changed", "access-code"),
        ("the gate on the side door is 4471.", "access-code"),
        # a keypad's code digit by digit; a token given in brackets after its name
        ("key safe by the back door, code 2-7-1-1. can u add it", "access-code"),
        ("the padlock on the shed is 3-8-6-2.", "access-code"),
        ("Alarm code is 9-0-5-2 and you have 30 seconds", "access-code"),
        (
            "my api secret (a1b9c7d3e5f7091b2c4d6e8f0a1b3c5d7e9f0a2b) is rejected",
            "token-assignment",
        ),
        (
            "staff keep asking for the guest wifi password. its Kx9#mPLw2 and I'm sick of it",
            "password-assignment",
        ),
    ],
)
def test_secret_kind_names_the_kind_and_redact_marks_it(text: str, kind: str) -> None:
    assert secret_kind(text) == kind
    clean = redact(text)
    assert f"[redacted {kind}]" in clean and secret_kind(clean) is None
    assert redact(clean) == clean  # idempotent: the marker is not a secret
    assert has_secret(clean)  # but a sentence about a redacted secret is never a fact


@pytest.mark.parametrize(
    "text",
    [
        "the password is in 1Password",
        "rotate the API key",
        "arn:aws:iam::123456789012:role/deploy",
        "git checkout 9fceb02d0ae598e95dc970b74767f19372d61af8",
        "request 550e8400-e29b-41d4-a716-446655440000 failed",
        "const apiKey = process.env.OPENWEATHER_API_KEY;",
        "password = request.form['password']",
        "postgres://user:password@localhost:5432/mydb",
        "the wifi, it's down again since 9pm",
        "The door to room 4 has area code 0161 on the sign",
        "Our alarm went off at 3am, error code 404 on the panel",
        "a combination of 3 drugs, 2-3 times a day",
        "we won 3-2-1 in the combo round",
        "the best combo for the burger meal is 2 3 4",
        "I log in with my work account / SSO now",
        "my favourite combination, 10 20 30 seconds of sprints",
        "the garage door opener app threw an error, code 500 from the API",
        "it is safe, code 200 means the request succeeded",
        "the alarm code changed in 2019",
        "the gate is 1200 metres from the car park",
        "the garage door is 2015 vintage",
        "the door number is 1234 Main St",
        "the gate is 1,200 metres away",
        "the safe is 4471 kg of steel",
        "I typed pip install requests",
        "I am typing Hello World",
        "I logged in with Okta SSO",
        # a code word and a count later in the sentence: a count, not a code
        "the gate code is on the fridge, there are 1200 sheep in the top field",
        "the security code review found 1500 issues",
        "my account is 12345678 on the invoice",
        "I typed the address 221B-Baker into the form",
        "the gate was broken last week. it is 2024 now, time to fix it",
        "the door was fixed. it is 1500 dollars though",
        "the account is Marketing",
        # digits in fours with no card named, or a card named too far back
        "The order number is 4921 8830 1157 2204 for the shipment.",
        "my card arrived, and the parcel we sent to the depot on Friday was tracked as "
        "4921 8830 1157 2204",
        # a box, a pause, then a year, a count or a quantity
        "the key safe by the side gate, 2019.",
        "the door to the office has the area code 0161 on it",
        "the product key sticker is on the box from 2019",
        "the PIN pad (model 4400x) is broken again",
        "the host key ring has 4 keys on it",
        "the password manager is great, its 1Password 8 now",
        "forgot my password - it's fine, reset link worked",
        "I reset my password yesterday, it's working fine now",
        "the lockbox arrived on Monday, 3 days late.",
        "the lock on the orders table is 3000 rows",
        "the lock for the migration is 5000 ms",
        "the lock on the shed is from 2019",
        "the gate code changed on 12-04-2023",
        "the lock on the shed is 12-04-2023",
        "the alarm code is 1-2",
        "my api key (the old one) expired",
        "the token (see docs) expired",
        "the lockbox on the side door is 4471.5 inches wide",
        "the combination for the gym lockers changed, 40 people use them",
        # a lock, then a later "code" that is a year or a length
        "The door was repainted in May. The code is 2024 for the annual report.",
        "We fixed the gate last week. The code at the bottom is 500 lines long.",
    ],
)
def test_talk_about_a_secret_is_not_one(text: str) -> None:
    assert secret_kind(text) is None and redact(text) == text


def test_redaction_keeps_the_text_around_each_secret() -> None:
    rng = random.Random(7)
    aws, slack = SECRETS["aws-access-key"](rng), SECRETS["slack-token"](rng)
    text = f"aws {aws} and slack {slack}, thanks!"
    assert redact(text) == (
        "aws [redacted aws-access-key] and slack [redacted slack-token], thanks!"
    )
    assert [f.kind for f in findings(text)] == ["aws-access-key", "slack-token"]


@pytest.mark.parametrize(
    "text",
    ["db password=Hunter2Secret!", "pw=Tr0ub4dor&3!?", "the password is hunter2!! ok"],
)
def test_redaction_takes_the_symbols_written_onto_a_secret(text: str) -> None:
    """A password may end in "!": the marker takes such symbols, so no piece is left."""
    redacted = redact(text)
    assert "!" not in redacted and "?" not in redacted, redacted
    assert redacted.count("[redacted password-assignment]") == 1


def test_redaction_keeps_the_host_after_a_connection_string_s_password() -> None:
    redacted = redact("postgres://admin:S3cretPassw0rd@db.example.com:5432/app")
    assert redacted.endswith("@db.example.com:5432/app") and "S3cret" not in redacted


def test_value_thresholds() -> None:
    """The length floors of a labelled value: a mutant of either constant fails here."""
    assert not secret_formats.credential("ab1!x") and secret_formats.credential("ab1!xy")
    assert not secret_formats.token_like("a1" * 7 + "b") and secret_formats.token_like("a1" * 8)
    assert not secret_formats.random_looking("aB3dE5gH7jK9mN1pQ2r")  # 19 chars
    assert secret_formats.random_looking("aB3dE5gH7jK9mN1pQ2rS")  # 20 chars


def test_detect_secrets_runs_offline_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plugins are pure matchers here: no network verification, no file written."""

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("the scanner opened a socket")

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(socket, "socket", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    for row in labelled():
        secret_kind(row["text"])
    assert list(tmp_path.iterdir()) == []


def test_a_refusal_is_bounded_and_never_quotes_the_secret() -> None:
    rng = random.Random(3)
    key = SECRETS["aws-access-key"](rng)
    text = "note: " + "x" * 500 + f" the prod key is {key}"
    message = refusal("aws-access-key", "content", text)
    assert key not in message and "aws-access-key" in message and "vault" in message
    quoted = message.split("The call, redacted: ", 1)[1]
    assert len(quoted) <= 200


DATASET_FP_AIM = 0.01  # issue 9: at most 1 % false positives on LoCoMo and BEAM 100K


def test_no_more_false_positives_than_the_aim_on_real_conversations(shared_data: Path) -> None:
    """LoCoMo observations and BEAM 100K user messages hold no credentials: every hit is a
    false positive (bench/secrets.py prints the figures)."""
    from bench.secrets import beam_user_messages, locomo_observations

    for texts in (locomo_observations(shared_data), beam_user_messages(shared_data)):
        assert texts
        hits = [t for t in texts if secret_kind(t) is not None]
        assert len(hits) / len(texts) <= DATASET_FP_AIM, hits[:3]


# ---- credentials said in words (review finding 2) -------------------------------------------

SAID_IN_WORDS = [
    ("password=letmein", "letmein"),
    ("passwd=letmein", "letmein"),
    ("pass is swordfish", "swordfish"),
    ("pw for staging is correcthorsebatterystaple", "correcthorsebatterystaple"),
    ("We use hunter2 as the password for the staging box", "hunter2"),
    ("Store this: hunter2 is the password for prod", "hunter2"),
    ("The jenkins admin login is admin with password correcthorsebatterystaple", "correct"),
    ("Login for grafana: admin / S3cr3tP@ss", "S3cr3tP@ss"),
    ("Remember: credentials are bob and hunter2", "hunter2"),
    ("The wifi password is the dog's name, Biscuit2019", "Biscuit2019"),
    ("The root password, in case you forget, is 'Zebra!Moon#77'", "Zebra!Moon#77"),
    ("mot de passe: Soleil2024", "Soleil2024"),
    ("the password is letmein", "letmein"),
    ("the default password is changeme, change it on first login", "changeme"),
    ("the router password is admin", "admin"),
    ("wget --user deploy --password Biscuit https://files.internal/x.tgz", "Biscuit"),
]


@pytest.mark.parametrize(("text", "value"), SAID_IN_WORDS)
def test_a_password_said_in_words_is_a_secret_whatever_its_characters(
    text: str, value: str
) -> None:
    """Finding 2: a credential label in a relation with one concrete value is a secret,
    plain dictionary words and known defaults included; redaction removes the value."""
    assert secret_kind(text) == "password-assignment"
    assert value not in redact(text) and has_secret(text)


@pytest.mark.parametrize(
    "text",
    [
        "the password is in 1Password",
        "the password is in the vault",
        "the password is stored in SSM",
        "The password policy requires 12 characters",
        "Reset your password at https://id.example.com/reset",
        "rotate the password",
        "the password was changed yesterday",
        "the file is password protected",
        "password: <password>",
        "DB_PASSWORD=YOUR_PASSWORD",
        "the password is 12 characters long",
        "this is the password for prod",
        "log in with password authentication",
        "the boarding pass is in my wallet",
        "The build cache key is v2-deps-9f8e7d6c",
    ],
)
def test_talk_about_a_password_is_not_one(text: str) -> None:
    """Finding 2's references and mentions, and finding 7's false positives (a URL is not
    a password value; a versioned cache key with a short hex suffix is an identifier)."""
    assert secret_kind(text) is None and redact(text) == text


def test_the_flush_is_stricter_than_a_tool_call() -> None:
    """A label beside a value-like token keeps a statement out of memory even when no
    relation names the value (it only stays in the episode log)."""
    text = "the staging password rotates, the new one ends in x7Q2"
    assert secret_kind(text) is None and has_secret(text)
    assert not has_secret("the deploy timeout for x7Q2 is 30s")


def test_an_identifier_is_words_and_short_tags() -> None:
    """The hex piece of a versioned name is a tag below _SHORT_TAG chars, key material at
    it: a mutant of the constant fails here."""
    assert secret_formats._SHORT_TAG == 12
    assert secret_formats.identifier("v2-deps-" + "9f8e7d6c0ab")  # 11 hex chars
    assert not secret_formats.identifier("v2-deps-" + "9f8e7d6c0abc")  # 12
    assert not secret_formats.identifier("0f8e7d6c-9f8e-7d6c-9f8e-7d6c9f8e7d6c")  # no word
    assert secret_kind("API_KEY=0f8e7d6c-9f8e-7d6c-9f8e-7d6c9f8e7d6c") == "token-assignment"


async def test_passwords_said_in_turns_reach_no_file_snapshot_or_database(
    rv: reverie.Reverie,
) -> None:
    """Finding 2: the review's two turns then idle put both passwords in a topic named
    `password`, its history.jsonl, summary.md and reverie.db. Now the turn is logged with
    the value redacted (the tool-path rules catch both), and nothing learns it."""
    ns = rv.namespace("a")
    async with ns.session("s") as s:
        for user in (
            "We use hunter2 as the password for the staging box",
            "The jenkins admin login is admin with password correcthorsebatterystaple",
        ):
            episode = await s.turn(user=user, assistant="Understood.")
            assert "[redacted password-assignment]" in episode.text
        await s.pre_compact()
        await s.idle()
        await rv.wait_idle()
    async with ns.session("next") as s:
        snapshot = s.snapshot.text
    raw = raw_store(rv.home).decode("utf-8", "replace")
    for value in ("hunter2", "correcthorsebatterystaple"):
        assert value not in snapshot and value not in raw
    assert await ns.facts("password") == []


async def test_memory_add_and_topic_save_refuse_a_password_said_in_words(
    rv: reverie.Reverie,
) -> None:
    async with rv.namespace("a").session("s") as s:
        for text, value in SAID_IN_WORDS:
            for tool, args in (
                ("memory", add(text)),
                ("topic", {"action": "save", "topic": "creds", "content": text}),
            ):
                answer = ok(await s.call_tool(tool, args), "ERROR")
                assert "password-assignment" in answer["error"]
                assert value not in answer["error"]
    assert value not in raw_store(rv.home).decode("utf-8", "replace")


# ---- the scan's cost is bounded (review finding 3) -------------------------------------------


def test_a_long_text_is_scanned_in_overlapping_windows() -> None:
    """No rule or plugin sees more than WINDOW chars at once (a quadratic regex then costs
    O(n · WINDOW), bench/secrets.py prints the time); neighbours share at least
    OVERLAP - SNAP chars, so every span that long lies whole in one window."""
    text = ("word " * 30 + "\n") * 200  # 30,200 chars
    spans = list(windows(text))
    assert len(spans) > 1 and spans[0][0] == 0 and spans[-1][1] == len(text)
    assert max(end - start for start, end in spans) <= WINDOW == 2000
    shared = [a_end - b_start for (_, a_end), (b_start, _) in zip(spans, spans[1:], strict=False)]
    assert min(shared) >= OVERLAP - SNAP == 400
    assert all(text[end].isspace() for _, end in spans[:-1])  # cut at whitespace
    assert list(windows("short text")) == [(0, 10)]


@pytest.mark.parametrize("offset", range(WINDOW - 450, WINDOW + 50, 37))
def test_a_secret_straddling_a_window_edge_is_caught_whole(offset: int) -> None:
    key = SECRETS["github-token"](random.Random(offset))
    line = "lorem ipsum " * 400
    text = line[:offset] + f" token {key} " + line[offset:]
    clean = redact(text)
    assert key not in clean and clean.count("[redacted github-token]") == 1
    assert secret_kind(text) == "github-token"


@pytest.mark.parametrize("offset", range(WINDOW - 700, WINDOW + 50, 23))
def test_a_label_and_its_value_straddling_a_window_edge_are_seen_together(offset: int) -> None:
    """The relation "label … is value" spans words, so windows cut at whitespace must
    still share it: the overlap holds it whole."""
    line = "lorem ipsum " * 400
    text = line[:offset] + " the password for the staging box is swordfish. " + line[offset:]
    assert redact(text).count("[redacted password-assignment]") == 1
    assert "swordfish" not in redact(text)


def test_a_long_run_cut_by_a_window_is_redacted_whole() -> None:
    """A run without whitespace longer than a window: a finding at its cut edge takes
    the whole run, so no piece of it survives redaction."""
    rng = random.Random(4)
    run = "".join(rng.choice("abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNP23456789") for _ in range(5000))
    text = f"here: {run} thanks"
    assert redact(text) == "here: [redacted random-token] thanks"


def test_the_npmrc_token_is_caught_without_the_quadratic_plugin() -> None:
    """detect-secrets' npm plugin (``//.+/:_authToken=``) is quadratic on ``x://``
    repeats; its shape is one of our rules instead, anchored on the literal."""
    from reverie.rules.secrets import _PLUGIN_KINDS

    assert not any(name.startswith("npm.") for name in _PLUGIN_KINDS)
    legacy = "//registry.example.com/:_authToken=0f8e7d6c-9f8e-7d6c-9f8e-7d6c9f8e7d6c"
    assert secret_kind(legacy) == "npm-token"
    assert secret_kind("x://" * 2_000) is None


# ---- tool calls ------------------------------------------------------------------------------


async def test_memory_add_and_replace_carrying_a_secret_write_nothing(
    rv: reverie.Reverie,
) -> None:
    rng = random.Random(11)
    ns = rv.namespace("a")
    async with ns.session("s") as s:
        ok(await s.call_tool("memory", add("CI runs on Buildkite")), "ADD")
        before, files = db_counts(rv.home), tree(rv.home)
        for kind in ("aws-access-key", "github-token", "jwt", "password-assignment"):
            text, secret = sample(rng, kind)
            added = ok(await s.call_tool("memory", add(text)), "ERROR")
            replaced = ok(
                await s.call_tool(
                    "memory",
                    {
                        "action": "replace",
                        "target": "memory",
                        "old_text": "Buildkite",
                        "content": text,
                    },
                ),
                "ERROR",
            )
            for answer in (added, replaced):
                assert kind in answer["error"] and secret not in answer["error"]
                assert "reference" in answer["error"] and "nothing was written" in answer["error"]
        assert db_counts(rv.home) == before and tree(rv.home) == files
    assert [e.content for e in await ns.entries()] == ["CI runs on Buildkite"]
    assert secret not in raw_store(rv.home).decode("utf-8", "replace")


async def test_topic_save_and_skill_create_patch_carrying_a_secret_write_nothing(
    rv: reverie.Reverie,
) -> None:
    rng = random.Random(12)
    async with rv.namespace("a").session("s") as s:
        ok(
            await s.call_tool("skill_manage", skill("create", "deploy", "Run make deploy.")),
            "CREATED",
        )
        before, files = db_counts(rv.home), tree(rv.home)
        text, secret = sample(rng, "slack-token")
        saved = ok(
            await s.call_tool("topic", {"action": "save", "topic": "alerts", "content": text}),
            "ERROR",
        )
        text2, secret2 = sample(rng, "connection-string")
        created = ok(await s.call_tool("skill_manage", skill("create", "db", text2)), "ERROR")
        patched = ok(
            await s.call_tool(
                "skill_manage", {**skill("patch", "deploy", text2), "old_text": "make deploy"}
            ),
            "ERROR",
        )
        assert "slack-token" in saved["error"] and secret not in saved["error"]
        for answer in (created, patched):
            assert "connection-string" in answer["error"] and secret2 not in answer["error"]
        assert db_counts(rv.home) == before and tree(rv.home) == files
    assert await rv.namespace("a").facts("alerts") == []


async def test_an_error_quoting_the_input_redacts_it(
    tmp_path: Path, clock: ManualClock, spans: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    """Any ERROR that quotes its input (here: an old_text that matches nothing) names the
    secret's kind, never the secret; the span status carries the same redacted text."""
    provider, exporter = spans
    key = SECRETS["github-token"](random.Random(5))
    async with reverie.open(tmp_path / "h", clock=clock, tracer_provider=provider) as rv:
        async with rv.namespace("a").session("s") as s:
            answer = ok(
                await s.call_tool(
                    "memory",
                    {"action": "remove", "target": "memory", "old_text": f"token {key}"},
                ),
                "ERROR",
            )
    assert key not in answer["error"] and "[redacted github-token]" in answer["error"]
    statuses = [sp.status.description or "" for sp in exporter.get_finished_spans()]
    assert statuses and not [d for d in statuses if key in d]


async def test_telemetry_never_carries_a_secret_from_a_tool_or_action_name(
    tmp_path: Path, spans: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    """Finding 8: an agent-supplied tool name or action became the span name,
    gen_ai.tool.name, reverie.tool.action and the DEBUG tool_call line. Now an unknown name
    is recorded redacted (span name ``execute_tool unknown``); known tools keep the
    contract span name ``execute_tool <tool>``."""
    provider, exporter = spans
    token = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
    stripe = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"
    async with reverie.open(tmp_path / "h", tracer_provider=provider) as rv:
        async with rv.namespace("a").session("s") as s:
            with capture_logs() as logs:
                ok(await s.call_tool(token, {}), "ERROR")
                ok(await s.call_tool("memory", {"action": stripe}), "ERROR")
                ok(await s.call_tool("memory", add("CI runs on Buildkite")), "ADD")
    tool_spans = [x for x in exporter.get_finished_spans() if x.name.startswith("execute_tool")]
    assert [x.name for x in tool_spans] == [
        "execute_tool unknown",
        "execute_tool memory",
        "execute_tool memory",
    ]
    unknown, bad_action, good = (dict(x.attributes or {}) for x in tool_spans)
    assert unknown["gen_ai.tool.name"] == "[redacted github-token]"
    assert bad_action["gen_ai.tool.name"] == "memory"
    assert bad_action["reverie.tool.action"] == "[redacted stripe-key]"
    assert good["reverie.tool.action"] == "add" and good["reverie.memory.operation"]
    recorded = repr([(x.name, x.attributes, x.status.description) for x in tool_spans])
    assert token not in recorded and stripe not in recorded
    tools = [e["tool"] for e in logs if e["event"] == "tool_call"]
    assert tools == ["[redacted github-token]", "memory", "memory"]
    assert token not in repr(logs) and stripe not in repr(logs)


def test_an_agent_name_is_redacted_then_bounded() -> None:
    from reverie.telemetry.tracing import NAME_CHARS, agent_name

    key = SECRETS["github-token"](random.Random(8))
    assert agent_name("x" * 3000 + key) == "x" * NAME_CHARS + "… (3,040 chars)"
    assert agent_name(f"{'y' * 70} {key}").startswith("y" * NAME_CHARS + "…")
    assert agent_name(f"use {key}") == "use [redacted github-token]"
    assert agent_name("memroy") == "memroy"


# ---- turns, the flush, the snapshot ------------------------------------------------------------


async def test_a_turn_is_logged_with_its_secret_redacted(rv: reverie.Reverie) -> None:
    rng = random.Random(13)
    ns = rv.namespace("a")
    user, key = sample(rng, "aws-access-key")
    answer, token = sample(rng, "github-token")
    async with ns.session("s") as s:
        episode = await s.turn(user=user, assistant=answer)
    assert key not in episode.text and "[redacted aws-access-key]" in episode.text
    [stored] = await ns.episodes()
    assert "[redacted aws-access-key]" in (stored.user or "")
    assert "[redacted github-token]" in (stored.assistant or "")
    assert await ns.search(key) == [] and await ns.search(token) == []
    raw = raw_store(rv.home).decode("utf-8", "replace")
    assert key not in raw and token not in raw


async def test_a_long_turn_is_redacted_too(rv: reverie.Reverie) -> None:
    """A turn longer than the writer's BIG_TURN is scanned off the event loop, alike."""
    from reverie.actors.writer import BIG_TURN

    key = SECRETS["stripe-key"](random.Random(15))
    text = "notes from the incident. " * (BIG_TURN // 20) + f"STRIPE_SECRET_KEY={key}"
    assert len(text) > BIG_TURN
    async with rv.namespace("a").session("s") as s:
        episode = await s.turn(user=text)
    assert key not in episode.text and episode.text.endswith("[redacted stripe-key]")
    assert key not in raw_store(rv.home).decode("utf-8", "replace")


async def test_turn_then_idle_stores_no_secret_anywhere(rv: reverie.Reverie) -> None:
    """Every kind said in a turn, then idle: the snapshot, MEMORY.md / USER.md, topic files,
    the jsonl logs and the database all stay free of every secret."""
    rng = random.Random(14)
    ns = rv.namespace("a")
    secrets = []
    async with ns.session("s") as s:
        await s.turn(user="The deploy timeout is 30s.")
        for kind in sorted(SECRETS):
            text, secret = sample(rng, kind)
            secrets.append(secret)
            await s.turn(user=f"{text}. The prod db for {kind} is pg-{len(secrets)}.")
        await s.idle()
        await rv.wait_idle()
    saved = [r for r in await ns.ledger() if r.actor == "flusher" and r.decision == "ADD"]
    assert saved  # the flush ran and kept the plain facts said beside the secrets
    async with ns.session("next") as s:
        snapshot = s.snapshot.text
    raw = raw_store(rv.home).decode("utf-8", "replace")
    files = "\n".join(b.decode("utf-8", "replace") for b in tree(rv.home).values())
    for secret in secrets:
        for piece in secret.splitlines():
            assert not any(leaked(piece, where) for where in (snapshot, raw, files)), piece


D5_KINDS = (
    "aws-access-key",
    "aws-secret-key",
    "github-token",
    "slack-token",
    "jwt",
    "private-key",
    "password-assignment",
    "connection-string",
    "openai-key",
    "stripe-key",
)


async def test_d5_fifty_secrets_through_three_paths_reach_no_snapshot(
    rv: reverie.Reverie,
) -> None:
    """Issue 9, D5: 50 secrets of mixed kinds through memory add, topic save, and a turn then
    idle (on b7d4e07: 50/50, 44/50 and 43/50 reached every later snapshot) — now 0."""
    rng = random.Random(9)
    cases = [sample(rng, D5_KINDS[i % len(D5_KINDS)]) for i in range(50)]
    for path in ("memory", "topic", "turn"):
        ns = rv.namespace(f"d5-{path}")
        async with ns.session("s") as s:
            for i, (text, _) in enumerate(cases):
                if path == "memory":
                    ok(await s.call_tool("memory", add(text)), "ERROR")
                elif path == "topic":
                    args = {"action": "save", "topic": f"t{i % 5}", "content": text}
                    ok(await s.call_tool("topic", args), "ERROR")
                else:
                    await s.turn(user=f"{text} — the staging host is web-{i}.")
            await s.idle()
            await rv.wait_idle()
        async with ns.session("later") as s:
            snapshot = s.snapshot.text
        leaked = [secret for _, secret in cases if secret.splitlines()[-1] in snapshot]
        assert leaked == [], path


# ---- promotion and distillation ----------------------------------------------------------------


class Leaky:
    """Answers like the offline rules, but every rewrite and summary gains a credential."""

    name = "leaky"

    def __init__(self, secret: str) -> None:
        self.offline = OfflineModel()
        self.secret = secret

    async def judge(self, prompt: Prompt) -> Answer | Deferred:
        answer = await self.offline.judge(prompt)
        if not isinstance(answer, Answer):
            return answer
        data = json.loads(json.dumps(answer.data))
        for verdict in data.get("verdicts", []):
            if verdict.get("rewrite"):
                verdict["rewrite"] += f" (key {self.secret})"
        for summary in data.get("summaries", []):
            summary["summary"] += f" Token: {self.secret}"
        return replace(answer, data=data)


async def test_promotion_and_distillation_never_carry_a_model_invented_secret(
    tmp_path: Path, clock: ManualClock
) -> None:
    key = SECRETS["aws-access-key"](random.Random(21))
    config = Config().with_section("distiller", rules_first=False, min_new_facts=1)
    home = tmp_path / "h"
    async with reverie.open(home, clock=clock, model=Leaky(key), config=config) as rv:
        async with rv.namespace("a").session("s") as s:
            for content in (
                "The deploy timeout for /srv/api is 30s",
                "The deploy timeout for /srv/api is 45s",
            ):
                await s.call_tool(
                    "topic", {"action": "save", "topic": "deploy", "content": content}
                )
        clock.advance(timedelta(days=3))
        report = await rv.review(force=True)
        assert await rv.namespace("a").entries("memory") == []
        summary_files = list(home.rglob("summary.md"))
    stages = {s["stage"]: s for s in report["namespaces"][0]["stages"]}
    [outcome] = stages["promoter"]["outcomes"]  # the one candidate: asked, and refused
    assert outcome["verdict"] == "skip" and "aws-access-key" in outcome["reason"]
    assert "[redacted aws-access-key]" in outcome["rewrite"]  # as logged in promotions.jsonl
    assert all(key not in p.read_text() for p in summary_files)
    raw = raw_store(home).decode("utf-8", "replace")
    assert key not in raw


# ---- helpers -----------------------------------------------------------------------------------


def add(content: str) -> dict[str, str]:
    return {"action": "add", "target": "memory", "content": content}


def skill(action: str, name: str, content: str) -> dict[str, str]:
    return {"action": action, "name": name, "content": content}


def test_marker_shape() -> None:
    assert MARKER.fullmatch("[redacted aws-access-key]")


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("my gradescope api tokn is gs_tok_9fA2kLq77x if u need it lol", "vendor-token"),
        ("export ACME=acme_live_Q8r2Lm4Zt7Xw", "vendor-token"),
        ("rename it to snake_case_ID1234abcd", None),
        ("the test is test_parse_Input2Output3", None),
        ("my_var_HelloWorld2024 holds it", None),
    ],
)
def test_a_vendor_prefixed_random_token_is_a_secret(text: str, kind: str | None) -> None:
    """A lower-case prefix, an underscore and a short random tail (the sk_live_ shape from a
    vendor no list names) is a token; snake_case names with a word-like tail are not."""
    assert secret_kind(text) == kind


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("pasword: Qz8!mR2#vLx", "password-assignment"),
        ("the passowrd for grafana is gr4f4n4-Adm1n", "password-assignment"),
        ("charge it to 4111 1111 1111 1111 exp 09/27", "payment-card"),
        ("my 2FA seed (TOTP secret) is JBSWY3DPEHPK3PXPQ7RZ", "otp-seed"),
        ("mailgun key-7fd14c1604d115cea325a65e19cbae53", "vendor-token"),
        ("shopify admin 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", "vendor-token"),
        ("my passport number is on file", None),
        ("the passwrod policy is strict", None),
        ("order 4111 1111 1111 1112 shipped", None),  # fails the Luhn check
        ("release-9fceb02d0ae598e95dc970b74767f193 is tagged", None),
        ("commit 9fceb02d0ae598e95dc970b74767f19372d61af8", None),
    ],
)
def test_second_review_phrasings(text: str, kind: str | None) -> None:
    """A misspelt label is still the label (one edit from 'password'); a card number is
    one that passes the Luhn check; a 2FA seed is base32 after a 2FA label; a vendor's
    short prefix before 32+ hex digits is a key, a slug's long one is not."""
    assert secret_kind(text) == kind


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("ent-13d6690829074600", None),  # its last 13 digits pass the Luhn check
        ("build b37268888707411e failed", None),
        ("x4111111111111111", None),
        ("visa 4111111111111111.", "payment-card"),
        ("card: 4111-1111-1111-1111", "payment-card"),
    ],
)
def test_digits_glued_to_letters_are_no_card_number(text: str, kind: str | None) -> None:
    """A card number stands alone: a run of digits inside a hex id or a word is part of
    it, even when the run passes the Luhn check (one entry id in ~4,400 did, and the
    promoter lost its rule to the redaction)."""
    assert secret_kind(text) == kind


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (
            "datadog wants this api key in the agent config: d7ffd06121e2e97b4497992c7ce56729",
            "token-assignment",
        ),
        (
            "cloudflare api token -qk4xHGyGCDo-i9o_4GXpj-2CYLmhnf2Uza3iqXG (zone edit perms)",
            "token-assignment",
        ),
        (
            "pagerduty routing key e91d1c318bc2a15b4de295afb57924c2 goes in alertmanager",
            "token-assignment",
        ),
        ("my 2FA backup codes are 8f3k-2m9q 77xk-p0aa 4n2b-zz91", "backup-codes"),
        ("SECRET_KEY = 'django-insecure-)udujny7jx!ar*e1z7o^i^lx9w4b9%l+fvk@'", "private-key"),
        ("passwords live in 1Password under the Infra vault", None),
        ("the primary key user_id_2024_archive is indexed", None),
        ("tokens expire after 3600 seconds", None),
    ],
)
def test_third_attack_phrasings(text: str, kind: str | None) -> None:
    """A key label a few words before a long value with digits is a key without 'is' or
    ':' between them; a plural label at a clause's start is the subject, not a value."""
    assert secret_kind(text) == kind


@pytest.mark.parametrize(
    "text",
    [
        "the landlord reset the key safe to 90417 after the last tenant left",
        "we changed our gate code to 5512 on monday",
        "put a new padlock on the shed, lock code is 2468",
    ],
)
def test_a_lock_changed_to_a_code_or_a_plain_lock_s_code_is_a_secret(text: str) -> None:
    assert secret_kind(text) == "access-code"


@pytest.mark.parametrize(
    "text",
    [
        "we set the alarm to 0630 for the early shift",
        "the door to 1405 is at the end of the hall",
        "they moved the gate to 2024 standards",
        "the lock was changed in 2019",
    ],
)
def test_a_lock_changed_to_a_time_room_or_year_is_not_a_secret(text: str) -> None:
    assert secret_kind(text) is None


def test_a_pin_said_later_in_its_sentence_is_a_secret_and_a_distance_is_not() -> None:
    said = "the bank wanted a PIN to confirm changes over the phone, it's 8315, I noted it"
    assert secret_kind(said) == "access-code"
    assert secret_kind("the pin on the trail map is off, it's 1200 m further on") is None


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("they changed the locks on the barn, the code is 3318", True),
        ("the row locks piled up again, code: 1205", False),
        ("we hit lock contention again, it is 5000 and rising", False),
    ],
)
def test_a_plain_lock_is_a_lock_only_as_a_thing_fitted(text: str, secret: bool) -> None:
    assert has_secret(text) is secret


@pytest.mark.parametrize(
    "text",
    [
        "the sandbox gave us a temp key for the bucket, AKIA7QWERTYEXAMPL3Z and a secret",
        "Marta holds the key to the boathouse, and the combo for the oar cage is 5820",
        "keypad by the loading bay is 1987, don't lose it",
        "the key safe at the cottage gate has code 7720 for the cleaners",
        "the bank made me turn on 2FA and gave me backup codes, the first one is 5512-0937",
    ],
)
def test_codes_said_in_passing_after_the_unseen_sets(text: str) -> None:
    assert has_secret(text)


@pytest.mark.parametrize(
    "text",
    [
        "the combination of the two rooms is 1200 square feet",
        "backup codes are stored in the password manager, there are 10 of them",
        "the door has code review stickers all over it",
    ],
)
def test_look_alikes_of_those_codes_are_not_secrets(text: str) -> None:
    assert not has_secret(text)
