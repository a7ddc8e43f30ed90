"""Complex and real element types, in ONNX and numpy spellings."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

COMPLEX_TO_REAL = {
    TensorProto.COMPLEX64: TensorProto.FLOAT,
    TensorProto.COMPLEX128: TensorProto.DOUBLE,
}
COMPLEX_ONNX = frozenset(COMPLEX_TO_REAL)

TYPE_ATTRIBUTES = ("to", "dtype")
"""Integer node attributes that name an element type (Cast's `to`, EyeLike's `dtype`, ...)."""


def is_complex_onnx(elem_type: int) -> bool:
    """True for COMPLEX64 and COMPLEX128."""
    return elem_type in COMPLEX_ONNX


def is_complex_np(dtype) -> bool:
    """True for numpy complex dtypes (and onnx-graphsurgeon's dtype objects for them)."""
    try:
        return np.dtype(dtype).kind == "c"
    except TypeError:
        return False


def real_of(dtype: np.dtype) -> np.dtype:
    """complex64 -> float32, complex128 -> float64."""
    return np.dtype(np.float32) if np.dtype(dtype) == np.complex64 else np.dtype(np.float64)


def promote(*dtypes) -> np.dtype:
    """Numpy's promotion, which is what the reference evaluator computes with."""
    return np.result_type(*[np.dtype(d) for d in dtypes])


def onnx_of(dtype) -> int:
    """The ONNX element type of a numpy dtype."""
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def np_of(elem_type: int) -> np.dtype:
    """The numpy dtype of an ONNX element type."""
    return helper.tensor_dtype_to_np_dtype(elem_type)


ORT_CPU_NO_FLOAT64 = frozenset(
    {"Sinh", "Cosh", "Tan", "Asin", "Acos", "Atan", "Asinh", "Acosh", "Atanh",
     "Mean", "Conv", "ConvTranspose"}
)  # fmt: skip
"""Ops that onnxruntime's CPU provider has no float64 kernel for (tests/test_dtypes.py
checks the table against the installed onnxruntime). A rewrite that computes in float64
(complex128 values) does not emit them: it builds them from ops the provider has (Sinh,
Cosh and Atan in `cmath`, Mean as Sum then Div), or runs them in float32 and casts back
(Conv, ConvTranspose)."""


def ort_lacks_float64(op: str, dtype) -> bool:
    """True when `dtype` is float64 and onnxruntime's CPU provider has no such kernel
    for `op` (`ORT_CPU_NO_FLOAT64`): the rewrite must not emit `op` on `dtype`."""
    return dtype is not None and np.dtype(dtype) == np.float64 and op in ORT_CPU_NO_FLOAT64
