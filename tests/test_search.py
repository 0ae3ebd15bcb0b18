"""Search: BM25 over live facts, entries and episodes; superseded facts hidden and counted."""

from __future__ import annotations

from pathlib import Path

import reverie
from tests.conftest import both_backends, ok, rows, write_db

pytestmark = both_backends


async def test_hits_of_every_kind(rv: reverie.Reverie) -> None:
    ns = rv.namespace()
    async with ns.session("s-1") as s:
        await s.turn(user="Hello")
        await s.turn(user="The kafka broker keeps crashing", assistant="Check the heap size")
        ok(
            await s.call_tool(
                "memory",
                {"action": "add", "target": "memory", "content": "Kafka brokers need 6g heap"},
            ),
            "ADD",
        )
        ok(
            await s.call_tool(
                "topic",
                {
                    "action": "save",
                    "topic": "kafka",
                    "content": "The kafka broker host is kafka1.internal",
                },
            ),
            "ADD",
        )
    hits = await ns.search("kafka broker heap", k=10)
    kinds = {h.kind for h in hits}
    assert kinds == {"fact", "entry", "episode"}
    episode = next(h for h in hits if h.kind == "episode")
    assert episode.session_id == "s-1" and episode.turn == 1
    assert "kafka broker keeps crashing" in episode.text
    assert all(isinstance(h.score, float) for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert hits[0]["kind"] == hits[0].kind  # hits read as mappings too
    assert len(await ns.search("kafka", k=1)) == 1
    assert await ns.search("", k=5) == []
    assert await ns.search('"); DROP TABLE facts; --', k=5) == []


async def test_superseded_hidden_by_default_and_counted(rv: reverie.Reverie) -> None:
    ns = rv.namespace()
    async with ns.session("s") as s:
        for port in (8080, 8081, 8082):
            await s.call_tool(
                "topic", {"action": "save", "topic": "web", "content": f"The web port is {port}"}
            )
    hits = await ns.search("web port")
    assert [h.text for h in hits] == ["The web port is 8082"]
    assert hits.hidden_superseded == 2
    everything = await ns.search("web port", include_superseded=True)
    assert len(everything) == 3 and everything.hidden_superseded == 0


async def test_removed_entries_do_not_match(rv: reverie.Reverie) -> None:
    ns = rv.namespace()
    async with ns.session("s") as s:
        ok(
            await s.call_tool(
                "memory", {"action": "add", "target": "memory", "content": "Use the zeta mirror"}
            ),
            "ADD",
        )
        ok(
            await s.call_tool(
                "memory", {"action": "remove", "target": "memory", "old_text": "zeta"}
            ),
            "REMOVED",
        )
    assert await ns.search("zeta mirror") == []


async def test_turns_are_numbered_per_session(rv: reverie.Reverie) -> None:
    ns = rv.namespace()
    async with ns.session("a") as s:
        assert [(await s.turn(user=f"a{i}")).turn for i in range(3)] == [0, 1, 2]
    async with ns.session("b") as s:
        assert (await s.turn(assistant="only the assistant spoke")).turn == 0
    assert len(await ns.episodes()) == 4


async def test_a_fact_ranks_above_the_turn_it_was_taken_from(rv: reverie.Reverie) -> None:
    """One thing learned, shown once: the flushed fact takes its source turn's place and
    the turn goes after every other hit (still in the pool)."""
    ns = rv.namespace()
    async with ns.session("s") as s:
        await s.turn(
            # a turn whose fact says nearly all of it (> _COVERED, < all): once is enough
            user="The billing export job writes to s3://acme-billing-exports every night. Ok?",
            assistant="Noted. Do you want the export retention reviewed as well?",
        )
        await s.turn(user="The billing team lead is Priya Raman.")
        await s.idle()
        await rv.wait_idle()
    hits = await ns.search("billing export job bucket", k=10)
    kinds = [h.kind for h in hits]
    assert kinds[0] == "fact" and "s3://acme-billing-exports" in hits[0].text
    facts = [h.text for h in hits if h.kind != "episode"]
    assert any("Priya Raman" in t for t in facts)
    # both turns were learned from: each goes after every fact, in the order it had
    assert kinds == ["fact"] * len(facts) + ["episode"] * (len(hits) - len(facts))
    assert "acme-billing-exports" in hits[len(facts)].text
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


async def test_a_short_entry_does_not_claim_a_turn_as_its_source(rv: reverie.Reverie) -> None:
    """Invariant (_SOURCE_MIN, 24 chars): "Uses tabs." is too common a phrase to say which
    turn it came from; the turn keeps its place."""
    ns = rv.namespace()
    async with ns.session("s") as s:
        add = {"action": "add", "target": "memory", "content": "Uses tabs."}
        ok(await s.call_tool("memory", add), "ADD")
        await s.turn(user="The legacy repo uses tabs. The linter uses tabs too, uses tabs!")
        await s.turn(user="Why does the new formatter convert tabs into four spaces in every file?")
    hits = await ns.search("uses tabs", k=5)
    assert [h.kind for h in hits] == ["entry", "episode", "episode"]
    assert "legacy repo" in hits[1].text


async def test_a_turn_its_fact_says_a_third_of_goes_last(rv: reverie.Reverie) -> None:
    """Invariant (_COVERED = 0.3): a turn whose fact says about half of what the user said
    (the rest a request of the moment) is shown once, as the fact; the turn goes after
    every other hit."""
    ns = rv.namespace()
    async with ns.session("s") as s:
        await s.turn(
            user="The billing export job writes to s3://acme-billing-exports every night. "
            "Can you suggest a way to monitor it and page me when it fails?"
        )
        # fewer of the query's words: below the source turn by its own score
        await s.turn(user="Why is the export so slow on Mondays, with everyone waiting for it?")
        await s.idle()
        await rv.wait_idle()
    hits = await ns.search("billing export job", k=10)
    assert [h.kind for h in hits] == ["fact", "episode", "episode"]
    assert "Mondays" in hits[1].text and "page me" in hits[2].text


async def test_a_turn_that_said_more_than_its_facts_keeps_its_place(rv: reverie.Reverie) -> None:
    """Invariant (_COVERED = 0.3): a turn whose facts say less than a third of what the
    user said stays right after them, not after every other hit."""
    ns = rv.namespace()
    async with ns.session("s") as s:
        await s.turn(
            user="The billing export job writes to s3://acme-billing-exports every night. "
            "Can you suggest a way to monitor the billing export and page me when it fails, "
            "and also tell me how other teams usually alert on a nightly batch job that has "
            "not finished by the morning, without waking anyone for a late start?"
        )
        await s.turn(user="The billing dashboard lives at grafana.acme.io/d/billing-42 for now.")
        await s.idle()
        await rv.wait_idle()
    hits = await ns.search("billing export job", k=10)
    kinds = [h.kind for h in hits]
    assert kinds[:2] == ["fact", "episode"] and "page me" in hits[1].text


async def test_a_fact_moved_before_its_turn_stays_behind_its_correction(
    rv: reverie.Reverie,
) -> None:
    """A fact goes up to just before the turn it came from; when a later fact gives its
    thing a newer value, the newer one still ranks first (BEAM: "my Zotero library has 45
    sources" then "I've added 52 sources to my Zotero library"). Here the old turn outranks
    both facts (the assistant repeats the question's words), so moving the old fact up
    before it would put the old value first."""
    ns = rv.namespace()
    async with ns.session("s-0") as s:
        for line in OTHER_TURNS:
            await s.turn(user=line)
    async with ns.session("s-1") as s:
        await s.turn(
            user="The Zotero library has 45 sources.",
            assistant="How many sources per theme? With 45 sources in a Zotero library, how "
            "many sources are in each collection of the library?",
        )
        await s.idle()
        await rv.wait_idle()
    async with ns.session("s-2") as s:
        await s.turn(
            user="I've added 52 sources to my Zotero library, and I'm organizing everything by "
            "theme and date for the history essay draft that is due at the end of next month."
        )
        await s.idle()
        await rv.wait_idle()
    hits = await ns.search("How many sources are in my Zotero library?", k=10)
    facts = [h.text for h in hits if h.kind != "episode"]
    assert len(facts) == 2, facts
    assert "52" in facts[0] and "45" in facts[1]
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


OTHER_TURNS = (  # enough other text that BM25's term weights mean something
    "The staging cluster runs on three nodes in Frankfurt.",
    "Our standup is at 9:30 every weekday.",
    "The cat's name is Miso and she is four.",
    "We use pnpm for the web app builds.",
    "My sister lives in Porto with her family.",
    "Lunch is usually ramen on Fridays.",
)


async def test_a_correction_is_found_by_the_words_of_what_it_corrected(
    rv: reverie.Reverie,
) -> None:
    """A correction said in few words is found by the statement it replaced: the chain's
    former texts are one search row of its live head, ranked on the same scale."""
    ns = rv.namespace()
    said = [
        ("My Goodreads winter reading challenge goal is 10 books", "ADD"),
        ("The goal is now 12 books", "SUPERSEDE"),
        ("Now the goal is 14 books", "SUPERSEDE"),
    ]
    async with ns.session("s") as s:
        for content, decision in said:
            args = {"action": "save", "topic": "reading", "content": content}
            ok(await s.call_tool("topic", args), decision)
        await s.turn(user="I love the winter evenings on Goodreads with a book")
    hits = await ns.search("goodreads winter challenge", k=5)
    facts = [h for h in hits if h.kind == "fact"]
    assert [h.text for h in facts] == ["Now the goal is 14 books"]  # once, the live head
    assert hits.hidden_superseded == 1  # what it replaced stays hidden
    everything = await ns.search("goodreads winter challenge", k=5, include_superseded=True)
    texts = [h.text for h in everything if h.kind == "fact"]
    assert texts.count("Now the goal is 14 books") == 1 and said[0][0] in texts


async def test_former_words_reach_an_old_home_when_it_is_opened(tmp_path: Path) -> None:
    """A home whose chains were written before this index row existed gets one row per live
    head when it is opened (the schema migration fills it in), the same row the trigger
    keeps: the newest former text first."""

    from reverie.stores.schema import KIND_FORMER, MIGRATIONS

    home = tmp_path / "home"
    said = ("The billing deploy timeout is 30s", "The timeout is 40s now", "The timeout is 45s now")
    async with reverie.open(home) as rv:
        async with rv.namespace().session("s") as s:
            for content, decision in zip(said, ("ADD", "SUPERSEDE", "SUPERSEDE"), strict=True):
                args = {"action": "save", "topic": "deploy", "content": content}
                ok(await s.call_tool("topic", args), decision)
    former = f"SELECT text FROM search_index WHERE rowid % 4 = {KIND_FORMER}"
    assert rows(home, former) == [(f"{said[1]}\n{said[0]}",)]
    with write_db(home) as conn:  # back to the schema before the row existed (migration 7)
        conn.execute(f"DELETE FROM search_index WHERE rowid % 4 = {KIND_FORMER}")
        conn.execute("DROP INDEX facts_session")  # migration 8, run again after 7
        conn.execute("DELETE FROM schema_version WHERE version >= 7")
        assert len(MIGRATIONS) >= 10  # the later ones (idempotent) run again too
    async with reverie.open(home) as rv:
        hits = await rv.namespace().search("billing deploy", k=3)
        assert [h.text for h in hits if h.kind == "fact"] == [said[2]]
    assert rows(home, former) == [(f"{said[1]}\n{said[0]}",)]


async def _said(rv: reverie.Reverie, ns_name: str, turns: list[tuple[str, str]]) -> None:
    ns = rv.namespace(ns_name)
    async with ns.session("s1") as s:
        for user, assistant in turns:
            await s.turn(user=user, assistant=assistant)
        await s.idle()
    await rv.wait_idle()


async def test_the_best_hit_turn_brings_what_was_learned_from_it(rv: reverie.Reverie) -> None:
    """A query in other words than the user's ("card payment provider" for "we switched to
    SumUp") finds the turn by the assistant's answer; the fact learned from that turn joins
    the hits though it shares no word with the query. Only from the best hit, and not
    from a long message whose one fact says little of it."""
    switched = "we switched to SumUp this week."
    await _said(
        rv,
        "short",
        [
            (switched, "SumUp is your card payment provider now; the provider fee is 1.69%."),
            ("the bank is Millennium BCP.", "Millennium is your banking provider."),
        ],
    )
    hits = await rv.namespace("short").search("provider", k=10)
    facts = [h.text for h in hits if h.kind == "fact"]
    assert switched in facts
    assert "the bank is Millennium BCP." not in facts  # its turn was not the best hit
    filler = " ".join(f"Note {i}: the counter display needs new stickers." for i in range(12))
    await _said(
        rv,
        "long",
        [(f"{switched} {filler}", "SumUp is your card payment provider now; noted.")],
    )
    hits = await rv.namespace("long").search("provider", k=10)
    assert hits[0].kind == "episode"
    assert switched not in [h.text for h in hits]
    stored = await rv.namespace("long").search("switched SumUp", k=10)
    assert switched in [h.text for h in stored if h.kind == "fact"]  # learned, not brought


async def test_a_turn_brings_at_most_two_of_its_facts(rv: reverie.Reverie) -> None:
    said = [
        "the bank is Millennium BCP.",
        "the accountant is Beatriz Sousa.",
        "the landlord is Rui Costa.",
    ]
    await _said(rv, "three", [(" ".join(said), "Noted: all three are providers of yours.")])
    ns = rv.namespace("three")
    stored = [h.text for h in await ns.search(" ".join(said), k=10) if h.kind == "fact"]
    assert sorted(stored) == sorted(said)  # all three were learned
    brought = [h.text for h in await ns.search("providers", k=10) if h.kind == "fact"]
    assert len(brought) == 2 and set(brought) <= set(said)


async def test_a_turn_brings_its_facts_not_its_entries(rv: reverie.Reverie) -> None:
    """How to reply and who the user is are not what a query for knowledge asks: of what
    the best turn taught, only its facts join the hits."""
    await _said(
        rv,
        "mixed",
        [
            (
                "we switched to SumUp this week, the old fees were eating every small sale. "
                "keep it short pls.",
                "Card provider noted.",
            )
        ],
    )
    ns = rv.namespace("mixed")
    assert [e.content for e in await ns.entries("soul")], "the style request was learned"
    hits = await ns.search("card provider", k=10)
    facts = [h.text for h in hits if h.kind == "fact"]
    assert any(t.startswith("we switched to SumUp this week") for t in facts), hits
    assert not [h for h in hits if h.kind == "entry"]


async def test_what_a_turn_brings_takes_its_place_and_pushes_no_hit_down(
    rv: reverie.Reverie,
) -> None:
    """The facts learned from the best turn join only when they say most of what the user
    said in it: they take the turn's place and the turn goes last. When they say little
    of it, the turn keeps its place and nothing is brought."""
    said = "we switched to SumUp this week."
    chatty = "ugh what a day, the kids were sick all night and the car broke down again on the way"
    await _said(rv, "little", [(f"{chatty}. {said}", "SumUp as card provider, noted.")])
    hits = await rv.namespace("little").search("provider", k=10)
    assert hits[0].kind == "episode"
    assert said not in [h.text for h in hits]
    await _said(rv, "most", [(said, "SumUp as card provider, noted.")])
    hits = await rv.namespace("most").search("provider", k=10)
    assert [h.kind for h in hits] == ["fact", "episode"] and hits[0].text == said


async def test_an_old_home_gains_the_index_that_finds_a_turns_facts(tmp_path: Path) -> None:
    """Migration 8: the live facts of a session are found by an index, not by reading every
    live fact of the namespace; a home written before it gains it when opened, and the
    search that brings a turn's facts uses it."""
    home = tmp_path / "home"
    async with reverie.open(home) as rv:
        await _said(rv, "a", [("we switched to SumUp this week.", "SumUp as card provider.")])
    with write_db(home) as conn:
        conn.execute("DROP INDEX facts_session")
        conn.execute("DELETE FROM schema_version WHERE version >= 8")  # 9 runs again too
    async with reverie.open(home) as rv:
        hits = await rv.namespace("a").search("provider", k=5)
        assert hits[0].text == "we switched to SumUp this week."
    indexes = [r[0] for r in rows(home, "SELECT name FROM sqlite_master WHERE type = 'index'")]
    assert "facts_session" in indexes
    from reverie.stores.search import _LEARNED_FROM

    plan = rows(home, f"EXPLAIN QUERY PLAN {_LEARNED_FROM}", "a", "s1")
    assert any("facts_session" in str(step) for step in plan), plan


async def test_a_claim_corrected_inside_a_longer_fact_puts_the_newer_first(
    rv: reverie.Reverie, clock: reverie.ManualClock
) -> None:
    """One claim of a later fact corrects one claim of an earlier one: both stay live (the
    earlier one's other claim still holds), and search ranks the newer first."""
    from datetime import timedelta

    from reverie.rules.supersede import claim_replaced

    old = "Our supplier is Harbor Timber, my rep there is Lena Park."
    new = "Lena moved to their Dublin office, so my new rep is Tomasz Wolny from now on."
    assert claim_replaced(new, old)  # time decides which is newer, as for a supersede
    async with rv.namespace("a").session("s") as s:
        ok(
            await s.call_tool("topic", {"action": "save", "topic": "supplier", "content": old}),
            "ADD",
        )
        clock.advance(timedelta(days=3))
        ok(
            await s.call_tool("topic", {"action": "save", "topic": "supplier", "content": new}),
            "ADD",
        )
    hits = [h.text for h in await rv.namespace("a").search("who is my rep at Harbor Timber")]
    assert hits.index(new) < hits.index(old)


def test_one_claim_of_two_facts_about_different_people_corrects_nothing() -> None:
    from reverie.rules.supersede import claim_replaced

    assert not claim_replaced(
        "Tom is coming on Friday, his favourite colour is blue",
        "Dana turns 40 on May 3, her favourite colour is green",
    )


async def test_of_two_answers_to_one_question_near_the_top_the_newer_is_first(
    rv: reverie.Reverie, clock: reverie.ManualClock
) -> None:
    """Two live facts sharing two of the question's words answer it alike; near the top
    the newer goes first, whatever its words score (what is found does not change)."""
    from datetime import timedelta

    old = "my sitter Kaylee does the school pickup on weekdays, she has the school code card"
    new = "our neighbour Mrs. Dunn offered to take over the weekday pickup from Monday."
    async with rv.namespace("a").session("s") as s:
        ok(await s.call_tool("topic", {"action": "save", "topic": "kids", "content": old}), "ADD")
        clock.advance(timedelta(days=5))
        ok(await s.call_tool("topic", {"action": "save", "topic": "kids", "content": new}), "ADD")
    hits = [
        h.text for h in await rv.namespace("a").search("who does the school pickup on weekdays")
    ]
    assert hits.index(new) < hits.index(old)
