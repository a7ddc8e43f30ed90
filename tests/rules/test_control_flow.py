"""If, Loop and Scan subgraphs that capture, carry or return complex values."""

import numpy as np
import pytest
from helpers import (
    PACK,
    PAIR_SOURCE,
    UNPACK,
    Ops,
    assert_ops,
    assert_rewrites,
    crandn,
    init,
    make_model,
    run_ort,
    vi,
)
from onnx import helper, numpy_helper

from onnx_decomplex import UnsupportedError, cmath, decomplex

RNG = np.random.default_rng(0)


def _branch(name, nodes, outputs):
    return helper.make_graph(nodes, name, [], outputs)


def _if_model(then, other, cdtype, opset, outputs, pre=(), post=()):
    return make_model(
        [
            *pre,
            helper.make_node(
                "If",
                ["c"],
                [o.name for o in outputs[:1]],
                name="branch",
                then_branch=then,
                else_branch=other,
            ),
            *post,
        ],  # fmt: skip
        [vi("c", np.bool_, []), vi("a0", cdtype, [3])],
        outputs[1:] or outputs,
        [init("w", crandn(RNG, (3,), cdtype))],
        opset=opset,
    )


def _check_both(m, cdtype, ops=None):
    """Both branches taken; the main graph holds the If and, if given, `ops` besides."""
    for c in (True, False):
        feeds = {"c": np.array(c), "a0": crandn(RNG, (3,), cdtype)}
        assert_rewrites(m, ops=Ops(If=1) + Ops(ops or {}), feeds=feeds)


@pytest.mark.parametrize("pair", [False, True], ids=["packed", "pair"])
def test_branches_capture_and_return_complex(opset, cdtype, pair):
    then = _branch("then", [helper.make_node("Mul", ["a", "w"], ["t"])], [vi("t", cdtype, [3])])
    other = _branch("else", [helper.make_node("Neg", ["a"], ["e"])], [vi("e", cdtype, [3])])
    pre = [helper.make_node("Mul" if pair else "Identity", ["a0", "a0"][: 2 if pair else 1], ["a"])]
    post = [helper.make_node("Add", ["y", "a"], ["z"])]
    m = _if_model(
        then, other, cdtype, opset, [vi("y", cdtype, [3]), vi("z", cdtype, [3])], pre, post
    )
    # y + a on the packed tensors; a = a0 * a0 is a pair, which the branches capture
    # and pack for themselves, and y is unpacked to meet it.
    _check_both(m, cdtype, PAIR_SOURCE + UNPACK + Ops(Add=2) + PACK if pair else Ops(Add=1))


def test_branch_returns_a_captured_value_directly(cdtype):
    then = _branch("then", [helper.make_node("Identity", ["a0"], ["t"])], [vi("t", cdtype, [3])])
    other = _branch("else", [helper.make_node("Identity", ["w"], ["e"])], [vi("e", cdtype, [3])])
    m = _if_model(then, other, cdtype, 18, [vi("y", cdtype, [3])])
    _check_both(m, cdtype)


def test_branch_returns_a_real_value_from_complex_ones(cdtype):
    real = np.float32 if cdtype == np.complex64 else np.float64
    to = 1 if real == np.float32 else 11
    then = _branch("then", [helper.make_node("Abs", ["a0"], ["t"])], [vi("t", real, [3])])
    other = _branch("else", [helper.make_node("Cast", ["a0"], ["e"], to=to)], [vi("e", real, [3])])
    m = _if_model(then, other, cdtype, 18, [vi("y", real, [3])])
    for c in (True, False):
        # Abs of a complex value is refused by the reference's type check; the
        # validation overrides it with numpy's abs.
        feeds = {"c": np.array(c), "a0": crandn(RNG, (3,), cdtype)}
        assert_rewrites(m, ops={"If": 1}, feeds=feeds)


def test_nested_if(cdtype):
    inner_then = _branch(
        "it", [helper.make_node("Mul", ["a0", "a0"], ["u"])], [vi("u", cdtype, [3])]
    )
    inner_else = _branch(
        "ie", [helper.make_node("Sub", ["a0", "w"], ["v"])], [vi("v", cdtype, [3])]
    )
    then = _branch(
        "then",
        [helper.make_node("If", ["c"], ["t"], then_branch=inner_then, else_branch=inner_else)],
        [vi("t", cdtype, [3])],
    )
    other = _branch("else", [helper.make_node("Exp", ["a0"], ["e"])], [vi("e", cdtype, [3])])
    m = _if_model(then, other, cdtype, 18, [vi("y", cdtype, [3])])
    _check_both(m, cdtype)


