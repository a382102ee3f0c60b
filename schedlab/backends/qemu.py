"""QEMU (TCG) as the functional backend: the machine's topology, without its timing.

QEMU answers whether a policy does what it should (where tasks run, what the guest sees), not
what it does to caches: TCG models no caches and no latencies. The catalogue's last-level
cache groups become QEMU sockets (QEMU describes one LLC per socket in CPUID, so Linux builds
one MC scheduling domain per group) and its NUMA nodes become ``-numa`` nodes with the
catalogue's distances, unless the run asks for the topology from the kernel command line.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from schedlab.backends.backend import BackendName
from schedlab.errors import UserError
from schedlab.guest.image import write_cpio
from schedlab.guest.numa import numa_boot_args
from schedlab.guest.payload import QEMU_PAYLOAD
from schedlab.guest.protocol import READY_MARKER, parse_console
from schedlab.machine import MachineSpec, format_cpus
from schedlab.processes import die_with_parent
from schedlab.store import disk_full, keep_failed

QEMU = "qemu-system-x86_64"
# TCG needs no more than this to boot and run the workloads; the catalogue's sizes (up to
# 24 GiB) would only cost host memory. The size used is recorded with every run.
MIN_NODE_MIB, MAX_NODE_MIB = 128, 512
Progress = Callable[[str], None]


class StrayBreakpoint(UserError):
    """The guest kernel died of an INT3 it was writing into its own code (see below)."""


# Linux changes its own code at run time (turning a trace event on patches a static call and
# a static key in, for example, __schedule): it writes an INT3 over the instruction's first
# byte, then the rest, then the new first byte, making every CPU serialise between steps
# (arch/x86/kernel/alternative.c, text_poke_bp_batch), and a CPU that meets the INT3 meanwhile
# is sent on by poke_int3_handler. Once the patch is done no CPU can still execute the INT3,
# so this kernel oopses on one (the kernel places no other INT3 in its code: no kprobes).
# Under TCG a vCPU did, at __schedule's sched_switch call: once in a CI run of the suite,
# right after the runner turned its trace events on (tests/data/qemu-stray-int3/), and once in
# about 18,000 sched_switch toggles against two forking loops on two vCPUs on a loaded host
# (none in 12,000 on an idle one; none in 12,000 loaded with single-threaded TCG, too few to
# say that it avoids it). The guest's code is right and its run is lost: the run boots again,
# once, and records that it did.
_STRAY_INT3 = re.compile(r"^\[\s*[0-9.]+\] int3: 0000 \[#1\]", re.MULTILINE)


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
            console: Path, numa_tables: bool = True, icount: bool = False) -> list[str]:
    lay = layout(machine)
    cmd = [QEMU, "-accel", "tcg", "-nodefaults", "-no-user-config", "-display", "none",
           "-no-reboot", "-monitor", "none", "-serial", f"file:{console}",
           "-smp", f"{machine.cores},sockets={lay.sockets},cores={lay.cores_per_socket},threads=1",
           "-m", f"{lay.node_mib * len(lay.node_cpus)}M",
           "-kernel", str(kernel), "-initrd", str(initrd), "-append", append]
    if icount:
        # Guest time from the instructions executed. A fixed shift hung the boot at "Booting
        # SMP configuration" here; auto lets QEMU set the rate, but time still advances
        # only as the guest executes, so host load does not stretch the guest's ticks.
        cmd += ["-icount", "shift=auto,sleep=off"]
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
            _check_panic(text, console)
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
    _check_panic(text, console)   # QEMU exits at once after a panic (-no-reboot, panic=-1)
    if READY_MARKER not in text:
        raise UserError(f"the guest stopped before its ready marker (console: {console}); "
                        f"last line: {_last_line(text)}")
    report = parse_console(text, nonce)
    if not report.ended:   # the runner's own reason, if it gave one
        reason = report.errors[-1] if report.errors else f"last line: {_last_line(text)}"
        raise UserError(f"the guest stopped before finishing the run (console: {console}); "
                        f"{reason}")
    progress(f"qemu: run finished in {time.monotonic() - started:.1f} s")
    return text


def _check_panic(text: str, console: Path) -> None:
    """Raise the guest kernel's panic, naming its cause where it is known."""
    if (panic := _panic_line(text)) is None:
        return
    if _STRAY_INT3.search(text):
        raise StrayBreakpoint(f"the guest kernel met an INT3 while it patched its own code, "
                              f"a TCG race (console: {console})")
    raise UserError(f"the guest kernel panicked (console: {console}): {panic}"
                    + ("; the run's payload and the image did not fit the guest's memory: "
                       "give the machine more (--set memory.size_per_node=...)"
                       if "initramfs" in panic.lower() or "out of memory" in text.lower()
                       else ""))


def _panic_line(text: str) -> str | None:
    """The kernel's panic message, if it panicked (the guest then hangs: no point waiting)."""
    at = text.find("Kernel panic - not syncing")
    return None if at < 0 else text[at:].splitlines()[0].strip()


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:200] if lines else "(console empty)"


