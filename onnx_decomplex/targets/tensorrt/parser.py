"""What TensorRT's ONNX parser lacks, in ops it takes:

    Compress(x, cond)     -> Gather(x, nonzero(cond))
    NonZero(x)            -> NonZero(Cast(x, float)), x not float32 or float16

DFT and STFT take the MatMul forms every target shares (`common.transforms`), and an
Einsum of two operands one MatMul (`common.einsum`).
"""

from __future__ import annotations

import numpy as np
import onnx
import onnx_graphsurgeon as gs

from ...constants import gs_value
from ...emit import Emitter
from ..common.lowering import Lowered, lowering, op


@lowering("Compress")
def compress(e: Emitter, node: gs.Node, lowered: Lowered) -> None:
    x, cond, y = node.inputs[0], node.inputs[1], node.outputs[0]
    axis = node.attrs.get("axis")
    if axis is None:
        x, axis = op(e, "Reshape", [x, np.array([-1], np.int64)]), 0
    value = gs_value(cond)
    if value is not None:
        index = np.flatnonzero(value.astype(bool)).astype(np.int64)
        how = "constant indices"
    else:
        # NonZero takes floats in TensorRT, not booleans.
        as_float = op(e, "Cast", [cond], {"to": onnx.TensorProto.FLOAT})
        index = op(e, "Reshape", [op(e, "NonZero", [as_float]), np.array([-1], np.int64)])
        how = "NonZero of the condition"
    op(e, "Gather", [x, index], {"axis": int(axis)}, out=y)
    node.outputs.clear()
    lowered.notes.append(f"{node.name}: Compress -> Gather with {how}")


@lowering("NonZero")
def nonzero(e: Emitter, node: gs.Node, lowered: Lowered) -> bool | None:
    x, y = node.inputs[0], node.outputs[0]
    if x.dtype is not None and np.dtype(x.dtype) in (np.float32, np.float16):
        return False  # TensorRT takes it as it is
    # TensorRT's NonZero takes floats, not booleans or integers (jax2onnx's ScatterND
    # writes one of a mask); the cast keeps which elements are nonzero.
    op(e, "NonZero", [op(e, "Cast", [x], {"to": onnx.TensorProto.FLOAT})], out=y)
    node.outputs.clear()
    lowered.notes.append(f"{node.name}: NonZero of its input cast to float")
