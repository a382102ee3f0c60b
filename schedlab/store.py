"""Content hashing and atomic publication of build and run outputs.

Everything the project builds or runs is keyed by a hash of what went into it, so the same
inputs are never built or run twice, and is published by renaming a finished temporary
directory into place, so an interrupted build or run never leaves a half-written result.
"""

import hashlib
import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator


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


def hash_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def hash_files(paths: Iterable[Path], root: Path) -> str:
    """Hash of the names (relative to root) and contents of files, in sorted order."""
    parts: list[bytes | str] = []
    for path in sorted(Path(p) for p in paths):
        parts += [str(path.relative_to(root)), path.read_bytes()]
    return hash_bytes(*parts)


@contextmanager
def publish_dir(final: Path) -> Iterator[Path]:
    """Yield a temporary directory beside ``final``; rename it to ``final`` on success.

    On an exception the temporary directory is removed and ``final`` is untouched. If
    ``final`` appeared meanwhile (another process built the same key), ours is discarded.
    """
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=final.parent))
    try:
        yield tmp
        try:
            os.rename(tmp, final)
        except OSError:
            if not final.is_dir():
                raise
            shutil.rmtree(tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write a file so readers see either the old content or the whole new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    with os.fdopen(fd, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)
    os.replace(tmp, path)
