"""Every guest artefact of one tick rate, built or found cached, named by its bytes' hashes.

What ``run.py build all`` prints and what the reproducibility checks compare
(tests/test_reproducible_build.py, bench/bench_reproducible_build.py): two machines, two
clones or two cache directories that print the same hashes simulate the same guest.
"""

from __future__ import annotations

from typing import Callable

from schedlab.guest import kernel, programs, reproducible
from schedlab.guest.image import build_image
from schedlab.machine import DEFAULT_TICK_HZ


def build_guest(tick_hz: int = DEFAULT_TICK_HZ,
                progress: Callable[[str], None] = print) -> dict[str, str]:
    """Build the workloads, the image, QEMU's kernel and gem5's (the image built in) for
    ``tick_hz``; return each built file's hash by name."""
    overlay = programs.build_all(progress=progress)
    image = build_image(progress=progress)
    plain = kernel.build_kernel(progress=progress, tick_hz=tick_hz)
    gem5 = kernel.build_kernel(initramfs=image.initramfs, progress=progress, tick_hz=tick_hz)
    return {**reproducible.artefact_hashes({
                "workloads": overlay / programs.GUEST_BIN / programs.MULTICALL,
                "qemu-bzImage": plain.bzimage, "qemu-vmlinux": plain.vmlinux,
                "gem5-vmlinux": gem5.vmlinux}),
            **image.artefacts()}
