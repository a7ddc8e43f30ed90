"""Graphs written the way the exporters write complex arithmetic, and the checks the
normalize tests make on them."""

from __future__ import annotations

import numpy as np
import onnx
from helpers import init, make_model, vi
from onnx import helper
from onnx.reference import ReferenceEvaluator

from onnx_decomplex import decomplex, validate
from onnx_decomplex.check import find_complex
from onnx_decomplex.normalize import normalize

SHAPE = (3, 4)
RANK = len(SHAPE)


class Export:
    """A graph written as jax2onnx writes complex arithmetic.

    A complex value is a name and where its pair lives: "typed" (a complex tensor,
    its parts read on axis rank), "last" (a real [..., 2]) or "first" (a real [2, ...]).
    """

    def __init__(self):
        self.nodes, self.inits, self.inputs, self.n = [], [], [], 0
        self.ranks = {}  # of constants; every other value has rank RANK

    def fresh(self, base: str) -> str:
        self.n += 1
        return f"{base}_{self.n}"

    def const(self, value) -> str:
        name = self.fresh("const")
        self.inits.append(init(name, value))
        self.ranks[name] = np.ndim(value)
        return name

    def op(self, op: str, *inputs: str, **attrs) -> str:
        out = self.fresh(op.lower())
        self.nodes.append(helper.make_node(op, list(inputs), [out], name=f"{out}_node", **attrs))
        return out

    def split(self, value) -> tuple[str, str]:
        name, where = value
        axis = 0 if where == "first" else self.ranks.get(name, RANK)
        return tuple(
            self.op("Gather", name, self.const(np.array(i, np.int64)), axis=axis) for i in (0, 1)
        )

    def pair(self, re: str, im: str, where: str = "last"):
        axis = 0 if where == "first" else self.ranks.get(re, RANK)
        axes = self.const(np.array([axis], np.int64))
        parts = [self.op("Unsqueeze", p, axes) for p in (re, im)]
        return self.op("Concat", *parts, axis=axis), where

    def mul(self, a, b, where="last"):
        (ar, ai), (br, bi) = self.split(a), self.split(b)
        re = self.op("Sub", self.op("Mul", ar, br), self.op("Mul", ai, bi))
        im = self.op("Add", self.op("Mul", ar, bi), self.op("Mul", ai, br))
        return self.pair(re, im, where)

    def model(self, outputs) -> onnx.ModelProto:
        return make_model(self.nodes, self.inputs, outputs, self.inits)


def converted(model, feeds, expected, **tolerance):
    """The three checks, with the numbers compared against numpy's; (out, report)."""
    out, report = decomplex(model)
    assert find_complex(out) == []
    onnx.checker.check_model(out, full_check=True)
    result = validate(report.normalized or model, out, feeds, expected=expected, **tolerance)
    assert result.passed, result.outputs
    return out, report


def normalized_runs(model, feeds) -> list[np.ndarray]:
    """The outputs of the model `normalize` makes of `model`, run by `onnx.reference`."""
    return ReferenceEvaluator(normalize(model).model).run(None, feeds)


def like_layers(count: int) -> onnx.ModelProto:
    """A real pair split into a complex value (so that every reading walks the graph),
    then `count` like products: z <- z * w."""
    j = helper.make_tensor("j", onnx.TensorProto.COMPLEX64, [], [1j])
    nodes = [
        helper.make_node("Gather", ["p", "zero"], ["re"], axis=-1),
        helper.make_node("Gather", ["p", "one"], ["im"], axis=-1),
        helper.make_node("Cast", ["re"], ["re_c"], to=onnx.TensorProto.COMPLEX64),
        helper.make_node("Cast", ["im"], ["im_c"], to=onnx.TensorProto.COMPLEX64),
        helper.make_node("Constant", [], ["j"], value=j),
        helper.make_node("Mul", ["im_c", "j"], ["im_j"]),
        helper.make_node("Add", ["re_c", "im_j"], ["z0"]),
    ]
    nodes += [helper.make_node("Mul", [f"z{i}", "w"], [f"z{i + 1}"]) for i in range(count)]
    inits = [init("zero", np.array(0, np.int64)), init("one", np.array(1, np.int64)),
             init("w", np.array([1 + 2j, 3 - 1j, 0.5j], np.complex64))]  # fmt: skip
    return make_model(nodes, [vi("p", np.float32, [4, 3, 2])],
                      [vi(f"z{count}", np.complex64, [4, 3])], inits)  # fmt: skip


