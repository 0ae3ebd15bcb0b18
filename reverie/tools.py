"""The three in-session tools: their OpenAI function schemas and the validation of a call.

Validation is strict and complete before anything is written: a call either becomes a
typed command, or a :class:`~reverie.errors.ToolInputError` whose message the agent sees.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final

from reverie.commands import Command, MemoryCommand, SkillCommand, TopicCommand
from reverie.config import WriterConfig
from reverie.errors import ToolInputError, check_text, quoted
from reverie.names import check_name
from reverie.rules.directives import aimed_at_agent, standing_instruction
from reverie.rules.injection import framing_problem

MEMORY_TARGETS: Final = ("memory", "user", "soul", "user_settings", "agent_profile")
KEYED_TARGETS: Final = frozenset({"user_settings", "agent_profile"})
SNAPSHOT_MARK: Final = "<reverie-snapshot"
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_MARK = re.compile(r"⟦×\d+⟧")
_KEYED = re.compile(r"^\s*(?P<key>[A-Za-z][\w .-]{0,40}?)\s*:\s*(?P<value>\S.*)$", re.S)


def schemas(writer: WriterConfig) -> list[dict[str, Any]]:
    """The tools as OpenAI function schemas (``tools=[...]`` of a chat-completions call)."""
    return [_memory_schema(writer), _topic_schema(writer), _skill_schema(writer)]


def _memory_schema(writer: WriterConfig) -> dict[str, Any]:
    """The memory tool: curated entries injected into every future session."""
    limit = writer.max_content_chars
    return _function(
        "memory",
        "Curated memory injected into every future session. target 'memory' holds "
        "environment facts and lessons, 'user' the user's preferences, 'soul' your reply "
        "style, 'user_settings' the user's name/timezone and 'agent_profile' your identity "
        "(both as 'key: value'). Specific facts (addresses, hashes, thresholds) belong in "
        "the topic tool instead. Stores are capped; a full store refuses the write.",
        {
            "action": {"type": "string", "enum": ["add", "replace", "remove", "reinforce"]},
            "target": {"type": "string", "enum": list(MEMORY_TARGETS)},
            "content": {
                "type": "string",
                "maxLength": limit,
                "description": "The entry text (add, replace).",
            },
            "old_text": {
                "type": "string",
                "maxLength": limit,
                "description": "A unique substring of the entry to act on "
                "(replace, remove, reinforce).",
            },
        },
        ["action", "target"],
    )


def _topic_schema(writer: WriterConfig) -> dict[str, Any]:
    """The topic tool: notebooks of specific facts, corrections superseding."""
    limit = writer.max_content_chars
    return _function(
        "topic",
        "Topic notebooks for specific facts (at most "
        f"{writer.max_topics} topics). 'save' adds a fact; a fact that corrects an "
        "earlier one about the same subject supersedes it (the old one is kept in history). "
        "'read' returns a topic's live facts, 'list' the topics.",
        {
            "action": {"type": "string", "enum": ["save", "read", "list"]},
            "topic": {
                "type": "string",
                "maxLength": writer.max_name_chars,
                "description": "A lower-case slug such as 'deploy' or 'billing-api'.",
            },
            "content": {
                "type": "string",
                "maxLength": limit,
                "description": "The fact to save (save).",
            },
        },
        ["action"],
    )


def _skill_schema(writer: WriterConfig) -> dict[str, Any]:
    """The skill_manage tool: create or patch a reusable workflow."""
    return _function(
        "skill_manage",
        "Create or patch a reusable workflow (a skill). 'create' takes the SKILL.md body "
        "as content; 'patch' replaces old_text (a unique substring) with content.",
        {
            "action": {"type": "string", "enum": ["create", "patch"]},
            "name": {"type": "string", "maxLength": writer.max_name_chars},
            "content": {"type": "string", "maxLength": writer.max_skill_chars},
            "old_text": {"type": "string", "maxLength": writer.max_skill_chars},
        },
        ["action", "name", "content"],
    )


def _function(
    name: str, description: str, properties: dict[str, Any], required: list[str]
) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            },
        },
    }


def parse_call(tool: object, arguments: object, writer: WriterConfig) -> Command:
    """Validate one tool call completely; raise ToolInputError with the agent-facing reason."""
    if not isinstance(tool, str) or tool not in {"memory", "topic", "skill_manage"}:
        raise ToolInputError(f"unknown tool {quoted(tool)}: use memory, topic or skill_manage")
    args = _arguments(arguments)
    if tool == "memory":
        return _memory(args, writer)
    if tool == "topic":
        return _topic(args, writer)
    return _skill(args, writer)


def _arguments(arguments: object) -> Mapping[str, Any]:
    if isinstance(arguments, str | bytes):
        try:
            arguments = json.loads(arguments)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ToolInputError(f"arguments are not valid JSON: {quoted(str(exc))}") from exc
    if not isinstance(arguments, Mapping):
        raise ToolInputError("arguments must be a JSON object")
    for key in arguments:
        if not isinstance(key, str):
            raise ToolInputError("argument names must be strings")
        check_text(f"argument name {quoted(key)}", key, ToolInputError)
    return arguments


def _allowed(args: Mapping[str, Any], allowed: set[str]) -> None:
    extra = sorted(set(args) - allowed)
    if extra:
        named = ", ".join(quoted(key, 40) for key in extra[:5])
        more = f" and {len(extra) - 5} more" if len(extra) > 5 else ""
        raise ToolInputError(f"unexpected argument(s) [{named}]{more}; allowed: {sorted(allowed)}")


def _action(args: Mapping[str, Any], choices: tuple[str, ...]) -> str:
    action = args.get("action")
    if not isinstance(action, str) or action not in choices:
        raise ToolInputError(f"action must be one of {list(choices)}, got {quoted(action)}")
    return action


def _text(args: Mapping[str, Any], key: str, limit: int, *, required: bool) -> str | None:
    value = args.get(key)
    if value is None:
        if required:
            raise ToolInputError(f"'{key}' is required for this action")
        return None
    if not isinstance(value, str):
        raise ToolInputError(f"'{key}' must be a string, got {type(value).__name__}")
    if not value.strip():
        raise ToolInputError(f"'{key}' must not be empty")
    if len(value) > limit:
        raise ToolInputError(f"'{key}' is {len(value)} chars; the limit is {limit}")
    if _CONTROL.search(value):
        raise ToolInputError(f"'{key}' contains NUL or control characters")
    check_text(f"'{key}'", value, ToolInputError)
    return value.strip()


def _content(
    args: Mapping[str, Any], limit: int, *, required: bool, document: bool = False
) -> str | None:
    content = _text(args, "content", limit, required=required)
    if content is not None:
        if _MARK.search(content):
            raise ToolInputError(
                "content must not carry the reinforcement mark ⟦×N⟧; use action 'reinforce'"
            )
        if SNAPSHOT_MARK in content:
            raise ToolInputError("content is reverie's own injected snapshot; it is not saved")
        forged = framing_problem(content, document=document)
        if forged is not None:
            raise ToolInputError(
                f"content could forge the injected snapshot's framing: {forged}; nothing was "
                "written — save the knowledge as plain statements without that markup"
            )
    return content


def _slug(args: Mapping[str, Any], key: str, writer: WriterConfig) -> str:
    limit = writer.max_name_chars
    return check_name(f"'{key}'", args.get(key), slug=True, max_chars=limit, error=ToolInputError)


def _memory(args: Mapping[str, Any], writer: WriterConfig) -> MemoryCommand:
    _allowed(args, {"action", "target", "content", "old_text"})
    action = _action(args, ("add", "replace", "remove", "reinforce"))
    target = args.get("target")
    if not isinstance(target, str) or target not in MEMORY_TARGETS:
        raise ToolInputError(f"target must be one of {list(MEMORY_TARGETS)}, got {quoted(target)}")
    limit = writer.max_content_chars
    content = _content(args, limit, required=action in {"add", "replace"})
    if action in {"remove", "reinforce"} and "content" in args:
        raise ToolInputError(f"'{action}' takes old_text, not content")
    old_text = _text(args, "old_text", limit, required=action != "add")
    if action == "add" and old_text is not None:
        raise ToolInputError("'add' takes content only; use 'replace' to change an entry")
    if old_text is not None:
        old_text = _MARK.sub("", old_text).strip()
    if content is not None and target in KEYED_TARGETS and not _KEYED.match(content):
        raise ToolInputError(f"{target} entries are 'key: value', e.g. 'timezone: Europe/Oslo'")
    _not_an_instruction(content, target)
    return MemoryCommand(action, target, content, old_text)


def _not_an_instruction(content: str | None, target: str) -> None:
    """MEMORY/USER/SOUL are injected every turn and topic facts are shown in the snapshot's
    topic lines: an instruction that overrides the agent's rules, discloses secrets,
    changes its identity, lifts its limits or hands it to another master would steer it.
    SOUL.md says how to reply, so an order to act is refused there too."""
    if content is None:
        return
    aimed = aimed_at_agent(content, "agent")
    if aimed is None and target == "soul" and (order := standing_instruction(content)):
        raise ToolInputError(
            f"content is an order to act, not a reply style ({order}); nothing was written — "
            "soul holds how to reply (language, length, tone, format, how to address the "
            "user); save a lesson about the work to memory instead"
        )
    if aimed is not None:
        holds = (
            "a topic holds facts and how-tos"
            if target == "topic"
            else f"{target} holds facts and the user's preferences"
        )
        raise ToolInputError(
            f"content is an instruction aimed at the agent ({aimed}); nothing was written — "
            f"{holds}, never text that overrides the agent's instructions, changes its "
            "identity, claims authority over it, discloses secrets, sends data out, runs fetched "
            "code or drops a safeguard"
        )


def _topic(args: Mapping[str, Any], writer: WriterConfig) -> TopicCommand:
    _allowed(args, {"action", "topic", "content"})
    action = _action(args, ("save", "read", "list"))
    if action == "list":
        _allowed(args, {"action"})
        return TopicCommand(action, None, None)
    topic = _slug(args, "topic", writer)
    if action == "read":
        _allowed(args, {"action", "topic"})
        return TopicCommand(action, topic, None)
    content = _content(args, writer.max_content_chars, required=True)
    _not_an_instruction(content, "topic")
    return TopicCommand(action, topic, content)


def _skill(args: Mapping[str, Any], writer: WriterConfig) -> SkillCommand:
    _allowed(args, {"action", "name", "content", "old_text"})
    action = _action(args, ("create", "patch"))
    name = _slug(args, "name", writer)
    content = _content(args, writer.max_skill_chars, required=True, document=True)
    assert content is not None
    old_text = _text(args, "old_text", writer.max_skill_chars, required=action == "patch")
    if action == "create":
        if old_text is not None:
            raise ToolInputError("'create' takes content only; use 'patch' to change a skill")
        if content.startswith("---"):
            raise ToolInputError(
                "content is the SKILL.md body; reverie writes the front matter itself"
            )
    return SkillCommand(action, name, content, old_text)


def keyed(content: str) -> tuple[str, str]:
    """Split a 'key: value' entry of user_settings / agent_profile."""
    found = _KEYED.match(content)
    if not found:
        raise ToolInputError("expected 'key: value'")
    return found.group("key").strip().lower(), found.group("value").strip()
