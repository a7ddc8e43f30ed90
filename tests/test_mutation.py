"""No escape: default validation catches wrong conversions.

Each converted corpus model is mutated one node at a time, as a buggy rule could get it
wrong (`mutants`: Add <-> Sub, swapped Sub or Concat operands, a dropped Neg, a constant's
sign flipped, re <-> im, swapped Transpose axes). A mutant that changes no output beyond
the tolerance on the framework's own inputs is dropped; every other must fail
`onnx-decomplex verify` with its defaults (seeded random inputs, edge values included).
The suite runs a fixed sample; `make fuzz` runs every whole model (MUTANTS=all).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnx
import pytest
from mutants import mutants

from onnx_decomplex.cmath import pack
from onnx_decomplex.pipeline import Files, convert_file, siblings, verify_file
from onnx_decomplex.validate import load_saved, run_onnxruntime

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "models"
SAMPLE = ["tf2onnx/angle_zeros", "tf2onnx/angle_of_parts_zeros", "tf2onnx/magnitude_mask_batch3",
          "tf2onnx/squares_native", "tf2onnx/magnitude_mask_minimal", "jax2onnx/beamformer_das"]  # fmt: skip
"""Models whose every mutant the suite runs: small, and of each kind of block. (The
minimal LRU and FNO are one product each on the default target, and the minimal RoPEs
one RotaryEmbedding node each: none of their few mutants changes an output.)"""

BAR = 0.99
"""The share of output-changing mutants default validation must catch."""


def _changes(base: list, got: list) -> bool:
    return any(a.shape != b.shape or not np.allclose(a, b, rtol=1e-4, atol=1e-5, equal_nan=True)
               for a, b in zip(base, got, strict=True))  # fmt: skip


def _after(mutant: onnx.ModelProto, what: str) -> set[str]:
    """The tensors of `mutant` that the mutation `what` ("kind name") reaches: the
    changed node's outputs, or the changed initializer, and everything computed from
    them."""
    name = what.split(" ", 1)[1]
    reached = {name} | {
        o for n in mutant.graph.node if name in (n.name, n.op_type) for o in n.output
    }
    for node in mutant.graph.node:  # in order: what a reached value feeds is reached
        if reached.intersection(node.input):
            reached.update(node.output)
    return reached


def judge(path: Path, folder: Path) -> tuple[int, list[str], list[str]]:
    """(mutants that change an output, those default validation lets through, those it
    catches but whose failure names no value at or after the mutation)."""
    out = folder / "converted.onnx"
    inputs, expected = siblings(path)
    result = convert_file(path, out, files=Files(inputs=inputs, expected=expected))
    assert result.ok and result.report.changed
    model = onnx.load(out)
    feeds, _ = load_saved(str(inputs), result.report.normalized or onnx.load(path))
    packed = {k: pack(v) if np.iscomplexobj(v) else v for k, v in feeds.items()}
    base = run_onnxruntime(model, packed)
    changing, escaped, untraced = 0, [], []
    for what, mutant in mutants(model):
        try:
            got = run_onnxruntime(mutant, packed)
        except Exception:
            continue  # onnxruntime refuses it: no wrong number goes out
        if not _changes(base, got):
            continue
        changing += 1
        onnx.save(mutant, folder / "mutant.onnx")
        verdict = verify_file(path, folder / "mutant.onnx")
        if verdict.ok:
            escaped.append(what)
            continue
        departures = [v.departure for v in verdict.validations if v.departure is not None]
        if not any(set(d.tensors) & _after(mutant, what) for d in departures):
            untraced.append(f"{what}: {departures[0].describe() if departures else 'none'}")
    return changing, escaped, untraced


@pytest.mark.parametrize("name", SAMPLE)
def test_default_validation_catches_every_mutant_of_a_sample(name, tmp_path):
    """And each failure names where it starts: the value the mutated node computes, or
    one after it (`validate.trace`)."""
    changing, escaped, untraced = judge(CORPUS / f"{name}.onnx", tmp_path)
    assert changing >= 3, "too few mutants change the outputs to judge"
    assert escaped == []
    assert untraced == []


@pytest.mark.skipif(os.environ.get("MUTANTS") != "all", reason="`make fuzz` runs it (MUTANTS=all)")
def test_default_validation_catches_the_bar_of_every_models_mutants(tmp_path):
    changing, escaped, lost = 0, [], []
    for path in sorted(CORPUS.glob("*/*.onnx")):
        if siblings(path)[0] is None or not convert_file(path, tmp_path / "c.onnx").report.changed:
            continue
        n, missed, untraced = judge(path, tmp_path)
        changing += n
        escaped += [f"{path.relative_to(CORPUS)}: {m}" for m in missed]
        lost += [f"{path.relative_to(CORPUS)}: {m}" for m in untraced]
    caught = 1 - len(escaped) / changing
    print(f"\ncaught {changing - len(escaped)} of {changing} mutants ({caught:.1%})")
    assert caught >= BAR, "\n".join(escaped)
    assert lost == [], "\n".join(lost)
