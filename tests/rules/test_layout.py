"""Transpose, Reshape, Unsqueeze, Squeeze, Flatten on packed tensors and on pairs."""

import numpy as np
import pytest
from helpers import (
    PACK,
    PAIR_SOURCE,
    Ops,
    assert_ops,
    assert_rewrites,
    init,
    make_model,
    on_parts,
    packed_or_parts,
    run_ort,
    single,
    vi,
)
from onnx import TensorProto, helper

from onnx_decomplex import decomplex
from onnx_decomplex.cmath import pack


def _pair_source(cdtype):
    """A node that leaves its result as a (re, im) pair, to test the pair path."""
    return helper.make_node("Mul", ["a", "a"], ["x"])


@pytest.mark.parametrize("pair", [False, True])
@pytest.mark.parametrize("perm", [[2, 0, 1], None])
def test_transpose(opset, cdtype, perm, pair):
    attrs = {} if perm is None else {"perm": perm}
    nodes = [helper.make_node("Transpose", ["x" if pair else "a"], ["y"], **attrs)]
    if pair:
        nodes.insert(0, _pair_source(cdtype))
    m = make_model(nodes, [vi("a", cdtype, [2, 3, 4])], [vi("y", cdtype, None)], opset=opset)
    assert_rewrites(m, ops=packed_or_parts("Transpose", pair))


@pytest.mark.parametrize("pair", [False, True])
@pytest.mark.parametrize("shape", [[0, -1], [-1], [3, -1, 0], [4, 0, 3], []])
def test_reshape_constant_shape(opset, cdtype, shape, pair):
    src_shape = [1] if shape == [] else [3, 2, 4]
    nodes = [helper.make_node("Reshape", ["x" if pair else "a", "s"], ["y"])]
    if pair:
        nodes.insert(0, _pair_source(cdtype))
    m = make_model(
        nodes,
        [vi("a", cdtype, src_shape)],
        [vi("y", cdtype, None)],
        [init("s", np.array(shape, np.int64))],
        opset=opset,
    )
    assert_rewrites(m, ops=packed_or_parts("Reshape", pair))


def test_reshape_runtime_shape(opset, cdtype):
    m = make_model(
        [
            helper.make_node("Shape", ["like"], ["s"]),
            helper.make_node("Reshape", ["a", "s"], ["y"]),
        ],
        [vi("a", cdtype, [2, 6]), vi("like", np.float32, [3, 4])],
        [vi("y", cdtype, [3, 4])],
        opset=opset,
    )
    # The packed tensor reshaped to Concat(s, [2]).
    assert_rewrites(m, ops={"Shape": 1, "Concat": 1, "Reshape": 1})


@pytest.mark.parametrize("allowzero", [0, 1])
def test_reshape_allowzero(cdtype, allowzero):
    shape = [0, 3] if allowzero else [0, -1]
    src = [0, 3] if allowzero else [2, 3]
    m = make_model(
        [helper.make_node("Reshape", ["a", "s"], ["y"], allowzero=allowzero)],
        [vi("a", cdtype, src)],
        [vi("y", cdtype, None)],
        [init("s", np.array(shape, np.int64))],
        opset=18,
    )
    assert_rewrites(m, ops={"Reshape": 1})


def _axes_node(op, x, axes, opset):
    if opset < 13:
        return [helper.make_node(op, [x], ["y"], axes=axes)], []
    return [helper.make_node(op, [x, "axes"], ["y"])], [init("axes", np.array(axes, np.int64))]


@pytest.mark.parametrize("pair", [False, True])
@pytest.mark.parametrize("axes", [[0], [-1], [1, -1], [-3, 0]])
def test_unsqueeze(opset, cdtype, axes, pair):
    nodes, inits = _axes_node("Unsqueeze", "x" if pair else "a", axes, opset)
    if pair:
        nodes.insert(0, _pair_source(cdtype))
    m = make_model(nodes, [vi("a", cdtype, [2, 3])], [vi("y", cdtype, None)], inits, opset=opset)
    assert_rewrites(m, ops=packed_or_parts("Unsqueeze", pair))


