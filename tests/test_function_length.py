"""The code bar "no function over 60 lines", held by CI rather than by review."""

from __future__ import annotations

import ast
from pathlib import Path

import reverie

MAX_LINES = 60
PACKAGE = Path(reverie.__file__).resolve().parent


def too_long(source: str, filename: str = "<source>") -> list[str]:
    """Every function or method (nested ones too) whose ``def`` spans more than
    ``MAX_LINES`` lines, decorators excluded, as ``file:line name (n lines)``."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            assert node.end_lineno is not None
            lines = node.end_lineno - node.lineno + 1
            if lines > MAX_LINES:
                found.append(f"{filename}:{node.lineno} {node.name} ({lines} lines)")
    return found


def _function(name: str, lines: int, *, is_async: bool = False, decorated: bool = False) -> str:
    """Source of a function whose ``def`` spans exactly ``lines`` lines."""
    head = ("@staticmethod\n" * 3 if decorated else "") + (
        f"{'async ' if is_async else ''}def {name}() -> None:\n"
    )
    return head + "    x = 0\n" * (lines - 1)


def test_no_function_in_reverie_is_over_60_lines() -> None:
    """Invariant: every function and method under reverie/ is at most 60 lines long."""
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 20  # the walk found the package, not an empty directory
    offenders = [
        hit
        for path in files
        for hit in too_long(path.read_text(encoding="utf-8"), str(path.relative_to(PACKAGE)))
    ]
    assert not offenders, "functions over 60 lines:\n" + "\n".join(offenders)


def test_the_limit_is_60_lines_inclusive() -> None:
    """Invariant: 60 lines passes and 61 fails, for functions, coroutines and methods."""
    assert too_long(_function("fits", 60)) == []
    assert too_long(_function("over", 61)) == ["<source>:1 over (61 lines)"]
    assert too_long(_function("slow", 61, is_async=True)) == ["<source>:1 slow (61 lines)"]
    method = "class Chain:\n" + "".join(
        "    " + line + "\n" for line in _function("grow", 61).splitlines()
    )
    assert too_long(method) == ["<source>:2 grow (61 lines)"]


def test_decorators_do_not_count_and_nested_functions_do() -> None:
    """Invariant: a decorated 60-line function fits; a long closure is found on its own."""
    assert too_long(_function("fits", 60, decorated=True)) == []
    inner = "".join("    " + line + "\n" for line in _function("inner", 61).splitlines())
    outer = "def outer() -> None:\n" + inner
    assert too_long(outer) == ["<source>:1 outer (62 lines)", "<source>:2 inner (61 lines)"]
