"""The registry: the exact op set, and no silent double registration."""

import pytest

from onnx_decomplex.rules import REGISTRY, rule, supported_ops

EXPECTED = {
    "Add", "Cast", "Constant", "Flatten", "Identity", "Mul", "Neg",
    "Reshape", "Squeeze", "Sub", "Transpose", "Unsqueeze",
}  # fmt: skip


def test_registry_op_set_is_exact():
    # A rule that drops out of the registry (a lost import, a typo) fails here.
    assert supported_ops() == EXPECTED


def test_registering_an_op_twice_raises():
    with pytest.raises(ValueError, match="Mul already has a rule"):
        rule("Mul")(lambda ctx, node: None)
    assert REGISTRY["Mul"].fn.__name__ == "mul"
