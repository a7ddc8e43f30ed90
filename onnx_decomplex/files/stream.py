"""Complex tensors too large to decode, rewritten where they lie on disk.

A complex tensor's bytes are its packed form (complex64's are float32 pairs:
`x.view(np.float32)`), so its packed form is the same bytes, typed real with a
trailing 2: nothing is read. Its
(re, im) parts are written to a scratch file beside the output, CHUNK bytes at a
time, so memory stays flat whatever the tensor's size. Saving copies both into the
output's data file (see `save`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import onnx_graphsurgeon as gs
from onnx import TensorProto
from onnx.external_data_helper import uses_external_data
from onnx_graphsurgeon.ir.tensor import LazyValues

from ..dtypes import is_complex_onnx, real_of
from .external import external_length, external_location
from .save import ALIGN, CHUNK, point_to

LARGE = 64 << 20
"""Complex initializers of this many bytes or more, left on disk by a streamed read,
are rewritten where they lie in a file run: their values are never decoded, so no
rule reads them (a table this large is not one a rule would fold)."""


def on_disk(t: gs.Tensor) -> TensorProto | None:
    """The TensorProto of `t` when it is an initializer a streamed read left on disk;
    else None. onnx-graphsurgeon keeps an initializer it has not loaded as LazyValues,
    which holds the TensorProto: loading it there is what its export uses."""
    lazy = getattr(t, "_values", None) if isinstance(t, gs.Constant) else None
    tensor = getattr(lazy, "tensor", None)
    return tensor if tensor is not None and uses_external_data(tensor) else None


def left_on_disk(t: gs.Tensor) -> TensorProto | None:
    """The TensorProto of `t` when it is a complex initializer of LARGE bytes or more
    that a streamed read left on disk; else None."""
    tensor = on_disk(t)
    if tensor is None or not is_complex_onnx(tensor.data_type):
        return None
    itemsize = onnx.helper.tensor_dtype_to_np_dtype(tensor.data_type).itemsize
    return tensor if int(np.prod(tensor.dims, dtype=np.int64)) * itemsize >= LARGE else None


def _real_type(t: TensorProto) -> int:
    complex_np = onnx.helper.tensor_dtype_to_np_dtype(t.data_type)
    return onnx.helper.np_dtype_to_tensor_dtype(real_of(complex_np))


class Streamed:
    """Where a file run rewrites complex tensors on disk.

    Args:
        source_dir: Where the input's data files are.
        folder: Makes the folder for the scratch file of parts, when the first part
            is written (a temporary folder beside the output: the run removes it).
    """

    def __init__(self, source_dir: Path, folder: Callable[[], Path]):
        self.source_dir = Path(source_dir)
        self._folder = folder
        self._scratch: Path | None = None

    def packed(self, t: TensorProto, name: str) -> gs.Constant:
        """The packed form of the on-disk complex tensor `t`: the same bytes in the
        same file, typed real, its shape with a trailing 2."""
        out = TensorProto()
        out.name, out.data_type = name, _real_type(t)
        out.dims.extend([*t.dims, 2])
        location, offset, _ = external_location(t)
        size = external_length(t, self.source_dir)
        point_to(out, str(self.source_dir / location), offset, size)
        return gs.Constant(name, LazyValues(out))

    def parts(self, t: TensorProto, names: tuple[str, str]) -> tuple[gs.Constant, gs.Constant]:
        """(re, im) of the on-disk complex tensor `t`, as real constants named
        `names`, written to the scratch file CHUNK bytes at a time."""
        if self._scratch is None:
            self._scratch = self._folder() / "parts.data"
        complex_np = onnx.helper.tensor_dtype_to_np_dtype(t.data_type)
        real_np = real_of(complex_np)
        location, offset, _ = external_location(t)
        count = external_length(t, self.source_dir) // complex_np.itemsize
        step = max(1, CHUNK // complex_np.itemsize)
        starts = []
        with open(self._scratch, "ab") as out, open(self.source_dir / location, "rb") as src:
            for part in (0, 1):
                out.write(b"\0" * (-out.tell() % ALIGN))
                starts.append(out.tell())
                for first in range(0, count, step):
                    n = min(step, count - first)
                    src.seek(offset + first * complex_np.itemsize)
                    chunk = np.frombuffer(src.read(n * complex_np.itemsize), complex_np)
                    values = chunk.real if part == 0 else chunk.imag
                    out.write(np.ascontiguousarray(values, real_np).tobytes())
        constants = []
        for name, start in zip(names, starts, strict=True):
            proto = TensorProto()
            proto.name, proto.data_type = name, _real_type(t)
            proto.dims.extend(t.dims)
            point_to(proto, str(self._scratch), start, count * real_np.itemsize)
            constants.append(gs.Constant(name, LazyValues(proto)))
        return constants[0], constants[1]