@pytest.mark.parametrize("pair", [False, True])
@pytest.mark.parametrize("axes", [[0], [-1], [0, -1], None])
def test_squeeze(opset, cdtype, axes, pair):
    x = "x" if pair else "a"
    if axes is None:
        nodes, inits = [helper.make_node("Squeeze", [x], ["y"])], []
    else:
        nodes, inits = _axes_node("Squeeze", x, axes, opset)
    if pair:
        nodes.insert(0, _pair_source(cdtype))
    m = make_model(nodes, [vi("a", cdtype, [1, 3, 1])], [vi("y", cdtype, None)], inits, opset=opset)
    assert_rewrites(m, ops=packed_or_parts("Squeeze", pair))


@pytest.mark.parametrize("identity", [False, True], ids=["constant", "identity"])
def test_unsqueeze_axes_from_a_constant_of_ints_are_constant(cdtype, identity):
    # Constant(value_ints=[-1]) is as constant as an initializer: one packed Unsqueeze.
    nodes = [helper.make_node("Constant", [], ["ax"], value_ints=[-1])]
    if identity:
        nodes.append(helper.make_node("Identity", ["ax"], ["ax1"]))
    nodes.append(helper.make_node("Unsqueeze", ["a", nodes[-1].output[0]], ["y"]))
    m = make_model(nodes, [vi("a", cdtype, [2, 3])], [vi("y", cdtype, None)], opset=18)
    assert_rewrites(m, ops={"Unsqueeze": 1})


def test_unsqueeze_runtime_axes_uses_pairs(cdtype):
    # Axes known only at run time: each part is unsqueezed with the same axes.
    m = make_model(
        [
            helper.make_node("Shape", ["like"], ["n"]),
            helper.make_node("Sub", ["n", "one"], ["axes"]),
            helper.make_node("Unsqueeze", ["a", "axes"], ["y"]),
        ],
        [vi("a", cdtype, [2, 3]), vi("like", np.float32, [1])],
        [vi("y", cdtype, [2, 3, 1])],
        [init("one", np.array([2], np.int64))],  # axes = [1 - 2] = [-1]
        opset=18,
    )
    assert_rewrites(m, ops=on_parts({"Unsqueeze": 2}) + Ops(Shape=1, Sub=1))


@pytest.mark.parametrize("pair", [False, True])
@pytest.mark.parametrize("axis", [0, 1, 2, 3, -1, -3])
def test_flatten(opset, cdtype, axis, pair):
    nodes = [helper.make_node("Flatten", ["x" if pair else "a"], ["y"], axis=axis)]
    if pair:
        nodes.insert(0, _pair_source(cdtype))
    m = make_model(nodes, [vi("a", cdtype, [2, 3, 4])], [vi("y", cdtype, None)], opset=opset)
    # Packed: flattened before the last axis, then reshaped back to [..., 2].
    ops = on_parts({"Flatten": 2}, pair) if pair else Ops(Flatten=1, Reshape=1)
    assert_rewrites(m, ops=ops)


def test_symbolic_dims_survive_on_io(cdtype):
    m = make_model(
        [helper.make_node("Transpose", ["a"], ["y"], perm=[1, 0])],
        [vi("a", cdtype, ["batch", "seq"])],
        [vi("y", cdtype, ["seq", "batch"])],
    )
    out = assert_rewrites(m, ops={"Transpose": 1}, input_shapes={"a": (3, 5)})
    dims = [d.dim_param or d.dim_value for d in out.graph.input[0].type.tensor_type.shape.dim]
    assert dims == ["batch", "seq", 2]
    dims = [d.dim_param or d.dim_value for d in out.graph.output[0].type.tensor_type.shape.dim]
    assert dims == ["seq", "batch", 2]
    real = TensorProto.FLOAT if cdtype == np.complex64 else TensorProto.DOUBLE
    assert out.graph.input[0].type.tensor_type.elem_type == real


PAIR = pytest.mark.parametrize("pair", [False, True], ids=["packed", "pair"])


