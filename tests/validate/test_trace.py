"""Where a failed output starts to fail (`validate.trace`): the first value of the
original whose counterpart in the rewrite departs, named with its node, op and rule."""

import numpy as np
import onnx
from helpers import make_model, vi
from onnx import helper

from onnx_decomplex import decomplex, validate
from onnx_decomplex.options import Options
from onnx_decomplex.passes.state import State
from onnx_decomplex.pipeline import IN_MEMORY, run
from onnx_decomplex.validate.trace import Rewrite, first_departure


def _chain() -> onnx.ModelProto:
    """z -> Exp -> Mul by w -> Sin -> y: three complex values in a row."""
    nodes = [helper.make_node("Exp", ["z"], ["e"], name="exp"),
             helper.make_node("Mul", ["e", "w"], ["m"], name="times"),
             helper.make_node("Sin", ["m"], ["y"], name="sine")]  # fmt: skip
    io = [vi(n, np.complex64, [3, 4]) for n in ("z", "w")]
    return make_model(nodes, io, [vi("y", np.complex64, [3, 4])])


def _rewrite(model: onnx.ModelProto) -> tuple[onnx.ModelProto, Rewrite]:
    state = run(State(Options(), model=model, source=model), IN_MEMORY)
    return state.model, Rewrite(state.held, state.report.explanations)


def _feeds():
    rng = np.random.default_rng(0)
    return {k: (rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))).astype(
        np.complex64) for k in ("z", "w")}  # fmt: skip


def _broken(out: onnx.ModelProto, prefix: str) -> onnx.ModelProto:
    """`out` with the last Mul of the nodes a rule wrote for `prefix` made a Div: a
    product that makes the value (an earlier one may only pick a sign at special values)."""
    broken = onnx.ModelProto()
    broken.CopyFrom(out)
    muls = [n for n in broken.graph.node if n.name.startswith(prefix) and n.op_type == "Mul"]
    node = muls[-1]
    node.op_type = "Div"
    return broken


def test_a_wrong_rule_is_named_where_its_value_departs():
    model = _chain()
    out, made = _rewrite(model)
    broken = _broken(out, "times")
    found = first_departure(model, broken, _feeds(), 1e-5, 1e-4, made)
    assert (found.node, found.op, found.value) == ("times", "Mul", "m")
    assert found.max_tol > 1 and found.rule and found.tensors
    assert found.describe().startswith("first departs at m, made by times (Mul)")


def test_a_failed_validation_carries_its_departure():
    model = _chain()
    out, made = _rewrite(model)
    result = validate(model, _broken(out, "sine"), _feeds(), rewrite=made)
    assert not result.passed and result.departure.node == "sine"


def test_values_match_by_name_without_what_the_rewrite_recorded():
    """A conversion made elsewhere, with no record: the output, held packed under its own
    name, is still compared."""
    model = _chain()
    out, _ = decomplex(model)
    found = first_departure(model, _broken(out, "sine"), _feeds(), 1e-5, 1e-4)
    assert found.value == "y"


def test_a_passing_rewrite_departs_nowhere():
    model = _chain()
    out, made = _rewrite(model)
    assert first_departure(model, out, _feeds(), 1e-5, 1e-4, made) is None
    assert validate(model, out, _feeds(), rewrite=made).departure is None


def test_a_value_of_another_shape_departs_where_no_number_does():
    """A Transpose given the wrong perm makes the output of another shape: no value
    departs in number, so the first of another shape is named, with both shapes."""
    nodes = [helper.make_node("Mul", ["z", "w"], ["m"], name="times"),
             helper.make_node("Transpose", ["m"], ["y"], name="turn", perm=[1, 0])]  # fmt: skip
    model = make_model(nodes, [vi(n, np.complex64, [3, 4]) for n in ("z", "w")],
                       [vi("y", np.complex64, [4, 3])])  # fmt: skip
    out, made = _rewrite(model)
    broken = onnx.ModelProto()
    broken.CopyFrom(out)
    for turn in (n for n in broken.graph.node if n.op_type == "Transpose"):  # each part's
        turn.attribute[0].ints[:] = [0, 1]
    found = first_departure(model, broken, _feeds(), 1e-5, 1e-4, made)
    assert (found.node, found.value) == ("turn", "y")
    assert found.describe().startswith("first departs at y, made by turn (Transpose): shape (3, 4)")
