"""Inputs and outputs in .npz files: the inputs a run is given (`--load-inputs`) or
writes (`--save-inputs`), and the outputs saved beside them (`EXPECTED`), which stand
in for the reference evaluator where it cannot run the model."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np
import onnx

from .. import cmath
from ..dtypes import np_of
from ..errors import DecomplexError
from ..reference import unpack
from .inputs import graph_inputs

EXPECTED = "expected"
"""Key of saved outputs in an inputs file: `expected` for a model with one output,
or `expected:NAME` for each output by name."""

_NUMBERS = "biufc"
"""numpy kinds an input or output can be: bool, integers, floats, complex."""


def npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """An uncompressed .npz archive of `arrays`, by name, as `np.load` reads it. Written
    member by member, as `np.savez` does, which cannot take an array named `file`."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, value in arrays.items():
            with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asanyarray(value), allow_pickle=False)
    return buffer.getvalue()


def load_saved(
    path: str, model: onnx.ModelProto
) -> tuple[dict[str, np.ndarray], list[np.ndarray] | None]:
    """Inputs from an .npz file, by input name, and the outputs saved with them.

    A complex input may be given as a complex array, or packed (a real array with a
    trailing 2).
    Saved outputs (see `EXPECTED`), made by the framework that exported the model,
    stand in for the reference evaluator, which cannot run every model.

    Returns:
        The inputs by name, and the expected outputs in graph order (None when the
        file holds none).
    """
    arrays = _read_npz(path, "inputs")
    feeds = {}
    for v in graph_inputs(model):
        if v.name not in arrays:
            raise DecomplexError(
                f"the inputs file has no array '{v.name}'", file=str(path), tensor=v.name
            )
        dtype = np.dtype(np_of(v.type.tensor_type.elem_type))
        feeds[v.name] = _as_input(arrays[v.name], dtype, v.name, path)
    return feeds, _expected(arrays, model, path)


def load_expected(path: str | Path, model: onnx.ModelProto) -> list[np.ndarray]:
    """The framework's own outputs, from an .npz that holds one array per output name.

    A complex output may be saved as a complex array or packed (a real array with a
    trailing 2); the comparison takes either.

    Returns:
        The outputs in graph order.

    Raises:
        DecomplexError: The file cannot be read or lacks an output.
    """
    arrays = _read_npz(path, "expected outputs")
    names = [o.name for o in model.graph.output]
    missing = [n for n in names if n not in arrays]
    if missing:
        raise DecomplexError(
            f"the expected outputs have no array for {', '.join(missing)}; "
            f"it holds {', '.join(sorted(arrays)) or 'nothing'}",
            file=str(path),
        )
    return [arrays[n] for n in names]


def _read_npz(path, what: str) -> dict[str, np.ndarray]:
    """Every array of an .npz file, by name; each must hold numbers.

    Raises:
        DecomplexError: Not an .npz archive, unreadable, or an array of strings,
            objects, dates or records; naming the file and the array.
    """
    try:
        data = np.load(path, allow_pickle=False)
    except Exception as e:
        raise DecomplexError(f"cannot read {what}: {e}", file=str(path)) from e
    if not isinstance(data, np.lib.npyio.NpzFile):
        raise DecomplexError(f"cannot read {what}: not an .npz archive", file=str(path))
    try:
        with data:
            arrays = {k: data[k] for k in data.files}
    except Exception as e:
        raise DecomplexError(f"cannot read {what}: {e}", file=str(path)) from e
    for name, value in arrays.items():
        if value.dtype.kind not in _NUMBERS or value.dtype.fields is not None:
            raise DecomplexError(
                f"cannot read {what}: array '{name}' holds {value.dtype}, not numbers",
                file=str(path),
                tensor=name,
            )
    return arrays


def _as_input(value: np.ndarray, dtype: np.dtype, name: str, path) -> np.ndarray:
    """A saved array as the input's dtype: a complex input takes a complex, real or
    packed array; a real one takes a real or (packed by its exporter) complex one."""
    if dtype.kind == "c" and value.dtype.kind != "c" and value.shape[-1:] == (2,):
        value = unpack(value)
    elif dtype.kind == "f" and value.dtype.kind == "c":
        # An exporter that packs complex inputs itself takes this one packed.
        value = cmath.pack(value)
    if value.dtype.kind == "c" and dtype.kind != "c":
        raise DecomplexError(
            f"the inputs file gives '{name}' as {value.dtype}; the input is {dtype}",
            file=str(path),
            tensor=name,
        )
    return value.astype(dtype)


def _expected(arrays: dict, model: onnx.ModelProto, path) -> list[np.ndarray] | None:
    """The outputs saved in an inputs file, in graph order; None for none.

    Raises:
        DecomplexError: It saves some outputs but not all.
    """
    names = [o.name for o in model.graph.output]
    if EXPECTED in arrays and len(names) == 1:
        return [arrays[EXPECTED]]
    found = [arrays.get(f"{EXPECTED}:{n}") for n in names]
    if all(a is None for a in found):
        return None
    missing = [n for n, a in zip(names, found, strict=True) if a is None]
    if missing:
        raise DecomplexError(
            f"the inputs file saves some outputs but not {', '.join(missing)}", file=str(path)
        )
    return found
