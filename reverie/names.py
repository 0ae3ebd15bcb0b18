"""Names of namespaces, sessions, topics and skills: one validator for all four.

A namespace becomes a folder beside ``reverie.db``, a topic or a skill a folder inside a
namespace, so a name must never collide with the home's own files, with a device name
Windows reserves, or with an existing name that differs only in case (one folder on a
case-insensitive file system); a name must also read the same as it is stored, so no
surrounding whitespace and no control characters (``fullmatch``, never ``$``, which lets a
trailing newline through).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from reverie.errors import InputError, quoted

MAX_NAME_CHARS: Final = 64
DATABASE_FILE: Final = "reverie.db"
# What a home holds besides namespaces: the database and its journal, WAL and shared
# memory files (all start with ``reverie.db``), and the folder names a namespace uses.
HOME_FOLDERS: Final = frozenset({"logs", "topics", "skills"})
_NAME: Final = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9_.-]*[A-Za-z0-9])?")
_SLUG: Final = re.compile(r"[a-z0-9](?:[a-z0-9_-]*[a-z0-9])?")
# CON, PRN, AUX, NUL, COM1-9, LPT1-9, with or without an extension, in any case.
_DEVICE: Final = re.compile(r"(?:con|prn|aux|nul|com[1-9]|lpt[1-9])(?:\..*)?", re.IGNORECASE)


def check_name(
    kind: str,
    value: object,
    *,
    slug: bool = False,
    home_level: bool = False,
    max_chars: int = MAX_NAME_CHARS,
    error: type[InputError] = InputError,
) -> str:
    """``value`` if it is a safe name, else ``error`` saying why. ``slug`` asks for the
    lower-case form (topics, skills); ``home_level`` names sit beside the home's files."""
    if not isinstance(value, str):
        raise error(f"{kind} is required and must be a string")
    shape = _SLUG if slug else _NAME
    if len(value) > max_chars or shape.fullmatch(value) is None or ".." in value:
        what = (
            "a lower-case slug of letters, digits, '-' or '_'"
            if slug
            else "letters, digits, '.', '_' or '-' (not starting or ending with a separator)"
        )
        raise error(f"{kind} must be {what} (at most {max_chars} chars), got {quoted(value, 80)}")
    reason = reserved(value, home_level=home_level)
    if reason is not None:
        raise error(f"{kind} {quoted(value)} is reserved ({reason}); choose another name")
    return value


def reserved(name: str, *, home_level: bool) -> str | None:
    """Why ``name`` may not be used as a folder name, or None."""
    folded = name.casefold()
    if _DEVICE.fullmatch(folded):
        return "a device name on Windows"
    if home_level and folded.startswith(DATABASE_FILE):
        return "the home's database files are named reverie.db*"
    if home_level and folded in HOME_FOLDERS:
        return f"{folded!r} is a folder name the home itself uses"
    return None


class Names:
    """The namespace names in use in one home, so a new name that differs from one of them
    only in case is refused; names already stored are always accepted as they are."""

    def __init__(self) -> None:
        self._exact: set[str] = set()
        self._folded: dict[str, str] = {}

    def add(self, names: Iterable[str]) -> None:
        for name in names:
            self._exact.add(name)
            self._folded.setdefault(name.casefold(), name)

    def claim(self, kind: str, name: str, error: type[InputError] = InputError) -> str:
        """``name``, now in use; refused when an existing name differs from it only in case."""
        if name not in self._exact:
            twin = self._folded.get(name.casefold())
            if twin is not None:
                raise error(
                    f"{kind} {quoted(name)} differs only in case from the existing "
                    f"{quoted(twin)} (one folder on a case-insensitive file system); "
                    f"use {quoted(twin)}"
                )
            self.add([name])
        return name
