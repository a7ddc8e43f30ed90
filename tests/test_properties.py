"""Random chains of supported ops over random shapes: every one must validate."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_rewrites, init, make_model, vi
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import helper

from onnx_decomplex.dtypes import onnx_of

OPS = ["mul", "mul_const", "add", "sub_const", "neg", "identity", "transpose", "reshape",
       "unsqueeze", "squeeze", "flatten", "cast", "add_real"]  # fmt: skip


class Chain:
    """Builds a model step by step, tracking the shape and dtype of the current value."""

    def __init__(self, shape, dtype, opset):
        self.opset, self.dtype, self.shape = opset, np.dtype(dtype), list(shape)
        self.nodes, self.inputs, self.inits, self.outputs = [], [vi("x", dtype, shape)], [], []
        self.cur, self.n = "x", 0

    def name(self, base):
        self.n += 1
        return f"{base}{self.n}"

    def node(self, op, ins, **attrs):
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, ins, [out], **attrs))
        self.cur = out

    def axes_node(self, op, axes):
        if self.opset < 13:
            self.node(op, [self.cur], axes=axes)
        else:
            name = self.name("axes")
            self.inits.append(init(name, np.array(axes, np.int64)))
            self.node(op, [self.cur, name])

    def apply(self, op, draw):
        rank = len(self.shape)
        if op == "mul":
            name = self.name("in")
            suffix = self.shape[draw(st.integers(0, rank)) :]
            self.inputs.append(vi(name, self.dtype, suffix))
            self.node("Mul", [self.cur, name] if draw(st.booleans()) else [name, self.cur])
        elif op in ("mul_const", "sub_const"):
            name = self.name("c")
            suffix = self.shape[draw(st.integers(0, rank)) :]
            rng = np.random.default_rng(draw(st.integers(0, 99)))
            value = (rng.standard_normal(suffix) + 1j * rng.standard_normal(suffix)).astype(
                self.dtype
            )
            self.inits.append(init(name, value))
            self.node("Mul" if op == "mul_const" else "Sub", [self.cur, name])
        elif op == "add":
            name = self.name("in")
            self.inputs.append(vi(name, self.dtype, self.shape))
            self.node("Add", [name, self.cur])
        elif op in ("neg", "identity"):
            self.node(op.capitalize(), [self.cur])
        elif op == "transpose":
            perm = draw(st.permutations(range(rank)))
            self.node("Transpose", [self.cur], perm=list(perm))
            self.shape = [self.shape[p] for p in perm]
        elif op == "reshape":
            target = list(reversed(self.shape)) + [1]
            name = self.name("shape")
            self.inits.append(init(name, np.array(target, np.int64)))
            self.node("Reshape", [self.cur, name])
            self.shape = target
        elif op == "unsqueeze":
            axis = draw(st.integers(-(rank + 1), rank))
            self.axes_node("Unsqueeze", [axis])
            pos = axis if axis >= 0 else axis + rank + 1
            self.shape.insert(pos, 1)
        elif op == "squeeze":
            ones = [i for i, d in enumerate(self.shape) if d == 1]
            if not ones or rank == 1:
                return
            axis = draw(st.sampled_from(ones))
            self.axes_node("Squeeze", [axis - rank if draw(st.booleans()) else axis])
            del self.shape[axis]
        elif op == "flatten":
            axis = draw(st.integers(0, rank))
            self.node("Flatten", [self.cur], axis=axis)
            self.shape = [int(np.prod(self.shape[:axis])), int(np.prod(self.shape[axis:]))]
        elif op == "cast":
            self.dtype = np.dtype(np.complex128 if self.dtype == np.complex64 else np.complex64)
            self.node("Cast", [self.cur], to=onnx_of(self.dtype))
        elif op == "add_real":
            real = np.float32 if self.dtype == np.complex64 else np.float64
            name, cast = self.name("r"), self.name("rc")
            self.inputs.append(vi(name, real, self.shape))
            self.nodes.append(helper.make_node("Cast", [name], [cast], to=onnx_of(self.dtype)))
            self.node("Add", [self.cur, cast])
        if draw(st.integers(0, 4)) == 0:
            self.outputs.append(vi(self.cur, self.dtype, self.shape))

    def model(self):
        outputs = self.outputs + [vi(self.cur, self.dtype, self.shape)]
        seen, unique = set(), []
        for o in outputs:
            if o.name not in seen:
                seen.add(o.name)
                unique.append(o)
        return make_model(self.nodes, self.inputs, unique, self.inits, opset=self.opset)


@st.composite
def chains(draw):
    shape = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    dtype = draw(st.sampled_from([np.complex64, np.complex128]))
    chain = Chain(shape, dtype, draw(st.sampled_from([11, 13, 18])))
    for op in draw(st.lists(st.sampled_from(OPS), min_size=1, max_size=8)):
        chain.apply(op, draw)
    return chain.model()


def _check(model):
    assert_rewrites(model, atol=1e-4, rtol=1e-3)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chains())
def test_random_chains_validate(model):
    _check(model)


@pytest.mark.slow
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chains())
def test_random_chains_validate_many(model):
    _check(model)
