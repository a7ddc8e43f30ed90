"""Complex constants.

    Constant(value=z) -> (nothing)

The value is kept in numpy; each consumer gets it packed, or split into
(Re z, Im z), as an initializer made at rewrite time.
"""

from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from ..dtypes import is_complex_np
from .registry import rule


def _complex_value(node: gs.Node) -> np.ndarray | None:
    value = node.attrs.get("value")
    if isinstance(value, gs.Constant) and is_complex_np(value.values.dtype):
        return np.asarray(value.values)
    return None


def _infer(node, kinds):
    value = _complex_value(node)
    return [None if value is None else value.dtype]


@rule("Constant", infer=_infer)
def constant(ctx, node):
    ctx.set_constant(node.outputs[0], _complex_value(node))
    ctx.explain("complex constant kept in numpy, packed or split where used")
