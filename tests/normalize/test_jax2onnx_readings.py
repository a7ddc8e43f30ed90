"""jax2onnx's readings: parts read with Gather on the pair axis, pairs stacked with
Concat(Unsqueeze), typed-complex values read packed. Each test builds a graph the way
jax2onnx writes one, converts it, and compares with numpy on complex arrays."""

from __future__ import annotations

import numpy as np
import onnx
from exported import SHAPE, STEPS, Export, converted, program, z_of
from helpers import vi
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from onnx_decomplex import decomplex, validate
from onnx_decomplex.check import find_complex
from onnx_decomplex.cmath import pack
from onnx_decomplex.normalize import normalize

C64, F32 = np.complex64, np.float32


def test_parts_of_a_typed_complex_value_are_read_on_its_pair_axis():
    e = Export()
    e.inputs = [vi("z", np.complex64, SHAPE)]
    re, im = e.split(("z", "typed"))
    model = e.model([vi(re, np.float32, SHAPE), vi(im, np.float32, SHAPE)])
    z = z_of()
    _, report = converted(model, {"z": z}, [z.real, z.imag])
    assert len(report.readings) == 2 and "Re 'z'" in report.readings[0]


def test_a_complex_value_paired_with_zero_is_the_value():
    """jnp.imag of a product: Concat(Unsqueeze(w), Unsqueeze(0 w)) on a w already complex."""
    e = Export()
    e.inputs = [vi("a", np.complex64, SHAPE), vi("b", np.complex64, SHAPE)]
    w = e.op("Mul", "a", "b")
    zero = e.op("Mul", w, e.const(np.array(0, np.float32)))
    packed, _ = e.pair(w, zero)
    _, im = e.split((packed, "typed"))
    model = e.model([vi(im, np.float32, SHAPE)])
    a, b = z_of(1), z_of(2)
    _, report = converted(model, {"a": a, "b": b}, [(a * b).imag])
    assert any("+ i 0" in line for line in report.readings)


def test_integer_pairs_are_index_vectors_not_complex_values():
    """dynamic_slice's start indices: Concat(Unsqueeze(i), Unsqueeze(j)) of int64 scalars."""
    e = Export()
    e.inputs = [vi("z", np.complex64, SHAPE)]
    re, _ = e.split(("z", "typed"))
    starts, _ = e.pair(e.const(np.array(1, np.int64)), e.const(np.array(2, np.int64)), "first")
    out = e.op("Slice", re, starts, e.const(np.array(SHAPE, np.int64)))
    model = e.model([vi(out, np.float32, [2, 2])])
    z = z_of()
    _, report = converted(model, {"z": z}, [z.real[1:, 2:]])
    assert not any("Concat" in line for line in report.readings)


def test_a_pair_on_axis_0_is_read_when_its_parts_are_parts_of_complex_values():
    """0.5 * z: the scalar's parts, times z's, stacked on axis 0 to [2, 3, 4]."""
    e = Export()
    e.inputs = [vi("z", np.complex64, SHAPE)]
    half = e.const(np.array(0.5 + 0.25j, np.complex64))
    product = e.mul((half, "typed"), ("z", "typed"), "first")
    out = e.op("Exp", product[0])
    model = e.model([vi(out, np.float32, [*SHAPE, 2])])
    z = z_of()
    _, report = converted(model, {"z": z}, [np.exp((0.5 + 0.25j) * z)])
    assert report.axis0 == [model.graph.node[-2].name]
    assert report.packed_io == [f"output '{out}'"]


def test_a_real_stack_on_axis_0_stays_real():
    """In the same mixed graph, a stack of values that are no parts of complex ones."""
    e = Export()
    e.inputs = [vi("z", np.complex64, SHAPE), vi("x", np.float32, SHAPE)]
    re, _ = e.split(("z", "typed"))
    stacked, _ = e.pair("x", e.op("Neg", "x"), "first")
    total = e.op("ReduceSum", stacked, e.const(np.array([0], np.int64)), keepdims=0)
    out = e.op("Add", re, total)
    model = e.model([vi(out, np.float32, SHAPE)])
    z = z_of()
    x = np.random.default_rng(3).standard_normal(SHAPE).astype(np.float32)
    converted(model, {"z": z, "x": x}, [z.real])