# The QEMU guest's own kernel arguments; gem5's are checkpoint.run_kernel_args.
# no_timer_check: the boot's IO-APIC timer check counts ticks against a busy loop, and a
# TCG guest on a loaded host can lose that race and panic ("IO-APIC + timer doesn't work!",
# seen on a host shared with two gem5 simulations); QEMU's timer is known to work.
# quiet: the runner's lines share ttyS0 with the kernel's messages, and a message printed
# while the runner writes a line cuts it in two (an i8042 probe message once hid a CPU's
# core siblings from a sweep's topology check); errors still reach the console.
QEMU_KERNEL_ARGS = ("console=ttyS0", "quiet", "panic=-1", "no_timer_check",
                    "schedlab.backend=qemu")


class QemuBackend:
    """QEMU TCG as a :class:`schedlab.backends.backend.Backend`: boots the kernel with the
    image and the run's payload as initramfs parts and reads the guest's console."""

    name = BackendName.QEMU
    timing_model = False
    attributes_tasks = False
    default_timeout_s = 1800.0
    # A QEMU run lasts seconds to minutes of guest time: room for every switch.
    trace_buffer_kb = 8192

    def check(self, request) -> None:
        if request.attribute_tasks:
            raise UserError("--attribute-tasks needs the gem5 backend (--backend gem5): it "
                            "uses a gem5 instruction that other machines do not have")
        if request.sampling is not None:
            raise UserError("--sampling needs the gem5 backend (--backend gem5): it switches "
                            "gem5's core models")
        if request.warm_caches is not None:
            raise UserError("--warm-caches bypasses the caches while gem5 fast-forwards: it "
                            "needs --backend gem5 with --fast-forward and --cpu timing or o3")

    def boot_args(self, request, machine: MachineSpec) -> list[str]:
        """The NUMA layout on the command line when the run asks for it from the kernel."""
        if request.numa_from == "kernel" and len(machine.nodes) > 1:
            return numa_boot_args([list(n) for n in machine.nodes], None,
                                  machine.node_distances())
        return []

    def identity(self, request, machine: MachineSpec, boot_args: list[str]):
        spec = {"cpu": None, "numa_from": request.numa_from,
                "kernel_command_line": [*QEMU_KERNEL_ARGS, *boot_args]}
        if request.guest_clock != "host":        # only when asked, so other runs keep ids
            spec["guest_clock"] = request.guest_clock
        return spec, None

    def execute(self, prepared, out: Path, progress: Progress) -> tuple[str, dict]:
        req = prepared.request
        # The payload as one file of a small initramfs loaded after the image's (Linux
        # unpacks concatenated archives in order); the runner unpacks it as gem5's does.
        payload = prepared.write_payload(out / "payload.cpio", progress)
        run_cpio = write_cpio([f"file {QEMU_PAYLOAD} {payload} 0644 0 0"], out / "run.cpio",
                              progress)
        initrd = out / "initrd.cpio"
        with open(initrd, "wb") as f:
            for part in (prepared.image.initramfs, run_cpio):
                with open(part, "rb") as src:
                    shutil.copyfileobj(src, f)
        append = " ".join(prepared.spec["kernel_command_line"])
        console = out / "console.log"
        cmd = command(prepared.machine, prepared.kernel.bzimage, initrd, append, console,
                      numa_tables=req.numa_from == "firmware",
                      icount=req.guest_clock == "icount")
        (out / "command.txt").write_text(shlex.join(cmd) + "\n")
        lay = layout(prepared.machine)
        progress(f"qemu: booting {prepared.machine.name} ({prepared.machine.cores} vCPUs in "
                 f"{lay.sockets} LLC groups, {len(lay.node_cpus)} node(s))")
        lost_boots = []     # the consoles of boots lost to a StrayBreakpoint, kept
        try:
            while True:
                try:
                    text = boot(cmd, console, req.ready_timeout,
                                req.timeout or self.default_timeout_s, prepared.guest.nonce,
                                progress)
                    break
                except StrayBreakpoint as e:
                    if lost_boots:
                        raise
                    kept = keep_failed(console, out, "qemu")
                    lost_boots.append(str(kept or console))
                    progress(f"qemu: {str(e).replace(str(console), lost_boots[-1])}; booting "
                             f"again, once")
        except UserError as e:
            if full := disk_full(out.parent):   # the results directory, not staging
                raise full from e
            # The staging directory goes with the failure; the console the message names
            # must outlive it.
            kept = keep_failed(console, out, "qemu")
            raise UserError(str(e).replace(str(console), str(kept or console))) from None
        finally:
            for f in (initrd, run_cpio, payload):
                f.unlink(missing_ok=True)
        info = {"name": "qemu", "command": cmd, "memory_mib_per_node": lay.node_mib,
                "booted": {**prepared.kernel.artefacts(), **prepared.image.artefacts()},
                "note": "QEMU TCG: functional only; caches and latencies are not modelled"}
        if lost_boots:
            info["boots_lost_to_stray_int3"] = lost_boots
        return text, info

    def collect(self, prepared, rows: list[dict], info: dict) -> list[str]:
        return []      # the guest's own results are all there is


QEMU_BACKEND = QemuBackend()
