"""Credentials travel with requests, never with what is stored.

A base URL may carry them (``http://user:password@host/v1``): they are taken out of the URL once, when a benchmark's
or a batch job's settings are made; the URL that is stored, shown and put in the ``Host`` header has none. A benchmark
sends them as HTTP Basic credentials; a batch job refuses them (it is resumed from what is stored, often by another
process, which could not send them). An API key stays in the environment and is read when a request needs it. Neither
is written anywhere, so a resumed benchmark sends what the environment holds then, and no URL credentials.
"""

from __future__ import annotations

import base64
import os
from urllib.parse import unquote, urlsplit, urlunsplit


def split_userinfo(url: str | None) -> tuple[str | None, str | None]:
    """``http://user:pw@host/v1`` to (``http://host/v1``, ``"Basic dXNlcjpwdw=="``); a URL without userinfo comes
    back unchanged, with None."""
    if not url:
        return url, None
    parts = urlsplit(url)
    userinfo, at, host = parts.netloc.rpartition("@")
    if not at:
        return url, None
    user, _, password = userinfo.partition(":")
    token = base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode("ascii")
    return urlunsplit(parts._replace(netloc=host)), f"Basic {token}"


class Credentials:
    """For a settings dataclass with ``base_url`` and ``api_key_env``: the URL loses its userinfo when the settings
    are made, and ``auth_headers()`` gives what each request sends. Kept off the dataclass fields, so ``asdict`` (what
    is stored) never sees them."""

    base_url: str | None
    api_key_env: str | None

    def __post_init__(self) -> None:
        self.base_url, self._basic = split_userinfo(self.base_url)

    def api_key(self) -> str | None:
        """The key, read from the environment when needed: never kept in anything that is stored."""
        return (os.environ.get(self.api_key_env) or None) if self.api_key_env else None

    def auth_headers(self) -> dict[str, str]:
        """The URL's credentials as HTTP Basic where it had some, else the API key as a bearer token, else none."""
        if self._basic:
            return {"Authorization": self._basic}
        key = self.api_key()
        return {"Authorization": f"Bearer {key}"} if key else {}

    def secrets(self) -> list[str]:
        """What ``store.redact.scrub`` must replace wherever a server echoes it back."""
        found = [self.api_key() or ""]
        if self._basic:
            token = self._basic.removeprefix("Basic ")
            found += [token, base64.b64decode(token).decode().partition(":")[2]]
        return found
