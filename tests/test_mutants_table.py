"""The mutation table of ``bench/mutants.py`` cannot drift from the code silently: every
snippet still occurs exactly once in its file, every replacement changes it, and every
test it names exists. (The mutants themselves are run by hand: ``python -m bench.mutants
--all``; they take minutes, not CI time.)"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from bench.mutants import MUTANTS, ROOT, Mutant, mutate, selection_file


def test_the_table_has_the_reviewed_nine_and_more() -> None:
    ids = [m.id for m in MUTANTS]
    assert len(ids) == len(set(ids)) and len(ids) >= 21
    reviewed = {
        "jaccard-threshold",
        "jaccard-inclusive",
        "cap-replace",
        "cap-restore",
        "cap-refresh",
        "review-lease",
        "promotion-fifo",
        "derived-ratio",
        "lint-midscan-breaker",
    }
    assert reviewed <= set(ids)


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.id)
def test_each_snippet_occurs_once_and_its_mutant_still_parses(mutant: Mutant) -> None:
    path = ROOT / mutant.file
    assert path.is_file(), mutant.file
    source = path.read_text(encoding="utf-8")
    assert source.count(mutant.snippet) == 1, f"{mutant.id}: snippet moved or duplicated"
    assert mutant.replacement != mutant.snippet and mutant.description
    mutated = mutate(source, mutant)
    assert mutated != source
    ast.parse(mutated, filename=mutant.file)  # a mutant that is a syntax error tests nothing


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.id)
def test_each_selected_test_exists(mutant: Mutant) -> None:
    assert mutant.tests, f"{mutant.id} names no test"
    for selection in mutant.tests:
        path = ROOT / selection_file(selection)
        assert path.is_file() and path.parent == ROOT / "tests", selection
        if "::" in selection:
            name = selection.split("::")[1].split("[")[0]
            assert _defines(path, name), f"{selection}: no such test"


def _defines(path: Path, name: str) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(
        isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name
        for node in ast.walk(tree)
    )


def test_a_snippet_that_is_not_unique_is_refused() -> None:
    twice = Mutant("x", "f.py", "a", "b", "d", ("tests/test_x.py",))
    with pytest.raises(ValueError, match="2 times"):
        mutate("a a", twice)
    with pytest.raises(ValueError, match="0 times"):
        mutate("c", twice)
