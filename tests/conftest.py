import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from helpers import OPSETS, PRECISIONS  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(params=OPSETS, ids=lambda o: f"opset{o}")
def opset(request):
    return request.param


@pytest.fixture(params=PRECISIONS, ids=lambda d: d.__name__)
def cdtype(request):
    return request.param


@pytest.fixture
def root():
    return ROOT
