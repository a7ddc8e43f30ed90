"""Write models atomically: a temp folder beside the target, then a rename (see `files`)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import onnx
from onnx.external_data_helper import ExternalDataInfo, uses_external_data

from ..errors import CheckError, SaveError
from .external import external_length, graph_tensors
from .transaction import Transaction, umask

TWO_GB = 2**31
"""Protobuf cannot serialize a message this large; such models must use external data."""

INLINE_MAX_BYTES = 1024
"""With external data, tensors smaller than this stay in the model file."""

ALIGN = 4096
"""Offsets of large tensors in the data file are page-aligned, so runtimes can map them."""

CHUNK = 16 << 20
"""Bytes copied at a time from a source data file: the copy's memory, whatever the model."""

Progress = Callable[[int, int], None]
"""Called with (bytes written, bytes to write) while external data is written."""


def data_file(path: Path) -> Path:
    """The external data file written beside the model at `path`."""
    return path.parent / f"{path.name}.data"


def check_paths(src: str | Path, dst: str | Path) -> None:
    """Refuses an output that would overwrite the input, or that cannot be a file.

    Raises:
        SaveError: `dst` is `src`, is a folder, or its folder does not exist.
    """
    src, dst = Path(src), Path(dst)
    same = src.resolve() == dst.resolve() or (
        dst.exists() and src.exists() and os.path.samefile(src, dst)
    )
    if same:
        raise SaveError(
            "the output path is the input file; the input is never overwritten", file=str(dst)
        )
    if dst.is_dir():
        raise SaveError("the output path is a folder; give a file name", file=str(dst))
    if not dst.parent.is_dir():
        raise SaveError(f"the output folder '{dst.parent}' does not exist", file=str(dst))


def point_to(tensor: onnx.TensorProto, location: str, offset: int, length: int) -> None:
    """Makes `tensor` an external one whose data is `length` bytes of `location` from
    `offset`."""
    del tensor.external_data[:]
    for key, value in (("location", location), ("offset", offset), ("length", length)):
        entry = tensor.external_data.add()
        entry.key, entry.value = key, str(value)
    tensor.data_location = onnx.TensorProto.EXTERNAL


def _copy_range(src, out, start: int, size: int):
    """Copies `size` bytes of `src` from `start` to the end of `out`, CHUNK at a time,
    and yields how many bytes each step copied (0 when `src` ends early).

    The kernel copies file to file where it can (copy_file_range), so the bytes never
    pass through this process; elsewhere they are read and written.
    """
    out.flush()
    left, offset = size, start
    kernel = hasattr(os, "copy_file_range")
    while left:
        n = 0
        if kernel:
            try:
                n = os.copy_file_range(src.fileno(), out.fileno(), min(CHUNK, left), offset)
            except OSError:  # another filesystem, or no support: copy by hand
                kernel = False
        if not kernel:
            src.seek(offset)
            chunk = src.read(min(CHUNK, left))
            out.write(chunk)
            out.flush()
            n = len(chunk)
        # copy_file_range moved the file's end under the buffered writer: re-read it.
        out.seek(0, os.SEEK_END)
        yield n
        if not n:
            return
        left -= n
        offset += n


def _to_move(model: onnx.ModelProto) -> list[onnx.TensorProto]:
    """The tensors that go to the data file: those still in a source file, and loaded
    ones of INLINE_MAX_BYTES or more."""
    return [t for t in graph_tensors(model.graph)
            if uses_external_data(t) or len(t.raw_data) >= INLINE_MAX_BYTES]  # fmt: skip


def _write_data(model, data: Path, source_dir: Path | None, progress: Progress | None) -> None:
    """Moves tensor data into the file `data`, editing `model`'s tensors to point at it.

    Tensors still in a source file are copied CHUNK bytes at a time, so that memory
    stays flat whatever their size; loaded tensors of INLINE_MAX_BYTES or more are
    written from memory.
    """
    moved = _to_move(model)
    if any(uses_external_data(t) for t in moved) and source_dir is None:
        raise SaveError("the model points at external data, but not where it lives", file=str(data))
    sizes = [external_length(t, source_dir) if uses_external_data(t) else len(t.raw_data)
             for t in moved]  # fmt: skip
    total, done = sum(sizes), 0
    sources = {}
    try:
        with open(data, "wb") as out:
            for t, size in zip(moved, sizes, strict=True):
                if size >= ALIGN:
                    out.write(b"\0" * (-out.tell() % ALIGN))
                offset = out.tell()
                if uses_external_data(t):
                    info = ExternalDataInfo(t)
                    if info.location not in sources:
                        sources[info.location] = open(source_dir / info.location, "rb")  # noqa: SIM115
                    start = int(info.offset or 0)
                    for copied in _copy_range(sources[info.location], out, start, size):
                        if not copied:
                            raise SaveError(
                                f"external data of '{t.name}' ends early", file=str(data)
                            )
                        done += copied
                        if progress:
                            progress(done, total)
                else:
                    out.write(t.raw_data)
                    t.ClearField("raw_data")
                    done += size
                point_to(t, data.name, offset, size)
            if progress:
                progress(total, total)
    finally:
        for f in sources.values():
            f.close()


