"""The pure rules: near-duplicate tiers and the supersede rule on labelled pairs."""

from __future__ import annotations

import pytest

from reverie.rules.similarity import Tier, jaccard, near_duplicate, normalise, values, word_set
from reverie.rules.supersede import pick_superseded, supersedes
from tests.data.supersede_pairs import NEGATIVE, POSITIVE


def test_there_are_at_least_forty_labelled_pairs() -> None:
    assert len(POSITIVE) >= 20 and len(NEGATIVE) >= 20
    assert len(POSITIVE) + len(NEGATIVE) >= 40


@pytest.mark.parametrize(("old", "new"), POSITIVE)
def test_correction_supersedes(old: str, new: str) -> None:
    assert supersedes(new, old)


@pytest.mark.parametrize(("old", "new"), NEGATIVE)
def test_related_fact_does_not_supersede(old: str, new: str) -> None:
    assert not supersedes(new, old)


def test_normalised_exact_tier() -> None:
    match = near_duplicate("The repo uses UV.", "the  repo uses uv", 0.8)
    assert match is not None and match.tier is Tier.EXACT


def test_jaccard_tier_catches_rewording() -> None:
    match = near_duplicate("The deploy timeout is now 30s", "Deploy timeout is 30s", 0.8)
    assert match is not None and match.tier is Tier.JACCARD


def test_a_changed_value_is_never_a_duplicate() -> None:
    old = "The production database host for the billing service is db1.internal"
    new = "The production database host for the billing service is db2.internal"
    assert jaccard(word_set(old), word_set(new)) >= 0.7
    assert near_duplicate(new, old, 0.7) is None


def test_negation_is_not_a_stop_word() -> None:
    assert near_duplicate("The cache is not enabled", "The cache is enabled", 0.7) is None


def test_reinforce_mark_is_ignored_for_matching() -> None:
    assert normalise("Use uv ⟦×3⟧") == normalise("use uv")


def test_values_are_numbers_hosts_paths() -> None:
    assert values("db1.internal listens on 5432 at /var/run and v2") == {
        "db1.internal",
        "5432",
        "/var/run",
        "v2",
    }


def test_pick_superseded_prefers_the_fact_most_about_the_same_thing() -> None:
    """Of two live facts a correction could supersede, the one with its subject, whatever
    their order (two facts one flush wrote share a timestamp: their order was a tie)."""
    build = ("a", "The build failed with exit code 137 on runner ci-4.")
    image = ("b", "ci runner image is ubuntu-22.04, nothing changed there")
    new = "ci runner image is now debian-12-slim"
    assert pick_superseded(new, [build, image]) == "b"
    assert pick_superseded(new, [image, build]) == "b"


def test_pick_superseded_prefers_the_most_recent_match() -> None:
    live = [
        ("a", "The deploy timeout is 30s"),
        ("b", "The deploy timeout is 40s"),
        ("c", "Deploys need approval"),
    ]
    assert pick_superseded("The deploy timeout is 45s", live) == "b"
    assert pick_superseded("Deploys run at night", live) is None
