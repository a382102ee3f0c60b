"""Content hashing and atomic publication of build and run outputs.

Everything the project builds or runs is keyed by a hash of what went into it, so the same
inputs are never built or run twice, and is published by renaming a finished temporary
directory into place, so an interrupted build or run never leaves a half-written result.
"""

import errno
import fcntl
import hashlib
import json
import os
import re
import shutil
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterable, Iterator

from schedlab import paths


def hash_bytes(*parts: bytes | str) -> str:
    """SHA-256 over length-prefixed parts (so ("ab","c") and ("a","bc") differ)."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


def hash_json(obj) -> str:
    """Hash of a JSON-serialisable object, independent of key order."""
    return hash_bytes(json.dumps(obj, sort_keys=True, separators=(",", ":")))


def file_signature(path: Path) -> tuple:
    """What tells one version of a file from another without reading it: its path, device,
    inode, size and modification time. Memories of what was read from a file (a hash, a
    parsed definition) are kept under it: run ids read the same files for every request of
    a campaign."""
    st = os.stat(path)
    return (str(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


_FILE_HASHES: dict[tuple, str] = {}


def hash_file(path: Path) -> str:
    key = file_signature(path)
    if key in _FILE_HASHES:
        return _FILE_HASHES[key]
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    _FILE_HASHES[key] = digest.hexdigest()
    return _FILE_HASHES[key]


def hash_files(paths: Iterable[Path], root: Path) -> str:
    """Hash of the names (relative to root) and contents of files, in sorted order."""
    parts: list[bytes | str] = []
    for path in sorted(Path(p) for p in paths):
        parts += [str(path.relative_to(root)), path.read_bytes()]
    return hash_bytes(*parts)


# Held (flock) by the process filling a staging directory: a staging directory whose lock
# can be taken belongs to a process that died (kill -9, a node lost) and is removed.
STAGING_LOCK = ".staging.lock"
# A staging directory without its lock file is younger than this, or was left by a crash
# between mkdtemp and the lock.
STAGING_GRACE_S = 120


# publish_dir's staging folders: tempfile.mkdtemp(prefix=".<final>.") adds 8 characters.
STAGING_NAME = re.compile(r"\..+\.[A-Za-z0-9_]{8}")


def _staging_is_stale(staging: Path) -> bool:
    try:
        fd = os.open(staging / STAGING_LOCK, os.O_RDWR)
    except FileNotFoundError:
        try:
            return time.time() - staging.stat().st_mtime > STAGING_GRACE_S
        except FileNotFoundError:
            return False
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def remove_stale_staging(parent: Path, name: str = "") -> list[Path]:
    """Remove the staging directories under ``parent`` (of ``name`` only, if given) whose
    owner is gone; return them. Safe while other processes publish: theirs are locked."""
    removed = []
    for staging in sorted(parent.glob(f".{name}*" if name else ".*")):
        # Only ".<final>.<mkdtemp suffix>": other hidden folders (a campaign's .logs) stay.
        if not STAGING_NAME.fullmatch(staging.name):
            continue
        if staging.is_dir() and not staging.is_symlink() and _staging_is_stale(staging):
            shutil.rmtree(staging, ignore_errors=True)
            removed.append(staging)
    return removed


@contextmanager
def publish_dir(final: Path) -> Iterator[Path]:
    """Yield a temporary directory beside ``final``; rename it to ``final`` on success.

    On an exception the temporary directory is removed and ``final`` is untouched. If
    ``final`` appeared meanwhile (another process built the same key), ours is discarded.
    A staging directory of ``final`` left by a killed process is removed first.
    """
    final.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_staging(final.parent, final.name + ".")
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=final.parent))
    lock = os.open(tmp / STAGING_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        yield tmp
        (tmp / STAGING_LOCK).unlink()
        try:
            os.rename(tmp, final)
        except OSError:
            if not final.is_dir():
                raise
            shutil.rmtree(tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        os.close(lock)


# Less free space than this, where a run just failed, means the disk was full:
# a run's writers (QEMU's console, gem5's statistics dumps) write up to about 1 MiB at once.
FULL_BELOW_BYTES = 1 << 20


def disk_full(directory: Path) -> OSError | None:
    """ENOSPC naming ``directory`` if its filesystem is full, else None.

    A program writing into a run's directory (QEMU's console, gem5's statistics) that meets
    a full disk fails in its own words, which blame the guest or the run; its caller asks
    this before cleaning anything up, and raises the cause the user can fix instead."""
    try:
        st = os.statvfs(directory)
    except OSError:
        return None
    if st.f_bavail * st.f_frsize >= FULL_BELOW_BYTES:
        return None
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(directory))


def keep_failed(logs: Path, run_dir: Path, backend: str,
                ignore: Callable | None = None) -> Path | None:
    """Copy a failed run's logs (a file or a directory) out of its staging directory, which
    is removed on failure, to ``<cache>/<backend>-failed/<time>-<run dir>``; the copy's path,
    or None where even that cannot be written (the message then names the staging path)."""
    kept = (paths.cache_dir() / f"{backend}-failed"
            / f"{time.strftime('%Y%m%dT%H%M%S')}-{run_dir.name}")
    try:
        if logs.is_dir():
            shutil.copytree(logs, kept, ignore=ignore)
        else:
            kept.mkdir(parents=True)
            shutil.copyfile(logs, kept / logs.name)
            kept = kept / logs.name
    except OSError:
        return None
    return kept


@contextmanager
def run_lock(results: Path, run_id: str, blocking: bool) -> Iterator[bool]:
    """Hold ``<results>/.locks/<run-id>.lock``; yield False if not blocking and it is taken.

    Whoever executes a run holds its lock (a SLURM task, a local campaign's worker), so two
    campaigns on one results store never make the same run twice, and the holder knows
    that any ``.<run-id>.*`` staging directory is a killed process's. Filesystems without
    locks (some Lustre mounts) yield True: within one array a run has one task.
    """
    lock_dir = results / ".locks"
    lock_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_dir / f"{run_id}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        except OSError:  # ENOLCK / EOPNOTSUPP: no locking on this filesystem
            pass
        yield True
    finally:
        os.close(fd)


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write a file so readers see either the old content or the whole new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    with os.fdopen(fd, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)
    os.replace(tmp, path)


@contextmanager
def locked(lock_path: Path, waiting: Callable[[], None] | None = None) -> Iterator[None]:
    """Hold an exclusive lock (flock) on ``lock_path`` while the block runs: one builder of
    a shared thing (a kernel work tree, a boot checkpoint) at a time on this machine.
    ``waiting`` is called once if another process holds it, before this one waits (a build
    or a boot can hold it for many minutes: the wait says what it waits for)."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "w") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if waiting is not None:
                waiting()
            fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