def test_branches_that_disagree_are_refused():
    then = _branch("then", [helper.make_node("Neg", ["a0"], ["t"])], [vi("t", np.complex64, [3])])
    other = _branch("else", [helper.make_node("Abs", ["a0"], ["e"])], [vi("e", np.float32, [3])])
    m = _if_model(then, other, np.complex64, 18, [vi("y", np.complex64, [3])])
    with pytest.raises(UnsupportedError, match="one branch returns a complex value"):
        decomplex(m)


def test_refusal_inside_a_branch_names_the_branch_node():
    then = _branch("then", [helper.make_node("Relu", ["a0"], ["t"], name="inner_relu")],
                   [vi("t", np.complex64, [3])])  # fmt: skip
    other = _branch("else", [helper.make_node("Neg", ["a0"], ["e"])], [vi("e", np.complex64, [3])])
    m = _if_model(then, other, np.complex64, 18, [vi("y", np.complex64, [3])])
    with pytest.raises(UnsupportedError, match="'inner_relu' \\(Relu"):
        decomplex(m)


# ---- Loop -------------------------------------------------------------------------------


def _loop_model(body_nodes, body_outputs, cdtype, opset=18, state=("z0",), outputs=None):
    """Loop(n, c, *state) with body inputs (i, cond_in, *s) and outputs (cond, ...)."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]), *body_nodes],
        "body",
        [vi("i", np.int64, []), vi("cond_in", np.bool_, []),
         *[vi(f"s{k}", cdtype, [3]) for k in range(len(state))]],
        [vi("cond_out", np.bool_, []), *body_outputs],
    )  # fmt: skip
    outputs = outputs or [vi("y", cdtype, None)]
    return make_model(
        [helper.make_node("Loop", ["n", "c", *state], [o.name for o in outputs],
                          name="loop", body=body)],
        [vi("n", np.int64, []), vi("c", np.bool_, []), vi("z0", cdtype, [3])],
        outputs,
        [init("w", crandn(RNG, (3,), cdtype))],
        opset=opset,
    )  # fmt: skip


def _loop_feeds(cdtype, n=4):
    return {"n": np.array(n, np.int64), "c": np.array(True), "z0": crandn(RNG, (3,), cdtype)}


def test_loop_carries_complex_state_and_scans_it(opset, cdtype):
    # s1 = s0 * w + s0 each iteration, and every s0 is stacked as a scan output.
    nodes = [
        helper.make_node("Mul", ["s0", "w"], ["m"]),
        helper.make_node("Add", ["m", "s0"], ["s1"]),
        helper.make_node("Identity", ["s0"], ["seen"]),
    ]
    m = _loop_model(
        nodes,
        [vi("s1", cdtype, [3]), vi("seen", cdtype, [3])],
        cdtype,
        opset,
        outputs=[vi("y", cdtype, [3]), vi("all", cdtype, None)],
    )
    assert_rewrites(m, ops={"Loop": 1}, feeds=_loop_feeds(cdtype))


def test_loop_body_captures_a_complex_value_and_scans_it(cdtype):
    body_nodes = [helper.make_node("Neg", ["z0"], ["e"])]
    m = _loop_model(body_nodes, [vi("e", cdtype, [3])], cdtype, state=())
    assert_rewrites(m, ops={"Loop": 1}, feeds=_loop_feeds(cdtype))


def test_loop_with_zero_iterations_passes_the_packed_state_through(cdtype):
    nodes = [helper.make_node("Exp", ["s0"], ["s1"])]
    m = _loop_model(nodes, [vi("s1", cdtype, [3])], cdtype, outputs=[vi("y", cdtype, [3])])
    assert_rewrites(m, ops={"Loop": 1}, feeds=_loop_feeds(cdtype, n=0))


def test_loop_body_with_complex_math_inside_only(cdtype):
    # Real state in and out; the body makes a complex value from a complex constant.
    real = np.float32 if cdtype == np.complex64 else np.float64
    to = 1 if real == np.float32 else 11
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Cast", ["s0"], ["sc"], to=14 if to == 1 else 15),
            helper.make_node("Mul", ["sc", "w"], ["p"]),
            helper.make_node("Cast", ["p"], ["s1"], to=to),
        ],
        "body",
        [vi("i", np.int64, []), vi("cond_in", np.bool_, []), vi("s0", real, [3])],
        [vi("cond_out", np.bool_, []), vi("s1", real, [3])],
    )
    m = make_model(
        [helper.make_node("Loop", ["n", "c", "x"], ["y"], body=body)],
        [vi("n", np.int64, []), vi("c", np.bool_, []), vi("x", real, [3])],
        [vi("y", real, [3])],
        [init("w", crandn(RNG, (3,), cdtype))],
    )
    feeds = {
        "n": np.array(3, np.int64),
        "c": np.array(True),
        "x": RNG.standard_normal(3).astype(real),
    }
    assert_rewrites(m, ops={"Loop": 1}, feeds=feeds)


def test_refusal_inside_a_loop_body_names_the_body_node():
    nodes = [helper.make_node("Relu", ["s0"], ["s1"], name="inner_relu")]
    m = _loop_model(nodes, [vi("s1", np.complex64, [3])], np.complex64)
    with pytest.raises(UnsupportedError, match="'inner_relu' \\(Relu"):
        decomplex(m)


# ---- Scan -------------------------------------------------------------------------------


def _scan_model(cdtype, opset, in_axis, out_axis, reverse=0):
    """A running complex sum over axis `in_axis` of x (3x4), times a captured w."""
    body = helper.make_graph(
        [
            helper.make_node("Add", ["acc", "xs"], ["acc1"]),
            helper.make_node("Mul", ["acc1", "w"], ["ys"]),
        ],
        "body",
        [vi("acc", cdtype, [3]), vi("xs", cdtype, [3])],
        [vi("acc1", cdtype, [3]), vi("ys", cdtype, [3])],
    )
    return make_model(
        [helper.make_node("Scan", ["acc0", "x"], ["total", "ys_all"], name="scan", body=body,
                          num_scan_inputs=1, scan_input_axes=[in_axis],
                          scan_output_axes=[out_axis], scan_input_directions=[reverse])],
        [vi("acc0", cdtype, [3]), vi("x", cdtype, [4, 3] if in_axis == 0 else [3, 4])],
        [vi("total", cdtype, [3]), vi("ys_all", cdtype, None)],
        [init("w", crandn(RNG, (3,), cdtype))],
        opset=opset,
    )  # fmt: skip


def _scan_feeds(cdtype, axis=0):
    return {"acc0": crandn(RNG, (3,), cdtype), "x": crandn(RNG, (3, 4) if axis else (4, 3), cdtype)}


def test_scan_over_a_complex_input(opset, cdtype):
    m = _scan_model(cdtype, opset, 0, 0)
    assert_rewrites(m, ops={"Scan": 1}, feeds=_scan_feeds(cdtype))


@pytest.mark.parametrize("in_axis, out_axis", [(1, 1), (-1, -1), (-1, 0), (1, -2)])
@pytest.mark.parametrize("reverse", [0, 1])
def test_scan_axes_and_directions(cdtype, in_axis, out_axis, reverse):
    # The reference evaluator runs Scan on axis 0, forwards, only: this checks the
    # rewrite against the running sum computed in numpy instead.
    m = _scan_model(cdtype, 18, in_axis, out_axis, reverse)
    out, _ = decomplex(m)
    assert_ops(out, {"Scan": 1})
    feeds = _scan_feeds(cdtype, axis=1)
    total, ys = run_ort(out, {k: cmath.pack(v) for k, v in feeds.items()})
    cols = feeds["x"].T[::-1] if reverse else feeds["x"].T
    running = feeds["acc0"] + np.cumsum(cols, axis=0)
    w = numpy_helper.to_array(m.graph.initializer[0])
    np.testing.assert_allclose(cmath.unpack(total), running[-1], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(
        cmath.unpack(ys), np.stack(list(running * w), axis=out_axis), rtol=1e-5, atol=1e-5
    )


def test_scan_axis_of_a_real_input_is_kept(cdtype):
    # Complex state, real scan input on axis -1: only complex tensors' axes move.
    real = np.float32 if cdtype == np.complex64 else np.float64
    body = helper.make_graph(
        [
            helper.make_node("Cast", ["xs"], ["xc"], to=14 if real == np.float32 else 15),
            helper.make_node("Add", ["acc", "xc"], ["acc1"]),
        ],
        "body",
        [vi("acc", cdtype, [3]), vi("xs", real, [3])],
        [vi("acc1", cdtype, [3])],
    )
    m = make_model(
        [helper.make_node("Scan", ["acc0", "x"], ["total"], body=body, num_scan_inputs=1,
                          scan_input_axes=[-1])],
        [vi("acc0", cdtype, [3]), vi("x", real, [3, 4])],
        [vi("total", cdtype, [3])],
    )  # fmt: skip
    out, _ = decomplex(m)
    assert_ops(out, {"Scan": 1})
    acc0, x = crandn(RNG, (3,), cdtype), RNG.standard_normal((3, 4)).astype(real)
    (total,) = run_ort(out, {"acc0": cmath.pack(acc0), "x": x})
    np.testing.assert_allclose(cmath.unpack(total), acc0 + x.sum(axis=1), rtol=1e-5, atol=1e-5)
