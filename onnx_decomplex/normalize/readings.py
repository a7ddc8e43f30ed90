"""The registries of exporters' readings: one function per op type and dialect.

    @reading("Gather")        jax2onnx's packed pairs, channels and DFTs   (`READINGS`)
    @half_conversion("Pow")   tf2onnx's half-converted complex ops (`HALF_CONVERSIONS`)
    @tensorflow_op("RFFT")    TensorFlow's raw ops, left as they are       (`TENSORFLOW`)

A reading takes the walk, the node and its input kinds, and returns True when it has
read the node, False when it does not apply (the walk then takes the node as it takes
any other).
The walk tries a node's half-conversion before its jax2onnx reading. A TensorFlow op's
function returns its result and the result's logical shape, or None once it has
recorded why it cannot read the node; the walk checks its operands beforehand and
records its output afterwards, as the registration says.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import onnx_graphsurgeon as gs

    from .facts import Kinds, Shape
    from .protocol import ReadingContext

ReadFn = Callable[["ReadingContext", "gs.Node", "Kinds"], bool]
TensorflowFn = Callable[["ReadingContext", "gs.Node"], "tuple[gs.Tensor, Shape] | None"]


@dataclass(frozen=True)
class Reading:
    """A registered reading of one op type."""

    op_type: str
    fn: Callable

    @property
    def where(self) -> str:
        return f"{self.fn.__module__}.{self.fn.__qualname__}"


@dataclass(frozen=True)
class TensorflowOp(Reading):
    """TensorFlow's meaning of one of its raw ops.

    Attributes:
        takes: "complex" when its operands must be complex values, "real" when they
            must be float32 or float64 tensors.
        operands: How many of its inputs `takes` speaks of (the rest are lengths, perms).
        gives: Its result: "native" (a typed complex value), "packed" (a complex value
            held as a real `[..., 2]`) or "real".
    """

    takes: str = "complex"
    operands: int = 1
    gives: str = "real"


class Registry(dict):
    """Readings by op type, one each: registering an op twice raises, since silently
    replacing a reading would hide which of two modules actually runs."""

    def __init__(self, what: str, entry: type[Reading] = Reading):
        super().__init__()
        self.what, self.entry = what, entry

    def add(self, entry: Reading) -> None:
        if entry.op_type in self:
            raise ValueError(
                f"{entry.op_type} already has {self.what}: {self[entry.op_type].where}"
            )
        self[entry.op_type] = entry

    def register(self, *op_types: str, **fields) -> Callable[[Callable], Callable]:
        """A decorator that registers its function for each op type in `op_types`,
        with the entry's other `fields`."""

        def register(fn: Callable) -> Callable:
            for op in op_types:
                self.add(self.entry(op, fn, **fields))
            return fn

        return register


READINGS = Registry("a jax2onnx reading")
HALF_CONVERSIONS = Registry("a tf2onnx half-conversion")
TENSORFLOW = Registry("a TensorFlow meaning", TensorflowOp)


def reading(*op_types: str) -> Callable[[ReadFn], ReadFn]:
    """Registers `fn` as jax2onnx's reading of each op type in `op_types`.

    Raises:
        ValueError: An op type already has one.
    """
    return READINGS.register(*op_types)


def half_conversion(*op_types: str) -> Callable[[ReadFn], ReadFn]:
    """Registers `fn` as the reading of what tf2onnx half-converts into each op type
    in `op_types`; it is tried before a jax2onnx reading of the same op.

    Raises:
        ValueError: An op type already has one.
    """
    return HALF_CONVERSIONS.register(*op_types)


def tensorflow_op(
    *op_types: str, takes: str = "complex", operands: int = 1, gives: str = "real"
) -> Callable[[TensorflowFn], TensorflowFn]:
    """Registers `fn` as TensorFlow's meaning of each raw op in `op_types`.

    Args:
        *op_types: TensorFlow's op types, as tf2onnx leaves them in the default domain.
        takes: What the first `operands` inputs must be: "complex" or "real" values.
        operands: How many inputs `takes` speaks of.
        gives: What the result is: "native", "packed" or "real".

    Raises:
        ValueError: An op type already has one.
    """
    return TENSORFLOW.register(*op_types, takes=takes, operands=operands, gives=gives)
