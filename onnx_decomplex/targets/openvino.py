"""`--target openvino`: standard ops in the forms OpenVINO reads as the spec says and runs
right, validated in OpenVINO where the `openvino` extra is installed (docs/openvino.md).

OpenVINO 2026.4's DFT misreads a real one-sided signal's shape, DFT-20's axis and a
negative axis, and has no float64 DFT; its CPU plugin computes all float64 in float32.
So float64 is narrowed to float32 before the rewrite, as for TensorRT, and every DFT of
static length, an export's own too, takes a form OpenVINO reads right. And it divides
a / b as a (1 / b), whose 1 / b overflows at a subnormal b: the rewrite's moduli, angles
and quotients divide by none (`reciprocal_divides`), at 1.1 to 1.2 times their time in
onnxruntime, which is why the other targets keep the plain form."""

from __future__ import annotations

from .common.transforms import ACCURATE
from .shared import NARROW, ROTATION
from .target import Target, TargetForm, lowers


def _power_of_two(length: int) -> bool:
    return length & (length - 1) == 0


OPENVINO = Target(
    name="openvino",
    summary="standard ops in the forms OpenVINO reads right (every DFT of static length, "
    "an exporter's own too, as MatMuls, and no division by a subnormal), float64 narrowed "
    "to float32, validated in OpenVINO",
    runtime="openvino",
    runs_on="OpenVINO",
    reciprocal_divides=True,
    narrows=True,
    forms=(
        ROTATION,
        TargetForm(
            "transforms",
            "every DFT of static length, an exporter's own in a model the rewrite leaves "
            "as it was too: OpenVINO's own DFT misreads a real one-sided signal's shape, "
            "DFT-20's axis and a negative axis, and drops an inverse one-sided transform's "
            "trailing 1. A length that is a power of two becomes one DFT of a complex "
            "[rows, L, 2] on axis 1, which it reads right, and computes as accurately as "
            "the MatMul forms at 0.16 to 0.43 of their time; any other, the accurate "
            "MatMul forms (`common.transforms`), where OpenVINO's own error grows with the "
            "length (7e-4 of the largest bin at 4099, against 8e-7)",
            lowers(ACCURATE, native=_power_of_two),
            every_model=True,
        ),
        NARROW,
    ),
)