@PAIR
@pytest.mark.parametrize("axis", [0, 1, -1, -2])
def test_concat(opset, cdtype, axis, pair):
    m = single(
        "Concat", cdtype, opset, shape=(2, 3), attrs={"axis": axis}, inputs=["a", "b", "a"],
        extra=[vi("b", cdtype, [2, 3])], pair=pair,
    )  # fmt: skip
    assert_rewrites(m, ops=packed_or_parts("Concat", pair, others=int(pair)))


@PAIR
@pytest.mark.parametrize("axis", [0, -1])
@pytest.mark.parametrize("sizes", [None, [1, 3]])
def test_split(opset, cdtype, axis, sizes, pair):
    attrs, inputs, inits = {"axis": axis}, ["a"], []
    if sizes is None and opset >= 18:
        attrs["num_outputs"] = 2
    elif sizes is not None and opset < 13:
        attrs["split"] = sizes
    elif sizes is not None:
        inputs, inits = ["a", "s"], [init("s", np.array(sizes, np.int64))]
    shape = (4, 4) if sizes is None else (4, 4)
    m = single("Split", cdtype, opset, shape=shape, attrs=attrs, inputs=inputs, inits=inits,
               pair=pair, n_out=2)  # fmt: skip
    # After a pair: each part split, each output packed.
    ops = PAIR_SOURCE + Ops(Split=2) + 2 * PACK if pair else Ops(Split=1)
    assert_rewrites(m, ops=ops)


@PAIR
@pytest.mark.parametrize(
    "starts, ends, axes, steps",
    [
        ([1], [3], None, None),
        ([0, 1], [2, 4], [0, 1], None),
        ([3], [0], [-1], [-1]),
        ([0, -1], [4, -5], [-2, -1], [2, -2]),
    ],
)
def test_slice(opset, cdtype, starts, ends, axes, steps, pair):
    names = ["a", "st", "en"]
    inits = [init("st", np.array(starts, np.int64)), init("en", np.array(ends, np.int64))]
    if axes is not None:
        names.append("ax")
        inits.append(init("ax", np.array(axes, np.int64)))
    if steps is not None:
        names.append("sp")
        inits.append(init("sp", np.array(steps, np.int64)))
    m = single("Slice", cdtype, opset, shape=(4, 5), inputs=names, inits=inits, pair=pair)
    assert_rewrites(m, ops=packed_or_parts("Slice", pair))


def test_slice_with_runtime_axes(cdtype):
    # Axes from the graph: moved at run time with Where(axes < 0, axes - 1, axes).
    m = make_model(
        [
            helper.make_node("Shape", ["like"], ["n"]),
            helper.make_node("Sub", ["n", "three"], ["ax"]),  # [2 - 3] = [-1]
            helper.make_node("Slice", ["a", "st", "en", "ax"], ["y"]),
        ],
        [vi("a", cdtype, [3, 4]), vi("like", np.float32, [2])],
        [vi("y", cdtype, None)],
        [init("three", np.array([3], np.int64)), init("st", np.array([1], np.int64)),
         init("en", np.array([3], np.int64))],
    )  # fmt: skip
    # The graph's Shape and Sub, then Where(axes < 0, axes - 1, axes) and one Slice.
    assert_rewrites(m, ops=Ops(Shape=1, Sub=1) + Ops(Less=1, Sub=1, Where=1, Slice=1))


@PAIR
@pytest.mark.parametrize("shape", [[2, 1, 3], [3], [1, 1]])
def test_expand(opset, cdtype, shape, pair):
    m = single("Expand", cdtype, opset, shape=(1, 3) if shape != [1, 1] else (2, 3),
               inputs=["a", "s"], inits=[init("s", np.array(shape, np.int64))], pair=pair)  # fmt: skip
    assert_rewrites(m, ops=packed_or_parts("Expand", pair))


