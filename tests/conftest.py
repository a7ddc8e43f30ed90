import collections
import dataclasses
import os
import sys
from pathlib import Path

import onnx
import pytest

# helpers, and the scripts the tests exercise: the fixture generator and the bench.
ROOT = Path(__file__).resolve().parent.parent
for folder in (Path(__file__).parent, ROOT / "fixtures", ROOT / "bench"):
    sys.path.insert(0, str(folder))

from helpers import OPSETS, PRECISIONS  # noqa: E402

WHOLE_MODELS = ROOT / "fixtures" / "models"


def fixture_id(path: Path) -> str:
    """A fixture model's test id: its path under fixtures/."""
    return str(path.relative_to(ROOT / "fixtures"))


def weighed(paths, id_of=fixture_id) -> list:
    """`paths` as test parameters, each exporter's whole model (fixtures/models/) marked
    slow: a check every fixture gets runs on the small ones by default and on the whole
    models in `make test-slow`, which CI runs too (tests/test_models.py converts each
    whole model by default)."""
    slow = [pytest.mark.slow]
    return [pytest.param(p, id=id_of(p), marks=slow if WHOLE_MODELS in p.parents else [])
            for p in paths]  # fmt: skip


FIXTURE_MODELS = weighed(
    sorted(
        p
        for p in ROOT.glob("fixtures/**/*.onnx")
        if p.relative_to(ROOT / "fixtures").parts[0] != "peers"
    )
)
"""Every fixture model, the exporter corpora's included (`weighed`); not the 440 peer
cases, which tests/test_peers.py takes each in full (and folder mode over fixtures/
takes too)."""


def not_peers(paths):
    """`paths` but fixtures/peers/'s (see FIXTURE_MODELS)."""
    return [p for p in paths if "peers" not in p.parts]


@pytest.fixture(params=OPSETS, ids=lambda o: f"opset{o}")
def opset(request):
    return request.param


@pytest.fixture(params=PRECISIONS, ids=lambda d: d.__name__)
def cdtype(request):
    return request.param


@pytest.fixture
def root():
    return ROOT


@pytest.fixture
def parses(monkeypatch):
    """How many times each model file is parsed, by resolved path, from the fixture on:
    every read of a model file goes through `onnx.load`."""
    counts = collections.Counter()
    real = onnx.load

    def load(f, *args, **kwargs):
        if isinstance(f, str | os.PathLike):
            counts[Path(f).resolve()] += 1
        return real(f, *args, **kwargs)

    monkeypatch.setattr(onnx, "load", load)
    return counts


@pytest.fixture
def unfused(monkeypatch):
    """The default target without its affine chains (`targets.shared.affine_chains`),
    for a rule's own forms: a chain through a DFT would be one product."""
    from onnx_decomplex.targets import TARGETS

    target = TARGETS["onnx"]
    forms = tuple(form for form in target.forms if form.name != "affine chains")
    monkeypatch.setitem(TARGETS, "onnx", dataclasses.replace(target, forms=forms))
