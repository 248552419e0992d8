from collections.abc import Iterator

import pytest
from softhsm import SoftHsm, start_token


@pytest.fixture(scope="session")
def softhsm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SoftHsm]:
    yield start_token(tmp_path_factory.mktemp("softhsm"))