def test_expand_of_a_constant_keeps_its_signed_zeros(cdtype):
    """Expand on a constant is done at rewrite time, as the reference evaluator reads it:
    a broadcast. The stock op multiplies by ones, which makes 1/2's -0i +0i, and the
    log of the log of it +pi where the reference's is -pi."""
    w = np.array([2, -4j, -0.5 + 0j], cdtype)
    nodes = [helper.make_node("Reciprocal", ["w"], ["r"]),
             helper.make_node("Expand", ["r", "s"], ["e"]),
             helper.make_node("Log", ["e"], ["l"]), helper.make_node("Log", ["l"], ["y"])]  # fmt: skip
    m = make_model(nodes, [vi("a", cdtype, [1])], [vi("y", cdtype, [2, 3])],
                   [init("w", w), init("s", np.array([2, 3], np.int64))])  # fmt: skip
    assert_rewrites(m, ops=Ops(Identity=1))  # all of it done at rewrite time


@pytest.mark.parametrize("target", ["onnx", "onnxruntime"])
def test_where_keeps_the_signed_zeros_of_both_branches(cdtype, target):
    """onnxruntime's CPU Where gives +0 where it picks a -0 of its second input; a
    model's own Where takes a Min that keeps it (`Ops.where_signed`). Every pair of
    +-0, +-inf, NaN and finite parts, in both branches, against numpy's, sign by sign."""
    parts = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.5]
    values = np.array([complex(r, i) for r in parts for i in parts], cdtype)
    n = len(values)
    m = make_model([helper.make_node("Where", ["c", "a", "b"], ["y"])],
                   [vi("c", np.bool_, [n]), vi("a", cdtype, [n]), vi("b", cdtype, [n])],
                   [vi("y", cdtype, [n])])  # fmt: skip
    out, _ = decomplex(m, target=target)
    assert_ops(out, Ops(Unsqueeze=1, Where=2, Xor=1, Min=1))
    rng = np.random.default_rng(0)
    for _ in range(4):
        c, b = rng.random(n) > 0.5, rng.permutation(values)
        want = pack(np.where(c, values, b))
        (got,) = run_ort(out, {"c": c, "a": pack(values), "b": pack(b)})
        same = np.isnan(want) | ((got == want) & (np.signbit(got) == np.signbit(want)))
        assert np.isnan(got[np.isnan(want)]).all() and same.all()


@PAIR
def test_tile(opset, cdtype, pair):
    m = single("Tile", cdtype, opset, inputs=["a", "r"],
               inits=[init("r", np.array([2, 3], np.int64))], pair=pair)  # fmt: skip
    assert_rewrites(m, ops=packed_or_parts("Tile", pair))


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
@pytest.mark.parametrize("value", [None, 1.5 - 2j])
def test_pad(opset, cdtype, mode, value):
    if value is not None and mode != "constant":
        pytest.skip("a pad value is for constant mode")
    names = ["a", "p"]
    inits = [init("p", np.array([1, 0, 0, 2], np.int64))]
    if value is not None:
        names.append("v")
        inits.append(init("v", np.array(value, cdtype)))
    m = single("Pad", cdtype, opset, shape=(3, 3), attrs={"mode": mode}, inputs=names, inits=inits)
    # Per part: a complex pad value is a value for each part.
    assert_rewrites(m, ops=on_parts({"Pad": 2}))


@PAIR
@pytest.mark.parametrize("const_cond", [False, True])
def test_where(opset, cdtype, const_cond, pair):
    extra = [vi("b", cdtype, [2, 3])]
    inits = []
    if const_cond:
        inits.append(init("c", np.array([True, False, True])))
    else:
        extra.append(vi("c", np.bool_, [2, 1]))
    m = single("Where", cdtype, opset, inputs=["c", "a", "b"], extra=extra, inits=inits, pair=pair)
    # Packed: a runtime condition gets a last axis to broadcast over; a constant one
    # gets it in numpy. A pair is packed: on the packed tensors, the Min that keeps a's
    # -0 (`Ops.where_signed`) is one node for both parts.
    signed = Ops(Where=2, Min=1, Xor=1 - const_cond)
    ops = (PAIR_SOURCE + PACK if pair else Ops()) + signed + Ops(Unsqueeze=1 - const_cond)
    assert_rewrites(m, ops=ops)