def test_a_real_stack_summed_over_its_new_axis_stays_real():
    """In a graph that reads parts of a complex value, a stack of two real values that
    is then reduced over the new axis is a real stack: the exporter never reduces over
    the axis it packs a pair on."""
    e = Export()
    e.inputs = [vi("z", np.complex64, SHAPE), vi("x", np.float32, SHAPE)]
    re, _ = e.split(("z", "typed"))
    stacked, _ = e.pair("x", e.op("Neg", "x"))
    total = e.op("ReduceSum", stacked, e.const(np.array([-1], np.int64)), keepdims=0)
    out = e.op("Add", re, total)
    model = e.model([vi(out, np.float32, SHAPE)])
    z = z_of()
    x = np.random.default_rng(3).standard_normal(SHAPE).astype(np.float32)
    _, report = converted(model, {"z": z, "x": x}, [z.real])
    assert not any("Concat" in line for line in report.readings)


def test_dft_output_is_read_by_each_consumer_in_its_own_form():
    """A Transpose with the complex rank reads it natively; a Gather on the pair axis packed."""
    e = Export()
    e.inputs = [vi("x", np.float32, [*SHAPE, 2])]
    f = e.op("DFT", "x", axis=1)
    flipped = e.op("Transpose", f, perm=[1, 0])
    re, _ = e.split((f, "last"))
    model = e.model([vi(flipped, np.float32, [4, 3, 2]), vi(re, np.float32, SHAPE)])
    z = z_of()
    spectrum = np.fft.fft(z, axis=1)
    converted(model, {"x": pack(z)}, [spectrum.T, spectrum.real])


def test_half_precision_is_never_a_complex_pair():
    """ONNX has no complex half: float16 parts pair into nothing."""
    e = Export()
    e.inputs = [vi("x", np.float16, [1, 8, 2])]
    f = e.op("DFT", "x", axis=1)
    first = e.op("Gather", f, e.const(np.array(0, np.int64)), axis=2)
    model = e.model([vi(first, np.float16, [1, 8])])
    assert normalize(model).model is model


def test_a_reshape_to_twice_the_elements_reads_its_value_packed():
    """Reshape(z, [24]) of a complex [3, 4]: view_as_real(z), flattened."""
    e = Export()
    e.inputs = [vi("z", C64, SHAPE)]
    out = e.op("Reshape", "z", e.const(np.array([24], np.int64)))
    model = e.model([vi(out, F32, [24])])
    z = z_of()
    _, report = converted(model, {"z": z}, [pack(z).reshape(24)])
    assert report.readings == [f"{out}_node (Reshape): reads 'z' packed"]


def test_a_reduce_l1_of_a_complex_value_is_the_real_sum_of_moduli():
    e = Export()
    e.inputs = [vi("z", C64, SHAPE)]
    out = e.op("ReduceL1", "z", e.const(np.array([1], np.int64)), keepdims=0)
    model = e.model([vi(out, F32, [SHAPE[0]])])
    z = z_of()
    _, report = converted(model, {"z": z}, [np.abs(z).sum(axis=1)])
    assert report.readings == [f"{out}_node (ReduceL1): a real value, typed complex by ONNX"]


def test_a_cast_of_a_complex_value_to_its_own_type_is_the_value():
    """Cast(z, to=complex64), its real part read on the pair axis."""
    e = Export()
    e.inputs = [vi("z", C64, SHAPE)]
    same = e.op("Cast", "z", to=onnx.TensorProto.COMPLEX64)
    re, _ = e.split((same, "typed"))
    model = e.model([vi(re, F32, SHAPE)])
    z = z_of()
    _, report = converted(model, {"z": z}, [z.real])
    assert f"{same}_node (Cast): 'z' is complex already" in report.readings


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    steps=st.lists(st.sampled_from(STEPS), min_size=1, max_size=6),
    typed=st.tuples(st.booleans(), st.booleans()),
    seed=st.integers(0, 2**16),
)
def test_random_exporter_graphs_convert_and_match_numpy(steps, typed, seed):
    built = program(steps, typed)
    if built is None:
        return
    model, fn = built
    inputs = [z_of(seed) * 0.5, z_of(seed + 1) * 0.5]
    feeds = {f"in_{i}": inputs[i] for i in range(2)}
    out, _ = decomplex(model)
    assert find_complex(out) == []
    onnx.checker.check_model(out, full_check=True)
    result = validate(model, out, feeds, expected=[fn(inputs)])
    assert result.passed, (steps, typed, result.outputs)
