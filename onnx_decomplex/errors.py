"""Errors that reach users: one line that names the file, node and tensor."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field


@dataclass
class DecomplexError(Exception):
    """A user-facing failure with the context needed to act on it.

    Attributes:
        message: What went wrong, without the context fields.
        file: The model file, once known (the library API may not have one).
        node: The node name, where one applies.
        op_type: The node's op type.
        tensor: The tensor involved.
    """

    message: str
    file: str | None = None
    node: str | None = None
    op_type: str | None = None
    tensor: str | None = None

    def __post_init__(self) -> None:
        super().__init__(self.message)

    def at_file(self, file: str) -> DecomplexError:
        """Returns a copy that names `file`, unless a file is already named."""
        if self.file is not None:
            return self
        return dataclasses.replace(self, file=str(file))

    def __str__(self) -> str:
        parts = []
        if self.file:
            parts.append(self.file)
        if self.node is not None or self.op_type is not None:
            parts.append(f"node '{self.node or ''}' ({self.op_type or '?'})")
        if self.tensor is not None:
            parts.append(f"tensor '{self.tensor}'")
        parts.append(self.message)
        # Keep it on one line: messages from onnx or protobuf may carry newlines.
        return ": ".join(" ".join(p.split()) for p in parts)


class LoadError(DecomplexError):
    """The input cannot be read as an ONNX model."""


class SaveError(DecomplexError):
    """The output cannot be written."""


class CheckError(DecomplexError):
    """The rewritten model fails ONNX shape inference or the checker."""


class OptionError(DecomplexError):
    """An option's value that does not fit the model: an input it does not have, a dim it
    fixes otherwise, an opset it cannot take. Bad usage, as a malformed value is: the
    command line exits 2."""


class ValidationTimeout(DecomplexError):
    """Validation (the reference evaluator or the runtime) ran past its time limit."""


@dataclass
class Unsupported:
    """One node that receives a complex value and has no rule to rewrite it."""

    node: str
    op_type: str
    tensor: str
    dtype: str
    reason: str = "no complex rule"
    path: tuple[str, ...] = ()
    role: str = "input"

    def __str__(self) -> str:
        text = (
            f"'{self.node}' ({self.op_type}, {self.role} '{self.tensor}' is {self.dtype}: "
            f"{self.reason}"
        )
        if len(self.path) > 1:
            text += f"; path {' -> '.join(self.path)}"
        return text + ")"


@dataclass
class UnsupportedError(DecomplexError):
    """Complex values reach nodes that cannot be rewritten; lists every one of them."""

    nodes: list[Unsupported] = field(default_factory=list)

    @classmethod
    def of(cls, nodes: list[Unsupported]) -> UnsupportedError:
        word = "node" if len(nodes) == 1 else "nodes"
        listed = "; ".join(str(n) for n in nodes)
        return cls(f"{len(nodes)} {word} cannot take complex values: {listed}", nodes=nodes)
