"""Rewrite complex-valued ONNX graphs into equivalent packed-real graphs.

from onnx_decomplex import decomplex, validate
model_out, report = decomplex(onnx.load("in.onnx"))
result = validate(original, model_out)
"""

from .errors import DecomplexError, UnsupportedError
from .pipeline import decomplex
from .validate import ValidationResult, validate

__all__ = ["DecomplexError", "UnsupportedError", "ValidationResult", "decomplex", "validate"]
__version__ = "0.1.0"
