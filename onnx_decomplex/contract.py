"""The I/O contract of a rewritten model: which graph inputs and outputs hold packed
complex values, recorded in the model itself.

A rewritten model says it in one `metadata_props` entry, `onnx_decomplex.io`, whose
value is JSON:

    {"format": "onnx_decomplex.io", "version": 1, "target": "onnx",
     "layout": "last axis of size 2: real, imaginary",
     "inputs": [{"name": "x", "dtype": "complex64", "shape": ["batch", 48],
                 "packed_dtype": "float32", "packed_shape": ["batch", 48, 2],
                 "narrowed": false}],
     "outputs": [...]}

Only packed inputs and outputs are listed; the others are as they were. A dim is an
int, a string (a symbolic dim) or null (unknown). `narrowed` is true where a
complex128 value is stored as float32 (for TensorRT, which has no float64): a
reader casts in and out. Each packed input and output also gets a one-line
`doc_string` saying the same. Readers must refuse a `version` they do not know.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import onnx

from .dtypes import is_complex_np, np_of
from .errors import DecomplexError
from .shapes import declared_dims

KEY = "onnx_decomplex.io"
VERSION = 1
LAYOUT = "last axis of size 2: real, imaginary"

Dim = int | str | None


@dataclass(frozen=True)
class Packed:
    """One packed graph input or output: its complex type and shape, and how it is
    stored."""

    name: str
    dtype: str
    shape: list[Dim] | None
    packed_dtype: str
    packed_shape: list[Dim] | None
    narrowed: bool = False

    @property
    def complex_dtype(self) -> np.dtype:
        return np.dtype(self.dtype)

    @property
    def storage_dtype(self) -> np.dtype:
        return np.dtype(self.packed_dtype)

    def describe(self) -> str:
        """The one-line doc string of the packed value."""
        narrowed = ", narrowed from float64" if self.narrowed else ""
        return (
            f"onnx-decomplex: {_spelled(self.dtype, self.shape)} packed as "
            f"{_spelled(self.packed_dtype, self.packed_shape)}, the last axis holding "
            f"(real, imaginary){narrowed}"
        )


@dataclass
class Contract:
    """Every packed graph input and output of a model, and the target it was made for."""

    target: str = "onnx"
    inputs: list[Packed] = field(default_factory=list)
    outputs: list[Packed] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.inputs or self.outputs)

    def to_json(self) -> str:
        body = {
            "format": KEY,
            "version": VERSION,
            "target": self.target,
            "layout": LAYOUT,
            "inputs": [asdict(p) for p in self.inputs],
            "outputs": [asdict(p) for p in self.outputs],
        }
        return json.dumps(body, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> Contract:
        """Reads an `onnx_decomplex.io` value.

        Raises:
            DecomplexError: Not JSON, another format, or a version this reader does not know.
        """
        try:
            body = json.loads(text)
            version = body.get("version")
            if body.get("format") != KEY or version != VERSION:
                raise DecomplexError(
                    f"{KEY} metadata of version {version!r}; this reader knows version {VERSION}"
                )
            return cls(
                target=body["target"],
                inputs=[Packed(**p) for p in body["inputs"]],
                outputs=[Packed(**p) for p in body["outputs"]],
            )
        except DecomplexError:
            raise
        except (ValueError, TypeError, KeyError, AttributeError) as e:
            raise DecomplexError(f"cannot read the {KEY} metadata: {e}") from None


def _spelled(dtype: str, shape: list[Dim] | None) -> str:
    if shape is None:
        return dtype
    return f"{dtype}[{','.join('?' if d is None else str(d) for d in shape)}]"


def _type_of(v: onnx.ValueInfoProto) -> tuple[np.dtype | None, list[Dim] | None]:
    """The element type and shape a graph input or output declares."""
    t = v.type.tensor_type
    if not v.type.HasField("tensor_type") or not t.elem_type:
        return None, None
    return np.dtype(np_of(t.elem_type)), declared_dims(v)


@dataclass(frozen=True)
class IORow:
    """One graph input or output, as it was and as it is: for the summary table."""

    kind: str  # "input" or "output"
    name: str
    before: str
    after: str


def io_rows(original: onnx.ModelProto, rewritten: onnx.ModelProto) -> list[IORow]:
    """Every graph input and output of `rewritten`, with its type in `original` (the
    native-complex model) and in `rewritten`."""
    rows = []
    for kind in ("input", "output"):
        before = {v.name: v for v in getattr(original.graph, kind)}
        for v in getattr(rewritten.graph, kind):
            was = before.get(v.name, v)
            rows.append(IORow(kind, v.name, _spelled_info(was), _spelled_info(v)))
    return rows


def _spelled_info(v: onnx.ValueInfoProto) -> str:
    dtype, shape = _type_of(v)
    return "?" if dtype is None else _spelled(dtype.name, shape)


def contract_of(
    original: onnx.ModelProto, rewritten: onnx.ModelProto, target: str = "onnx"
) -> Contract:
    """The packed inputs and outputs of `rewritten`: those complex in `original` (the
    native-complex model it was rewritten from)."""
    contract = Contract(target=target)
    for kind, entries in (("input", contract.inputs), ("output", contract.outputs)):
        now = {v.name: v for v in getattr(rewritten.graph, kind)}
        for v in getattr(original.graph, kind):
            dtype, shape = _type_of(v)
            if dtype is None or not is_complex_np(dtype) or v.name not in now:
                continue
            packed_dtype, packed_shape = _type_of(now[v.name])
            if packed_dtype is None:
                continue
            entries.append(
                Packed(
                    name=v.name,
                    dtype=dtype.name,
                    shape=shape,
                    packed_dtype=packed_dtype.name,
                    packed_shape=packed_shape,
                    narrowed=dtype == np.complex128 and packed_dtype == np.float32,
                )
            )
    return contract


def record(model: onnx.ModelProto, contract: Contract) -> None:
    """Writes `contract` into `model`: the metadata entry, and a doc string on each
    packed input and output. An earlier entry of the same key is replaced. A contract
    with nothing packed still says what the model was made for."""
    kept = [p for p in model.metadata_props if p.key != KEY]
    del model.metadata_props[:]
    model.metadata_props.extend(kept)
    model.metadata_props.add(key=KEY, value=contract.to_json())
    for kind, entries in (("input", contract.inputs), ("output", contract.outputs)):
        by_name = {p.name: p for p in entries}
        for v in getattr(model.graph, kind):
            if v.name in by_name:
                v.doc_string = by_name[v.name].describe()


def read_contract(model: str | Path | onnx.ModelProto) -> Contract | None:
    """The contract recorded in a model (a path: its weights are not read), or None
    when it records none.

    Raises:
        DecomplexError: The entry is there but cannot be read.
    """
    if not isinstance(model, onnx.ModelProto):
        model = onnx.load(str(model), load_external_data=False)
    for p in model.metadata_props:
        if p.key == KEY:
            return Contract.from_json(p.value)
    return None
