"""The gem5 backend's self-test guest: a minimal PID 1 in a kernel with built-in initramfs.

``tests/data/gem5/guest/init.c`` prints what Linux made of the modelled topology, issues
``m5 checkpoint``, and after a restore reads "loop N" with ``m5 readfile`` and runs a small
memory-touching loop between ``m5 workbegin``/``workend`` before ``m5 exit``. It lets the
integration tests and bench/bench_gem5.py exercise boot -> checkpoint -> restore on their
own, independent of the project's runner and image. The kernel is the project's
(``schedlab.kernel.build_kernel``) with this initramfs built in.
"""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .paths import REPO, cache_dir
from .store import hash_file

GUEST_SRC = REPO / "tests" / "data" / "gem5" / "guest" / "init.c"


def newc(entries: list[tuple[str, int, bytes, int, int]]) -> bytes:
    """A cpio archive in the kernel's newc format from (name, mode, data, rdev major, minor)
    entries; device nodes need no root this way."""
    out = bytearray()
    for ino, (name, mode, data, major, minor) in enumerate(
            entries + [("TRAILER!!!", 0, b"", 0, 0)], start=1):
        nb = name.encode() + b"\0"
        fields = [ino, mode, 0, 0, 1, 0, len(data), 0, 0, major, minor, len(nb), 0]
        out += b"070701" + b"".join(b"%08X" % f for f in fields) + nb
        out += b"\0" * (-len(out) % 4)
        out += data
        out += b"\0" * (-len(out) % 4)
    return bytes(out)


@dataclass(frozen=True)
class GuestBuild:
    """The self-test initramfs (uncompressed cpio) and its hash."""
    initramfs: Path
    hash: str


def build_guest() -> GuestBuild:
    """Compile init.c statically and pack it; the archive lives at a stable path so an
    unchanged guest keeps the kernel's (and the checkpoint's) cache key."""
    with tempfile.TemporaryDirectory() as tmp:
        init = Path(tmp) / "init"
        subprocess.run(["gcc", "-static", "-O2", "-Wall", "-o", str(init), str(GUEST_SRC)],
                       check=True)
        data = newc([("dev", 0o40755, b"", 0, 0), ("dev/console", 0o20600, b"", 5, 1),
                     ("proc", 0o40755, b"", 0, 0), ("sys", 0o40755, b"", 0, 0),
                     ("init", 0o100755, init.read_bytes(), 0, 0)])
    cpio = cache_dir() / "gem5-test-guest" / "initramfs.cpio"
    cpio.parent.mkdir(parents=True, exist_ok=True)
    if not cpio.exists() or cpio.read_bytes() != data:
        cpio.write_bytes(data)
    return GuestBuild(cpio, hash_file(cpio))


def build_guest_and_kernel(progress=print):
    """(kernel, guest) for the self-test: the project's kernel with the guest built in."""
    from .kernel import build_kernel
    guest = build_guest()
    return build_kernel(initramfs=guest.initramfs, progress=progress), guest
