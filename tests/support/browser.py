"""Waiting on the app in a real browser the way a person would: until the run an action started has finished."""

from __future__ import annotations

SETTLE_MS = 120_000  # a busy 2-core CI machine can take this long for a page's first run


def settle(page, timeout_ms: int = SETTLE_MS) -> None:
    """Wait until the script run that the last action started has finished. Streamlit starts the run a moment
    after the input event (a short pause first), then marks the app ``notRunning`` when it ends."""
    page.wait_for_timeout(400)
    page.wait_for_function("() => document.querySelector('[data-testid=stApp]')"
                           ".getAttribute('data-test-script-state') === 'notRunning'", timeout=timeout_ms)
