"""The harness of the kernel-scenario tests under QEMU (tests/test_sched_qemu.py,
tests/test_regions_qemu.py): a small initramfs of busybox, a few programs and a scenario
/init, booted with the project's kernel; the scenario named on the kernel command line
prints key=value lines and dumps files between SCHEDTEST-BEGIN and SCHEDTEST-END."""

from __future__ import annotations

import shutil
import subprocess
import warnings
from pathlib import Path

import pytest

from schedlab.backends.qemu import QEMU_KERNEL_ARGS

# A guard against hangs, not a speed target (a guest takes seconds on an idle host).
BOOT_TIMEOUT = 300
# Guest seconds after which a scenario is taken for hung and reports its tasks: enough for
# the slowest scenario on a loaded host, early enough to be seen before BOOT_TIMEOUT.
HANG_REPORT_S = 200

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
# A scenario still running after HANG_REPORT_S seconds is reported before the host gives up:
# the state, wait channel and kernel stack of every user thread and of every kernel thread
# that is running or blocked (D), and the kernel's last messages, all as log: lines (which
# the parser skips), so a hang says where it is.
( sleep """ + str(HANG_REPORT_S) + r"""
  for p in /proc/[0-9]*/task/[0-9]*; do
      s=$(cut -d' ' -f3 $p/stat)
      grep -q . $p/cmdline || [ "$s" = R ] || [ "$s" = D ] || continue
      echo "$(cat $p/comm) ${p#/proc/} state=$s" \
           "cpu=$(cut -d' ' -f39 $p/stat) wchan=$(cat $p/wchan)"
      sed 's/^/    /' $p/stack
  done 2>/dev/null
  dmesg | tail -40 ) 2>&1 | sed 's/^/log: hang: /' &
"""
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
    console = _console(cmd)
    if "SCHEDTEST-END" not in console:
        # Booted once more, since a TCG guest of many vCPUs on a loaded 2-core host has hung
        # rarely (once in some hundred boots, never reproduced alone). The hang's report stays
        # visible in the warnings summary; a scenario that hangs twice fails.
        warnings.warn(f"guest hung in '{test}', booted again; its report:\n"
                      f"{_hang_report(console)}")
        console = _console(cmd)
    if "SCHEDTEST-END" not in console:
        pytest.fail(f"guest did not finish '{test}' in {BOOT_TIMEOUT} s, twice:\n"
                    f"{_hang_report(console)}")
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


def _console(cmd: list[str]) -> str:
    """The guest's console until it powers off or BOOT_TIMEOUT passes."""
    try:
        output = subprocess.run(cmd, capture_output=True, text=True, timeout=BOOT_TIMEOUT,
                                errors="replace").stdout
    except subprocess.TimeoutExpired as e:
        # A guest that ended its scenario but powers off slowly on a loaded host is done.
        output = (e.stdout or b"").decode(errors="replace")
    return output.replace("\r", "")


def _hang_report(console: str) -> str:
    """What a hung guest printed: INIT_PREAMBLE's report of its tasks if it got that far,
    else the end of the console."""
    report = [line for line in console.splitlines() if line.startswith("log: hang: ")]
    return "\n".join(report) if report else console[-3000:]
