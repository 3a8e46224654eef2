"""How fast the app feels in a real browser, as ratios against an empty Streamlit page measured in the same run.

    python -m bench.ui_speed [--repeats 5] [--pages bill,compare,tokens,benchmark,batch,scenarios] [--before DIR]

Starts the app (``python -m infercost app``) and an empty Streamlit page on loopback, drives Debian's Chromium through
Playwright, and prints, for each page, the median time from navigation until the page has finished its script run
and drawn every visible chart (on a warm server: each page is opened once before it is timed), then on the bill:
the time from changing "Calls per day" until the headline figure shows the new bill, and until the whole page is
done. Every figure is also given as a ratio to the empty page's render, so machines of different speed compare.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip
EMPTY_PAGE = 'import streamlit as st\n\nst.title("Empty")\n'
TITLES = {"": "Workload and bill", "compare": "Compare APIs and self-hosting", "tokens": "Tokens",
          "benchmark": "Benchmark", "scenarios": "Scenarios", "methodology": "Methodology", "batch": "Batch jobs",
          "prices": "Prices", "models": "Models"}  # fmt: skip
CHARTS = {"": 1, "compare": 1, "tokens": 1}  # charts a page shows when it is done (a run can pause between reruns)
# Done: the script run is over and every chart on screen has drawn its SVG.
DONE_JS = """([title, charts]) => {
    const app = document.querySelector('[data-testid=stApp]');
    if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
    if (![...document.querySelectorAll('h1')].some(h => h.innerText.trim().startsWith(title))) return false;
    const charts_shown = document.querySelectorAll('[data-testid=stPlotlyChart],[data-testid=stVegaLiteChart]');
    const visible = [...charts_shown].filter(e => e.offsetParent);
    return visible.length >= charts && visible.every(e => e.querySelector('.main-svg, canvas, svg.marks'));
}"""
HEADLINE_JS = """(before) => {
    const metric = [...document.querySelectorAll('[data-testid=stMetric]')]
        .find(e => e.innerText.includes('Cheapest API per month'));
    const value = metric && metric.querySelector('[data-testid=stMetricValue]');
    return value && value.innerText !== before;
}"""


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def server(command: list[str], port: int, home: str, cwd: Path = ROOT) -> Iterator[str]:
    import urllib.request

    env = {**os.environ, "INFERCOST_HOME": home}
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2):
                    break
            except OSError:
                time.sleep(0.3)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=20)


def median_s(measure: Callable[[], float], repeats: int) -> tuple[float, float]:
    """(the first, cold measurement: imports and caches of a new server; the median of ``repeats`` warm ones)."""
    cold = measure()  # warm: the server's caches and the browser's script cache
    return cold, statistics.median(measure() for _ in range(repeats))


def render_s(context, url: str, title: str, charts: int = 0) -> float:
    """Seconds from navigation until the page is done (a new tab: a new session on a warm server, scripts cached)."""
    page = context.new_page()
    try:
        start = time.perf_counter()
        page.goto(url)
        page.wait_for_function(DONE_JS, arg=[title, charts], timeout=120_000, polling=20)
        return time.perf_counter() - start
    finally:
        page.close()


def bill_update_s(context, url: str, repeats: int) -> tuple[float, float]:
    """Median seconds from a new "Calls per day" until the headline changes, and until the whole page is done."""
    page = context.new_page()
    page.goto(url)
    page.wait_for_function(DONE_JS, arg=[TITLES[""], 1], timeout=120_000)
    headline, whole = [], []
    box = page.get_by_label("Calls per day")
    for i in range(repeats + 1):
        before = page.get_by_test_id("stMetricValue").first.inner_text()
        box.fill(str(100_000 + 7_919 * (i + 1)))
        start = time.perf_counter()
        box.press("Enter")
        page.wait_for_function(HEADLINE_JS, arg=before, timeout=60_000, polling=10)
        seen = time.perf_counter() - start
        page.wait_for_timeout(50)  # let the run's state reach the page before asking whether it is done
        page.wait_for_function(DONE_JS, arg=[TITLES[""], 1], timeout=60_000, polling=10)
        done = time.perf_counter() - start
        if i:  # the first change warms the caches
            headline.append(seen)
            whole.append(done)
    page.close()
    return statistics.median(headline), statistics.median(whole)


def interleaved_s(measures: dict[str, Callable[[], float]], repeats: int) -> dict[str, tuple[float, float]]:
    """``median_s`` of several apps at once, one of each in turn, so a busy machine slows them all alike."""
    cold = {label: measure() for label, measure in measures.items()}
    runs: dict[str, list[float]] = {label: [] for label in measures}
    for _ in range(repeats):
        for label, measure in measures.items():
            runs[label].append(measure())
    return {label: (cold[label], statistics.median(runs[label])) for label in measures}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--pages", default="bill,compare,tokens,benchmark,batch,scenarios")
    parser.add_argument("--before", type=Path, default=None,
                        help="another checkout of infercost (e.g. git archive main | tar -x -C DIR): its app is "
                             "measured in the same run, turn about with this one")  # fmt: skip
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    trees = {"this tree": ROOT, **({"before": args.before.resolve()} if args.before else {})}
    with tempfile.TemporaryDirectory() as home, contextlib.ExitStack() as stack:
        empty_script = Path(home) / "empty_page.py"
        empty_script.write_text(EMPTY_PAGE, encoding="utf-8")
        empty_port = free_port()
        empty = [sys.executable, "-m", "streamlit", "run", str(empty_script), "--server.port", str(empty_port),
                 "--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false"]
        urls = {}
        for label, tree in trees.items():
            port = free_port()
            app = [sys.executable, "-m", "infercost", "app", "--port", str(port)]
            urls[label] = stack.enter_context(server(app, port, tempfile.mkdtemp(dir=home), cwd=tree))
        empty_url = stack.enter_context(server(empty, empty_port, home))
        playwright = stack.enter_context(sync_playwright())
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        _, baseline = median_s(lambda: render_s(context, empty_url, "Empty"), args.repeats)
        print(f"empty page: {baseline:.2f} s (median of {args.repeats}; the baseline)")
        for number, name in enumerate(args.pages.split(",")):
            path = "" if name == "bill" else name
            timed = interleaved_s({label: lambda url=url, path=path: render_s(
                context, f"{url}/{path}", TITLES[path], CHARTS.get(path, 0)) for label, url in urls.items()},
                args.repeats)  # fmt: skip
            for label, (cold, seconds) in timed.items():
                if number == 0:  # what the first person after a restart waits for: imports, migrations, caches
                    print(f"[{label}] {name} page, first after the server started: {cold:.2f} s = "
                          f"{cold / baseline:.1f}× the empty page")
                print(f"[{label}] {name} page, first render: {seconds:.2f} s = {seconds / baseline:.1f}× the empty "
                      "page")
        for label, url in urls.items():
            headline, whole = bill_update_s(context, url, args.repeats)
            print(f"[{label}] bill, after an input change: headline {headline * 1000:.0f} ms = "
                  f"{headline / baseline:.2f}×, whole page {whole * 1000:.0f} ms = {whole / baseline:.2f}× the empty "
                  "page")
        browser.close()


if __name__ == "__main__":
    main()
