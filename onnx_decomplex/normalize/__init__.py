"""Read an exporter's mixed graph as the native-complex model it means.

jax2onnx keeps some complex values typed complex and packs others itself as real
`[..., 2]` tensors; tf2onnx leaves TensorFlow's complex ops as they are where it has
no converter, and converts others as if their values were real. No runtime can run
such a graph as written. `normalize` reads it value by value and consumer by
consumer, and writes the valid native-complex model the exporter meant.

The package, one concern a module:

    decide.py          normalize: which reading holds, as written or the exporters'
    walk.py            Walk: one reading of a whole graph; a complex value's forms
    nodes.py           how a walk takes each node: a reading, or as written
    inference.py       every value's type and rank
    bodies.py          If branches, Loop and Scan bodies
    declared.py        graph inputs and outputs against their declarations
    readings.py        the registries: @reading, @half_conversion, @tensorflow_op
    jax2onnx.py        jax2onnx's packed pairs, channels, DFTs          (@reading)
    tf2onnx.py         tf2onnx's half-converted magnitude and powers    (@half_conversion)
    tensorflow_ops.py  TensorFlow's raw ops                             (@tensorflow_op)
    protocol.py        ReadingContext: what the readings may ask of their walk
    facts.py           declarations and shape comparisons every module shares

Importing the package registers every reading.
"""

from . import jax2onnx, tensorflow_ops, tf2onnx  # noqa: F401  (imported to register)
from .decide import MAX_ROUNDS, Normalized, NormalizeError, imported, normalize, unknown_values
from .facts import COMPLEX_OF, MAX_READ_ELEMENTS, Shape
from .inference import FOLDED, ONESIDED_DEFAULT
from .jax2onnx import AXIS_OPS, REAL_VALUED
from .nodes import DIFFERS, PROMOTED, SOURCES
from .readings import HALF_CONVERSIONS, READINGS, TENSORFLOW
from .tensorflow_ops import TRANSFORMS
from .tf2onnx import MOVES
from .walk import Walk

__all__ = [
    "AXIS_OPS",
    "COMPLEX_OF",
    "DIFFERS",
    "FOLDED",
    "HALF_CONVERSIONS",
    "MAX_READ_ELEMENTS",
    "MAX_ROUNDS",
    "MOVES",
    "ONESIDED_DEFAULT",
    "PROMOTED",
    "READINGS",
    "REAL_VALUED",
    "SOURCES",
    "TENSORFLOW",
    "TRANSFORMS",
    "NormalizeError",
    "Normalized",
    "Shape",
    "Walk",
    "imported",
    "normalize",
    "unknown_values",
]
