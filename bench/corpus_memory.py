"""Peak memory of ``tokens --field`` on a corpus that is one huge line, against a tiny corpus in the same run.

A 300 MB one-line CSV or JSONL record is over the per-record limit: it must be skipped while read in pieces, not
held whole. Usage: python bench/corpus_memory.py [MEGABYTES]   (default 300; writes its files under a temp folder)
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def peak_rss_mib(path: Path) -> float:
    """Run the CLI as a child process and return its peak resident memory: VmHWM, which (unlike ru_maxrss) starts
    afresh at exec, so this script's own memory does not count."""
    code = ("import re, sys; from infercost.cli import main; main(sys.argv[1:]); "
            "print(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code, "tokens", "--tokenizer", "o200k_base", "--field", "t",
                           str(path), "--json"], cwd=ROOT, capture_output=True, text=True, check=True)
    return int(done.stderr.strip().splitlines()[-1]) / 1024


def write_corpora(folder: Path, megabytes: int) -> dict[str, Path]:
    big = b"word " * (megabytes * 2**20 // 5)
    files = {
        "tiny.csv": b"id,t\n1,hello\n",
        "tiny.jsonl": b'{"t": "hello"}\n',
        "one-line.csv": b"id,t\n1,hello\n2,\"" + big + b"\"\n3,bye\n",
        "one-line.jsonl": b'{"t": "hello"}\n{"t": "' + big + b'"}\n{"t": "bye"}\n',
    }
    paths = {}
    for name, data in files.items():  # each file written, then dropped: the parent holds little while children run
        paths[name] = folder / name
        paths[name].write_bytes(data)
    return paths


def main() -> None:
    megabytes = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    with tempfile.TemporaryDirectory() as folder:
        paths = write_corpora(Path(folder), megabytes)
        peaks = {name: peak_rss_mib(path) for name, path in paths.items()}
    for kind in ("csv", "jsonl"):
        tiny, big = peaks[f"tiny.{kind}"], peaks[f"one-line.{kind}"]
        print(f"{kind}: tiny corpus {tiny:.0f} MiB, {megabytes} MB record {big:.0f} MiB peak RSS, "
              f"ratio {big / tiny:.2f}")


if __name__ == "__main__":
    main()
