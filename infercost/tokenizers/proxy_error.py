"""How far a proxy tokenizer's count may be from the model's own, for the bill band.

A proxy (o200k_base for Claude, Gemini and Grok; Qwen2.5 for hosted Qwen models ...) stands in for a tokenizer
that is not public, so its error cannot be measured against that tokenizer. What can be measured is how much public
vocabularies disagree on the same text, and the private one is taken to disagree with the proxy as another public
one does: the relative differences ``other / proxy - 1`` over the other bundled tokenizers give the error's p10, p50
and p90. The text is the person's own corpus where several tokenizers counted it (the Tokens page), else the bundled
passage in the workload's language (``samples/``, English when none is named). The passage counts are stored in
``proxy_counts.json`` so the app loads no tokenizer for them:

    python -m infercost.tokenizers.proxy_error --write   # recount (tests/tokenizers check the file is current)
"""

from __future__ import annotations

import argparse
import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

COUNTS_FILE = Path(__file__).with_name("proxy_counts.json")
MIN_OTHERS = 2  # fewer other tokenizers than this say nothing about a spread


@dataclass(frozen=True)
class ProxyError:
    """The relative error of a proxy's counts as quantiles, and what they were measured on, in words."""

    quantiles: dict[str, float]  # p10, p50, p90 of own / proxy - 1
    basis: str


@functools.cache
def passage_counts() -> dict[str, dict[str, int]]:
    """Language -> tokenizer -> tokens of the bundled passage (the stored file)."""
    return json.loads(COUNTS_FILE.read_text(encoding="utf-8"))["counts"]


def count_passages() -> dict[str, dict[str, int]]:
    """The counts recounted now with every bundled tokenizer whose data is installed."""
    from infercost.tokenizers.languages import LANGUAGES, sample_tokens
    from infercost.tokenizers.registry import list_tokenizers

    ids = [info.id for info in list_tokenizers() if info.available]
    return {language: {tid: sample_tokens(tid, language) for tid in ids} for language in LANGUAGES}


def _spread(proxy: float, others: list[float]) -> dict[str, float]:
    p10, p50, p90 = np.percentile(np.asarray(others, dtype=float) / proxy - 1, [10, 50, 90])
    return {"p10": float(p10), "p50": float(p50), "p90": float(p90)}


def proxy_error(tokenizer: str, language: str | None = None,
                corpus_means: Mapping[str, float] | None = None) -> ProxyError | None:  # fmt: skip
    """The error of counting with ``tokenizer`` in place of a private one: from the corpus's own means per tokenizer
    where the proxy and at least MIN_OTHERS others counted it, else the bundled passage; None where neither has
    the proxy's count."""
    means = {tid: float(n) for tid, n in (corpus_means or {}).items() if n and n > 0}
    if tokenizer in means and len(means) > MIN_OTHERS:
        others = [n for tid, n in means.items() if tid != tokenizer]
        return ProxyError(_spread(means[tokenizer], others),
                          f"your corpus as {len(others)} other tokenizers count it against {tokenizer}")  # fmt: skip
    language = language or "en"
    counts = passage_counts().get(language, {})
    others = [n for tid, n in counts.items() if tid != tokenizer]
    if tokenizer not in counts or len(others) < MIN_OTHERS:
        return None
    return ProxyError(_spread(counts[tokenizer], others),
                      f"the bundled {language} passage as {len(others)} other tokenizers count it against "
                      f"{tokenizer}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description="Recount the bundled passages with every bundled tokenizer.")
    parser.add_argument("--write", action="store_true", help=f"write {COUNTS_FILE.name} (else print the counts)")
    args = parser.parse_args()
    document = {"about": "tokens of infercost/tokenizers/samples/<language>.txt (NFC) per bundled tokenizer, "
                         "written by python -m infercost.tokenizers.proxy_error --write",
                "counts": count_passages()}  # fmt: skip
    text = json.dumps(document, indent=1, sort_keys=True) + "\n"
    if args.write:
        COUNTS_FILE.write_text(text, encoding="utf-8")
    else:
        print(text, end="")


if __name__ == "__main__":
    main()
