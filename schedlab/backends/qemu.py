"""QEMU (TCG) as the functional backend: the machine's topology, without its timing.

QEMU answers whether a policy does what it should (where tasks run, what the guest sees), not
what it does to caches: TCG models no caches and no latencies. The catalogue's last-level
cache groups become QEMU sockets (QEMU describes one LLC per socket in CPUID, so Linux builds
one MC scheduling domain per group) and its NUMA nodes become ``-numa`` nodes with the
catalogue's distances, unless the run asks for the topology from the kernel command line.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from schedlab.errors import UserError
from schedlab.processes import die_with_parent
from schedlab.guest.protocol import READY_MARKER, parse_console
from schedlab.machine import MachineSpec, format_cpus

QEMU = "qemu-system-x86_64"
# TCG needs no more than this to boot and run the workloads; the catalogue's sizes (up to
# 24 GiB) would only cost host memory. The size used is recorded with every run.
MIN_NODE_MIB, MAX_NODE_MIB = 128, 512
Progress = Callable[[str], None]


@dataclass(frozen=True)
class QemuLayout:
    sockets: int
    cores_per_socket: int
    node_cpus: tuple[tuple[int, ...], ...]
    node_mib: int
    distances: tuple[tuple[int, ...], ...]


def layout(machine: MachineSpec) -> QemuLayout:
    """Map the machine's LLC groups to sockets and its NUMA nodes to -numa nodes."""
    groups = machine.llc_groups
    sizes = {len(g) for g in groups}
    contiguous = all(list(g) == list(range(g[0], g[0] + len(g))) for g in groups)
    if len(sizes) != 1 or not contiguous:
        raise UserError(f"{machine.name}: QEMU can only model LLC groups of equal size over "
                        f"consecutive cores, not {[list(g) for g in groups]}; use the gem5 backend")
    for node in machine.nodes:
        if any(not set(g) <= set(node) for g in groups if set(g) & set(node)):
            raise UserError(f"{machine.name}: an LLC group spans two NUMA nodes, which QEMU "
                            f"cannot describe; use the gem5 backend")
    node_mib = min(MAX_NODE_MIB, max(MIN_NODE_MIB, machine.memory.size_per_node >> 20))
    return QemuLayout(len(groups), sizes.pop(), machine.nodes, node_mib,
                      tuple(tuple(r) for r in machine.node_distances()))


def command(machine: MachineSpec, kernel: Path, initrd: Path, append: str,
            console: Path, numa_tables: bool = True) -> list[str]:
    lay = layout(machine)
    cmd = [QEMU, "-accel", "tcg", "-nodefaults", "-no-user-config", "-display", "none",
           "-no-reboot", "-monitor", "none", "-serial", f"file:{console}",
           "-smp", f"{machine.cores},sockets={lay.sockets},cores={lay.cores_per_socket},threads=1",
           "-m", f"{lay.node_mib * len(lay.node_cpus)}M",
           "-kernel", str(kernel), "-initrd", str(initrd), "-append", append]
    if numa_tables and len(lay.node_cpus) > 1:
        for i, cpus in enumerate(lay.node_cpus):
            cmd += ["-object", f"memory-backend-ram,id=mem{i},size={lay.node_mib}M",
                    "-numa", f"node,nodeid={i},cpus={format_cpus(cpus)},memdev=mem{i}"]
        for i, row in enumerate(lay.distances):
            for j, d in enumerate(row):
                if i < j:
                    cmd += ["-numa", f"dist,src={i},dst={j},val={d}"]
    return cmd


def check_installed() -> str:
    path = shutil.which(QEMU)
    if not path:
        raise UserError(f"{QEMU} is missing; install it with 'apt-get install qemu-system-x86'")
    return path


def boot(cmd: list[str], console: Path, ready_timeout: float, timeout: float, nonce: str,
         progress: Progress = print) -> str:
    """Run QEMU until the guest powers off; return the console text.

    Raises UserError (with the console's last lines) if the guest shows no ready marker within
    ``ready_timeout`` seconds, if it stops before finishing the run, or after ``timeout``.
    """
    check_installed()
    console.write_text("")
    started = time.monotonic()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True,
                            preexec_fn=die_with_parent)
    ready_at, seen_results = None, 0
    try:
        while True:
            text = console.read_text(errors="replace")
            elapsed = time.monotonic() - started
            if ready_at is None and READY_MARKER in text:
                ready_at = elapsed
                progress(f"qemu: guest ready after {elapsed:.1f} s")
            report = parse_console(text, nonce)
            for result in report.results[seen_results:]:
                progress(f"qemu: {result.get('job')} rep {result.get('rep')}: exit "
                         f"{result.get('exit')}, {result.get('elapsed_ns', 0) / 1e9:.3f} s")
            seen_results = len(report.results)
            if proc.poll() is not None:
                break
            if ready_at is None and elapsed > ready_timeout:
                raise UserError(f"the guest printed no ready marker within {ready_timeout:.0f} s "
                                f"(console: {console}); last line: {_last_line(text)}")
            if elapsed > timeout:
                raise UserError(f"the run did not finish within {timeout:.0f} s (console: "
                                f"{console}); raise --timeout or use a smaller size")
            time.sleep(0.2)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
            proc.wait()
    text = console.read_text(errors="replace")
    qemu_output = (proc.stdout.read() if proc.stdout else "").strip()
    if proc.returncode != 0:
        raise UserError(f"QEMU failed (exit {proc.returncode}): "
                        f"{qemu_output.splitlines()[-1] if qemu_output else 'no output'}")
    if READY_MARKER not in text:
        raise UserError(f"the guest stopped before its ready marker (console: {console}); "
                        f"last line: {_last_line(text)}")
    if not parse_console(text, nonce).ended:
        raise UserError(f"the guest stopped before finishing the run (console: {console}); "
                        f"last line: {_last_line(text)}")
    progress(f"qemu: run finished in {time.monotonic() - started:.1f} s")
    return text


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:200] if lines else "(console empty)"
