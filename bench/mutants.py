"""Mutation testing by hand: each mutant breaks one invariant the design relies on, and
the tests named beside it must notice.

    python -m bench.mutants --list          # the table
    python -m bench.mutants --all           # every mutant, one after another
    python -m bench.mutants ID [ID ...]     # some of them

Each mutant is applied to a temporary copy of the repository (``reverie/``, ``tests/``,
``bench/``, ``pyproject.toml``; the working tree is never edited), and its tests run there
with this interpreter: pytest exit 1 is a kill, exit 0 a survivor, anything else an error
(reported, never counted as a kill). The exit status is non-zero when any mutant survived
or errored.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COPIED = ("reverie", "tests", "bench")
TIMEOUT_S = 1200.0


@dataclass(frozen=True)
class Mutant:
    id: str
    file: str
    """Repository-relative path of the mutated file."""
    snippet: str
    """Source text that occurs exactly once in ``file``."""
    replacement: str
    description: str
    tests: tuple[str, ...]
    """Pytest node ids or test files that must kill the mutant."""


MUTANTS: tuple[Mutant, ...] = (
    # -- the nine an earlier review found surviving -------------------------------------
    Mutant(
        "jaccard-threshold",
        "reverie/config.py",
        "jaccard_threshold: float = 0.8",
        "jaccard_threshold: float = 1.0",
        "the near-duplicate Jaccard threshold 0.8 -> 1.0",
        ("tests/test_invariants.py::test_a_near_duplicate_above_the_threshold_is_a_noop",),
    ),
    Mutant(
        "jaccard-inclusive",
        "reverie/rules/similarity.py",
        "if score >= threshold:",
        "if score > threshold:",
        "the Jaccard comparison >= -> > (exactly the threshold no longer counts)",
        ("tests/test_invariants.py::test_a_near_duplicate_at_exactly_the_threshold_is_a_noop",),
    ),
    Mutant(
        "cap-replace",
        "reverie/actors/memory_writes.py",
        "self._check_cap(target, live, {old.id: fresh.rendered})",
        "pass",
        "no cap check on memory replace",
        ("tests/test_invariants.py::test_a_replace_over_the_cap_is_refused_and_writes_nothing",),
    ),
    Mutant(
        "cap-restore",
        "reverie/actors/memory_writes.py",
        "self._check_cap(target, live, change)",
        "pass",
        "no cap check when a removed or replaced entry is restored",
        (
            "tests/test_invariants.py::test_a_restore_over_the_cap_is_refused_and_writes_nothing",
            "tests/test_invariants.py::test_restoring_a_replaced_entry_over_the_cap_is_refused",
        ),
    ),
    Mutant(
        "cap-refresh",
        "reverie/actors/rule_refresh.py",
        "if entries.usage_after(live, {rule.id: fresh.rendered}) > cfg.caps.memory:",
        "if False:",
        "no cap check on the promoted-rule refresh after a correction",
        (
            "tests/test_invariants.py::test_a_promoted_rule_refresh_over_the_cap_is_skipped",
            "tests/test_promotion.py",
            "tests/test_restore_promoted.py",
        ),
    ),
    Mutant(
        "review-lease",
        "reverie/actors/reviewer.py",
        "if not review_state.acquire_lease(conn, self._lease, self.holder, iso(now), expires):\n"
        '            return False, "another process is running a review pass", _NOT_BEGUN',
        "review_state.acquire_lease(conn, self._lease, self.holder, iso(now), expires)",
        "the reviewer takes the lease but never checks it is free",
        ("tests/test_review_lease.py",),
    ),
    Mutant(
        "promotion-fifo",
        "reverie/actors/promoter.py",
        "fifo[-self.cfg.decided_fifo :]",
        "fifo",
        "the promoter's FIFO of decided fact ids is never trimmed",
        (
            "tests/test_invariants.py::test_the_promotion_fifo_never_exceeds_its_size",
            "tests/test_promotion.py",
        ),
    ),
    Mutant(
        "derived-ratio",
        "reverie/actors/flusher.py",
        "/ len(words) >= 0.5",
        "/ len(words) >= 0",
        "derived(): a model's proposal need share no word with its candidate",
        (
            "tests/test_invariants.py::test_derived_needs_half_of_the_words_from_the_candidate",
            "tests/test_invariants.py"
            "::test_a_flush_stores_a_proposal_only_if_half_its_words_are_the_candidates",
        ),
    ),
    Mutant(
        "lint-midscan-breaker",
        "reverie/actors/linter.py",
        "if time.monotonic() > deadline:\n"
        "                return Scan(conflicts, unclear, tripped=True)",
        "pass",
        "the linter's breaker no longer stops a scan part way",
        (
            "tests/test_invariants.py::test_the_lint_breaker_stops_the_scan_part_way",
            "tests/test_review.py::test_linter_breaker_ends_a_long_round_and_retries_it",
        ),
    ),
    # -- further invariants ---------------------------------------------------------------
    Mutant(
        "cap-add",
        "reverie/actors/memory_writes.py",
        'self._check_cap(target, live, {"": fresh.rendered})',
        "pass",
        "no cap check on memory add",
        ("tests/test_writer_memory.py::test_cap_boundary_exact_fit_then_refusal",),
    ),
    Mutant(
        "cap-add-inclusive",
        "reverie/actors/memory_writes.py",
        "if after <= cap:",
        "if after < cap:",
        "an entry that fills the cap exactly is refused",
        ("tests/test_writer_memory.py::test_cap_boundary_exact_fit_then_refusal",),
    ),
    Mutant(
        "cap-reinforce",
        "reverie/actors/memory_writes.py",
        "self._check_cap(target, live, {entry.id: bumped.rendered})",
        "pass",
        "no cap check when a reinforcement lengthens an entry's mark",
        ("tests/test_writer_memory.py::test_cap_boundary_exact_fit_then_refusal",),
    ),
    Mutant(
        "review-cooldown",
        "reverie/actors/reviewer.py",
        "timedelta(hours=self.cfg.cooldown_h)",
        "timedelta(hours=0)",
        "the review cooldown (6 h) is ignored",
        ("tests/test_review.py::test_cooldown_due_checks_and_order",),
    ),
    Mutant(
        "lease-expiry",
        "reverie/stores/review_state.py",
        "row[0] != holder and row[1] > now",
        "row[0] != holder",
        "a review lease never expires (a crashed holder blocks every later pass)",
        ("tests/test_review_state.py::test_lease_is_exclusive_until_released_or_expired",),
    ),
    Mutant(
        "stage-budget",
        "reverie/bus/bus.py",
        "with anyio.CancelScope(deadline=anyio.current_time() + actor.budget_s) as scope:",
        "with anyio.CancelScope(deadline=math.inf) as scope:",
        "an actor (a review stage among them) is no longer cut at its time budget",
        ("tests/test_review.py::test_a_stage_over_its_budget_is_cut_and_retried",),
    ),
    Mutant(
        "review-quiet",
        "reverie/actors/reviewer.py",
        "if review_state.quiet(conn, iso(now), self.namespace):",
        "if False:",
        "a quiet namespace (nothing new since its last pass) is reviewed again anyway",
        ("tests/test_review.py::test_a_quiet_namespace_is_skipped_until_something_new",),
    ),
    Mutant(
        "snapshot-cap",
        "reverie/snapshot.py",
        "if size + extra > cap:",
        "if False:",
        "a snapshot block is rendered past its cap (after a cap was lowered)",
        ("tests/test_snapshot.py::test_snapshot_never_exceeds_caps_even_after_a_cap_is_lowered",),
    ),
    Mutant(
        "skills-index-cap",
        "reverie/snapshot.py",
        "if size + len(line) > room:",
        "if False:",
        "the snapshot's skills index is rendered past its cap",
        ("tests/test_snapshot_caps.py",),
    ),
    Mutant(
        "flush-watermark",
        "reverie/actors/flusher.py",
        "new_mark = fresh[-1].id if fresh else mark",
        "new_mark = mark",
        "the flush watermark never moves past what a flush read",
        ("tests/test_flush.py",),
    ),
    Mutant(
        "flush-memory-budget",
        "reverie/actors/flusher.py",
        "report.memory_adds >= self.cfg.max_memory_adds",
        "report.memory_adds > self.cfg.max_memory_adds",
        "a flush makes one memory add more than its budget",
        ("tests/test_flush.py::test_flush_budget_is_two_memory_adds_and_five_topic_saves",),
    ),
    Mutant(
        "flush-topic-reserve",
        "reverie/actors/flusher.py",
        "self.config.writer.max_topics - self.cfg.topic_reserve",
        "self.config.writer.max_topics",
        "the flush may open the topics reserved for the agent",
        ("tests/test_invariants.py::test_the_flush_leaves_the_reserved_topics_to_the_agent",),
    ),
    Mutant(
        "secret-refusal",
        "reverie/actors/memory_writes.py",
        'refuse_secret("content", cmd.content)',
        "pass",
        "the memory tool no longer refuses content carrying a credential",
        ("tests/test_secrets.py::test_memory_add_and_replace_carrying_a_secret_write_nothing",),
    ),
    Mutant(
        "mailbox-bound",
        "reverie/bus/bus.py",
        "_Mailbox(actor, self._settings.mailbox_size)",
        '_Mailbox(actor, float("inf"))',
        "an actor's mailbox is unbounded (no back-pressure)",
        ("tests/test_bus.py::test_mailbox_is_bounded_and_applies_back_pressure",),
    ),
    Mutant(
        "ask-here-drops-queued",
        "reverie/bus/bus.py",
        "if box.pending and started:",
        "if False:",
        "what others sent an actor while an ask ran on the asker's task is dropped",
        ("tests/test_bus.py::test_messages_sent_during_an_ask_here_queue_behind_it_in_order",),
    ),
    Mutant(
        "ask-here-no-mailbox",
        "reverie/bus/bus.py",
        "if here and (kind, message.namespace) not in self._mailboxes:",
        "if here:",
        "an ask on the asker's task overtakes the messages queued in the actor's mailbox",
        ("tests/test_bus.py::test_an_ask_here_to_a_busy_actor_goes_through_its_mailbox",),
    ),
    Mutant(
        "supersede-same-relation",
        "reverie/rules/supersede.py",
        "and new.relation == old.relation",
        "",
        "a new value supersedes an old one under another relation ('is slow' / 'uses gradle')",
        (
            "tests/test_invariants.py::test_another_relation_of_one_subject_is_another_fact",
            "tests/test_writer_topics.py",
        ),
    ),
    Mutant(
        "topic-limit",
        "reverie/actors/topic_writes.py",
        "if len(existing) >= self.cfg.writer.max_topics:",
        "if len(existing) > self.cfg.writer.max_topics:",
        "an eleventh topic is opened past the 10-topic limit",
        ("tests/test_writer_topics.py::test_eleventh_topic_is_refused_and_writes_nothing",),
    ),
    Mutant(
        "promotion-write-budget",
        "reverie/actors/promoter.py",
        "if writes >= self.cfg.max_writes:",
        "if writes > self.cfg.max_writes:",
        "a promotion round writes one rule more than its budget of 2",
        ("tests/test_promotion.py::test_write_budget",),
    ),
    Mutant(
        "promotion-min-age",
        "reverie/actors/promoter.py",
        "timedelta(hours=self.cfg.min_age_h)",
        "timedelta(hours=0)",
        "a fact is promoted before it has survived 72 h",
        ("tests/test_promotion.py::test_rule_gate",),
    ),
    Mutant(
        "curator-idle-days",
        "reverie/actors/curator.py",
        "cutoff = iso(now - timedelta(days=idle_days))",
        "cutoff = iso(now)",
        "the curator proposes retiring a skill used moments ago",
        ("tests/test_review.py::test_curator_safety_model_dry_run_apply_and_restore",),
    ),
    Mutant(
        "one-value-each-majority",
        "reverie/rules/value_slots.py",
        "if len(words & whole) <= RESTATED_SHARE * min(len(words), len(whole)):",
        "if len(words & whole) < RESTATED_SHARE * min(len(words), len(whole)):",
        "two statements of one value each sharing only half their words count as one thing",
        ("tests/test_natural_corrections.py::test_other_facts_and_narrative_do_not_supersede",),
    ),
    Mutant(
        "asked-shared-word",
        "reverie/rules/value_slots.py",
        "ASKED_SHARED = 2",
        "ASKED_SHARED = 1",
        "a newer change ranks above an older value when the question names one word both say",
        (
            "tests/test_natural_corrections.py"
            "::test_two_answers_need_two_words_of_the_question_in_each",
        ),
    ),
    Mutant(
        "headless-words",
        "reverie/rules/extraction.py",
        "_HEADLESS_WORDS = 4",
        "_HEADLESS_WORDS = 9",
        "a long verbless clause is joined to the sentence before it as if it had no head",
        ("tests/test_extraction_real.py::test_a_sentence_with_its_own_head_stays_apart",),
    ),
    Mutant(
        "lint-asks-once",
        "reverie/actors/linter.py",
        "unclear = [p for p in scan.unclear if _pair_key(p) not in judged]",
        "unclear = list(scan.unclear)",
        "the weekly lint asks the model again about pairs it already judged",
        ("tests/test_review.py::test_a_pair_the_model_judged_is_not_asked_again",),
    ),
    Mutant(
        "learned-per-turn",
        "reverie/stores/search.py",
        "_PER_TURN = 2",
        "_PER_TURN = 3",
        "a best-hit turn brings three of its facts, not two",
        ("tests/test_search.py::test_a_turn_brings_at_most_two_of_its_facts",),
    ),
    Mutant(
        "learned-takes-the-turns-place",
        "reverie/stores/search.py",
        "if not learned or not _says_most(best, [content for _, content in learned], ranked):",
        "if not learned:",
        "facts learned from the best turn are brought though they say little of it, pushing"
        " another hit down",
        ("tests/test_search.py::test_what_a_turn_brings_takes_its_place_and_pushes_no_hit_down",),
    ),
    Mutant(
        "promotion-moment-gate",
        "reverie/actors/promoter.py",
        "if momentary(fact.content):",
        "if False:",
        "a fact of its moment (a date, a worry, an aim) becomes a promotion candidate",
        (
            "tests/test_promotion.py::"
            "test_the_rule_gate_keeps_statements_of_their_moment_in_their_topic",
        ),
    ),
    Mutant(
        "distill-rules-keep",
        "reverie/config.py",
        "rules_keep: float = 0.5",
        "rules_keep: float = 1.0",
        "a topic too long to show whole always needs the model, though the rules keep most of it",
        ("tests/test_review.py::test_the_rules_summarise_a_topic_while_they_keep_half_of_it",),
    ),
    Mutant(
        "distill-regrow",
        "reverie/config.py",
        "regrow: float = 2.0",
        "regrow: float = 1.0",
        "the model is asked about a topic again as soon as it has new facts, not once it doubled",
        ("tests/test_review.py::test_a_topic_the_model_summarised_waits_until_its_text_doubles",),
    ),
    Mutant(
        "distill-ask-batch",
        "reverie/config.py",
        "ask_batch: int = 2",
        "ask_batch: int = 1",
        "a lone topic that needs the model is asked about at once, one call each round",
        ("tests/test_review.py::test_a_lone_topic_that_needs_the_model_waits_for_a_second_one",),
    ),
    Mutant(
        "distill-ask-wait",
        "reverie/config.py",
        "ask_wait_h: float = 168.0",
        "ask_wait_h: float = 1e9",
        "a lone topic that needs the model waits for a second one for ever",
        ("tests/test_review.py::test_a_lone_topic_is_asked_about_once_it_has_waited_a_week",),
    ),
    Mutant(
        "kinds-apart",
        "reverie/rules/value_slots.py",
        "if _kinds_apart(new_text, old_text, words & words_of(old_text)):",
        "if False:",
        "a value of another kind of the one shared word changes it (gift budget / grocery budget)",
        ("tests/test_natural_corrections.py::test_other_facts_and_narrative_do_not_supersede",),
    ),
    Mutant(
        "kinds-apart-every",
        "reverie/rules/value_slots.py",
        "return bool(shared) and all(_other_kind(a, b, frozenset({w})) for w in shared)",
        "return bool(shared) and any(_other_kind(a, b, frozenset({w})) for w in shared)",
        "one shared word modified apart separates two texts that share another said alike",
        (
            "tests/test_natural_corrections.py::"
            "test_one_shared_word_said_alike_joins_two_kinds_apart",
        ),
    ),
    Mutant(
        "money-thing",
        "reverie/rules/value_slots.py",
        'if shape(value) != "money":',
        "if True:",
        "the word after an amount of money is a unit: a budget's change is not seen",
        ("tests/test_natural_corrections.py::test_a_natural_correction_supersedes",),
    ),
    Mutant(
        "near-prepositions",
        "reverie/rules/value_slots.py",
        "_NOT_NEAR = STOPWORDS | FILLER | _ATTITUDE | _PREPOSITIONS",
        "_NOT_NEAR = STOPWORDS | FILLER | _ATTITUDE",
        "a preposition beside two values is what they share",
        ("tests/test_natural_corrections.py::test_other_facts_and_narrative_do_not_supersede",),
    ),
    Mutant(
        "topic-clause-subject",
        "reverie/rules/routing.py",
        "if last and last[0] in _SUBJECTS:",
        "if False:",
        "a clause led by a pronoun names a topic by its verb",
        (
            "tests/test_extraction_real.py::test_topics_are_named_from_the_subject_never_a_function_word",
        ),
    ),
    Mutant(
        "code-after-pause",
        "reverie/rules/secret_formats.py",
        '\\s*,\\s*"\n        r"(?P<v>[#*]?\\d{4,8}[#*]?)(?=\\s*(?:$|[!?;)]|\\.(?!\\d)))"',
        '\\s*,\\s*"\n        r"(?P<v>[#*]?\\d{4,8}[#*]?)(?=\\s*(?:$|[!?;)]|\\.(?!\\d)))x"',
        "a box's code after a pause, ending its sentence, is kept",
        ("tests/test_secrets.py::test_secret_kind_names_the_kind_and_redact_marks_it",),
    ),
    Mutant(
        "combo-words-between",
        "reverie/rules/secret_formats.py",
        '{_LOCK}"\n        r"(?:[\\s,]+[\\w\'-]+){0,6}?"',
        '{_LOCK}"\n        r""',
        "a combination said a few words after its padlock is kept",
        ("tests/test_secrets.py::test_secret_kind_names_the_kind_and_redact_marks_it",),
    ),
    Mutant(
        "card-glued-to-letters",
        "reverie/rules/secret_formats.py",
        'r"(?<![\\w-])[2-6]',
        'r"(?<![\\d-])[2-6]',
        "a Luhn-valid digit run inside a hex id is redacted as a card number",
        ("tests/test_secrets.py::test_digits_glued_to_letters_are_no_card_number",),
    ),
    Mutant(
        "promoter-redacts-entry-id",
        "reverie/actors/promoter.py",
        "entry_id=entry_id,  # reverie's own id",
        "entry_id=None if entry_id is None else redact(entry_id),  # reverie's own id",
        "the promoter redacts its rule's entry id and so loses the rule",
        (
            "tests/test_invariants.py::"
            "test_a_promoted_rule_is_found_again_whatever_its_entry_id_looks_like",
        ),
    ),
    Mutant(
        "denial-hides-summary",
        "reverie/rules/supersede.py",
        " and not holds_others(new_text, old_text):",
        ":",
        "a denial of one value of a summary hides its other values",
        (
            "tests/test_natural_corrections.py::test_a_denied_value_of_a_summary_orders_search_and_hides_nothing",
        ),
    ),
    Mutant(
        "denial-now-not",
        "reverie/rules/claims.py",
        "(?:\\s+(?:now|anymore))?",
        "",
        "a value denied after 'now' is not read as denied",
        (
            "tests/test_natural_corrections.py::test_a_denied_value_of_a_summary_orders_search_and_hides_nothing",
        ),
    ),
    Mutant(
        "switch-lowercase-writer",
        "reverie/rules/routing.py",
        "    if any(c.isupper() for c in text):\n        return False",
        "",
        "a lowercase word after a switch is a name even from a writer who capitalises",
        (
            "tests/test_extraction_real.py::test_a_switch_written_without_capitals_names_what_it_switched_to",
        ),
    ),
    Mutant(
        "switch-lowercase-function-word",
        "reverie/rules/routing.py",
        '        found["name"] not in FUNCTION_WORDS for found',
        "        True for found",
        "a function word after a switch is taken for a name",
        (
            "tests/test_extraction_real.py::test_a_switch_written_without_capitals_names_what_it_switched_to",
        ),
    ),
    Mutant(
        "switch-order-off",
        "reverie/stores/search.py",
        "        or switched_from(new_text, old_text)\n",
        "",
        "a switch to a name does not rank above the name it replaced",
        (
            "tests/test_natural_corrections.py::"
            "test_a_switch_to_a_name_ranks_above_the_name_it_replaced",
        ),
    ),
    Mutant(
        "switch-own-sentence",
        "reverie/rules/routing.py",
        "(words_of(sentence) for sentence in said)",
        "(words_of(sentence) for sentence in [new_text])",
        "a word of another sentence than the switch's ties it to an old name",
        (
            "tests/test_natural_corrections.py::"
            "test_a_switch_to_a_name_is_newer_than_another_name_of_its_thing",
        ),
    ),
    Mutant(
        "switch-near-name",
        "reverie/rules/routing.py",
        "_NEAR_NAME = 5",
        "_NEAR_NAME = 50",
        "any word of the old text, however far from its name, ties a switch to it",
        (
            "tests/test_natural_corrections.py::"
            "test_a_switch_to_a_name_is_newer_than_another_name_of_its_thing",
        ),
    ),
    Mutant(
        "own-change-month",
        "reverie/rules/extraction.py",
        '(?:to|from)\\s+(?:[A-Za-z]{3,9}\\s+)?\\S*\\d"  # "to September 19"',
        '(?:to|from)\\s+\\S*\\d"',
        "a change to a date said with its month's name leaves the statement a fragment",
        (
            "tests/test_extraction_real.py::"
            "test_a_pronoun_opening_does_not_make_a_whole_statement_a_fragment",
        ),
    ),
    Mutant(
        "count-fragment-dropped",
        "reverie/actors/extracting.py",
        "if counts_a_thing(candidate.text) else None",
        "if False else None",
        "a fragment whose count names what it counts is dropped",
        (
            "tests/test_natural_corrections.py::"
            "test_a_fragment_whose_count_names_what_it_counts_is_kept",
        ),
    ),
    Mutant(
        "count-fragment-unit",
        "reverie/rules/extraction.py",
        'bare_count(f"{n} {w}") is not None for n, w',
        "True for n, w",
        "a value with a unit counts as a count of things",
        (
            "tests/test_natural_corrections.py::"
            "test_a_fragment_whose_count_names_what_it_counts_is_kept",
        ),
    ),
    Mutant(
        "change-words-going",
        "reverie/rules/value_slots.py",
        "    currently going went gone goes pushed",
        "    currently went gone goes pushed",
        "a word of change ('going to $38') is a thing two statements share",
        ("tests/test_natural_corrections.py::test_other_facts_and_narrative_do_not_supersede",),
    ),
    Mutant(
        "denial-order-off",
        "reverie/stores/search.py",
        "        or denies_held(new_text, old_text)\n",
        "",
        "a denial of one value of a summary does not rank above the summary",
        (
            "tests/test_natural_corrections.py::"
            "test_a_denial_of_a_summary_s_value_ranks_above_the_summary",
        ),
    ),
    Mutant(
        "full-topics-skip",
        "reverie/rules/routing.py",
        "        return _nearest(known, stems)",
        "        return None",
        "a statement is skipped when every topic is taken though one shares its words",
        ("tests/test_loop_rules.py::test_topic_choice_reuses_a_named_topic_and_respects_the_cap",),
    ),
    Mutant(
        "full-topics-any",
        "reverie/rules/routing.py",
        "    return name if shared else None",
        "    return name or None",
        "a statement with no word in common goes to some topic when all are taken",
        ("tests/test_loop_rules.py::test_topic_choice_reuses_a_named_topic_and_respects_the_cap",),
    ),
    Mutant(
        "state-now-off",
        "reverie/rules/routing.py",
        'if speaker == "user" and _STATE_NOW.search(text):',
        "if False:",
        "a thing's state said as current, with no value, is skipped",
        ("tests/test_extraction_real.py::test_a_thing_s_state_said_as_current_is_kept",),
    ),
    Mutant(
        "state-now-pronoun",
        "reverie/rules/routing.py",
        "    r\"(?!(?:i|i'm|im|we|we're|you|it|its|it's|that",
        "    r\"(?!(?:i'm|im|we|you|its|it's|that",
        "the speaker or a pronoun is taken for a thing whose state is said",
        ("tests/test_extraction_real.py::test_a_thing_s_state_said_as_current_is_kept",),
    ),
    Mutant(
        "code-for-whom",
        "reverie/rules/secret_formats.py",
        'rf"(?:{_CODE_FOR}\\s+)?(?=(?i:code)\\b))(?i:code\\b)"',
        'rf"(?=(?i:code)\\b))(?i:code\\b)"',
        "a lock's 'user code' (a word between the determiner and 'code') is not read",
        ("tests/test_secrets.py::test_secret_kind_names_the_kind_and_redact_marks_it",),
    ),
    Mutant(
        "password-it-after-pause",
        "reverie/rules/secret_formats.py",
        "\\b(?:password|passcode|passphrase|passwd|pin)\\b)\\s*[.,:;!?\\u2014-]+\\s*",
        "\\b(?:password|passcode|passphrase|passwd|pin)\\b)[^\\n]{0,120}?",
        "a password named is followed by any 'it's X' however far, not only after a pause",
        ("tests/test_secrets.py::test_talk_about_a_secret_is_not_one",),
    ),
    Mutant(
        "later-ask-off",
        "reverie/rules/extraction.py",
        "return standing_request(sentence[later.end() :]) if later else None",
        "return None",
        "a standing request after a clause of reasons is dropped",
        (
            "tests/test_extraction_real.py::"
            "test_a_standing_request_is_a_preference_and_a_request_of_the_moment_is_not",
        ),
    ),
    Mutant(
        "own-change-named",
        "reverie/rules/extraction.py",
        "|(?-i:[A-Z])[\\w&'’-]+)\",",
        ')",',
        "a change still to make, to a name, leaves a pronoun-led statement a fragment",
        (
            "tests/test_extraction_real.py::"
            "test_a_pronoun_opening_does_not_make_a_whole_statement_a_fragment",
        ),
    ),
    Mutant(
        "named-change-verb",
        "reverie/rules/routing.py",
        '    rf"\\b{_CHANGE_VERB}\\s+(?:[\\w\'’-]+\\s+){{0,5}}?"\n',
        '    r"\\b"\n',
        "any 'from <Name> to <Name>' is a switch, with no verb of change",
        ("tests/test_extraction_real.py::test_a_change_from_one_name_to_another_is_a_switch",),
    ),
    Mutant(
        "numeric-key",
        "reverie/rules/secret_formats.py",
        "(?i:\\b(?:host|licen[cs]e|product|activation|unlock|recovery|admin)\\s+key\\b)",
        "(?i:\\bnever-said-key\\b)",
        "a host or licence key that is a number is kept",
        ("tests/test_secrets.py::test_secret_kind_names_the_kind_and_redact_marks_it",),
    ),
    Mutant(
        "switch-renamed",
        "reverie/rules/routing.py",
        "|transferr?|port|renam)",
        "|transferr?|port)",
        "a thing renamed is no switch to a named value",
        (
            "tests/test_extraction_real.py::test_a_switch_written_without_capitals_names_what_it_switched_to",
        ),
    ),
    Mutant(
        "pin-in-brackets",
        "reverie/rules/secret_formats.py",
        "(?i:\\b(?:pin|passcode)\\b)\\s*[(\\[]",
        "(?i:\\bnever-said-pin\\b)\\s*[(\\[]",
        "a PIN said in brackets after its name is kept",
        ("tests/test_secrets.py::test_secret_kind_names_the_kind_and_redact_marks_it",),
    ),
    Mutant(
        "turns-off",
        "reverie/stores/turns.py",
        "        if fcntl is None:  # pragma: no cover\n            return None\n",
        "        return None\n",
        "writers of many processes wait by SQLite's backoff polling, not in arrival order",
        ("tests/test_multiprocess.py::test_writers_of_many_processes_are_served_in_arrival_order",),
    ),
    Mutant(
        "diagnostic-line",
        "reverie/rules/blocks.py",
        "    if _DIAGNOSTIC.match(line):\n        return True",
        "",
        "a compiler's diagnostic with a wordy message is a statement",
        ("tests/test_extraction_real.py::test_pasted_blocks_are_never_candidates",),
    ),
    Mutant(
        "card-named",
        "reverie/rules/secret_formats.py",
        "(_luhn(digits) or _named_card(text, hit))",
        "_luhn(digits)",
        "a card number failing the Luhn check is kept even after a card's name",
        ("tests/test_secrets.py::test_secret_kind_names_the_kind_and_redact_marks_it",),
    ),
    Mutant(
        "card-named-near",
        "reverie/rules/secret_formats.py",
        "before = text[max(0, hit.start() - 60) : hit.start()]",
        "before = text[: hit.start()]",
        "a card named anywhere before makes any grouped digits a card number",
        ("tests/test_secrets.py::test_talk_about_a_secret_is_not_one",),
    ),
    Mutant(
        "code-later-sentence",
        "reverie/rules/secret_formats.py",
        r"[.!?]\s+(?i:the|its|their)\s+(?i:code)\b",
        r"[.!?]\s+(?i:the|its|their)\s+(?i:codex)\b",
        "a lock's code said as 'the code' in a later sentence is kept",
        ("tests/test_secrets.py::test_secret_kind_names_the_kind_and_redact_marks_it",),
    ),
    Mutant(
        "flush-waited-first",
        "reverie/rules/ordering.py",
        'key=lambda s: (s.id > waited_through, s.weight != "high", s.id)',
        'key=lambda s: (s.weight != "high", s.id)',
        "HIGH statements said later pass a NORMAL one that waited, for ever",
        ("tests/test_flush.py::test_what_waited_is_written_before_a_weightier_newcomer",),
    ),
    Mutant(
        "flush-backlog-bound",
        "reverie/actors/flusher.py",
        "if report.over_budget and rounds > 0:",
        "if report.over_budget and rounds > -9:",
        "an idle's follow-up flushes are not bounded by flusher.backlog_rounds",
        ("tests/test_flush.py::test_the_flushes_after_an_idle_are_bounded",),
    ),
    Mutant(
        "flush-backlog-off",
        "reverie/config.py",
        "backlog_rounds: int = 1",
        "backlog_rounds: int = 0",
        "an idle's flush is never followed by one more: a talkative session waits",
        ("tests/test_flush.py::test_a_flush_its_budget_left_waiting_is_followed_by_one_more",),
    ),
    Mutant(
        "search-covered-up",
        "reverie/stores/search.py",
        "_COVERED = 0.3",
        "_COVERED = 0.6",
        "a turn whose fact says half of it is shown beside the fact, taking a place",
        ("tests/test_search.py::test_a_turn_its_fact_says_a_third_of_goes_last",),
    ),
    Mutant(
        "search-covered-down",
        "reverie/stores/search.py",
        "_COVERED = 0.3",
        "_COVERED = 0.05",
        "a turn that said much more than its facts goes after every other hit",
        ("tests/test_search.py::test_a_turn_that_said_more_than_its_facts_keeps_its_place",),
    ),
    Mutant(
        "search-says-most",
        "reverie/stores/search.py",
        "_SAYS_MOST = 0.6",
        "_SAYS_MOST = 0.05",
        "the best turn's facts join the hits whatever share of the turn they say",
        ("tests/test_search.py::test_the_best_hit_turn_brings_what_was_learned_from_it",),
    ),
    Mutant(
        "search-asked-window",
        "reverie/stores/search.py",
        "_ASKED_WINDOW = 5",
        "_ASKED_WINDOW = 0",
        "two answers to one question near the top are no longer put in time order",
        (
            "tests/test_search.py::"
            "test_of_two_answers_to_one_question_near_the_top_the_newer_is_first",
        ),
    ),
    Mutant(
        "asked-order-off",
        "reverie/stores/search.py",
        "        or competes_asked(new_text, old_text, asked)\n",
        "",
        "a new value for the thing a question asks about does not rank above the old one",
        (
            "tests/test_natural_corrections.py::"
            "test_a_change_said_in_few_words_ranks_above_what_it_changes",
        ),
    ),
    Mutant(
        "asked-any-count",
        "reverie/rules/value_slots.py",
        "(_says_change(new_text) or _NOW.search(new_text))",
        "(True)",
        "any other count of the unit the question names competes, said as current or not",
        ("tests/test_natural_corrections.py::test_other_values_do_not_compete_for_the_question",),
    ),
    Mutant(
        "colon-clause-off",
        "reverie/rules/extraction.py",
        "    first, *rest = _CLAUSE_OR_COLON.split(sentence)",
        "    first, *rest = _CLAUSE.split(sentence)",
        "a clause of its own after a colon is left in the log as a fragment",
        (
            "tests/test_extraction_real.py::"
            "test_a_pronoun_aside_before_a_colon_and_a_clause_of_its_own_is_whole",
        ),
    ),
    Mutant(
        "role-holder-off",
        "reverie/rules/routing.py",
        '    if _role_holder(text):\n        return "who holds a role"',
        '    if False:\n        return "who holds a role"',
        "who holds a role is skipped as a plain event",
        ("tests/test_extraction_real.py::test_who_holds_a_role_is_a_value",),
    ),
    Mutant(
        "password-giver-off",
        "reverie/rules/passwords.py",
        '    r"|\\s+(?:that\\s+|which\\s+)?(?:they|you|i|we|he|she)',
        '    r"|\\s+(?:that\\s+|which\\s+)?(?:zzz)',
        'a password named by who gave it ("the password they gave us is …") is missed',
        ("tests/test_secrets.py::test_the_eleventh_round_block_is_caught_whole_and_flags_nothing",),
    ),
    Mutant(
        "relative-anaphor",
        "reverie/rules/extraction.py",
        "    if found is None or _RELATIVE_AFTER.match(sentence, found.end()):",
        "    if found is None:",
        '"Those who have paid £25" is read as a fragment and rewrites the turn\'s value',
        ("tests/test_extraction_real.py::test_a_demonstrative_before_who_or_which_is_no_anaphor",),
    ),
    Mutant(
        "preface-kept",
        "reverie/rules/extraction.py",
        '    if not colon or len(re.findall(r"[\\w\'’]+", head)) < _PREFACE_WORDS:',
        "    if True:",
        "a preface before a colon stays, so one naming the agent hides the statement after it",
        (
            "tests/test_extraction_real.py::"
            "test_a_preface_before_a_colon_goes_and_the_statement_after_it_stays",
        ),
    ),
    Mutant(
        "preface-words-down",
        "reverie/rules/extraction.py",
        "_PREFACE_WORDS = 3",
        "_PREFACE_WORDS = 1",
        "a one-word label before a colon is dropped as a preface",
        (
            "tests/test_extraction_real.py::"
            "test_a_preface_before_a_colon_goes_and_the_statement_after_it_stays",
        ),
    ),
    Mutant(
        "colon-capital-name",
        "reverie/rules/value_slots.py",
        'r"(?<![.!?:]\\s)(?<!^)\\b[A-Z][a-z]+\\b"',
        'r"(?<![.!?]\\s)(?<!^)\\b[A-Z][a-z]+\\b"',
        'a capital after a colon ("…: Starts May 18") is taken for a name, not the thing',
        ("tests/test_natural_corrections.py::test_a_new_value_for_the_thing_asked_about_competes",),
    ),
    Mutant(
        "takes-over-off",
        "reverie/rules/routing.py",
        "for pattern in (_ROLE, _NEW_HOLDER, _TAKES_OVER)",
        "for pattern in (_ROLE, _NEW_HOLDER)",
        "a named person taking a thing over is no switch to a name",
        ("tests/test_natural_corrections.py::test_a_named_person_taking_over_is_a_switch",),
    ),
    Mutant(
        "opening-name-not-held",
        "reverie/stores/search.py",
        "_NAMED.search(text) or says_switch(text))",
        "_NAMED.search(text))",
        "a switch whose name opens the sentence is never compared, so the old holder stays first",
        (
            "tests/test_natural_corrections.py::"
            "test_a_person_taking_a_thing_over_ranks_above_who_held_it",
        ),
    ),
    Mutant(
        "password-shape-edge-symbol",
        "reverie/rules/secret_formats.py",
        "_SYMBOL.search(core[1:-1]) is not None",
        "_SYMBOL.search(core) is not None",
        'a word whose only symbol opens it ("#project1Modal") is taken for a password',
        ("tests/test_secrets.py::test_the_eleventh_round_block_is_caught_whole_and_flags_nothing",),
    ),
    Mutant(
        "dashed-key-one-group",
        "reverie/rules/secret_formats.py",
        'v.split("-"))\n            >= 2',
        'v.split("-"))\n            >= 1',
        "a part number with one group of letters and digits is taken for a key",
        ("tests/test_secrets.py::test_the_eleventh_round_block_is_caught_whole_and_flags_nothing",),
    ),
    Mutant(
        "bank-account-no-bank",
        "reverie/rules/secret_formats.py",
        'r"(?i:\\b(?:bank|sort\\s*code|routing|iban|transfer|wire)\\b)[^\\n]{0,120}?"',
        'r""',
        "any account number is taken for a bank's, with no bank in the sentence",
        ("tests/test_secrets.py::test_the_eleventh_round_block_is_caught_whole_and_flags_nothing",),
    ),
    Mutant(
        "stem-shared-down",
        "reverie/rules/value_slots.py",
        "_STEM_SHARED = 6",
        "_STEM_SHARED = 5",
        'words beginning with the same five letters ("transfer" / "transport") count as one',
        ("tests/test_natural_corrections.py::test_other_values_do_not_compete_for_the_question",),
    ),
    Mutant(
        "stem-shared-up",
        "reverie/rules/value_slots.py",
        "_STEM_SHARED = 6",
        "_STEM_SHARED = 8",
        '"inspector" no longer answers for "inspection"',
        ("tests/test_natural_corrections.py::test_a_new_value_for_the_thing_asked_about_competes",),
    ),
    Mutant(
        "asked-former-is-new",
        "reverie/rules/value_slots.py",
        "new_slots, old_slots = asserted(new_text), value_slots(old_text)",
        "new_slots, old_slots = value_slots(new_text), value_slots(old_text)",
        'a value named as former ("instead of 12") counts as one of the new text\'s values',
        ("tests/test_natural_corrections.py::test_a_new_value_for_the_thing_asked_about_competes",),
    ),
    Mutant(
        "asked-no-identifier",
        "reverie/rules/value_slots.py",
        "both = _identified(new_values & old_values)",
        "both = frozenset()",
        "an identifier both texts hold does not say what both are of",
        ("tests/test_natural_corrections.py::test_a_new_value_for_the_thing_asked_about_competes",),
    ),
    Mutant(
        "holders-all-names",
        "reverie/rules/routing.py",
        "theirs = names(old_text) - (_holders(new_text) or names(new_text))",
        "theirs = names(old_text) - names(new_text)",
        "a new holder's sentence that names the old one too no longer ranks above it",
        (
            "tests/test_natural_corrections.py::"
            "test_a_role_s_new_holder_ranks_above_the_old_one_it_mentions",
        ),
    ),
    Mutant(
        "reply-never-wakes",
        "reverie/bus/messages.py",
        "            self._event.set()",
        "            pass",
        "an asker that waits before the answer is never woken by it",
        (
            "tests/test_bus.py::"
            "test_a_reply_wakes_an_asker_that_waits_and_answers_one_that_comes_late",
        ),
    ),
    Mutant(
        "temp-name-shared",
        "reverie/stores/projection.py",
        'f".{path.name}.{os.getpid()}-{threading.get_ident()}"',
        'f".{path.name}.tmp"',
        "two threads writing one projection share a temporary file",
        ("tests/test_projections.py::test_two_threads_writing_one_file_never_mix",),
    ),
    Mutant(
        "quiet-despite-a-write",
        "reverie/stores/review_state.py",
        "if any(actor not in reviewers for _, actor in rows):",
        "if False:",
        "a pass during which someone else wrote still marks the namespace quiet",
        (
            "tests/test_review.py::"
            "test_a_write_that_lands_during_a_pass_keeps_the_namespace_unquiet",
        ),
    ),
    Mutant(
        "quick-init-no-factory",
        "reverie/frozen.py",
        'value = f"_factory{i}() if {f.name} is _FACTORY else {f.name}"',
        "value = f.name",
        "a quick record's factory default is never called (it holds the marker)",
        (
            "tests/test_frozen.py::"
            "test_a_factory_default_is_fresh_for_each_record_and_a_given_value_kept",
        ),
    ),
    Mutant(
        "quick-init-skips-post-init",
        "reverie/frozen.py",
        'if hasattr(cls, "__post_init__"):',
        "if False:",
        "a record whose __post_init__ checks its fields is built without running it",
        (
            "tests/test_frozen.py::"
            "test_what_quick_init_cannot_build_as_well_is_refused_when_decorated",
        ),
    ),
    Mutant(
        "retire-off",
        "reverie/rules/supersede.py",
        "    if retires(new_text, old_text):\n        return True\n",
        "",
        "a named thing given up for another no longer ends the habit that named it",
        (
            "tests/test_natural_corrections.py::"
            "test_a_named_thing_given_up_for_another_ends_the_habit",
        ),
    ),
    Mutant(
        "retire-not-a-candidate",
        "reverie/actors/topic_writes.py",
        "term_sets += [[name] for name in retired_names(text)]",
        "term_sets += []",
        "a topic save never looks at the fact naming what the new one gives up",
        (
            "tests/test_natural_corrections.py::"
            "test_a_habit_given_up_is_superseded_through_the_flush",
        ),
    ),
    Mutant(
        "habit-off",
        "reverie/rules/routing.py",
        'if speaker == "user" and _uses_named(text):',
        "if False:",
        'a habit with a named value ("I use Aftershoot") is left as the speaker\'s moment',
        ("tests/test_extraction_real.py::test_what_the_user_habitually_uses_by_name_is_a_value",),
    ),
    Mutant(
        "distill-wait-kept",
        "reverie/actors/distiller.py",
        "review_state.drop_many(conn, self.namespace, drops)",
        "None",
        "a topic's wait for a fuller batch outlives its summary (the next is asked at once)",
        ("tests/test_review.py::test_a_lone_topic_is_asked_about_once_it_has_waited_a_week",),
    ),
    Mutant(
        "role-not-a-switch",
        "reverie/rules/routing.py",
        "    if _role_holder(text):\n        return True  # who holds a role now",
        "    if False:\n        return True  # who holds a role now",
        "a role's holder said now is no switch to a name",
        ("tests/test_natural_corrections.py::test_a_named_person_taking_over_is_a_switch",),
    ),
    Mutant(
        "role-function-word",
        "reverie/rules/routing.py",
        "if who.split()[0].lower() not in FUNCTION_WORDS | CALENDAR",
        "if who.split()[0].lower() not in CALENDAR",
        '"Here\'s the summary from the tracker" is read as who holds a role',
        ("tests/test_extraction_real.py::test_who_holds_a_role_is_a_value",),
    ),
    # -- seed 003's learning records (issue 11) --------------------------------------------
    Mutant(
        "tier-warm-accesses",
        "reverie/stores/learning.py",
        "return accesses >= settings.warm_after_accesses",
        "return accesses > settings.warm_after_accesses",
        "HOT -> WARM at the fourth access, not the third",
        ("tests/test_records.py::test_hot_becomes_warm_at_the_third_access_not_the_second",),
    ),
    Mutant(
        "tier-hot-sessions",
        "reverie/stores/learning.py",
        'elif tier == "hot" and idle >= settings.hot_sessions:',
        'elif tier == "hot" and idle > settings.hot_sessions:',
        "HOT -> WARM after four unreferenced sessions, not three",
        ("tests/test_records.py::test_hot_becomes_warm_after_three_sessions_unreferenced",),
    ),
    Mutant(
        "tier-cold-sessions",
        "reverie/stores/learning.py",
        'elif tier == "warm" and idle >= settings.cold_sessions:',
        'elif tier == "warm" and idle > settings.cold_sessions:',
        "WARM -> COLD after eleven sessions without an access, not ten",
        ("tests/test_records.py::test_warm_becomes_cold_after_ten_sessions_without_an_access",),
    ),
    Mutant(
        "tier-longterm-recalls",
        "reverie/stores/learning.py",
        "if last_seen < old and count < settings.longterm_recalls:",
        "if last_seen < old and count <= settings.longterm_recalls:",
        "seed 004's long-term rule takes a record recalled three times to COLD",
        (
            "tests/test_records.py::test_the_long_term_rule_sends_a_record_unrecalled_for_30_days_to_cold",
        ),
    ),
    Mutant(
        "tier-cold-referenced",
        "reverie/stores/learning.py",
        'moved.append(Moved(rid, "cold", "hot", "referenced again"))',
        "pass",
        "a COLD record referenced again stays COLD",
        ("tests/test_records.py::test_a_cold_record_referenced_again_is_hot",),
    ),
    Mutant(
        "tier-cold-weight",
        "reverie/stores/search.py",
        "weight *= ranking.cold_weight",
        "weight *= 1.0",
        "a COLD hit ranks as a live one",
        (
            "tests/test_records.py::test_cold_entries_leave_the_snapshot_and_cold_facts_rank_below_warm_ones",
        ),
    ),
    Mutant(
        "pattern-sessions",
        "reverie/stores/patterns.py",
        ">= settings.pattern_sessions",
        "> settings.pattern_sessions",
        "a pattern needs four sessions, not three",
        (
            "tests/test_patterns.py::test_one_correction_in_three_sessions_phrased_differently_is_a_pattern",
        ),
    ),
    Mutant(
        "pattern-overlap",
        "reverie/stores/patterns.py",
        "return least > 0 and weight(shared) / least >= settings.pattern_overlap",
        "return least > 0 and weight(shared) / least > settings.pattern_overlap",
        "two lessons sharing exactly the overlap threshold are not the same",
        ("tests/test_patterns.py::test_the_overlap_and_the_word_floor_are_both_required",),
    ),
    Mutant(
        "pattern-rarity-small",
        "reverie/stores/patterns.py",
        "if n < 2 * settings.pattern_sessions:",
        "if n < 1:",
        "words are weighed by rarity over a few sessions (a lesson's own words weigh least)",
        ("tests/test_patterns.py::test_words_every_session_uses_say_little_about_which_lesson",),
    ),
    Mutant(
        "pattern-word-floor",
        "reverie/stores/patterns.py",
        "if len(shared) < settings.pattern_words:",
        "if len(shared) < 1:",
        "two statements sharing one subject word can tell the same lesson",
        ("tests/test_patterns.py::test_the_overlap_and_the_word_floor_are_both_required",),
    ),
    Mutant(
        "flush-reads-learner-rows",
        "reverie/stores/timeline.py",
        " AND l.actor != 'learner'\"",
        '"',
        "a fact's tier move after a turn reads as a newer value: the flush skips the turn",
        (
            "tests/test_records.py::test_a_tier_move_after_a_turn_does_not_hold_back_the_turns_correction",
        ),
    ),
    Mutant(
        "review-wakes-on-learner-rows",
        "reverie/actors/learner.py",
        "review_state.carry_quiet(conn, self.namespace, seq)",
        "None",
        "a tier move or a manual lesson makes a quiet namespace due for a review pass",
        ("tests/test_records.py::test_a_tier_move_leaves_a_quiet_namespace_quiet",),
    ),
    # -- issue 11's namespace management ----------------------------------------------
    Mutant(
        "ns-archive-tool",
        "reverie/actors/write_base.py",
        "            namespaces.check_open(conn, self.namespace)\n            self.cfg",
        "            self.cfg",
        "a tool call writes to an archived namespace",
        (
            "tests/test_namespace_admin.py::test_archive_refuses_writes_keeps_data_and_restore_allows_them_again",
        ),
    ),
    Mutant(
        "ns-archive-turn",
        "reverie/actors/writer.py",
        "        namespaces.check_open(conn, self.namespace)\n",
        "",
        "a turn is recorded in an archived namespace",
        (
            "tests/test_namespace_admin.py::test_archive_refuses_writes_keeps_data_and_restore_allows_them_again",
        ),
    ),
    Mutant(
        "ns-archive-learn",
        "reverie/actors/learner.py",
        "            if writing:\n"
        "                namespaces.check_open(conn, self.namespace)  # raises: it is archived\n",
        "            if writing:\n                return True\n",
        "ns.learn, set_tier and recall write to an archived namespace",
        (
            "tests/test_namespace_admin.py::test_archive_refuses_writes_keeps_data_and_restore_allows_them_again",
        ),
    ),
    Mutant(
        "ns-archive-clock",
        "reverie/actors/learner.py",
        "        if not self._settle(conn, writing=False):\n            return [], None\n",
        "        self._settle(conn, writing=False)\n",
        "an archived namespace's sessions count and move its tiers",
        ("tests/test_namespace_admin.py::test_an_archived_namespace_keeps_its_tier_clock_still",),
    ),
    Mutant(
        "ns-archive-review",
        "reverie/actors/reviewer.py",
        "        if namespaces.is_archived(conn, self.namespace):\n"
        "            return False, ARCHIVED, _NOT_BEGUN\n",
        "",
        "review passes run over an archived namespace",
        ("tests/test_namespace_admin.py::test_review_skips_an_archived_namespace",),
    ),
    Mutant(
        "ns-archive-flush",
        "reverie/actors/flusher.py",
        "        if namespaces.is_archived(conn, self.namespace):  # read-only: its flush waits\n",
        "        if False:\n",
        "the idle flush of an archived namespace routes and marks what waited",
        (
            "tests/test_namespace_admin.py::test_archive_refuses_writes_keeps_data_and_restore_allows_them_again",
        ),
    ),
    Mutant(
        "ns-archive-curate",
        "reverie/actors/curator.py",
        "            namespaces.check_open(conn, self.namespace)\n            here",
        "            here",
        "ns.curate(apply=True) archives skills of an archived namespace",
        (
            "tests/test_namespace_admin.py::test_archive_refuses_writes_keeps_data_and_restore_allows_them_again",
        ),
    ),
    Mutant(
        "ns-restore",
        "reverie/stores/namespaces.py",
        'conn.execute("UPDATE namespaces SET archived_at = NULL WHERE name = ?", (name,))',
        "pass",
        "restore leaves the namespace archived",
        (
            "tests/test_namespace_admin.py::test_archive_refuses_writes_keeps_data_and_restore_allows_them_again",
        ),
    ),
    Mutant(
        "ns-cap-override",
        "reverie/actors/write_base.py",
        "            self.cfg = namespaces.effective(conn, self.namespace, self.base)\n",
        "",
        "the writer ignores the namespace's own caps",
        ("tests/test_namespace_admin.py::test_a_cap_override_changes_what_the_writer_accepts",),
    ),
    Mutant(
        "ns-tier-override",
        "reverie/actors/learner.py",
        "        self.cfg = settings.records\n",
        "        self.cfg = self.config.records\n",
        "the learner ignores the namespace's own tier numbers",
        ("tests/test_namespace_admin.py::test_a_tier_override_changes_when_a_record_moves",),
    ),
    Mutant(
        "ns-override-positive",
        "reverie/config.py",
        "        if checked != checked or checked <= 0 or math.isinf(checked):",
        "        if False:",
        "a zero, negative, NaN or infinite namespace override is accepted",
        (
            "tests/test_namespace_admin.py::test_invalid_overrides_are_refused_and_nothing_is_written",
        ),
    ),
    Mutant(
        "ns-ledger",
        "reverie/stores/namespaces.py",
        "    ledger.append(\n",
        "    (lambda *a: None)(\n",
        "namespace changes leave no ledger row",
        ("tests/test_namespace_admin.py::test_every_change_is_a_ledger_row",),
    ),
    Mutant(
        "archived-accesses-at-close",
        "reverie/runtime.py",
        "                if settings is None:  # archived: its reads are not counted\n"
        "                    return []\n",
        "                if settings is None:\n                    settings = services.config\n",
        "the reads of an archived namespace are counted, and move its tiers, at close",
        (
            "tests/test_namespace_admin.py::"
            "test_reads_of_an_archived_namespace_are_not_counted_at_close",
        ),
    ),
    Mutant(
        "pattern-core-drift",
        "reverie/stores/patterns.py",
        "core = found[g][: settings.pattern_sessions]",
        "core = found[g]",
        "a statement joins a group by any member, so a group drifts from lesson to lesson",
        ("tests/test_patterns.py::test_a_group_cannot_drift_from_one_lesson_to_the_next",),
    ),
    # -- issue 12's dream cycle ---------------------------------------------------------
    Mutant(
        "dream-slot-strict",
        "reverie/dream/schedule.py",
        "ahead = [s for s in _slots_of(day, slots, tz) if s > after]",
        "ahead = [s for s in _slots_of(day, slots, tz) if s >= after]",
        "a dream run at a slot sharp is due again at once",
        (
            "tests/test_dream.py::test_a_dream_at_a_slot_sharp_is_due_again_at_the_next_slot_not_at_once",
        ),
    ),
    Mutant(
        "dream-evening-twice",
        "reverie/dream/schedule.py",
        "if since < evening <= now:",
        "if since <= evening <= now:",
        "a dream stamped at the evening slot writes that evening's daily report again",
        ("tests/test_dream.py::test_the_first_dream_after_an_evening_writes_its_daily_report",),
    ),
    Mutant(
        "dream-first-waits",
        "reverie/dream/schedule.py",
        "        return last_slot(now, slots, tz)\n    return next_slot",
        "        return next_slot(now, slots, tz)\n    return next_slot",
        "a namespace that never dreamt waits for the next slot instead of dreaming now",
        ("tests/test_dream.py::test_the_next_dream_is_the_first_slot_after_the_last",),
    ),
    Mutant(
        "dream-quiet-forever",
        "reverie/actors/dreamer.py",
        "interval_h=0.0,",
        "interval_h=12.0,",
        "the quiet check reads the dreamer's due stamp as a last run: a quiet namespace "
        "misses its slot",
        ("tests/test_dream.py::test_a_quiet_namespace_still_dreams_when_its_slot_comes",),
    ),
    Mutant(
        "dream-weight",
        "reverie/dream/health.py",
        '"connectivity": 0.20,',
        '"connectivity": 0.10,',
        "the health score's weights no longer the seed's",
        ("tests/test_dream.py::test_each_health_metric_on_a_hand_computed_example",),
    ),
    Mutant(
        "dream-fresh-days",
        "reverie/stores/dream.py",
        "FRESH_DAYS: Final = 30",
        "FRESH_DAYS: Final = 3650",
        "freshness counts records referenced in ten years, not thirty days",
        ("tests/test_dream.py::test_freshness_and_coverage_follow_the_clock",),
    ),
    Mutant(
        "dream-coverage-days",
        "reverie/stores/dream.py",
        "COVERAGE_DAYS: Final = 14",
        "COVERAGE_DAYS: Final = 30",
        "coverage counts topics written in thirty days, not fourteen",
        ("tests/test_dream.py::test_freshness_and_coverage_follow_the_clock",),
    ),
    Mutant(
        "dream-recall-k",
        "reverie/stores/longterm.py",
        'sort="relevance", limit=k',
        'sort="relevance", limit=k + 5',
        "the long-term recall returns more than k records",
        ("tests/test_dream.py::test_at_most_k_records_are_recalled",),
    ),
    Mutant(
        "dream-recall-uncounted",
        "reverie/actors/dreamer.py",
        'longterm.counted(conn, self.namespace, recalled, run["ts"], self.config.records)',
        "None",
        "a long-term recall is not counted: the record stays long-term",
        (
            "tests/test_dream.py::test_old_unrecalled_records_go_long_term_and_the_days_words_recall_them",
        ),
    ),
    Mutant(
        "dream-insight-same",
        "reverie/dream/distil.py",
        "SAME: Final = 0.6",
        "SAME: Final = 1.01",
        "one statement said twice makes two insights",
        ("tests/test_dream.py::test_one_insight_per_distinct_statement_and_none_from_a_paste",),
    ),
    Mutant(
        "dream-insight-paste",
        "reverie/dream/distil.py",
        "LINE_CHARS: Final = 300",
        "LINE_CHARS: Final = 100000",
        "a pasted block becomes an insight",
        ("tests/test_dream.py::test_one_insight_per_distinct_statement_and_none_from_a_paste",),
    ),
    Mutant(
        "dream-quotes-anything",
        "reverie/dream/distil.py",
        'if aimed_at_agent(s.text, "user") is None and answer_problem(s.text) is None',
        "if True",
        "a dream quotes (and shows a model) a statement that instructs the agent or holds a secret",
        (
            "tests/test_dream.py::test_a_statement_aimed_at_the_agent_or_carrying_a_secret_is_never_quoted",
        ),
    ),
    Mutant(
        "dream-model-values",
        "reverie/dream/distil.py",
        "    invented = values(text) - known\n",
        "    invented = frozenset()\n",
        "a model's insight or topic fact may carry a value no source carries",
        (
            "tests/test_dream.py::test_a_models_lines_are_kept_only_when_its_sources_carry_their_values",
        ),
    ),
    Mutant(
        "distill-recall-uncounted",
        "reverie/actors/distiller.py",
        "longterm.counted(conn, self.namespace, recalled, stamp, self.config.records)",
        "None",
        "the distiller's long-term recall is not counted as a recall",
        ("tests/test_dream.py::test_a_distillation_round_recalls_from_the_long_term_store",),
    ),
    # -- seed 004's M-FLOW graph and Bundle Search (issue 12) -----------------------------
    Mutant(
        "bundle-min-path",
        "reverie/stores/bundle.py",
        "            if dst in reach and reach[dst].cost <= total:\n                continue\n",
        "            if dst in reach:\n                total = reach[dst].cost * total\n",
        "bundle search: an episode's paths add up (their costs multiply) instead of the "
        "cheapest one counting alone",
        ("tests/test_bundle_search.py::test_one_strong_chain_beats_many_weak_paths",),
    ),
    Mutant(
        "bundle-broad-penalty",
        "reverie/stores/bundle.py",
        "BROAD_PENALTY: Final = 0.5",
        "BROAD_PENALTY: Final = 0.0",
        "bundle search: no penalty on a direct hit on a broad episode",
        ("tests/test_bundle_search.py::test_a_direct_hit_on_a_broad_summary_is_penalised",),
    ),
    Mutant(
        "bundle-edges-searched",
        "reverie/stores/bundle.py",
        "for layer in (4, 3, 2, 1, 0):",
        "for layer in (4, 3, 2, 1):",
        "bundle search: edge descriptions are not searched",
        (
            "tests/test_bundle_search.py::"
            "test_a_query_matching_only_an_edge_description_finds_the_episode_below",
        ),
    ),
    Mutant(
        "bundle-fanout",
        "reverie/stores/bundle.py",
        "FANOUT: Final = 1.0",
        "FANOUT: Final = 0.0",
        "bundle search: a step from a hub costs what a step from a specific node does",
        ("tests/test_bundle_search.py::test_a_hub_leads_less_far_than_a_specific_node",),
    ),
    Mutant(
        "bundle-per-layer",
        "reverie/stores/bundle.py",
        "PER_LAYER: Final = 100",
        "PER_LAYER: Final = 1000",
        "bundle search: 1000 candidates per layer instead of 100",
        ("tests/test_bundle_search.py::test_each_layer_gives_at_most_its_candidates",),
    ),
    Mutant(
        "bundle-current-only",
        "reverie/stores/bundle.py",
        'if nodes[node_id]["layer"] == 1 and nodes[node_id]["current"]',
        'if nodes[node_id]["layer"] == 1',
        "bundle search returns episodes that are not current (superseded values)",
        ("tests/test_bundle_search.py::test_a_not_current_episode_is_never_returned",),
    ),
    Mutant(
        "graph-currency",
        "reverie/stores/graph_build.py",
        "    writer.changed += _currency(conn, namespace, now)\n",
        "",
        "graph build: a superseded fact's episode stays current",
        ("tests/test_graph.py::test_a_superseded_value_is_not_current_and_not_returned",),
    ),
    Mutant(
        "graph-broad-chars",
        "reverie/stores/graph_sources.py",
        "broad = len(text) > BROAD_CHARS",
        "broad = len(text) >= BROAD_CHARS",
        "graph build: a turn of exactly BROAD_CHARS is already broad",
        ("tests/test_graph.py::test_a_long_turn_is_a_broad_episode",),
    ),
    Mutant(
        "graph-keywords",
        "reverie/rules/cone.py",
        "KEYWORDS: Final = 8",
        "KEYWORDS: Final = 7",
        "graph rules: 7 facet points per unit instead of 8",
        ("tests/test_graph.py::test_keywords_are_the_first_content_words_one_per_stem",),
    ),
    Mutant(
        "graph-names-opening",
        "reverie/rules/cone.py",
        "if w not in named and (w in known)]",
        "if w not in named]",
        "graph rules: every capital that opens a sentence is taken for a name",
        ("tests/test_graph.py::test_a_name_is_a_capital_inside_a_sentence_or_one_known",),
    ),
    Mutant(
        "graph-prune",
        "reverie/stores/graph_build.py",
        "    if writer.dropped:\n",
        "    if False:\n",
        "graph build: facet points of a rewritten summary's old words are kept",
        ("tests/test_graph.py::test_reindex_rebuilds_the_graph_from_the_stores",),
    ),
    Mutant(
        "graph-tip-relabelled",
        "reverie/stores/graph_build.py",
        "if row is not None and node.layer != 1:",
        "if False:",
        "graph build: a facet point is relabelled by every unit that says its word otherwise",
        ("tests/test_graph.py::test_a_tip_node_keeps_the_words_it_was_made_with",),
    ),
    Mutant(
        "graph-due",
        "reverie/actors/grapher.py",
        "due = rebuild or await self.db.read(lambda c: graph.due(c, self.namespace))",
        "due = True",
        "the grapher takes a write transaction for every ask, nothing new or not",
        ("tests/test_bundle_search.py::test_a_search_builds_only_when_something_changed",),
    ),
    Mutant(
        "bundle-vectors",
        "reverie/stores/bundle.py",
        "if query_vector is not None and embedder is not None:",
        "if False:",
        "bundle search ignores the embedding seam",
        ("tests/test_bundle_search.py::test_the_embedding_seam_adds_the_nearest_units_as_hits",),
    ),
    Mutant(
        "bundle-failed-build",
        "reverie/runtime.py",
        "        except (errors.StoreError, errors.TimeoutError, errors.InternalError) as exc:\n",
        "        except ActorDisabled as exc:\n",
        "a bundle search fails when its graph could not be brought up to date",
        (
            "tests/test_bundle_search.py::"
            "test_a_failed_build_leaves_the_search_to_the_graph_as_it_stands",
        ),
    ),
    Mutant(
        "graph-projects-every-build",
        "reverie/actors/grapher.py",
        "project = isinstance(message, GraphDue) and message.project",
        "project = True",
        "every build (on idle, at a session's end, for a search) rewrites the graph's files",
        (
            "tests/test_graph.py::test_builds_between_dreams_mark_the_files_stale_and_an_ask_writes_them",
        ),
    ),
    Mutant(
        "graph-stale-unmarked",
        "reverie/actors/grapher.py",
        "if changed and not project:",
        "if False:",
        "a build whose files were not written leaves no mark: the next ask may not write them",
        (
            "tests/test_graph.py::test_builds_between_dreams_mark_the_files_stale_and_an_ask_writes_them",
        ),
    ),
    Mutant(
        "graph-model-words",
        "reverie/rules/cone.py",
        "and set(words) <= said",
        "",
        "a model's entity or facet name may carry words its episode does not",
        ("tests/test_graph.py::test_a_configured_model_names_entities_only_in_the_sources_words",),
    ),
    # -- the learning graph's picture (issue 13) -------------------------------------
    Mutant(
        "picture-tier-bonus",
        "reverie/skills/picture.py",
        'TIER_BONUS: Final = {"hot": 2, "warm": 1, "cold": 0}',
        'TIER_BONUS: Final = {"hot": 0, "warm": 0, "cold": 0}',
        "a record's tier no longer adds to its activity",
        ("tests/test_learning_graph.py::test_activity_counts_accesses_tiers_uses_and_occurrences",),
    ),
    Mutant(
        "picture-bound",
        "reverie/skills/picture.py",
        "kept = ranked[:max_nodes]",
        "kept = ranked[: max_nodes + 1]",
        "the drawing's bound lets one node more through",
        ("tests/test_learning_graph.py::test_the_bound_keeps_the_most_active_and_counts_the_rest",),
    ),
    Mutant(
        "picture-quote-floor",
        "reverie/skills/picture.py",
        "QUOTE_MIN_WORDS: Final = 3",
        "QUOTE_MIN_WORDS: Final = 2",
        "a skill body holding two words of an entry counts as quoting it",
        ("tests/test_learning_graph.py::test_each_kind_of_edge_is_found_from_real_links",),
    ),
    Mutant(
        "picture-superseded-facts",
        "reverie/skills/picture.py",
        "WHERE f.namespace = ? AND f.invalid_at IS NULL ORDER BY f.rowid",
        "WHERE f.namespace = ? ORDER BY f.rowid",
        "superseded facts weigh in and are linked to",
        ("tests/test_learning_graph.py::test_each_kind_of_edge_is_found_from_real_links",),
    ),
    Mutant(
        "picture-archived-skills",
        "reverie/skills/picture.py",
        "registered = skills.registered(conn, namespace)",
        "registered = skills.every(conn, namespace)",
        "archived skills are drawn",
        ("tests/test_learning_graph.py::test_the_nodes_are_the_live_records",),
    ),
    Mutant(
        "picture-max-area",
        "reverie/skills/drawing.py",
        "return MIN_AREA + (MAX_AREA - MIN_AREA) * math.log1p(activity) / math.log1p(most)",
        "return MIN_AREA + (MAX_AREA - MIN_AREA) * activity / most * 10",
        "node areas no longer bounded: a busy node swallows the picture",
        ("tests/test_learning_graph.py::test_node_areas_are_bounded_whatever_the_activity",),
    ),
    Mutant(
        "picture-seed",
        "reverie/skills/drawing.py",
        "iterations=300, seed=LAYOUT_SEED, scale=scale",
        "iterations=300, seed=None, scale=scale",
        "the layout is no longer seeded: two drawings differ",
        ("tests/test_learning_graph.py::test_two_drawings_of_one_graph_are_the_same_file",),
    ),
    Mutant(
        "picture-skill-score",
        "reverie/skills/picture.py",
        "SCORE_PER_POINT: Final = 5.0",
        "SCORE_PER_POINT: Final = 4.0",
        "a skill's drawn activity no longer follows its activity score's scale",
        ("tests/test_learning_graph.py::test_activity_counts_accesses_tiers_uses_and_occurrences",),
    ),
    # -- curator consolidate / patch (reverie/skills, reverie/actors/skill_reshape.py) --
    Mutant(
        "consolidate-overlap-inclusive",
        "reverie/skills/consolidate.py",
        "len(sets[i] & sets[j]) / len(union) >= threshold",
        "len(sets[i] & sets[j]) / len(union) > threshold",
        "two skills at exactly the overlap threshold no longer group",
        ("tests/test_skill_merge_rules.py::test_a_pair_at_exactly_the_overlap_threshold_groups",),
    ),
    Mutant(
        "consolidate-near-threshold",
        "reverie/skills/consolidate.py",
        "return near_duplicate(a.text, b.text, near) is not None",
        "return near_duplicate(a.text, b.text, 1.0) is not None",
        "a merge ignores the configured near-duplicate threshold",
        ("tests/test_skill_merge_rules.py::test_near_duplicates_by_the_configured_threshold",),
    ),
    Mutant(
        "consolidate-near-default-high",
        "reverie/config.py",
        "merge_near_duplicate: float = 0.8",
        "merge_near_duplicate: float = 1.0",
        "the default near-duplicate threshold 0.8 -> 1.0 (paragraphs at 0.82 both kept)",
        (
            "tests/test_skill_consolidate.py::test_the_default_near_duplicate_threshold_decides_what_a_trim_drops",
        ),
    ),
    Mutant(
        "consolidate-near-default-low",
        "reverie/config.py",
        "merge_near_duplicate: float = 0.8",
        "merge_near_duplicate: float = 0.7",
        "the default near-duplicate threshold 0.8 -> 0.7 (paragraphs at 0.75 merged away)",
        (
            "tests/test_skill_consolidate.py::test_the_default_near_duplicate_threshold_decides_what_a_trim_drops",
            "tests/test_skill_consolidate.py::test_apply_archives_the_originals_and_unmerge_brings_them_back",
        ),
    ),
    Mutant(
        "consolidate-cap",
        "reverie/skills/consolidate.py",
        "if len(body) > max_chars:",
        "if len(body) > max_chars + 1:",
        "a merged body one char over writer.max_skill_chars is proposed as applicable",
        ("tests/test_skill_merge_rules.py::test_a_merge_over_the_cap_is_blocked",),
    ),
    Mutant(
        "consolidate-skips-pinned",
        "reverie/actors/skill_reshape.py",
        'if s.created_by == "skill_manage" and not s.pinned',
        'if s.created_by == "skill_manage"',
        "a pinned skill is merged or trimmed",
        (
            "tests/test_skill_consolidate.py::test_consolidate_dry_run_lists_the_proposal_and_writes_nothing",
            "tests/test_skill_consolidate.py::test_trim_dry_run_apply_and_unpatch",
        ),
    ),
    Mutant(
        "consolidate-skips-preinstalled",
        "reverie/actors/skill_reshape.py",
        'if s.created_by == "skill_manage" and not s.pinned',
        "if not s.pinned",
        "a preinstalled skill (created_by other than skill_manage) is merged or trimmed",
        (
            "tests/test_skill_consolidate.py::test_consolidate_dry_run_lists_the_proposal_and_writes_nothing",
            "tests/test_skill_consolidate.py::test_trim_dry_run_apply_and_unpatch",
        ),
    ),
    Mutant(
        "consolidate-no-create-checks",
        "reverie/actors/skill_reshape.py",
        "return [_checked(p, config) for p in made] if checked else made",
        "return made",
        "a merged body is applied without skill_manage create's checks (secrets, front matter)",
        (
            "tests/test_skill_consolidate.py::test_a_merged_body_failing_create_checks_is_blocked_and_not_applied",
        ),
    ),
    Mutant(
        "trim-to-the-threshold",
        "reverie/skills/consolidate.py",
        "dropped += summarise(doc, bloat_chars)",
        "dropped += summarise(doc, 0)",
        "a trim summarises every section, not only until the skill is within bloat_chars",
        ("tests/test_skill_merge_rules.py::test_a_trim_summarises_only_over_the_threshold",),
    ),
    Mutant(
        "trim-summarise-stops",
        "reverie/skills/consolidate.py",
        "        if len(render(doc)) <= limit:\n            break\n",
        "",
        "summarising goes on past the size threshold (every section cut)",
        (
            "tests/test_skill_merge_rules.py::test_summarising_keeps_whole_first_sentences_and_stops_within_the_limit",
        ),
    ),
    Mutant(
        "unmerge-restores-body",
        "reverie/actors/skill_reshape.py",
        "skills.update_body(conn, namespace, name, body, now)",
        "pass",
        "an unmerge / untrim leaves the merged or trimmed body in place",
        (
            "tests/test_skill_consolidate.py::test_apply_archives_the_originals_and_unmerge_brings_them_back",
            "tests/test_skill_consolidate.py::test_trim_dry_run_apply_and_unpatch",
        ),
    ),
    # -- skill gaps and drafts (issue 13) -------------------------------------------------
    Mutant(
        "drafts-min-sessions",
        "reverie/config.py",
        "min_sessions: int = 3",
        "min_sessions: int = 2",
        "a request asked in two sessions is a gap",
        (
            "tests/test_skill_drafts.py::test_three_sessions_make_a_gap_and_two_do_not",
            "tests/test_skill_drafts.py::test_a_month_drafts_the_gap_and_not_the_covered_or_rare_requests",
        ),
    ),
    Mutant(
        "drafts-distinct-sessions",
        "reverie/skills/gaps.py",
        "count = sessions if by_session else len({m.episode_id for m in members})",
        "count = len({m.episode_id for m in members})",
        "a request asked three times in one session counts as three sessions",
        ("tests/test_skill_drafts.py::test_three_sessions_make_a_gap_and_two_do_not",),
    ),
    Mutant(
        "drafts-min-errors",
        "reverie/config.py",
        "min_errors: int = 3",
        "min_errors: int = 2",
        "two errors of one area are a gap",
        ("tests/test_skill_drafts.py::test_repeated_errors_and_procedures_are_gaps",),
    ),
    Mutant(
        "drafts-min-procedures",
        "reverie/skills/gaps.py",
        "return cfg.min_procedures, False",
        "return cfg.min_procedures - 1, False",
        "a procedure walked once by hand is a gap",
        ("tests/test_skill_drafts.py::test_repeated_errors_and_procedures_are_gaps",),
    ),
    Mutant(
        "drafts-shared-words",
        "reverie/config.py",
        "shared_words: int = 2",
        "shared_words: int = 1",
        "requests sharing one content word are one request",
        ("tests/test_skill_drafts.py::test_requests_sharing_one_word_are_not_one_request",),
    ),
    Mutant(
        "drafts-similarity",
        "reverie/config.py",
        "similarity: float = 0.25",
        "similarity: float = 0.01",
        "two shared words among a dozen make one request",
        (
            "tests/test_skill_drafts.py::test_requests_sharing_two_words_among_many_are_not_one_request",
        ),
    ),
    Mutant(
        "drafts-covered",
        "reverie/skills/gaps.py",
        "if covered(words, skills, cfg, whole=whole):",
        "if False:",
        "a request a skill covers is drafted anyway",
        (
            "tests/test_skill_drafts.py::test_a_skill_covers_its_requests_by_its_words",
            "tests/test_skill_drafts.py::test_a_month_drafts_the_gap_and_not_the_covered_or_rare_requests",
        ),
    ),
    Mutant(
        "drafts-covered-share",
        "reverie/config.py",
        "covered_share: float = 0.6",
        "covered_share: float = 1.0",
        "a skill covers a request only when it says every one of its core words",
        ("tests/test_skill_drafts.py::test_a_skill_covers_most_of_a_requests_words",),
    ),
    Mutant(
        "drafts-covered-half",
        "reverie/config.py",
        "covered_share: float = 0.6",
        "covered_share: float = 0.5",
        "a skill saying half a request's core words (its object only) covers it",
        ("tests/test_skill_drafts.py::test_a_skill_covers_most_of_a_requests_words",),
    ),
    Mutant(
        "drafts-decided-redrafted",
        "reverie/skills/drafts.py",
        'decided = [(d.gap_key, d.evidence) for d in seen.drafts if d.state != "draft"]',
        "decided: list[tuple[str, tuple[int, ...]]] = []",
        "a rejected gap is drafted again",
        ("tests/test_skill_drafts.py::test_reject_keeps_the_gap_from_being_drafted_again",),
    ),
    Mutant(
        "drafts-one-per-need",
        "reverie/skills/gaps.py",
        "    return distinct(found)",
        "    return found",
        "the steps walked for a drafted request's turns are drafted a second time",
        (
            "tests/test_skill_drafts.py::test_a_month_drafts_the_gap_and_not_the_covered_or_rare_requests",
        ),
    ),
    Mutant(
        "drafts-top-n",
        "reverie/skills/drafts.py",
        "return asked[: config.drafts.top_n]",
        "return asked",
        "a pass drafts every gap, not the top N",
        ("tests/test_skill_drafts.py::test_a_pass_drafts_only_the_top_n",),
    ),
    Mutant(
        "drafts-stale-words",
        "reverie/skills/gaps.py",
        "and not any(phrase <= turn for phrase in phrases for turn in turns)",
        "",
        "a skill whose trigger words users still say is reported stale",
        (
            "tests/test_skill_drafts.py::test_a_month_drafts_the_gap_and_not_the_covered_or_rare_requests",
        ),
    ),
    Mutant(
        "drafts-stale-whole-phrase",
        "reverie/skills/gaps.py",
        "and not any(phrase <= turn for phrase in phrases for turn in turns)",
        "and not any(phrase & turn for phrase in phrases for turn in turns)",
        "one word of a trigger phrase said keeps a skill from being stale",
        ("tests/test_skill_drafts.py::test_a_trigger_phrase_is_heard_only_whole",),
    ),
    Mutant(
        "drafts-stale-used",
        "reverie/skills/gaps.py",
        "        and (skill.last_used_at or skill.created_at) <= created_before\n",
        "",
        "a skill the host reported using lately is reported stale",
        ("tests/test_skill_drafts.py::test_a_trigger_phrase_is_heard_only_whole",),
    ),
    Mutant(
        "drafts-known-share",
        "reverie/skills/drafts.py",
        "KNOWN_SHARE: Final = 2 / 3",
        "KNOWN_SHARE: Final = 1 / 3",
        "a turn sharing a third of its words with a stored value is no request",
        ("tests/test_skill_drafts.py::test_a_stored_value_asked_about_again_is_no_gap",),
    ),
    Mutant(
        "drafts-known-other-session",
        "reverie/skills/drafts.py",
        "return any(s != session and len(words & value) >= need for s, value in known)",
        "return any(len(words & value) >= need for s, value in known)",
        "a request stored as a fact in its own session stops being a request",
        ("tests/test_skill_drafts.py::test_a_stored_value_asked_about_again_is_no_gap",),
    ),
    Mutant(
        "drafts-known-secret",
        "reverie/skills/drafts.py",
        '    if "[redacted" in text:\n        return True\n',
        "",
        "a turn that carried a secret is a request a draft may quote",
        ("tests/test_skill_drafts.py::test_a_stored_value_asked_about_again_is_no_gap",),
    ),
    Mutant(
        "drafts-known-core",
        "reverie/skills/drafts.py",
        "asked = [g for g in ranked if not any(set(g.core) <= value for value in seen.values)]",
        "asked = list(ranked)",
        "a gap whose core words one stored value holds is drafted",
        ("tests/test_skill_drafts.py::test_a_stored_value_asked_about_again_is_no_gap",),
    ),
    Mutant(
        "drafts-stale-days",
        "reverie/config.py",
        "stale_days: float = 30.0",
        "stale_days: float = 60.0",
        "a skill is stale only after 60 days without its words",
        (
            "tests/test_skill_drafts.py::test_a_month_drafts_the_gap_and_not_the_covered_or_rare_requests",
        ),
    ),
    Mutant(
        "drafts-model-asked-daily",
        "reverie/actors/drafting.py",
        "unseen = [gap for gap in found if gap.evidence not in known]",
        "unseen = list(found)",
        "a gap whose turns did not change is written (and the model asked) again every pass",
        (
            "tests/test_skill_drafts.py::test_a_models_draft_is_kept_when_it_passes_the_checks",
            "tests/test_skill_drafts.py::test_a_waiting_draft_grows_with_its_gap_and_a_quiet_pass_writes_nothing",
        ),
    ),
    Mutant(
        "drafts-grown-gap-new-name",
        "reverie/skills/drafts.py",
        "before = next((d for d in waiting if same_gap(gap, d.gap_key, d.evidence)), None)",
        "before = None",
        "a gap asked once more becomes a second draft beside its first",
        (
            "tests/test_skill_drafts.py::test_a_waiting_draft_grows_with_its_gap_and_a_quiet_pass_writes_nothing",
        ),
    ),
    Mutant(
        "drafts-model-ungrounded",
        "reverie/skills/writing.py",
        "if not content_words(line) & grounded:",
        "if False:",
        "a model's draft keeps a step the episodes never said",
        (
            "tests/test_skill_drafts.py::test_a_models_draft_that_fails_a_check_leaves_the_rules_draft",
        ),
    ),
    # -- skill activity scores (issue 13): window, calls scale, prior, decay steps, tiers,
    # the 180-day archive and where the marks show --------------------------------------
    Mutant(
        "score-window",
        "reverie/skills/scores.py",
        "WINDOW_DAYS: Final = 365",
        "WINDOW_DAYS: Final = 364",
        "calls counted over 364 days, not 365",
        ("tests/test_skill_scores.py::test_uses_older_than_the_window_do_not_count",),
    ),
    Mutant(
        "score-window-long",
        "reverie/skills/scores.py",
        "WINDOW_DAYS: Final = 365",
        "WINDOW_DAYS: Final = 366",
        "calls counted over 366 days, not 365",
        ("tests/test_skill_scores.py::test_uses_older_than_the_window_do_not_count",),
    ),
    Mutant(
        "score-calls-scale",
        "reverie/skills/scores.py",
        "CALLS_SCALE: Final = 10.0",
        "CALLS_SCALE: Final = 8.0",
        "the calls term saturates at 8 uses, not 10",
        (
            "tests/test_skill_scores.py::test_score_at_known_inputs",
            "tests/test_skill_scores.py::test_the_calls_term_saturates",
        ),
    ),
    Mutant(
        "score-prior-successes",
        "reverie/skills/scores.py",
        "PRIOR_SUCCESSES: Final = 3.0",
        "PRIOR_SUCCESSES: Final = 1.0",
        "a Beta(1, 1) prior: few calls read as quality 0.5",
        (
            "tests/test_skill_scores.py::test_the_prior_rules_few_calls_and_unknown_outcomes_are_no_evidence",
        ),
    ),
    Mutant(
        "score-prior-failures",
        "reverie/skills/scores.py",
        "PRIOR_FAILURES: Final = 1.0",
        "PRIOR_FAILURES: Final = 0.0",
        "no prior failure: one success is quality 1",
        (
            "tests/test_skill_scores.py::test_the_prior_rules_few_calls_and_unknown_outcomes_are_no_evidence",
        ),
    ),
    Mutant(
        "score-decay-30",
        "reverie/skills/scores.py",
        "DECAY_STEPS: Final = ((90, 0.2), (30, 0.5))",
        "DECAY_STEPS: Final = ((90, 0.2), (31, 0.5))",
        "the ×0.5 step from 31 idle days, not 30",
        (
            "tests/test_skill_scores.py::test_decay_steps",
            "tests/test_skill_scores.py::test_decay_steps_on_the_clock",
        ),
    ),
    Mutant(
        "score-decay-90",
        "reverie/skills/scores.py",
        "DECAY_STEPS: Final = ((90, 0.2), (30, 0.5))",
        "DECAY_STEPS: Final = ((89, 0.2), (30, 0.5))",
        "the ×0.2 step from 89 idle days, not 90",
        (
            "tests/test_skill_scores.py::test_decay_steps",
            "tests/test_skill_scores.py::test_decay_steps_on_the_clock",
        ),
    ),
    Mutant(
        "score-decay-half",
        "reverie/skills/scores.py",
        "DECAY_STEPS: Final = ((90, 0.2), (30, 0.5))",
        "DECAY_STEPS: Final = ((90, 0.2), (30, 0.6))",
        "the 30-day factor 0.6, not 0.5",
        (
            "tests/test_skill_scores.py::test_decay_steps",
            "tests/test_skill_scores.py::test_decay_steps_on_the_clock",
        ),
    ),
    Mutant(
        "score-decay-fifth",
        "reverie/skills/scores.py",
        "DECAY_STEPS: Final = ((90, 0.2), (30, 0.5))",
        "DECAY_STEPS: Final = ((90, 0.25), (30, 0.5))",
        "the 90-day factor 0.25, not 0.2",
        (
            "tests/test_skill_scores.py::test_decay_steps",
            "tests/test_skill_scores.py::test_decay_steps_on_the_clock",
        ),
    ),
    Mutant(
        "score-decay-inclusive",
        "reverie/skills/scores.py",
        "        if idle_days >= days:",
        "        if idle_days > days:",
        "a decay step starts after its day, not on it",
        ("tests/test_skill_scores.py::test_decay_steps",),
    ),
    Mutant(
        "score-tier-80",
        "reverie/skills/scores.py",
        'Tier(80.0, "active", "🔥")',
        'Tier(80.1, "active", "🔥")',
        "🔥 from 80.1, not 80",
        ("tests/test_skill_scores.py::test_tier_boundaries",),
    ),
    Mutant(
        "score-tier-60",
        "reverie/skills/scores.py",
        'Tier(60.0, "steady", "📈")',
        'Tier(59.9, "steady", "📈")',
        "📈 from 59.9, not 60",
        ("tests/test_skill_scores.py::test_tier_boundaries",),
    ),
    Mutant(
        "score-tier-40",
        "reverie/skills/scores.py",
        'Tier(40.0, "low", "💤")',
        'Tier(40.1, "low", "💤")',
        "💤 from 40.1, not 40",
        ("tests/test_skill_scores.py::test_tier_boundaries",),
    ),
    Mutant(
        "score-tier-20",
        "reverie/skills/scores.py",
        'Tier(20.0, "dormant", "🗄️")',
        'Tier(19.9, "dormant", "🗄️")',
        "🗄️ from 19.9, not 20",
        ("tests/test_skill_scores.py::test_tier_boundaries",),
    ),
    Mutant(
        "score-tier-unrounded",
        "reverie/skills/scores.py",
        "    band = tier(score)\n",
        "    band = tier(100.0 * term * q * d)\n",
        "the tier read from the unrounded score (79.98 shown as 80.0 but 📈)",
        ("tests/test_skill_scores.py::test_the_tier_is_read_from_the_rounded_score",),
    ),
    Mutant(
        "score-unknown-is-success",
        "reverie/stores/skill_activity.py",
        "sum(outcome = 'success')",
        "sum(outcome != 'failure')",
        "a use of unknown outcome counts as a success",
        ("tests/test_skill_scores.py::test_each_use_is_stored_with_its_outcome_and_audited",),
    ),
    Mutant(
        "score-history-kept",
        "reverie/stores/skill_activity.py",
        "    store(conn, namespace, found, iso(now))\n",
        "",
        "the curator's scoring keeps no history rows",
        (
            "tests/test_skill_scores.py::test_each_scoring_keeps_a_history_row_and_the_previous_tier",
            "tests/test_skill_scores.py::test_the_dream_report_ranks_skills_by_activity_with_tier_changes",
        ),
    ),
    Mutant(
        "score-archive-days",
        "reverie/config.py",
        "    archive_days: float = 180.0",
        "    archive_days: float = 179.0",
        "skills archived after 179 idle days, not 180",
        ("tests/test_skill_scores.py::test_the_pass_archives_skills_idle_180_days_reversibly",),
    ),
    Mutant(
        "score-archive-days-late",
        "reverie/config.py",
        "    archive_days: float = 180.0",
        "    archive_days: float = 181.0",
        "skills archived after 181 idle days, not 180",
        ("tests/test_skill_scores.py::test_the_pass_archives_skills_idle_180_days_reversibly",),
    ),
    Mutant(
        "score-archive-switch",
        "reverie/actors/curator.py",
        "due = settings.auto_archive and any(",
        "due = any(",
        "skill_scores.auto_archive = false still archives",
        ("tests/test_skill_scores.py::test_auto_archive_can_be_switched_off",),
    ),
    Mutant(
        "score-archive-off",
        "reverie/actors/curator.py",
        "due = settings.auto_archive and any(",
        "due = False and any(",
        "the pass never archives a skill idle 180 days",
        ("tests/test_skill_scores.py::test_the_pass_archives_skills_idle_180_days_reversibly",),
    ),
    Mutant(
        "score-archive-pinned",
        "reverie/actors/curator.py",
        'if skill.created_by != "skill_manage" or skill.pinned:',
        'if skill.created_by != "skill_manage":',
        "the 180-day archive (and the dry run) takes pinned skills too",
        ("tests/test_skill_scores.py::test_the_pass_archives_skills_idle_180_days_reversibly",),
    ),
    Mutant(
        "score-archive-preinstalled",
        "reverie/actors/curator.py",
        'if skill.created_by != "skill_manage" or skill.pinned:',
        "if skill.pinned:",
        "the 180-day archive (and the dry run) takes preinstalled skills too",
        ("tests/test_skill_scores.py::test_the_pass_archives_skills_idle_180_days_reversibly",),
    ),
    Mutant(
        "score-snapshot-unused-mark",
        "reverie/snapshot.py",
        "for name, a in found.items() if a.calls}",
        "for name, a in found.items()}",
        "a skill never used is marked ⚰️ in the snapshot",
        ("tests/test_skill_scores.py::test_the_snapshot_marks_each_skill_with_its_tier",),
    ),
    Mutant(
        "score-snapshot-no-mark",
        "reverie/snapshot.py",
        "        index, _ = skills_index(registered, cap, marks)",
        "        index, _ = skills_index(registered, cap)",
        "no tier marks in the snapshot's skills index",
        ("tests/test_skill_scores.py::test_the_snapshot_marks_each_skill_with_its_tier",),
    ),
    Mutant(
        "score-snapshot-marks-bound",
        "reverie/snapshot.py",
        "        if size > cap + 1:\n",
        "        if size > cap // 2:\n",
        "the snapshot reads marks for too few skills: some lines it shows go unmarked",
        (
            "tests/test_skill_scores.py::"
            "test_the_snapshot_reads_marks_only_for_what_it_can_show_and_shows_the_same",
        ),
    ),
    Mutant(
        "score-report-change",
        "reverie/actors/dreamer.py",
        '"tier_before": row.get("previous_tier"),',
        '"tier_before": row.get("tier"),',
        "the dream report shows no tier change since the last scoring",
        (
            "tests/test_skill_scores.py::test_the_dream_report_ranks_skills_by_activity_with_tier_changes",
        ),
    ),
    # -- next-round prefetch (issue 13) ---------------------------------------------------
    Mutant(
        "prefetch-cap",
        "reverie/prefetch.py",
        "if size + len(text) + 1 > settings.max_chars:",
        "if size + len(text) + 1 > settings.max_chars + 200:",
        "the prefetch block may pass prefetch.max_chars by 200 chars",
        ("tests/test_prefetch.py::test_the_block_keeps_within_its_cap",),
    ),
    Mutant(
        "prefetch-k",
        "reverie/prefetch.py",
        "render(self.namespace, turn, own[:k], self.settings)",
        "render(self.namespace, turn, own[: k + 1], self.settings)",
        "the prefetch shows k + 1 hits",
        ("tests/test_prefetch.py::test_at_most_k_hits_and_long_lines_cut",),
    ),
    Mutant(
        "prefetch-line-chars",
        "reverie/prefetch.py",
        "text if len(text) <= limit else",
        "text if True else",
        "a prefetched line is never cut to prefetch.line_chars",
        ("tests/test_prefetch.py::test_at_most_k_hits_and_long_lines_cut",),
    ),
    Mutant(
        "prefetch-enabled",
        "reverie/prefetch.py",
        "if not self.settings.enabled or self.settings.k < 1",
        "if self.settings.k < 1",
        "prefetch.enabled = false still fetches",
        ("tests/test_prefetch.py::test_disabled_prefetch_fetches_nothing",),
    ),
    Mutant(
        "prefetch-stale-answer",
        "reverie/prefetch.py",
        "if generation == self._generation:  # not cleared while it ran",
        "if True:",
        "a cleared fetch's late answer is shown",
        ("tests/test_prefetch.py::test_a_late_answer_of_a_cleared_fetch_is_dropped",),
    ),
    Mutant(
        "prefetch-turn-clears",
        "reverie/runtime.py",
        "self._prefetch.clear()  # the next turn is here: the last one's block is stale",
        "pass",
        "the next turn does not clear the last turn's block",
        ("tests/test_prefetch.py::test_the_next_turn_clears_the_block_at_once",),
    ),
    Mutant(
        "prefetch-own-turn",
        "reverie/prefetch.py",
        "own = [h for h in hits if not (h.session_id == self.session_id and h.turn == turn)]",
        "own = hits",
        "the prefetch shows the turn that asked (its own query) as a hit",
        (
            "tests/test_prefetch.py::test_the_relevant_fact_is_prefetched_and_the_unrelated_one_is_not",
        ),
    ),
    # -- issue 13: the profile and self-model synthesis --------------------------------------
    Mutant(
        "profile-budget",
        "reverie/rules/profile.py",
        "if len(render(target, trial)) <= budget:",
        "if True:",
        "a synthesis takes every clause, whatever its budget",
        (
            "tests/test_profile.py::test_compose_never_passes_its_budget_and_keeps_the_first_clauses",
            "tests/test_profile.py::test_the_budget_bounds_a_synthesis_with_room_to_spare",
        ),
    ),
    Mutant(
        "profile-room",
        "reverie/actors/profiler.py",
        "room = min(chars, cap - used)",
        "room = chars",
        "the synthesis ignores the room the hand-written entries leave under the cap",
        ("tests/test_profile.py::test_within_the_cap_and_hand_entries_never_evicted",),
    ),
    Mutant(
        "profile-min-room",
        "reverie/actors/profiler.py",
        "if plan.room < min_chars or not plan.text:",
        "if not plan.text:",
        "a synthesis is squeezed into less room than min_chars",
        ("tests/test_profile.py::test_less_room_than_min_chars_writes_nothing",),
    ),
    Mutant(
        "profile-weekly",
        "reverie/config.py",
        "    enabled: bool = False\n    interval_h: float = 168.0\n",
        "    enabled: bool = False\n    interval_h: float = 24.0\n",
        "the profile is synthesised daily instead of weekly",
        ("tests/test_profile.py::test_the_profile_is_weekly",),
    ),
    Mutant(
        "profile-unchanged",
        "reverie/actors/profiler.py",
        "and plan.current.content == plan.text:",
        "and False:",
        "unchanged sources rewrite the synthesis anyway (ledger churn)",
        ("tests/test_profile.py::test_unchanged_sources_write_nothing",),
    ),
    Mutant(
        "profile-dedupe",
        "reverie/actors/profiler.py",
        "dedupe=False)",
        "dedupe=True)",
        "a synthesis that says more than the last one is refused as its near-duplicate",
        ("tests/test_profile.py::test_the_profile_is_weekly",),
    ),
    Mutant(
        "profile-live-only",
        "reverie/rules/profile.py",
        'if found[source_id][0] != "active":',
        "if False:",
        "the checker counts a superseded source as grounding its value",
        (
            "tests/test_profile.py::test_a_superseded_value_disappears_next_week",
            "tests/test_profile.py::test_a_clause_is_grounded_only_in_live_sources_that_say_it",
        ),
    ),
    Mutant(
        "profile-turn-records",
        "reverie/actors/profiler.py",
        'speaker="user" if session else "agent"',
        'speaker="agent"',
        "a record logged from a user's turn is quoted in SOUL.md even when it is a standing order",
        ("tests/test_profile.py::test_a_standing_order_said_in_a_turn_never_reaches_soul_md",),
    ),
    Mutant(
        "profile-model-checked",
        "reverie/actors/profiler.py",
        'if problem is not None:\n                return [], f"sentence',
        'if False:\n                return [], f"sentence',
        "a model sentence not grounded in what it cites is written",
        ("tests/test_profile.py::test_the_model_writes_the_prose_and_its_answer_is_checked",),
    ),
)


def by_id(ids: list[str]) -> list[Mutant]:
    known = {m.id: m for m in MUTANTS}
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise SystemExit(f"unknown mutant(s): {', '.join(unknown)}; see --list")
    return [known[i] for i in ids]


def selection_file(selection: str) -> str:
    """The file part of a pytest node id."""
    return selection.split("::", 1)[0]


def mutate(source: str, mutant: Mutant) -> str:
    """The mutated text; refuses a snippet that does not occur exactly once."""
    count = source.count(mutant.snippet)
    if count != 1:
        raise ValueError(f"{mutant.id}: snippet occurs {count} times in {mutant.file}")
    return source.replace(mutant.snippet, mutant.replacement)


def copy_repo(dest: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", ".hypothesis")
    for name in COPIED:
        shutil.copytree(ROOT / name, dest / name, ignore=ignore)
    shutil.copy2(ROOT / "pyproject.toml", dest / "pyproject.toml")


def python_path(copy: Path) -> str:
    """The copy first; other entries of the caller's ``PYTHONPATH`` (a plugin directory)
    after it, without the working tree, so the mutated package is the one imported."""
    kept = [
        entry
        for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep)
        if entry and Path(entry).resolve() != ROOT
    ]
    return os.pathsep.join([str(copy), *kept])


def pytest_in(copy: Path, tests: tuple[str, ...]) -> tuple[int | None, str]:
    """Run ``tests`` in ``copy``: pytest's exit code (None when it timed out) and the line
    worth reporting (the first failure, else the closing line)."""
    env = {**os.environ, "PYTHONPATH": python_path(copy), "PYTHONDONTWRITEBYTECODE": "1"}
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:randomly"]
    command += ["-p", "no:cacheprovider", *tests]
    try:
        done = subprocess.run(
            command, cwd=copy, env=env, capture_output=True, text=True, timeout=TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        return None, f"timed out after {TIMEOUT_S:.0f}s"
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    failed = [line for line in lines if line.startswith(("FAILED", "ERROR"))]
    last = lines[-1] if lines else done.stderr.strip()[-200:]
    return done.returncode, failed[0] if failed else last


def run_one(mutant: Mutant, baseline: bool = False) -> tuple[str, float, str]:
    """Apply ``mutant`` to a fresh copy, run its tests: (verdict, seconds, detail). With
    ``baseline`` the unmutated copy must pass the same tests first (else: error)."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"mutant-{mutant.id}-") as tmp:
        copy = Path(tmp)
        copy_repo(copy)
        target = copy / mutant.file
        try:
            mutated = mutate(target.read_text(encoding="utf-8"), mutant)
        except ValueError as exc:
            return "error", time.monotonic() - started, str(exc)
        if baseline:
            code, detail = pytest_in(copy, mutant.tests)
            if code != 0:
                return "error", time.monotonic() - started, f"baseline exit {code}: {detail}"
        target.write_text(mutated, encoding="utf-8")
        code, detail = pytest_in(copy, mutant.tests)
    verdict = {0: "survived", 1: "killed"}.get(code, "error") if code is not None else "error"
    if verdict == "error":
        detail = f"pytest exit {code}: {detail}"
    return verdict, time.monotonic() - started, detail


