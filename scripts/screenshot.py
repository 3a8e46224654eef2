"""Screenshots of the app's pages for the README: starts the app on loopback, drives Debian's Chromium.

    python scripts/screenshot.py [PAGE_PATH ...]   # e.g. "" (the bill), "prices", "compare"
    python scripts/screenshot.py "compare#Same weights: API or self-host"   # a page's tab, shot from the tab down
"""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip


def main(pages: list[str]) -> None:
    port = 8599
    app = subprocess.Popen([sys.executable, "-m", "infercost", "app", "--port", str(port)], cwd=ROOT,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1)
                break
            except OSError:
                time.sleep(0.3)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            tab = browser.new_page(viewport={"width": 1400, "height": 1100})
            for spec in pages:
                name, _, tab_name = spec.partition("#")
                tab.goto(f"http://127.0.0.1:{port}/{name}")
                tab.wait_for_timeout(6000)
                if tab_name:  # the app scrolls inside its main block: the shot starts at the tab's strip
                    tab.get_by_role("tab", name=tab_name).click()
                    tab.wait_for_timeout(12000)
                    tab.get_by_role("tab", name=tab_name).evaluate("e => e.scrollIntoView({block: 'start'})")
                    tab.wait_for_timeout(500)
                stem = (tab_name.split(":")[0] if tab_name else name or "bill").lower().replace(" ", "-")
                out = ROOT / "docs" / f"screenshot-{stem}.png"
                tab.screenshot(path=str(out), full_page=not tab_name)
                print(out)
            browser.close()
    finally:
        app.terminate()


if __name__ == "__main__":
    main(sys.argv[1:] or [""])
