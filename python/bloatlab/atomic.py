"""Atomic writes: a file or a directory appears whole under its final name, or not at all.

Every writer in the package that must not leave a torn file (run outputs, the results
store, reports, the emulation endpoints' hand-offs) goes through here. The temporary sibling
is named ``.NAME.tmp-PID-RANDOM`` so that two processes writing the same target never share
one, and a reader listing the directory skips it (a leading dot).
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def temp_sibling(path: Path) -> Path:
    """A fresh name beside ``path`` for staging it (the same file system, so a rename works)."""
    return path.with_name(f".{path.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")


def write_file(path: Path, data: bytes, *, fsync: bool = False) -> None:
    """Writes ``path`` in place (no rename); with ``fsync``, durably."""
    with open(path, "wb") as f:
        f.write(data)
        if fsync:
            f.flush()
            os.fsync(f.fileno())


def write_bytes(path: str | os.PathLike[str], data: bytes, *, fsync: bool = False) -> None:
    """Writes ``path`` through a temporary sibling and one rename. With ``fsync``, the data is
    durable before the rename and the rename is made durable too (the directory is synced)."""
    path = Path(path)
    tmp = temp_sibling(path)
    try:
        write_file(tmp, data, fsync=fsync)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if fsync:
        sync_dir(path.parent)


def write_text(path: str | os.PathLike[str], text: str, *, fsync: bool = False) -> None:
    write_bytes(path, text.encode("utf-8"), fsync=fsync)


@contextmanager
def staged_file(path: str | os.PathLike[str]) -> Iterator[Path]:
    """For writers that want a path (parquet, images): yields a temporary sibling of ``path``
    and renames it into place when the block succeeds; removes it when the block fails."""
    path = Path(path)
    tmp = temp_sibling(path)
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def sync_dir(path: Path) -> None:
    """fsyncs a directory (its entries: a rename in it); a no-op where that is unsupported."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextmanager
def staged_dir(target: str | os.PathLike[str], *, replace: bool = False) -> Iterator[Path]:
    """Yields an empty temporary sibling directory of ``target``; when the block succeeds it
    becomes ``target`` by one rename. When ``target`` already exists: with ``replace`` it is
    swapped out whole (the old one removed), else the new files are moved into it one by one
    (each replacing its namesake; a directory replaces a directory). On failure the staged
    directory is removed and ``target`` is left as it was."""
    target = Path(target)
    if target.exists() and not target.is_dir():
        raise NotADirectoryError(f"{target}: exists and is not a directory")
    parent = target.absolute().parent
    parent.mkdir(parents=True, exist_ok=True)
    tmp = parent / f".{target.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}"
    tmp.mkdir()
    try:
        yield tmp
        if replace:
            replace_dir(tmp, target, trash_dir=parent)
            return
        names = os.listdir(tmp)
        try:
            os.rename(tmp, target)
        except OSError:
            if not target.is_dir():
                raise
            for name in names:
                dest = target / name
                if dest.is_dir() and not dest.is_symlink():
                    shutil.rmtree(dest)
                os.replace(tmp / name, dest)
                # rename() between two hard links of one file does nothing: drop the staged link
                (tmp / name).unlink(missing_ok=True)
            tmp.rmdir()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def replace_dir(src: Path, dst: Path, *, trash_dir: Path) -> None:
    """Renames directory ``src`` to ``dst``; an existing ``dst`` is first renamed aside into
    ``trash_dir`` (same file system) and removed after, so ``dst`` is never half-written."""
    if dst.exists():
        trash = trash_dir / f".{dst.name}.old-{os.getpid()}-{secrets.token_hex(4)}"
        os.rename(dst, trash)
        os.rename(src, dst)
        shutil.rmtree(trash, ignore_errors=True)
    else:
        os.rename(src, dst)
