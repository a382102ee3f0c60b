"""The gem5 backend's self-test guest: a minimal PID 1 in a kernel with built-in initramfs.

``disk-images/gem5-selftest/init.c`` prints what Linux made of the modelled topology, issues
``m5 checkpoint``, and after a restore reads "loop N" with ``m5 readfile`` and runs a small
memory-touching loop between ``m5 workbegin``/``workend`` before ``m5 exit``. It lets the
integration tests and bench/bench_gem5.py exercise boot -> checkpoint -> restore on their
own, independent of the project's runner and image. The kernel is the project's
(``schedlab.guest.kernel.build_kernel``) with this initramfs built in.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from schedlab.backends.gem5.checkpoint import GuestKernel
from schedlab.guest.image import write_cpio
from schedlab.guest.kernel import build_kernel
from schedlab.machine import DEFAULT_TICK_HZ
from schedlab.paths import DISK_IMAGES, cache_dir
from schedlab.store import hash_file

GUEST_SRC = DISK_IMAGES / "gem5-selftest" / "init.c"


@dataclass(frozen=True)
class GuestBuild:
    """The self-test initramfs (uncompressed cpio) and its hash."""
    initramfs: Path
    hash: str


def build_guest() -> GuestBuild:
    """Compile init.c statically and pack it; the archive lives at a stable path so an
    unchanged guest keeps the kernel's (and the checkpoint's) cache key."""
    cpio = cache_dir() / "gem5-test-guest" / "initramfs.cpio"
    cpio.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        init = Path(tmp) / "init"
        subprocess.run(["gcc", "-static", "-O2", "-Wall", "-Wextra", "-Werror", "-o", str(init),
                        str(GUEST_SRC)], check=True)
        fresh = write_cpio(["dir /dev 0755 0 0", "nod /dev/console 0600 0 0 c 5 1",
                            "dir /proc 0755 0 0", "dir /sys 0755 0 0",
                            f"file /init {init} 0755 0 0"], Path(tmp) / "initramfs.cpio")
        if not cpio.exists() or cpio.read_bytes() != fresh.read_bytes():
            shutil.copyfile(fresh, cpio)
    return GuestBuild(cpio, hash_file(cpio))


def build_guest_kernel(progress=print, tick_hz: int = DEFAULT_TICK_HZ) -> GuestKernel:
    """The self-test's guest for gem5: the project's kernel (at the machine's tick rate)
    with this initramfs built in."""
    guest = build_guest()
    kernel = build_kernel(initramfs=guest.initramfs, progress=progress, tick_hz=tick_hz)
    return GuestKernel(kernel.vmlinux, kernel.hash, guest.hash)