def z_of(seed=0, shape=SHAPE) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)


STEPS = ("mul", "add", "conj", "exp", "scale", "neg")


def program(steps, typed_inputs):
    """A graph of `steps` over two inputs, and the numpy function it computes.

    Each value is (name, where its pair lives, its numpy function, the packed inputs
    it comes from by ops that act alike on both readings). A native-only op (Exp) is
    applied only where the graph shows the value is complex: typed, a pair, or from an
    input whose parts the graph reads somewhere; else, as for `sqrt_plus`, no graph
    could tell.
    """
    e = Export()
    values, split = [], set()
    for i, typed in enumerate(typed_inputs):
        name = f"in_{i}"
        shape = [*SHAPE] if typed else [*SHAPE, 2]
        e.inputs.append(vi(name, np.complex64 if typed else np.float32, shape))
        values.append((name, "typed" if typed else "last", lambda f, i=i: f[i],
                       set() if typed else {name}))  # fmt: skip

    def parts(v):
        if v[0] in {"in_0", "in_1"}:
            split.add(v[0])
        return e.split(v[:2])

    for k, step in enumerate(steps):
        a, b = values[-1], values[k % len(values)]
        fa, fb = a[2], b[2]
        if step == "mul":
            (ar, ai), (br, bi) = parts(a), parts(b)
            re = e.op("Sub", e.op("Mul", ar, br), e.op("Mul", ai, bi))
            im = e.op("Add", e.op("Mul", ar, bi), e.op("Mul", ai, br))
            values.append((*e.pair(re, im), lambda f, fa=fa, fb=fb: fa(f) * fb(f), set()))
        elif step == "add":
            if {a[1], b[1]} == {"last", "first"}:
                continue  # [3, 4, 2] + [2, 3, 4]: not a graph the exporter writes
            where = a[1] if a[1] == b[1] else "typed"
            values.append((e.op("Add", a[0], b[0]), where, lambda f, fa=fa, fb=fb: fa(f) + fb(f),
                           a[3] | b[3]))  # fmt: skip
        elif step == "conj":
            re, im = parts(a)
            values.append((*e.pair(re, e.op("Neg", im)), lambda f, fa=fa: np.conj(fa(f)), set()))
        elif step == "exp":
            if a[3] - split:
                continue
            quarter = e.op("Mul", a[0], e.const(np.array(0.25, np.float32)))
            values.append(
                (e.op("Exp", quarter), "typed", lambda f, fa=fa: np.exp(fa(f) / 4), set())
            )
        elif step == "scale":
            c = e.const(np.array(0.5 - 1j, np.complex64))
            (cr, ci), (ar, ai) = e.split((c, "typed")), parts(a)
            re = e.op("Sub", e.op("Mul", cr, ar), e.op("Mul", ci, ai))
            im = e.op("Add", e.op("Mul", cr, ai), e.op("Mul", ci, ar))
            values.append((*e.pair(re, im, "first"), lambda f, fa=fa: (0.5 - 1j) * fa(f), set()))
        else:
            values.append((e.op("Neg", a[0]), a[1], lambda f, fa=fa: -fa(f), a[3]))
    name, where, fn, _ = values[-1]
    if name in {"in_0", "in_1"}:
        return None
    return e.model([vi(name, np.float32, [*SHAPE, 2])]), fn
