from __future__ import annotations

import pytest

from tests.tokenizers.tokenizer_references import build_references


@pytest.fixture(scope="session")
def references(tmp_path_factory: pytest.TempPathFactory):
    return build_references(tmp_path_factory.mktemp("references"))
