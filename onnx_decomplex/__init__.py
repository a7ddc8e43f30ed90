"""Rewrite complex-valued ONNX graphs into equivalent packed-real graphs.

from onnx_decomplex import Session, decomplex, validate
model_out, report = decomplex(onnx.load("in.onnx"))
result = validate(original, model_out)
(y,) = Session(model_out).run(None, {"x": z})  # complex arrays in and out
"""

from .cmath import pack, unpack
from .contract import Contract, read_contract
from .errors import DecomplexError, UnsupportedError
from .pipeline import decomplex
from .runtime import Session
from .validate import ValidationResult, validate

__all__ = [
    "Contract",
    "DecomplexError",
    "Session",
    "UnsupportedError",
    "ValidationResult",
    "decomplex",
    "pack",
    "read_contract",
    "unpack",
    "validate",
]
__version__ = "0.1.0"
