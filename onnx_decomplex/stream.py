"""Complex tensors too large to decode, rewritten where they lie on disk.

A complex64 tensor's bytes are its packed float32 form (`x.view(np.float32)`), so its
packed form is the same bytes, typed real with a trailing 2: nothing is read. Its
(re, im) parts are written to a scratch file beside the output, CHUNK bytes at a
time, so memory stays flat whatever the tensor's size. Saving copies both into the
output's data file (see `save`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto
from onnx.external_data_helper import uses_external_data

from .dtypes import is_complex_onnx, real_of
from .load import external_length, external_location
from .save import ALIGN, CHUNK, point_to


def on_disk(t: TensorProto | None) -> bool:
    """Whether `t` is a complex tensor left on disk by a streamed read (see
    `load.read_model`): one to rewrite here, never decoded."""
    return t is not None and uses_external_data(t) and is_complex_onnx(t.data_type)


def _real_type(t: TensorProto) -> int:
    complex_np = onnx.helper.tensor_dtype_to_np_dtype(t.data_type)
    return onnx.helper.np_dtype_to_tensor_dtype(real_of(complex_np))


def packed(t: TensorProto, name: str, source_dir: Path) -> TensorProto:
    """The packed form of the on-disk complex tensor `t`: the same bytes in the same
    file, typed real, its shape with a trailing 2."""
    out = TensorProto()
    out.name, out.data_type = name, _real_type(t)
    out.dims.extend([*t.dims, 2])
    location, offset, _ = external_location(t)
    point_to(out, str(Path(source_dir) / location), offset, external_length(t, source_dir))
    return out


class Scratch:
    """One file beside the output that holds the parts split off on-disk tensors; its
    tensors point at it by absolute path, which saving reads and rewrites.

    Args:
        folder: Makes the folder the file goes in, when the first part is written.
    """

    def __init__(self, folder: Callable[[], Path]):
        self._folder = folder
        self._path: Path | None = None

    @property
    def path(self) -> Path:
        if self._path is None:
            self._path = self._folder() / "parts.data"
        return self._path

    def parts(self, t: TensorProto, names: tuple[str, str], source_dir: Path):
        """(re, im) of the on-disk complex tensor `t`, as real tensors named `names`,
        appended to the scratch file a chunk at a time."""
        complex_np = onnx.helper.tensor_dtype_to_np_dtype(t.data_type)
        real_np = real_of(complex_np)
        location, offset, _ = external_location(t)
        size = external_length(t, source_dir)
        count = size // complex_np.itemsize
        step = max(1, CHUNK // complex_np.itemsize)
        with open(self.path, "ab") as out, open(Path(source_dir) / location, "rb") as src:
            starts = []
            for part in (0, 1):
                out.write(b"\0" * (-out.tell() % ALIGN))
                starts.append(out.tell())
                for first in range(0, count, step):
                    n = min(step, count - first)
                    src.seek(offset + first * complex_np.itemsize)
                    chunk = np.frombuffer(src.read(n * complex_np.itemsize), complex_np)
                    values = chunk.real if part == 0 else chunk.imag
                    out.write(np.ascontiguousarray(values, real_np).tobytes())
        tensors = []
        for name, start in zip(names, starts, strict=True):
            part = TensorProto()
            part.name, part.data_type = name, _real_type(t)
            part.dims.extend(t.dims)
            point_to(part, str(self.path), start, count * real_np.itemsize)
            tensors.append(part)
        return tuple(tensors)
