"""The topic-save decision as a pure function: no database, only the rules."""

from __future__ import annotations

from reverie.rules.topic_decision import SaveDecision, decide

T = 0.8


def test_a_new_statement_is_an_add() -> None:
    assert decide("The deploy port is 8080", [("f1", "The pager is #ops")], T) == SaveDecision(
        "add"
    )
    assert decide("The deploy port is 8080", [], T) == SaveDecision("add")


def test_an_exact_twin_is_a_noop_before_anything_else() -> None:
    live = [("f1", "The deploy port is 8080"), ("f2", "the deploy port is 8080.")]
    got = decide("The deploy port is 8080", live, T)
    assert got == SaveDecision("noop", "f1", {"tier": "exact", "similarity": 1.0})


def test_a_correction_supersedes_the_fact_it_corrects() -> None:
    live = [("f1", "The pager is #ops"), ("f2", "The deploy port is 8080")]
    assert decide("The deploy port is now 9090", live, T) == SaveDecision("supersede", "f2")


def test_a_restated_claim_is_a_noop_on_the_fact_that_states_it() -> None:
    live = [("f1", "The deploy port is 8080")]
    got = decide("deploy port: 8080", live, T)
    assert got.action == "noop" and got.fact_id == "f1"


def test_a_near_duplicate_at_the_threshold_is_a_noop_and_below_it_an_add() -> None:
    old = "alpha bravo charlie delta echo foxtrot golf hotel india juliet"
    near = old.replace("juliet", "kilo")  # 9 of 11 words shared: Jaccard 0.818
    got = decide(near, [("f1", old)], T)
    assert got == SaveDecision("noop", "f1", {"tier": "jaccard", "similarity": 0.818})
    assert decide(near, [("f1", old)], 0.85).action == "add"
