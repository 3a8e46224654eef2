"""Fuzz: hostile profiles (JSON and YAML), price override files and corpora through the CLI's entry point.

Whatever the bytes, the CLI answers with exit 0 and strict JSON (no NaN or Infinity), or exit 2 and one line on
stderr; never a traceback, never more than 10 s. In process for speed; a few cases through a real process.
"""

from __future__ import annotations

import contextlib
import io
import json
import signal
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from infercost.cli import main
from tests.robustness.conftest import BASE, SETUP, run_process

SECONDS_PER_CASE = 10
FUZZ = settings(
    max_examples=120,
    deadline=None,  # a case may load the catalog or a tokenizer the first time; the 10 s alarm bounds each case
    # tmp_path_factory is session-scoped and each example writes its own file, so the fixture is not shared state
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

HUGE = "HUGE_INTEGER"  # replaced by 5,000 digits once serialised: such an int cannot even be repr()'d
HUGE_DIGITS = b"9" * 5000
nasty_numbers = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, -1, 5e-324, 1e-300, 1e308, HUGE, 2**63, True]),
    st.integers(),
)
nasty_text = st.one_of(
    st.text(max_size=20),
    st.sampled_from(["\ud800", "\x1b[31mred", "password", "sk-" + "a" * 30, "", " ", "\x00", "=cmd()", "a\nb"]),
)
scalars = st.one_of(nasty_numbers, nasty_text, st.none(), st.booleans())
nested = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                        st.dictionaries(nasty_text, inner, max_size=4)), max_leaves=12)
deep = st.integers(1, 3000).map(lambda n: json.loads("[" * min(n, 900) + "]" * min(n, 900)) if n < 900 else None)

PROFILE_FIELDS = [*BASE, "retry_rate", "max_retries", "truncation_rate", "cached_prompt_fraction", "days_per_month",
                  "prices", "self_host", "prompt_samples", "language", "batch"]
SETUP_FIELDS = [*SETUP, "gpus_per_replica", "peak_to_average", "target_utilization", "mode"]


@st.composite
def profiles(draw) -> dict:
    document = json.loads(json.dumps(BASE))
    document["api_models"] = []
    for field in draw(st.lists(st.sampled_from(PROFILE_FIELDS), max_size=3)):
        document[field] = draw(st.one_of(scalars, nested))
    if draw(st.booleans()):
        setup = json.loads(json.dumps(SETUP))
        point = setup["throughput"]["points"][0]
        for field in draw(st.lists(st.sampled_from(SETUP_FIELDS), max_size=2)):
            setup[field] = draw(st.one_of(scalars, nested))
        for field in draw(st.lists(st.sampled_from(["concurrency", "request_throughput", "p95_ttft_ms", "x"]),
                                   max_size=2)):
            point[field] = draw(scalars)
        document["self_host"] = [setup]
    return document


def serialise(document, as_yaml: bool) -> bytes:
    text = None
    if as_yaml:
        with contextlib.suppress(yaml.YAMLError, UnicodeEncodeError, ValueError):
            text = yaml.safe_dump(document, allow_unicode=False).encode("utf-8")
    if text is None:
        text = json.dumps(document, ensure_ascii=True).encode("utf-8")  # writes NaN, Infinity and \ud800 escapes
    return text.replace(b'"' + HUGE.encode() + b'"', HUGE_DIGITS).replace(HUGE.encode(), HUGE_DIGITS)


class Hang(Exception):
    pass


def run_bounded(*argv: str) -> tuple[int, str, str]:
    """The CLI in process under a 10 s alarm: a hang fails the case instead of the whole run."""

    def alarm(signum, frame):
        raise Hang(f"{argv} ran over {SECONDS_PER_CASE} s")

    out, err = io.StringIO(), io.StringIO()
    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(SECONDS_PER_CASE)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(argv))
            except SystemExit as exit_:
                code = exit_.code
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return code, out.getvalue(), err.getvalue()


