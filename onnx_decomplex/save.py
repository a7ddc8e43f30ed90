"""Write models atomically: a temp folder beside the target, then a rename."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import onnx

from .errors import SaveError

TWO_GB = 2**31
"""Protobuf cannot serialize a message this large; such models must use external data."""


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


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


def save_model(
    model: onnx.ModelProto, path: str | Path, external_data: bool | None = None
) -> list[Path]:
    """Writes `model` so that a failure never leaves a partial file at `path`.

    Args:
        model: The model; it is not modified.
        path: The target .onnx path.
        external_data: Keep tensor data in `<name>.data` beside the model. When None,
            external data is used only if the model is too large for one protobuf.

    Returns:
        The files written.

    Raises:
        SaveError: The folder is not writable, or the write failed.
    """
    path = Path(path)
    if external_data is None:
        external_data = model.ByteSize() >= TWO_GB
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
    except OSError as e:
        raise SaveError(
            f"cannot write to the output folder: {e.strerror or e}", file=str(path)
        ) from e
    try:
        if external_data:
            to_save = onnx.ModelProto()
            to_save.CopyFrom(model)  # saving with external data edits the proto
            onnx.save_model(
                to_save,
                str(tmp / path.name),
                save_as_external_data=True,
                all_tensors_to_one_file=True,
                location=f"{path.name}.data",
                size_threshold=1024,
            )
        else:
            onnx.save_model(model, str(tmp / path.name))
        # The model goes last, so that it never points at data that is not yet there.
        written = sorted(tmp.iterdir(), key=lambda p: p.name == path.name)
        for f in written:
            os.replace(f, path.parent / f.name)
        return [path.parent / f.name for f in written]
    except OSError as e:
        raise SaveError(f"cannot write the output: {e.strerror or e}", file=str(path)) from e
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def copy_model(
    src: str | Path, model: onnx.ModelProto, dst: str | Path, external: bool
) -> list[Path]:
    """Writes an unchanged model: the same bytes when it is one file, else (`external`)
    re-saved with its external data beside `dst`."""
    src, dst = Path(src), Path(dst)
    if external:
        return save_model(model, dst, external_data=True)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{dst.name}.", dir=dst.parent)
        os.close(fd)
    except OSError as e:
        raise SaveError(
            f"cannot write to the output folder: {e.strerror or e}", file=str(dst)
        ) from e
    try:
        shutil.copyfile(src, tmp)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the usual mode
        os.replace(tmp, dst)
        return [dst]
    except OSError as e:
        raise SaveError(f"cannot write the output: {e.strerror or e}", file=str(dst)) from e
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
