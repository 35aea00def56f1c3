import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from workerproc import Worker  # noqa: E402


@pytest.fixture(scope="session")
def fork_worker():
    w = Worker(isolation="fork")
    yield w
    w.close()


@pytest.fixture(scope="session")
def shared_worker():
    w = Worker(isolation="shared")
    yield w
    w.close()
