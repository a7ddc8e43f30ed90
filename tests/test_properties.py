"""Random chains of supported ops over random shapes: every one must validate."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from helpers import assert_rewrites, init, make_model, vi
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from nonfinite import excused
from onnx import helper

from onnx_decomplex import decomplex, validate
from onnx_decomplex.check import find_complex
from onnx_decomplex.dtypes import onnx_of
from onnx_decomplex.reference import evaluator
from onnx_decomplex.validate import random_inputs, resolve_shapes

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


# Fixed examples in the default suite, so that CI is reproducible; the slow runs explore.
FAST = settings(
    max_examples=200, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)


def _slow(n):
    return settings(
        max_examples=n,
        deadline=None,
        derandomize=False,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )


def _check(model):
    assert_rewrites(model, atol=1e-4, rtol=1e-3)


@FAST
@given(chains())
def test_random_chains_validate(model):
    _check(model)


@pytest.mark.slow
@_slow(600)
@given(chains())
def test_random_chains_validate_many(model):
    _check(model)


# ---- random DAGs: any earlier value may feed any later op ---------------------------

DAG_OPS = ["binary", "unary", "reduce", "concat", "slice", "matmul_const", "matmul", "where",
           "transpose", "pow", "abs_cast", "gather"]  # fmt: skip
BINARY = ["Mul", "Add", "Sub", "Div"]
UNARY = ["Neg", "Sqrt", "Sin", "Exp", "Tanh", "Sign"]


def _broadcasts(a, b):
    try:
        np.broadcast_shapes(tuple(a), tuple(b))
        return True
    except ValueError:
        return False


class Dag:
    """A pool of complex values; each op takes operands from anywhere in the pool."""

    def __init__(self, dtype, opset, draw):
        self.dtype, self.opset, self.draw = np.dtype(dtype), opset, draw
        self.real = np.float32 if self.dtype == np.complex64 else np.float64
        self.pool, self.nodes, self.inputs, self.inits, self.n = [], [], [], [], 0
        self.rng = np.random.default_rng(draw(st.integers(0, 999)))

    def name(self, base):
        self.n += 1
        return f"{base}{self.n}"

    def add_input(self, shape):
        name = self.name("in")
        # A leading 2 is declared symbolic; validation gives symbolic dims 2.
        dims = ["n", *shape[1:]] if shape and shape[0] == 2 else list(shape)
        self.inputs.append(vi(name, self.dtype, dims))
        self.pool.append((name, list(shape)))

    def const(self, shape, complex_=True):
        name = self.name("c")
        value = self.rng.standard_normal(shape) + (
            1j * self.rng.standard_normal(shape) if complex_ else 0
        )
        self.inits.append(
            init(name, np.asarray(value).astype(self.dtype if complex_ else self.real))
        )
        return name

    def emit(self, op, ins, shape, **attrs):
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, ins, [out], **attrs))
        self.pool.append((out, list(shape)))

    def pick(self, pred=lambda s: True):
        choices = [v for v in self.pool if pred(v[1])]
        return self.draw(st.sampled_from(choices)) if choices else None

    def apply(self, op):
        draw = self.draw
        a, shape = self.pick()
        rank = len(shape)
        if op == "binary":
            b, bshape = self.pick(lambda s: _broadcasts(s, shape))
            out_shape = list(np.broadcast_shapes(tuple(shape), tuple(bshape)))
            kind = draw(st.sampled_from(BINARY))
            if kind == "Sub" and b == a:
                kind = "Add"  # a - a is exactly 0: a divisor whose 0/0 is not a meaning
            self.emit(kind, [a, b], out_shape)
        elif op == "unary":
            self.emit(draw(st.sampled_from(UNARY)), [a], shape)
        elif op == "reduce":
            axis = draw(st.integers(-rank, rank - 1))
            new = list(shape)
            new[axis] = 1
            if self.opset >= 13:
                axes = self.name("axes")
                self.inits.append(init(axes, np.array([axis], np.int64)))
                self.emit("ReduceSum", [a, axes], new)
            else:
                self.emit("ReduceSum", [a], new, axes=[axis])
        elif op == "concat":
            b, _ = self.pick(lambda s: s == shape)
            axis = draw(st.integers(-rank, rank - 1))
            new = list(shape)
            new[axis] *= 2
            self.emit("Concat", [a, b], new, axis=axis)
        elif op == "slice" and shape[-1] > 1:
            st_, en, ax = (self.name(k) for k in ("st", "en", "ax"))
            self.inits += [init(st_, np.array([1], np.int64)), init(en, np.array([99], np.int64)),
                           init(ax, np.array([-1], np.int64))]  # fmt: skip
            self.emit("Slice", [a, st_, en, ax], [*shape[:-1], shape[-1] - 1])
        elif op == "matmul_const":
            k = draw(st.integers(1, 3))
            self.emit("MatMul", [a, self.const([shape[-1], k])], [*shape[:-1], k])
        elif op == "matmul" and rank >= 2:
            found = self.pick(lambda s: len(s) == 2 and s[0] == shape[-1])
            if found:
                self.emit("MatMul", [a, found[0]], [*shape[:-1], found[1][1]])
        elif op == "where":
            cond = self.name("cond")
            self.inits.append(init(cond, self.rng.random(shape[-1:]) > 0.5))
            b, bshape = self.pick(lambda s: s == shape)
            self.emit("Where", [cond, a, b], shape)
        elif op == "transpose":
            perm = list(draw(st.permutations(range(rank))))
            self.emit("Transpose", [a], [shape[p] for p in perm], perm=perm)
        elif op == "pow":
            p = self.name("p")
            self.inits.append(init(p, np.array(draw(st.sampled_from([2, 3, -1, 0.5])), self.real)))
            self.emit("Pow", [a, p], shape)
        elif op == "abs_cast":
            # A real value from |z|, cast back to complex: the real/complex boundary.
            mag = self.name("abs")
            self.nodes.append(helper.make_node("Abs", [a], [mag]))
            self.emit("Cast", [mag], shape, to=onnx_of(self.dtype))
        elif op == "gather":
            idx = self.name("idx")
            self.inits.append(init(idx, np.array([0, shape[0] - 1], np.int64)))
            self.emit("Gather", [a, idx], [2, *shape[1:]], axis=0)

    def model(self, outputs):
        outs = [vi(n, self.dtype, None) for n, _ in outputs]
        return make_model(self.nodes, self.inputs, outs, self.inits, opset=self.opset)


@st.composite
def dags(draw):
    dtype = draw(st.sampled_from([np.complex64, np.complex128]))
    dag = Dag(dtype, draw(st.sampled_from([11, 13, 18])), draw)
    base = draw(st.lists(st.integers(1, 3), min_size=1, max_size=3))
    dag.add_input([2, *base])
    for _ in range(draw(st.integers(0, 2))):
        # More inputs, some of them suffixes of the first shape: they broadcast.
        dag.add_input(base[draw(st.integers(0, len(base))) :] or [1])
    n_inputs = len(dag.pool)
    for op in draw(st.lists(st.sampled_from(DAG_OPS), min_size=1, max_size=10)):
        dag.apply(op)
    made = dag.pool[n_inputs:] or dag.pool[:1]
    outputs = [made[-1], *draw(st.lists(st.sampled_from(made), max_size=2))]
    unique = list({n: (n, s) for n, s in outputs}.values())
    return dag.model(unique)


def _check_dag(model):
    """The three checks, at the tolerance of a long float32 chain: random compositions
    (Sqrt, Div, Pow -1) pass near branch cuts and poles, where float32 rounding is
    amplified. A chain that overflows at an edge value hands a Div or a product an
    infinite part, where infinities and NaNs may differ for a documented cause
    (`nonfinite`): those alone are not a failure, as in the fuzzer."""
    out, report = decomplex(model)
    assert report.has_complex and find_complex(out) == []
    onnx.checker.check_model(out, full_check=True)
    feeds = random_inputs(model, resolve_shapes(model, {}))
    result = validate(model, out, feeds, atol=1e-3, rtol=1e-3)

    def values():
        with np.errstate(all="ignore"):
            return evaluator(model).run(None, feeds, intermediate=True)

    if causes := excused(model, result, feeds, values):
        note(f"infinities or NaNs differ after {causes}: {result.outputs}")
        return
    assert result.outputs and result.passed, result.outputs


@settings(FAST, max_examples=150)
@given(dags())
def test_random_dags_validate(model):
    _check_dag(model)


@pytest.mark.slow
@_slow(800)
@given(dags())
def test_random_dags_validate_many(model):
    _check_dag(model)
