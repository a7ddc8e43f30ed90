"""The files a run writes: all of them or none, with the user's umask, never over one it
reads.

Every file is written under a temporary name beside its target and renamed into place
once the run has succeeded (`Transaction`). A run that stops leaves what was there as it
was; a run that is killed leaves only its temporary files, and a later run writing the
same target removes them. `Paths` checks, before anything is written, that no path the
run writes is one it reads, or one it writes twice.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import socket
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

from ..errors import SaveError

_HOST = re.sub(r"[^A-Za-z0-9]", "_", socket.gethostname()) or "host"
_TEMP = re.compile(r"\.tmp-(?P<host>[A-Za-z0-9_]+)-(?P<pid>\d+)-")


_terminated_by: int | None = None
_held: list[int] | None = None  # signals held back by `_shielded`, while it runs


def terminate(signum, frame) -> None:
    """The handler of SIGTERM for a run: it unwinds as an interrupted one does, so that
    its temporary files go, and exits 128 + the signal's number."""
    global _terminated_by
    _terminated_by = signum
    if _held is not None:
        _held.append(signum)  # `_shielded` exits once its block is done
        return
    sys.exit(128 + signum)


def terminated() -> int | None:
    """The signal that ended the run, once `terminate` has: code that turns exceptions
    into other errors (a C extension's import does) asks it before it does."""
    return _terminated_by


@contextmanager
def _shielded():
    """A termination held back while the block runs, and acted on after it: renames
    into place happen all, or none."""
    global _held
    outer, _held = _held, []
    try:
        yield
    finally:
        held, _held = _held, outer
    if held and outer is not None:
        outer.extend(held)  # the outer block acts on it
    elif held:
        sys.exit(128 + held[0])


def umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _prefix(target: Path) -> str:
    """The start of a temporary name for `target`: the target's name, and the host and
    process that write it, so that a later run can tell a dead run's leftovers."""
    return f".{target.name}.tmp-{_HOST}-{os.getpid()}-"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def remove_stale(target: Path) -> None:
    """Removes the temporary files a killed run of this host left for `target`."""
    try:
        leftovers = list(target.parent.glob(f".{glob.escape(target.name)}.tmp-*"))
    except OSError:
        return
    for path in leftovers:
        m = _TEMP.match(path.name[len(target.name) + 1 :])
        if m is None or m["host"] != _HOST or _alive(int(m["pid"])):
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


class Transaction:
    """Files staged under temporary names beside their targets, renamed into place in
    the order they were staged by `commit`, or removed by `discard` (also on leaving a
    `with` block): a run writes all of its files, or none.
    """

    def __init__(self):
        self._moves: list[tuple[Path, Path]] = []
        self._temps: list[Path] = []

    def __enter__(self) -> Transaction:
        return self

    def __exit__(self, *exc) -> None:
        self.discard()

    def folder(self, target: Path) -> Path:
        """A new temporary folder beside `target`, for files that must sit together
        while they are checked (a model and its data file)."""
        remove_stale(target)
        try:
            path = Path(tempfile.mkdtemp(prefix=_prefix(target), dir=target.parent))
        except OSError as e:
            raise SaveError(
                f"cannot write to the output folder: {e.strerror or e}", file=str(target)
            ) from e
        self._temps.append(path)
        return path

    def stage(self, temp: Path, target: Path) -> None:
        """`temp`, written already, goes to `target` on commit."""
        self._moves.append((temp, target))

    def write(self, target: Path, data: bytes | str) -> Path:
        """Stages `data` for `target`; returns the temporary file that holds it."""
        remove_stale(target)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(prefix=_prefix(target), dir=target.parent)
        except OSError as e:
            raise SaveError(f"cannot write: {e.strerror or e}", file=str(target)) from e
        temp = Path(name)
        self._temps.append(temp)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data.encode() if isinstance(data, str) else data)
            os.chmod(temp, 0o666 & ~umask())  # mkstemp makes 0600; give the usual mode
        except OSError as e:
            raise SaveError(f"cannot write: {e.strerror or e}", file=str(target)) from e
        self.stage(temp, target)
        return temp

    def commit(self) -> list[Path]:
        """Renames every staged file into place; returns the targets."""
        done = []
        try:
            with _shielded():
                for temp, target in self._moves:
                    os.replace(temp, target)
                    done.append(target)
        except OSError as e:
            raise SaveError(f"cannot write: {e.strerror or e}", file=str(target)) from e
        finally:
            self._moves = self._moves[len(done) :]
            self.discard()
        return done

    def discard(self) -> None:
        """Removes every temporary file and folder not renamed into place."""
        for temp in self._temps:
            if temp.is_dir() and not temp.is_symlink():
                shutil.rmtree(temp, ignore_errors=True)
            else:
                temp.unlink(missing_ok=True)
        self._temps, self._moves = [], []


def write_atomic(target: Path, data: bytes | str) -> None:
    """Writes one file whole or not at all, with the user's umask."""
    with Transaction() as t:
        t.write(target, data)
        t.commit()


def _identities(path: Path) -> set[tuple]:
    """What names one file: the resolved path and, for a file that exists, its device
    and inode (a hard link, a symlink)."""
    found = {("path", str(path.resolve()))}
    try:
        st = path.stat()
    except OSError:
        return found
    return found | {("inode", st.st_dev, st.st_ino)}


class Paths:
    """What a run reads and writes, by role, for one check before anything is written."""

    def __init__(self):
        self.reads: list[tuple[Path, str]] = []
        self.writes: list[tuple[Path, str]] = []

    def read(self, path: str | Path | None, what: str) -> None:
        if path is not None:
            self.reads.append((Path(path), what))

    def write(self, path: str | Path | None, what: str) -> None:
        if path is not None:
            self.writes.append((Path(path), what))

    def check(self) -> None:
        """Raises SaveError when a path written is one read, or is written twice. A
        file both read and written by design (a timing cache, an updated baseline) is
        declared once, as written."""
        read = {key: what for path, what in self.reads for key in _identities(path)}
        written: dict[tuple, str] = {}
        for path, what in self.writes:
            keys = _identities(path)
            role = next((read[k] for k in keys if k in read), None)
            if role is not None:
                raise SaveError(
                    f"the {what} is the {role}, which this run reads: it would be "
                    "written over; give another path",
                    file=str(path),
                )
            role = next((written[k] for k in keys if k in written), None)
            if role is not None:
                raise SaveError(
                    f"the {what} is the {role} too: give each its own path", file=str(path)
                )
            written.update((k, what) for k in keys)
