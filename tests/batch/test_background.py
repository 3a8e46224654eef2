"""The app's helpers: an uploaded input is kept as data under the home, and refused when empty or too large."""

from __future__ import annotations

import pytest

from infercost.batch import background
from infercost.errors import InputError


def test_an_upload_is_kept_under_the_home_named_by_its_content(infercost_home):
    path = background.save_upload("../../etc/requests.jsonl", b'{"custom_id": "a"}\n')
    assert path.parent == infercost_home / "batch-inputs" and path.name.endswith("-requests.jsonl")
    assert background.save_upload("other-name.jsonl", b'{"custom_id": "a"}\n').read_bytes() == path.read_bytes()


@pytest.mark.parametrize("data", [b"", b"x" * (background.MAX_UPLOAD_BYTES + 1)])
def test_an_empty_or_huge_upload_is_refused(data):
    with pytest.raises(InputError, match="file"):
        background.save_upload("big.jsonl", data)
