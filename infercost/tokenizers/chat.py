"""Chat-format records: ``{"messages": [{"role": ..., "content": ...}]}``, the shape most LLM logs are kept in.

A conversation's text is its messages' contents joined by newlines, in order: ``content`` is a string, or a list of
parts of which the text parts (``{"type": "text", "text": ...}`` or plain strings) are kept and images, audio and
tool calls are not text. This counts what the messages say, not the chat template a model wraps around them (a few
tokens per message, which differs by model and is not public for most APIs).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

# Field names that usually hold what is sent to a model, best first; the field picker offers these first.
PROMPT_LIKE_FIELDS = ("messages", "prompt", "input", "inputs", "question", "query", "instruction", "text", "content",
                      "request", "user", "conversation", "conversations")  # fmt: skip


def _part_text(part: Any) -> str | None:
    if isinstance(part, str):
        return part
    if isinstance(part, dict) and part.get("type", "text") == "text" and isinstance(part.get("text"), str):
        return part["text"]
    return None


def _message_text(message: Any) -> str | None:
    """A message's text; None where it is not a chat message (no role, or content that is neither text nor parts)."""
    if not isinstance(message, dict) or not isinstance(message.get("role"), str):
        return None
    content = message.get("content")
    if content is None:  # an assistant turn that only calls tools says nothing
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(text for text in map(_part_text, content) if text is not None)
    return None


def chat_text(value: Any) -> str | None:
    """The conversation's text (see the module docstring), or None when ``value`` is not a list of chat messages."""
    if not isinstance(value, list) or not value:
        return None
    texts = [_message_text(message) for message in value]
    if any(text is None for text in texts):
        return None
    return "\n".join(text for text in texts if text)


def chat_roles(conversations: Iterable[Any]) -> list[str]:
    """The roles that speak in these conversations, in order of first appearance (what a count includes)."""
    roles: dict[str, None] = {}
    for conversation in conversations:
        if chat_text(conversation) is not None:
            roles.update(dict.fromkeys(message["role"] for message in conversation))
    return list(roles)


def prompt_like_first(fields: Sequence[str]) -> list[str]:
    """The fields with prompt-like names first (in ``PROMPT_LIKE_FIELDS`` order), then the rest as they came."""
    rank = {name: i for i, name in enumerate(PROMPT_LIKE_FIELDS)}
    liked = sorted((f for f in fields if f.lower() in rank), key=lambda f: rank[f.lower()])
    return [*liked, *(f for f in fields if f.lower() not in rank)]


def roles_in_jsonl(lines: Iterable[bytes | str], field: str, *, limit: int = 1000) -> list[str]:
    """The chat roles under ``field`` in the first ``limit`` JSONL lines ([] when the field is not chat format)."""
    conversations = []
    for _, line in zip(range(limit), lines, strict=False):
        try:
            record = json.loads(line)
        except ValueError:  # malformed lines are the corpus reader's to report
            continue
        if isinstance(record, dict):
            conversations.append(record.get(field))
    return chat_roles(conversations)
