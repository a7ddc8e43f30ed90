"""The inputs both models run on: shapes, seeded random values, quiet rows, edge values."""

import numpy as np
import pytest
from helpers import make_model, vi
from onnx import helper

from onnx_decomplex import decomplex, validate
from onnx_decomplex.errors import DecomplexError, OptionError
from onnx_decomplex.validate import inputs


def _mul_model():
    return make_model(
        [helper.make_node("Mul", ["a", "b"], ["y"])],
        [vi("a", np.complex64, ["n", 3]), vi("b", np.complex64, ["n", 3])],
        [vi("y", np.complex64, ["n", 3])],
    )


# Shapes


def test_symbolic_dims_follow_overrides():
    shapes = inputs.resolve_shapes(_mul_model(), {"a": (5, 3)})
    assert shapes == {"a": (5, 3), "b": (5, 3)}
    assert inputs.resolve_shapes(_mul_model()) == {"a": (2, 3), "b": (2, 3)}


@pytest.mark.parametrize(
    "overrides, message",
    [({"nope": (1,)}, "not an input"), ({"a": (1, 2, 3)}, "gives 3 dims for 'a', which has 2")],
)
def test_bad_overrides(overrides, message):
    with pytest.raises(DecomplexError, match=message):
        inputs.resolve_shapes(_mul_model(), overrides)


def _table_model():
    """z [batch, 8, 6] times a table; w shares z's batch."""
    return make_model(
        [helper.make_node("Mul", ["z", "w"], ["y"])],
        [vi("z", np.complex64, ["batch", 8, 6]), vi("w", np.complex64, ["batch", 1, 1])],
        [vi("y", np.complex64, ["batch", 8, 6])],
    )


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"z": (4, 8, 7)}, "--input-shapes gives 7 for dim 2 of 'z', which is fixed at 6"),
        ({"z": (4, 0, 6)}, "--input-shapes gives 0 for dim 1 of 'z', which is fixed at 8"),
        ({"z": (0, 8, 6)}, "gives 0 for dim 0 ('batch') of 'z': validation on an empty input"),
        ({"z": (4, 8, 6), "w": (3, 1, 1)}, "dim 0 ('batch') of 'w' the size 3, and 'z' gives it 4"),
        ({"q": (4, 8, 6)}, "--input-shapes names 'q', which is not an input; inputs: w, z"),
    ],
)
def test_overrides_that_do_not_fit_the_model_name_the_input_and_dim(overrides, message):
    with pytest.raises(OptionError) as info:
        inputs.resolve_shapes(_table_model(), overrides)
    assert message in str(info.value)


def test_overrides_name_the_option_they_came_from():
    with pytest.raises(OptionError, match="--trt-opt-shapes gives 7 for dim 2"):
        inputs.resolve_shapes(_table_model(), {"z": (4, 8, 7)}, "--trt-opt-shapes")


def test_an_input_of_unknown_rank_takes_any_override():
    m = make_model(
        [helper.make_node("Neg", ["x"], ["y"])],
        [vi("x", np.float32, None)],
        [vi("y", np.float32, None)],
    )
    assert inputs.resolve_shapes(m, {"x": (2, 5)}) == {"x": (2, 5)}


# Random values


def _typed_model():
    """One input of each kind random inputs make."""
    kinds = {"z": np.complex64, "f": np.float32, "i": np.int64, "b": np.bool_}
    return make_model(
        [helper.make_node("Identity", [k], [f"{k}_out"]) for k in kinds],
        [vi(k, t, [8, 64]) for k, t in kinds.items()],
        [vi(f"{k}_out", t, [8, 64]) for k, t in kinds.items()],
    )


def test_random_inputs_are_seeded_and_typed():
    shapes = {k: (8, 64) for k in "zfib"}
    first = inputs.random_inputs(_typed_model(), shapes, seed=3)
    again = inputs.random_inputs(_typed_model(), shapes, seed=3)
    other = inputs.random_inputs(_typed_model(), shapes, seed=4)
    assert {k: v.dtype for k, v in first.items()} == {
        "z": np.complex64, "f": np.float32, "i": np.int64, "b": np.bool_}  # fmt: skip
    for k in first:
        np.testing.assert_array_equal(first[k], again[k])
    assert not np.array_equal(first["z"], other["z"])
    assert set(np.unique(first["i"])) <= {0, 1, 2, 3} and 0 < first["b"].mean() < 1