def stage_model(
    model: onnx.ModelProto,
    path: str | Path,
    transaction: Transaction,
    external_data: bool | None = None,
    *,
    source_dir: str | Path | None = None,
    progress: Progress | None = None,
    check: bool = False,
    pointing: bool | None = None,
) -> Path:
    """Writes `model` for `path` under a temporary folder beside it, renamed into place
    when `transaction` commits (see `save_model` for the other arguments). `pointing`
    says whether `model` points at external data, where the caller knows.

    Returns:
        The temporary model file, whole and checked, with its data file beside it
        under its final name: it can be loaded and run where it is.
    """
    path = Path(path)
    if pointing is None:
        pointing = any(uses_external_data(t) for t in graph_tensors(model.graph))
    if external_data is None:
        external_data = pointing or model.ByteSize() >= TWO_GB
    if pointing and not external_data:
        raise SaveError("a model that points at external data is written with it", file=str(path))
    # Nothing to move out: no data file, rather than an empty one that nothing points at.
    external_data = external_data and bool(_to_move(model))
    tmp = transaction.folder(path)
    try:
        if external_data:
            to_save = onnx.ModelProto()
            to_save.CopyFrom(model)  # moving data out edits the tensors
            _write_data(to_save, tmp / data_file(path).name, source_dir and Path(source_dir),
                        progress)  # fmt: skip
            onnx.save_model(to_save, str(tmp / path.name))
        else:
            # onnx.save_model's walk for tensors to move out would find none
            (tmp / path.name).write_bytes(model.SerializeToString())
        for f in tmp.iterdir():
            os.chmod(f, 0o666 & ~umask())
    except OSError as e:
        raise SaveError(f"cannot write the output: {e.strerror or e}", file=str(path)) from e
    if check:
        try:
            onnx.checker.check_model(str(tmp / path.name), full_check=True)
        except Exception as e:
            raise CheckError(f"the rewritten model fails the ONNX checker: {e}") from e
    # The model goes last, so that it never points at data that is not yet there.
    for f in sorted(tmp.iterdir(), key=lambda p: p.name == path.name):
        transaction.stage(f, path.parent / f.name)
    return tmp / path.name


def save_model(
    model: onnx.ModelProto,
    path: str | Path,
    external_data: bool | None = None,
    *,
    source_dir: str | Path | None = None,
    progress: Progress | None = None,
    check: bool = False,
) -> list[Path]:
    """Writes `model` so that a failure never leaves a partial file at `path`.

    Args:
        model: The model; it is not modified.
        path: The target .onnx path.
        external_data: Keep tensor data in `<name>.data` beside the model. When None,
            external data is used when the model points at some already, or is too
            large for one protobuf (2 GB).
        source_dir: Where the external data files the model points at live (the
            input's folder, after `read_model(..., stream=True)`). Their bytes are
            copied in chunks, never loaded.
        progress: Called as the data file grows.
        check: Run the full ONNX checker on the written files before they are
            renamed into place: for a rewritten model that points at external data,
            which the checker can only read where it lies.

    Returns:
        The files written.

    Raises:
        SaveError: The folder is not writable, or the write failed.
        CheckError: The written model fails the checker.
    """
    with Transaction() as t:
        stage_model(model, path, t, external_data, source_dir=source_dir, progress=progress,
                    check=check)  # fmt: skip
        return t.commit()


def stage_copy(
    src: str | Path,
    model: onnx.ModelProto,
    dst: str | Path,
    external: bool,
    transaction: Transaction,
    progress: Progress | None = None,
) -> Path:
    """Stages an unchanged model for `dst`: the same bytes when it is one file, else
    (`external`) re-saved with its external data beside it. Returns the staged model."""
    src, dst = Path(src), Path(dst)
    if external:
        return stage_model(model, dst, transaction, external_data=True, source_dir=src.parent,
                           progress=progress)  # fmt: skip
    tmp = transaction.folder(dst)
    try:
        shutil.copyfile(src, tmp / dst.name)
        os.chmod(tmp / dst.name, 0o666 & ~umask())
    except OSError as e:
        raise SaveError(f"cannot write the output: {e.strerror or e}", file=str(dst)) from e
    transaction.stage(tmp / dst.name, dst)
    return tmp / dst.name
