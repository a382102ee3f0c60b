"""The harness of the kernel-scenario tests under QEMU (tests/test_sched_qemu.py,
tests/test_regions_qemu.py): a small initramfs of busybox, a few programs and a scenario
/init, booted with the project's kernel; the scenario named on the kernel command line
prints key=value lines and dumps files between SCHEDTEST-BEGIN and SCHEDTEST-END."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from schedlab.runs import QEMU_KERNEL_ARGS

# The start of every scenario's /init: busybox's applets, /proc, /sys, debugfs and tracefs
# ($T), kernel messages kept off the console (they would interleave with the data; dmesg
# still has them all).
INIT_PREAMBLE = r"""#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
dmesg -n 1
mount -t sysfs sysfs /sys
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
T=/sys/kernel/tracing
[ -d $T/events ] || T=/sys/kernel/debug/tracing
"""
# A guard against hangs, not a speed target (a guest takes seconds on an idle host).
BOOT_TIMEOUT = 300
BUSYBOX = Path("/bin/busybox")
QEMU = shutil.which("qemu-system-x86_64")
REPO = Path(__file__).resolve().parent.parent


def patched_kernel(knob: str, what: str):
    """The project's kernel (built once, then cached by content); the test is skipped when
    kernel-patches/README.md does not mention ``knob``, i.e. the series has no ``what`` yet."""
    from schedlab.guest import kernel as K

    if knob not in (REPO / "kernel-patches" / "README.md").read_text():
        pytest.skip(f"kernel-patches/ has no {what} patches")
    return K.build_kernel(progress=lambda s: None)


def scenario_initramfs(root: Path, init_script: str, sources: dict[str, tuple[str, list[str]]],
                       binaries: dict[str, Path]) -> Path:
    """busybox at /bin, ``init_script`` as /init, each of ``sources`` (name -> C source,
    extra link flags) compiled static with -Werror and each of ``binaries`` at /<name>,
    packed by the project's cpio writer."""
    from schedlab.guest.image import write_cpio

    files = dict(binaries)
    for name, (source, ldflags) in sources.items():
        (root / f"{name}.c").write_text(source)
        subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-static", *ldflags, "-o",
                        str(root / name), str(root / f"{name}.c")], check=True)
        files[name] = root / name
    (root / "init").write_text(init_script)
    entries = ["dir /dev 0755 0 0", "nod /dev/console 0600 0 0 c 5 1", "dir /bin 0755 0 0",
               f"file /bin/busybox {BUSYBOX} 0755 0 0", f"file /init {root / 'init'} 0755 0 0"]
    entries += [f"file /{name} {path} 0755 0 0" for name, path in files.items()]
    entries += [f"dir /{d} 0755 0 0" for d in ("proc", "sys", "tmp")]
    return write_cpio(entries, root / "initramfs.cpio")


def boot(kernel, initramfs: Path, test: str, extra: list[str] = (),
         smp: str = "4,sockets=2,cores=2", mem: str = "512M") -> tuple[dict, dict, str]:
    """Boot, run one scenario; returns (key=value lines, files dumped as text, the whole
    console)."""
    append = " ".join([*QEMU_KERNEL_ARGS, "loglevel=6", f"schedtest={test}",
                       "rdinit=/init", *extra])
    cmd = [QEMU, "-accel", "tcg", "-smp", smp, "-m", mem, "-kernel", str(kernel.bzimage),
           "-initrd", str(initramfs), "-append", append, "-nographic", "-no-reboot"]
    try:
        output = subprocess.run(cmd, capture_output=True, text=True, timeout=BOOT_TIMEOUT,
                                errors="replace").stdout
    except subprocess.TimeoutExpired as e:
        # A guest that ended its scenario but powers off slowly on a loaded host is done.
        output = (e.stdout or b"").decode(errors="replace")
        if "SCHEDTEST-END" not in output:
            pytest.fail(f"guest did not finish '{test}' in {BOOT_TIMEOUT} s:\n"
                        f"{output[-3000:]!r}")
    console = output.replace("\r", "")
    assert "SCHEDTEST-END" in console, f"scenario {test} did not finish:\n{console[-3000:]}"
    body = console.split(f"SCHEDTEST-BEGIN {test}", 1)[1].split("SCHEDTEST-END", 1)[0]
    values, files, current = {}, {}, None
    for line in body.splitlines():
        if line.startswith("=== file "):
            current = line[len("=== file "):].strip()
            files[current] = []
        elif line.startswith("=== end"):
            current = None
        elif current is not None:
            files[current].append(line)
        elif "=" in line and not line.startswith("log:") and not line.startswith("["):
            k, _, v = line.partition("=")
            values[k.strip()] = v.strip()
    return values, {k: "\n".join(v) + "\n" for k, v in files.items()}, console