def check_contract(code: int, stdout: str, stderr: str, *, as_json: bool = True) -> None:
    assert "Traceback" not in stderr, stderr
    if code == 2:
        assert stdout == "" and stderr.startswith("error: ") and stderr.count("\n") == 1, stderr
        return
    assert code == 0, (code, stderr)
    if as_json:
        json.loads(stdout, parse_constant=lambda name: (_ for _ in ()).throw(AssertionError(f"{name} in output")))


@FUZZ
@given(document=profiles(), as_yaml=st.booleans(), command=st.sampled_from(["estimate", "report", "save"]))
def test_fuzz_profiles(tmp_path_factory, document, as_yaml, command):
    folder = tmp_path_factory.mktemp("profile")
    path = folder / ("p.yaml" if as_yaml else "p.json")
    path.write_bytes(serialise(document, as_yaml))
    argv = {"estimate": ["estimate", str(path), "--json"],
            "report": ["report", str(path), "--format", "json", "--json"],
            "save": ["scenarios", "save", "fuzz", str(path), "--db", str(folder / "s.db"), "--json"]}[command]
    check_contract(*run_bounded(*argv))


price_entries = st.lists(
    st.fixed_dictionaries({"id": nasty_text}, optional={
        "input_per_mtok": nasty_numbers, "output_per_mtok": nasty_numbers, "as_of": st.one_of(nasty_text, scalars),
        "tokenizer": nasty_text, "provider": nasty_text, "source": nasty_text, "extra": nested,
    }),
    max_size=3,
)  # fmt: skip


@FUZZ
@given(entries=st.one_of(price_entries, nested), as_yaml=st.booleans())
def test_fuzz_price_overrides(tmp_path_factory, entries, as_yaml):
    path = tmp_path_factory.mktemp("prices") / ("p.yaml" if as_yaml else "p.json")
    path.write_bytes(serialise(entries, as_yaml))
    check_contract(*run_bounded("prices", "--overrides", str(path), "--json"))


jsonl_lines = st.one_of(
    st.builds(lambda v: json.dumps({"t": v}, ensure_ascii=True).encode(), st.one_of(nasty_text, scalars, nested)),
    st.binary(max_size=40),
    st.sampled_from([b"{", b'{"t": "\\ud800"}', b'{"t": "a\\u0000"}', b'{"t": ' + b"[" * 2000 + b"]" * 2000 + b"}",
                     b'{"t": "x", "n": ' + b"9" * 5000 + b"}"]),
)
csv_lines = st.one_of(st.binary(max_size=40), st.text(max_size=30).map(lambda s: s.encode("utf-8", "surrogatepass")),
                      st.sampled_from([b'"open quote', b'1,"a\nb"', b'"', b'""', b"\xff,\xfe"]))


@FUZZ
@given(fmt=st.sampled_from(["jsonl", "csv", "txt"]), data=st.data())
def test_fuzz_corpora(tmp_path_factory, fmt, data):
    lines = data.draw(st.lists(jsonl_lines if fmt == "jsonl" else csv_lines, max_size=6))
    body = (b"id,t\n" if fmt == "csv" else b"") + b"\n".join(lines)
    path = tmp_path_factory.mktemp("corpus") / f"c.{fmt}"
    path.write_bytes(body)
    field = [] if fmt == "txt" else ["--field", "t"]
    check_contract(*run_bounded("tokens", "--tokenizer", "o200k_base", *field, str(path), "--json"))


def test_nasty_documents_through_a_real_process(tmp_path: Path):
    cases = {
        "nan.json": b'{"calls_per_day": NaN, "prompt_tokens": 1, "output_tokens": 1}',
        "surrogate.json": b'{"name": "\\ud800", "calls_per_day": 1, "prompt_tokens": 1, "output_tokens": 1}',
        "bomb.yaml": b"a: &a [x, x, x, x, x, x, x, x, x]\n" + b"".join(
            f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]\n".encode() for p, c in zip("abcdefgh", "bcdefghi", strict=True)),
        "deep.json": b"[" * 50_000 + b"]" * 50_000,
    }
    for name, body in cases.items():
        path = tmp_path / name
        path.write_bytes(body)
        result = run_process("estimate", str(path), "--json", timeout=SECONDS_PER_CASE + 20)
        check_contract(result.code, result.stdout, result.stderr)
        assert result.code == 2, name
