"""Reading a person's JSON or YAML document, with errors that name the file and the place."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from infercost.errors import InputError

MAX_DOCUMENT_BYTES = 50 * 1024 * 1024


def parse_document(text: str, *, name: str) -> Any:
    """JSON first (its errors carry line and column), YAML for ``.yaml``/``.yml`` names."""
    if name.endswith((".yaml", ".yml")):
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            where = f" line {mark.line + 1}" if mark else ""
            raise InputError(name, f"not valid YAML{where}: {getattr(error, 'problem', error)}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(name, f"not valid JSON at line {error.lineno} column {error.colno}: {error.msg}") from None


def read_document_or_stdin(path: str) -> Any:
    """``-`` reads standard input, anything else a file; the same checks either way."""
    if path != "-":
        return read_document(path)
    import sys

    try:
        text = sys.stdin.buffer.read().decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError("stdin", f"not UTF-8 text (byte {error.start})") from None
    return parse_document(text, name="stdin")


def read_document(path: str | Path) -> Any:
    """Load a JSON or YAML file; missing, binary, non-UTF-8 or malformed files raise InputError."""
    path = Path(path)
    name = str(path)
    if not path.is_file():
        raise InputError(name, "no such file")
    if path.stat().st_size > MAX_DOCUMENT_BYTES:
        raise InputError(name, f"larger than {MAX_DOCUMENT_BYTES // 2**20} MiB")
    data = path.read_bytes()
    if b"\x00" in data:
        raise InputError(name, "a binary file, not JSON or YAML text")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(name, f"not UTF-8 text (byte {error.start})") from None
    return parse_document(text, name=name)
