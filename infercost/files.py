"""Reading a person's JSON or YAML document, with errors that name the file and the place.

Every document from a file, stdin or an upload comes through here, so the defences against hostile documents live
here once: a size cap before reading, a nesting cap before parsing (JSON) or while composing (YAML), YAML aliases
bounded by how many nodes they expand to ("billion laughs"), and, after parsing, no number that is not finite or has
more digits than Python converts (``NaN``, ``Infinity``, ``1e999``, a 5,000-digit integer) and no string that is not
valid Unicode text (a lone surrogate such as ``"\\ud800"``): each named by its path in the document.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Iterator
from itertools import accumulate
from pathlib import Path
from typing import Any

import yaml

from infercost.errors import InputError

MAX_DOCUMENT_BYTES = 50 * 1024 * 1024
MAX_NESTING = 100  # a profile nests about 5 deep; Python's parsers overflow their stack near 1,000
MAX_ALIAS_VALUES = 10_000  # values YAML aliases may repeat in all: plenty to share an SLO, far from a bomb
MAX_INT_DIGITS = 4300  # Python's own limit for converting text to int (sys.get_int_max_str_digits)

_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(rb"[^\[\]{}]")
_DEPTH_STEP = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")


class HugeInteger(str):
    """An integer literal too long to convert: kept as its text so the check after parsing can name its place."""


class _BoundedYamlLoader(yaml.SafeLoader):
    """PyYAML's safe loader with two limits: nesting depth, and the nodes that aliases expand to.

    Aliases are shared references while loading, but every consumer (validation, JSON output, a walk) expands them:
    nine levels of nine aliases is 387 million values from 1 KB. Each node's expanded size is counted as it is
    composed and every alias adds the size of what it names, so such a document is refused after a few lines.
    """

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._aliased = 0  # values repeated by aliases so far, each alias counting the whole value it names
        self._expanded: dict[int, tuple[int, int]] = {}  # id(node) -> (values, depth) with aliases expanded

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            node = super().compose_node(parent, index)
            if id(node) not in self._expanded:
                raise yaml.YAMLError(f"alias *{event.anchor} refers to a value that contains it{_where(event)}")
            self._aliased += self._expanded[id(node)][0]
            if self._aliased > MAX_ALIAS_VALUES:
                raise yaml.YAMLError(
                    f"aliases expand to more than {MAX_ALIAS_VALUES:,} values{_where(event)} (an alias bomb?); "
                    "write the values out"
                )
            return node
        self._depth += 1
        if self._depth > MAX_NESTING:
            raise yaml.YAMLError(f"nested deeper than {MAX_NESTING} levels{_where(self.peek_event())}")
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        children = [self._expanded[id(child)] for child in _children(node)]
        size = 1 + sum(size for size, _ in children)
        depth = 1 + max((depth for _, depth in children), default=0)
        if depth > MAX_NESTING:
            raise yaml.YAMLError(f"aliases nest values deeper than {MAX_NESTING} levels{_where(node)}")
        self._expanded[id(node)] = (size, depth)
        return node

    def construct_yaml_int(self, node: yaml.Node) -> Any:
        if sum(ch.isdigit() for ch in node.value) > MAX_INT_DIGITS:
            return HugeInteger(node.value)
        return super().construct_yaml_int(node)


_BoundedYamlLoader.add_constructor("tag:yaml.org,2002:int", _BoundedYamlLoader.construct_yaml_int)


def _children(node: yaml.Node) -> Iterator[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        yield from node.value
    elif isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            yield key
            yield value


def _where(marked: Any) -> str:
    mark = getattr(marked, "start_mark", None)
    return f" at line {mark.line + 1}" if mark else ""


def _yaml(text: str, name: str) -> Any:
    try:
        return yaml.load(text, Loader=_BoundedYamlLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        raise InputError(name, f"not valid YAML{where}: {getattr(error, 'problem', None) or error}") from None


def json_nesting(data: bytes) -> int:
    """How deep brackets nest in JSON text, outside strings; counted before parsing, which recurses per level."""
    brackets = _NOT_BRACKET.sub(b"", _JSON_STRING.sub(b"", data))
    steps = (1 if step == 1 else -1 for step in brackets.translate(_DEPTH_STEP))
    return max(accumulate(steps), default=0)


def check_nesting(text: str, name: str) -> None:
    """Refuse JSON nested deeper than ``MAX_NESTING`` before ``json.loads`` sees it (it raises RecursionError)."""
    depth = json_nesting(text.encode("utf-8", "surrogatepass"))
    if depth > MAX_NESTING:
        raise InputError(name, f"nested {depth} levels deep; a profile or price file needs at most {MAX_NESTING}")


def _json(text: str, name: str) -> Any:
    check_nesting(text, name)
    try:
        return json.loads(text, parse_int=_json_int)
    except json.JSONDecodeError as error:
        raise InputError(name, f"not valid JSON at line {error.lineno} column {error.colno}: {error.msg}") from None


def _json_int(text: str) -> int | HugeInteger:
    return HugeInteger(text) if len(text.lstrip("-")) > MAX_INT_DIGITS else int(text)


def check_values(value: Any, path: str = "") -> None:
    """Refuse a parsed document's unusable scalars, naming where they are: non-finite or over-long numbers, and
    strings that cannot be written as UTF-8 (every output, file and database column is UTF-8)."""
    if isinstance(value, HugeInteger):
        digits = len(value.lstrip("+-"))
        raise InputError(path or "document", f"an integer of {digits:,} digits (at most {MAX_INT_DIGITS:,})")
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(path or "document", f"{value} is not a finite number")
    if isinstance(value, str):
        _check_text(value, path)
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str):
                _check_text(key, path or "document")
            check_values(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            check_values(item, f"{path}.{index}" if path else str(index))


def _check_text(text: str, path: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        bad = text[error.start]
        raise InputError(path or "document", f"not valid Unicode text (a lone surrogate {bad!r})") from None


def parse_document(text: str, *, name: str) -> Any:
    """JSON first (its errors carry line and column), YAML for ``.yaml``/``.yml`` names; then ``check_values``."""
    if len(text) > MAX_DOCUMENT_BYTES:
        raise InputError(name, f"larger than {MAX_DOCUMENT_BYTES // 2**20} MiB")
    document = _yaml(text, name) if name.endswith((".yaml", ".yml")) else _json(text, name)
    try:
        check_values(document)
    except InputError as error:
        raise InputError(error.field, f"{error.reason} (in {name})") from None
    return document


def decode_document(data: bytes, *, name: str) -> Any:
    """Bytes from a file, stdin or an upload: size, binary and UTF-8 checks, then ``parse_document``."""
    if len(data) > MAX_DOCUMENT_BYTES:
        raise InputError(name, f"larger than {MAX_DOCUMENT_BYTES // 2**20} MiB")
    if b"\x00" in data:
        raise InputError(name, "a binary file, not JSON or YAML text")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(name, f"not UTF-8 text (byte {error.start})") from None
    return parse_document(text, name=name)


def read_document_or_stdin(path: str) -> Any:
    """``-`` reads standard input, anything else a file; the same checks either way."""
    if path != "-":
        return read_document(path)
    return decode_document(sys.stdin.buffer.read(MAX_DOCUMENT_BYTES + 1), name="stdin")


def read_document(path: str | Path) -> Any:
    """Load a JSON or YAML file; missing, binary, non-UTF-8, oversized or malformed files raise InputError."""
    path = Path(path)
    name = str(path)
    if not path.is_file():
        raise InputError(name, "no such file")
    if path.stat().st_size > MAX_DOCUMENT_BYTES:
        raise InputError(name, f"larger than {MAX_DOCUMENT_BYTES // 2**20} MiB")
    return decode_document(path.read_bytes(), name=name)