@PAIR
@pytest.mark.parametrize("axis", [None, 0, -1])
def test_compress(opset, cdtype, axis, pair):
    cond = np.array([True, False, True], bool)
    m = single("Compress", cdtype, opset, shape=(3, 3), inputs=["a", "c"],
               attrs={} if axis is None else {"axis": axis}, inits=[init("c", cond)], pair=pair)  # fmt: skip
    # Without an axis Compress flattens, which would mix the parts: per part then.
    ops = on_parts({"Compress": 2}, pair) if pair or axis is None else Ops(Compress=1)
    assert_rewrites(m, ops=ops)


@PAIR
def test_reverse_sequence(opset, cdtype, pair):
    m = single("ReverseSequence", cdtype, opset, shape=(4, 3), inputs=["a", "l"],
               attrs={"batch_axis": 1, "time_axis": 0},
               inits=[init("l", np.array([4, 2, 1], np.int64))], pair=pair)  # fmt: skip
    assert_rewrites(m, ops=packed_or_parts("ReverseSequence", pair))


@PAIR
@pytest.mark.parametrize(("batch", "time"), [(1, 2), (3, 0), (2, -1)])
def test_reverse_sequence_past_axis_1_moves_its_axes_there_and_back(cdtype, pair, batch, time):
    """tf2onnx writes such axes, and onnx.reference runs them; onnxruntime takes 0 and 1."""
    shape = (2, 3, 4, 5)
    lengths = np.arange(1, shape[batch] + 1) % shape[time] + 1
    m = single("ReverseSequence", cdtype, 18, shape=shape, inputs=["a", "l"],
               attrs={"batch_axis": batch, "time_axis": time},
               inits=[init("l", lengths.astype(np.int64))], pair=pair)  # fmt: skip
    moved = Ops(Transpose=2, ReverseSequence=1)
    assert_rewrites(m, ops=PAIR_SOURCE + PACK + moved if pair else moved)


@pytest.mark.parametrize("op", ["DepthToSpace", "SpaceToDepth"])
def test_depth_space(opset, cdtype, op):
    shape = (1, 8, 2, 2) if op == "DepthToSpace" else (1, 2, 4, 4)
    # Per part: the ops take 4-D tensors only.
    assert_rewrites(single(op, cdtype, opset, shape=shape, attrs={"blocksize": 2}),
                    ops=on_parts({op: 2}))  # fmt: skip


@pytest.mark.parametrize("upper", [0, 1])
def test_trilu(cdtype, upper):
    m = single("Trilu", cdtype, 18, shape=(2, 3, 4), inputs=["a", "k"], attrs={"upper": upper},
               inits=[init("k", np.array(1, np.int64))])  # fmt: skip
    assert_rewrites(m, ops=on_parts({"Trilu": 2}))  # its last two axes are the matrix


@PAIR
@pytest.mark.parametrize("axis", [0, -1])
@pytest.mark.parametrize("flags", [{}, {"exclusive": 1, "reverse": 1}])
def test_cumsum(opset, cdtype, axis, flags, pair):
    m = single("CumSum", cdtype, opset, shape=(3, 4), inputs=["a", "ax"], attrs=flags,
               inits=[init("ax", np.array(axis, np.int64))], pair=pair)  # fmt: skip
    assert_rewrites(m, ops=packed_or_parts("CumSum", pair))


@pytest.mark.parametrize(
    "op, attrs, inputs, inits",
    [
        ("Split", {"axis": -1, "num_outputs": 2}, ["a"], []),
        ("Unsqueeze", {}, ["a", "ax"], [init("ax", np.array([-1], np.int64))]),
        ("Pad", {}, ["a", "p"], [init("p", np.array([0, 1, 0, 1], np.int64))]),
        ("ReduceMean", {"keepdims": 0}, ["a", "ax"], [init("ax", np.array([-1], np.int64))]),
        ("Transpose", {"perm": [1, 0]}, ["a"], []),
    ],
)
def test_opset_23(cdtype, op, attrs, inputs, inits):
    n_out = 2 if op == "Split" else 1
    m = single(op, cdtype, 23, shape=(2, 4), attrs=attrs, inputs=inputs, inits=inits, n_out=n_out)
    assert_rewrites(m, ops=on_parts({"Pad": 2}) if op == "Pad" else {op: 1})