def show_table() -> None:
    for m in MUTANTS:
        print(f"{m.id}  {m.file}")
        print(f"    {m.description}")
        print(f"    {m.snippet!r} -> {m.replacement!r}")
        for selection in m.tests:
            print(f"    test: {selection}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.mutants", description=__doc__)
    parser.add_argument("ids", nargs="*", help="mutant ids (see --list)")
    parser.add_argument("--all", action="store_true", help="run every mutant")
    parser.add_argument("--list", action="store_true", help="print the table and exit")
    parser.add_argument(
        "--baseline",
        action="store_true",
        help="first check each selection passes without its mutant (a failure is an error)",
    )
    args = parser.parse_args(argv)
    if args.list:
        show_table()
        return 0
    if not args.all and not args.ids:
        parser.error("name mutant ids, or --all, or --list")
    chosen = list(MUTANTS) if args.all else by_id(args.ids)
    counts = {"killed": 0, "survived": 0, "error": 0}
    width = max(len(m.id) for m in chosen)
    for mutant in chosen:
        verdict, seconds, detail = run_one(mutant, args.baseline)
        counts[verdict] += 1
        print(f"{verdict.upper():8} {mutant.id:{width}} {seconds:6.1f}s  {detail}", flush=True)
    print(f"{counts['killed']} killed, {counts['survived']} survived, {counts['error']} errors")
    return 0 if counts["survived"] == counts["error"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
