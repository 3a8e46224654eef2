"""The one exception type that users see: it names the field and the reason."""

from __future__ import annotations


class InputError(ValueError):
    """Bad input a person can fix. ``str()`` is one line: ``field: reason``."""

    def __init__(self, field: str, reason: str) -> None:
        self.field = field
        self.reason = reason
        super().__init__(f"{field}: {reason}" if field else reason)


def _echoable(value: object) -> bool:
    """Numbers and short strings help a person find the typo; anything that may be a secret is never repeated."""
    if isinstance(value, bool | int | float):
        return True
    return isinstance(value, str) and len(value) <= 40 and not value.startswith(SECRET_PREFIXES)


SECRET_PREFIXES = ("sk-", "hf_", "Bearer ", "key-", "gsk_", "xai-")


def from_pydantic(error: object, prefix: str = "") -> InputError:
    """Turn a pydantic ``ValidationError`` into an InputError naming the first bad field and the value given."""
    first = error.errors()[0]  # type: ignore[attr-defined]
    loc = ".".join(str(part) for part in first.get("loc", ()))
    field = ".".join(part for part in (prefix, loc) if part) or error.title.lower()  # type: ignore[attr-defined]
    message = first.get("msg", "invalid value").removeprefix("Value error, ")
    given = first.get("input")
    if loc and _echoable(given) and first.get("type") not in ("missing", "extra_forbidden"):
        message += f" (got {given!r})"
    count = error.error_count()  # type: ignore[attr-defined]
    if count > 1:
        message += f" (and {count - 1} more problem{'s' if count > 2 else ''})"
    return InputError(field, message)