def test_every_other_row_is_quiet():
    feeds = inputs.random_inputs(_typed_model(), {k: (8, 64) for k in "zfib"}, edges=False)
    for name in "zf":
        rows = np.abs(feeds[name])
        assert np.all(rows[1::2].max(axis=1) < 10 * inputs.QUIET), name
        assert np.all(rows[0::2].max(axis=1) > 100 * inputs.QUIET), name
    assert feeds["i"][1::2].max() == 3, "integers are not scaled"


def test_an_input_too_large_to_make_is_refused_by_name():
    m = make_model([helper.make_node("Neg", ["x"], ["y"])], [vi("x", np.complex64, ["n", "n"])],
                   [vi("y", np.complex64, ["n", "n"])])  # fmt: skip
    with pytest.raises(DecomplexError, match=r"shape \[1048576, 1048576\]") as info:
        inputs.random_inputs(m, {"x": (1 << 20, 1 << 20)})
    assert info.value.tensor == "x"


# Edge values


def test_edge_values_by_type():
    c64, c128 = inputs.edge_values(np.complex64), inputs.edge_values(np.complex128)
    np.testing.assert_array_equal(c64, np.array(inputs.EDGE_VALUES, np.complex64))
    # complex128 leaves out the huge and tiny magnitudes: nothing wider can judge them.
    np.testing.assert_array_equal(c128, inputs.EDGE_VALUES_128)
    assert np.abs(c128).max() < 1e20 <= np.abs(c64).max()
    assert np.signbit(inputs.edge_values(np.float32)).tolist() == [False, True]


def test_edge_positions_spread_and_leave_half_ordinary():
    assert inputs.edge_positions(100, 10).tolist() == list(range(0, 100, 10))
    assert inputs.edge_positions(6, 11).tolist() == [0, 2, 4]
    assert inputs.edge_positions(1, 11).tolist() == []


def test_edges_written_are_found_again_and_replaced():
    rng = np.random.default_rng(0)
    feeds = {"z": (rng.standard_normal((8, 8)) + 1j).astype(np.complex64),
             "r": rng.standard_normal(4).astype(np.float32),
             "i": np.arange(4)}  # fmt: skip
    before = {k: v.copy() for k, v in feeds.items()}
    placed = inputs.with_edges(feeds)
    assert placed == {"z": inputs.edge_positions(64, len(inputs.EDGE_VALUES)).tolist(), "r": [0, 2]}
    # Only complex arrays are read back: a real zero is as likely a user's own.
    assert inputs.edges_in(feeds) == {"z": placed["z"]}
    plain = inputs.without_edges(feeds, placed)
    assert inputs.edges_in(plain) == {}
    for name, where in placed.items():
        moved = np.isin(np.arange(feeds[name].size), where)
        np.testing.assert_array_equal(plain[name].reshape(-1)[~moved],
                                      before[name].reshape(-1)[~moved])  # fmt: skip
        assert np.all(np.isfinite(plain[name].reshape(-1)[moved]))
        assert np.all(plain[name].reshape(-1)[moved] != 0)
    assert plain["i"] is feeds["i"], "arrays without edge values are passed on as they are"
    assert np.signbit(feeds["z"].reshape(-1)[placed["z"][1]].real), "feeds keep their -0"


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_edge_values_are_fed_where_reported(dtype):
    model = make_model(
        [helper.make_node("Identity", ["x"], ["y"]), helper.make_node("Neg", ["r"], ["q"])],
        [vi("x", dtype, [8, 8]), vi("r", np.float32, [4])],
        [vi("y", dtype, [8, 8]), vi("q", np.float32, [4])],
    )
    out, _ = decomplex(model)
    result = validate(model, out)  # edge values by default
    edges = inputs.EDGE_VALUES_128 if dtype == np.complex128 else inputs.EDGE_VALUES
    assert list(result.edges) == ["x", "r"], "complex and real float inputs take edge values"
    where = result.edges["x"]
    assert where == inputs.edge_positions(64, len(edges)).tolist()
    fed = result.expected[0].reshape(-1)
    np.testing.assert_array_equal(fed[where], np.array(edges, dtype))
    assert np.array_equal(np.signbit(fed[where].real), np.signbit(np.array(edges, dtype).real))
    assert np.count_nonzero(np.isin(np.arange(64), where, invert=True)) == 64 - len(edges)
    # A real input holds both signed zeros; -(-0) is +0 in the output.
    assert (
        result.edges["r"]
        == inputs.edge_positions(4, len(inputs.REAL_EDGE_VALUES)).tolist()
        == [0, 2]
    )
    np.testing.assert_array_equal(np.signbit(result.expected[1][[0, 2]]), [True, False])
    assert result.passed
    assert validate(model, out, edges=False).edges == {}
