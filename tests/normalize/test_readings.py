"""The registries of readings: their exact op sets, and no silent double registration."""

import pytest

from onnx_decomplex.files.tensorflow import TENSORFLOW_OPS
from onnx_decomplex.normalize import jax2onnx, tensorflow_ops, tf2onnx
from onnx_decomplex.normalize.readings import (
    HALF_CONVERSIONS,
    READINGS,
    TENSORFLOW,
    half_conversion,
    reading,
    tensorflow_op,
)

JAX2ONNX = {
    "Gather": jax2onnx.channel,
    "Concat": jax2onnx.pair,
    "DFT": jax2onnx.dft,
    "Reshape": jax2onnx.reshape_packed,
    "ReduceL1": jax2onnx.real_valued,
    "Cast": jax2onnx.complex_already,
}
TF2ONNX = {"Gather": tf2onnx.magnitude, "Pow": tf2onnx.real_exponent,
           "Pad": tf2onnx.real_pad_value}  # fmt: skip


def test_the_jax2onnx_readings_are_exactly_these():
    # A reading that drops out of its registry (a lost import, a typo) fails here.
    assert {op: r.fn for op, r in READINGS.items()} == JAX2ONNX


def test_the_tf2onnx_half_conversions_are_exactly_these():
    assert {op: r.fn for op, r in HALF_CONVERSIONS.items()} == TF2ONNX


def test_every_tensorflow_op_tf2onnx_leaves_has_its_meaning():
    assert set(TENSORFLOW) == TENSORFLOW_OPS
    assert TENSORFLOW["IFFT3D"].fn is tensorflow_ops.fft
    assert TENSORFLOW["RFFT2D"].fn is tensorflow_ops.rfft
    assert TENSORFLOW["IRFFT"].fn is tensorflow_ops.irfft


@pytest.mark.parametrize(
    ("op", "takes", "operands", "gives"),
    [("Complex", "real", 2, "native"), ("Conj", "complex", 1, "native"),
     ("Angle", "complex", 1, "real"), ("FFT2D", "complex", 1, "packed"),
     ("RFFT", "real", 1, "packed"), ("IRFFT3D", "complex", 1, "real")],
)  # fmt: skip
def test_a_tensorflow_op_says_what_it_takes_and_gives(op, takes, operands, gives):
    registered = TENSORFLOW[op]
    assert (registered.takes, registered.operands, registered.gives) == (takes, operands, gives)


@pytest.mark.parametrize(
    ("register", "op", "where"),
    [(reading, "Concat", "onnx_decomplex.normalize.jax2onnx.pair"),
     (half_conversion, "Pow", "onnx_decomplex.normalize.tf2onnx.real_exponent"),
     (tensorflow_op, "Angle", "onnx_decomplex.normalize.tensorflow_ops.angle")],
)  # fmt: skip
def test_registering_an_op_twice_raises_naming_the_first(register, op, where):
    before = {name: dict(r) for name, r in
              (("r", READINGS), ("h", HALF_CONVERSIONS), ("t", TENSORFLOW))}  # fmt: skip
    with pytest.raises(ValueError, match=f"^{op} already has a .*: {where}$"):
        register(op)(lambda *args: False)
    after = {name: dict(r) for name, r in
             (("r", READINGS), ("h", HALF_CONVERSIONS), ("t", TENSORFLOW))}  # fmt: skip
    assert after == before


def test_one_op_may_have_a_half_conversion_and_a_jax2onnx_reading():
    """tf2onnx's magnitude and jax2onnx's channels are both Gathers: each registry holds
    one reading per op, and the walk tries the half-conversion first."""
    assert READINGS["Gather"].where == "onnx_decomplex.normalize.jax2onnx.channel"
    assert HALF_CONVERSIONS["Gather"].where == "onnx_decomplex.normalize.tf2onnx.magnitude"
