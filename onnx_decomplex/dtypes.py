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
