"""Secrets out of everything stored or shown: a server may echo the Authorization header into an error body or a
header (``Server``), and from there it would reach ``requests.error``, ``runs.engine`` and ``runs show --json``.

``scrub`` replaces the exact secrets it is given (the API key this process sent) and anything shaped like a
credential: an ``Authorization`` scheme with its value, and the prefixes of well-known key formats. Stored rows are
scrubbed once, when written; rows written before this existed are scrubbed by shape when read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

REDACTED = "[redacted]"
_CREDENTIALS = re.compile(
    r"(?i)\b(bearer\s+|(?:api[_-]?key|access[_-]?token|token)\s*[:=]\s*)"  # the scheme we send, a key=value
    r"()[A-Za-z0-9._~+/=\-]{8,}"
    r"|\b(?:sk-|sk_|hf_|gsk_|xai-|AIza)[A-Za-z0-9_\-]{16,}"  # OpenAI, Hugging Face, Groq, xAI, Google key shapes
)


def _credential(match: re.Match) -> str:
    return f"{match.group(1)}{match.group(2)}{REDACTED}" if match.group(1) else REDACTED


def scrub(value: Any, secrets: Iterable[str] = ()) -> Any:
    """``value`` (a string, or dicts and lists of them) with each secret and each credential-shaped part replaced."""
    if isinstance(value, str):
        for secret in secrets:
            if secret and len(secret) >= 4:  # a one-letter "key" would redact every word
                value = value.replace(secret, REDACTED)
        return _CREDENTIALS.sub(_credential, value)
    if isinstance(value, dict):
        return {key: scrub(item, secrets) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [scrub(item, secrets) for item in value]
    return value
