"""Boot checkpoints: boot a machine once with Atomic cores and keep the checkpoint.

:func:`ensure_checkpoint` boots a machine until the in-guest runner issues ``m5 checkpoint``
and keeps the checkpoint under ``<cache>/gem5-checkpoints/<key>``, where the key hashes the
gem5 binary, the board's boot identity, the kernel, the image and the kernel command line
(:func:`checkpoint_key`); a second call returns it at once.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from schedlab import paths
from schedlab.backends.gem5.binary import Gem5Binary, Gem5Error, config_hash, probe
from schedlab.backends.gem5.options import Gem5Options
from schedlab.backends.gem5.plan import BoardPlan, boot_args as plan_boot_args
from schedlab.backends.gem5.process import CONSOLE, command, execute
from schedlab.guest import reproducible
from schedlab.guest.numa import numa_boot_args
from schedlab.machine import tick_hz_of
from schedlab.store import hash_json, locked, publish_dir

Progress = Callable[[str], None]

# Bump when the boot flow (configs/schedlab_gem5.py's boot mode, the boot board's cores,
# devices or memory map in configs/components/) changes the checkpoint it produces.
CHECKPOINT_RECIPE = "3"
# A boot that has not reached the checkpoint after this long is stuck (the 4-core machines
# take about 5 minutes; the 12- and 16-core ones longer).
BOOT_HOST_LIMIT_S = 4 * 3600


# gem5 writes a checkpoint's memory gzip-compressed and reads it back with zlib's gzread,
# which reads a file without the gzip header as it is. Inflating the whole range on every
# restore (3 GiB of mostly zeros on the 4-core machines) took most of a restore, so the
# memory is kept uncompressed in a sparse file: the zeros are holes, which cost neither
# disk nor reading time. Blocks of this size that are all zeros become holes.
GZIP_MAGIC = b"\x1f\x8b"
HOLE_BLOCK = 64 << 10
_ZEROS = bytes(HOLE_BLOCK)


@dataclass(frozen=True)
class GuestKernel:
    """The guest gem5 boots: a vmlinux with its initramfs built in (gem5's X86 loader takes
    no separate initrd), and the hashes of the kernel and of the image inside it."""

    vmlinux: Path
    kernel_hash: str
    image_hash: str

    @property
    def vmlinux_sha(self) -> str:
        """The booted file's own hash: the bytes gem5 loads, which the build keys (hashes
        of inputs) name only where the build is reproducible."""
        return reproducible.artefact_hashes({"vmlinux": self.vmlinux})["vmlinux"]


def guest_boot_args(machine: dict, plan: BoardPlan) -> list[str]:
    """Kernel arguments for gem5: plan's base arguments plus the NUMA layout, if any."""
    extra: list[str] = []
    if len(machine["nodes"]) > 1:
        per_node = [r[2] >> 20 for r in plan.memory.node_ranges()]
        extra = numa_boot_args(machine["nodes"], per_node, machine["memory"]["distances"])
    return plan_boot_args(plan, extra, tick_hz=tick_hz_of(machine))


def run_kernel_args(machine: dict, plan: BoardPlan, extra: list[str] | tuple[str, ...] = ()):
    """The gem5 base arguments plus the spec's own (policy / request) arguments."""
    base = guest_boot_args(machine, plan)
    return base + [a for a in extra if a not in base]


def checkpoint_key(binary: Gem5Binary, plan: BoardPlan, kernel_hash: str, image_hash: str,
                   kernel_args: list[str], cpu: str = "atomic", vmlinux_sha: str = "") -> str:
    """What a boot checkpoint depends on: the gem5 binary, the board's boot identity (cores
    with their CPUID values, clock, memory map; ``BoardPlan.boot_identity``), the kernel,
    the image, the kernel command line and the boot cores.

    Not the workloads: the image holds the runner and its tools only, and the workloads and
    the user's programs come with each run after the restore (``schedlab.guest.payload``),
    so one checkpoint per kernel and board serves every version of them.

    A checkpoint holds memory, device and CPU state, not cache contents (classic caches
    are written back when gem5 drains for it), and Atomic boot cores take no latency from
    the caches, so cache sizes and latencies are not in the key: a "what if the L2 were
    8 MiB" run restores the machine's own checkpoint. A change to the boot flow or to the
    boot board's objects in configs/ must bump CHECKPOINT_RECIPE.

    ``vmlinux_sha``, the booted file's hash, makes the key name the kernel's bytes as well
    as its inputs: a kernel whose bytes differ (a build that was not reproducible) boots a
    checkpoint of its own instead of restoring one made with other bytes."""
    return hash_json({"recipe": CHECKPOINT_RECIPE, "gem5": binary.hash,
                      "board": plan.boot_identity(), "kernel": kernel_hash,
                      "vmlinux": vmlinux_sha, "image": image_hash, "args": kernel_args,
                      "boot_cpu": cpu})[:20]


def checkpoint_root() -> Path:
    return paths.cache_dir() / "gem5-checkpoints"


def ensure_checkpoint(machine: dict, plan: BoardPlan, kernel: GuestKernel,
                      kernel_args: list[str] | None = None, progress: Progress | None = print,
                      cpu: str = "atomic", binary: Gem5Binary | None = None
                      ) -> tuple[Path, dict]:
    """The cached boot checkpoint of ``machine``, booting once if it does not exist.

    Returns (checkpoint directory, metadata).
    """
    binary = binary or probe()
    kernel_args = list(kernel_args if kernel_args is not None else guest_boot_args(machine, plan))
    if cpu == "kvm" and "schedlab.m5=addr" not in kernel_args:
        # Under KVM the m5 instruction form traps; the runner then uses the address form.
        kernel_args.append("schedlab.m5=addr")
    key = checkpoint_key(binary, plan, kernel.kernel_hash, kernel.image_hash,
                         kernel_args, cpu, kernel.vmlinux_sha)
    final = checkpoint_root() / key
    meta_path = final / "checkpoint.json"
    # Runs of one machine started together (a campaign) boot it once: the others wait.
    with locked(checkpoint_root() / f"{key}.lock",
                waiting=lambda: progress(f"gem5: waiting for another process booting "
                                         f"{machine} to its checkpoint (5-20 minutes host)")):
        return _reuse_or_boot(machine, plan, kernel, kernel_args, progress, cpu, binary, key,
                              final, meta_path)


def _reuse_or_boot(machine, plan, kernel, kernel_args, progress, cpu, binary, key, final,
                   meta_path) -> tuple[Path, dict]:
    if meta_path.is_file():
        meta = json.loads(meta_path.read_text())
        if progress:
            progress(f"gem5: reusing checkpoint {key} of {machine['name']} "
                     f"(booted in {meta['host_seconds']:.0f} s host)")
        # Checkpoints kept before their memory was stored sparse are converted once.
        uncompress_memory(final / "cpt", progress)
        return final / "cpt", meta
    if progress:
        for note in plan.notes:
            progress(f"gem5: note: {note}")
        progress(f"gem5: booting {machine['name']} with {cpu} cores to a checkpoint "
                 f"(5-8 minutes host for 2-4 cores, more for larger machines)")
    # gem5's own output goes outside the directory being published, so the logs of a
    # failed boot survive for inspection; they are moved in on success.
    logs = checkpoint_root() / "boot-logs" / f"{key}-{os.getpid()}"
    shutil.rmtree(logs, ignore_errors=True)
    with publish_dir(final) as tmp:
        (tmp / "machine.json").write_text(json.dumps(machine, indent=1, sort_keys=True))
        cmd = command(binary.path, logs, Gem5Options(
            mode="boot", machine=machine, kernel=kernel.vmlinux,
            command_line=" ".join(kernel_args), cpu=cpu, checkpoint_dir=tmp / "cpt",
            max_host_seconds=BOOT_HOST_LIMIT_S))
        result = execute(cmd, logs, progress)
        if not (tmp / "cpt" / "m5.cpt").is_file():
            raise Gem5Error(f"gem5 booted {machine['name']} but wrote no checkpoint: the guest "
                            f"never issued 'm5 checkpoint'; console: {logs / CONSOLE}")
        shutil.move(str(logs), str(tmp / "boot"))
        uncompress_memory(tmp / "cpt", progress, key)
        ck = next(e for e in result["events"] if e["event"] == "checkpoint")
        meta = {"key": key, "machine": machine["name"], "gem5": binary.version,
                "gem5_hash": binary.hash, "kernel": kernel.kernel_hash,
                "vmlinux_sha": kernel.vmlinux_sha,
                "image": kernel.image_hash, "kernel_args": kernel_args, "boot_cpu": cpu,
                "config_hash": config_hash(), "command": cmd,
                "host_seconds": result["host_seconds"], "tick": ck["tick"],
                "insts": ck.get("insts"), "created": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                   time.gmtime())}
        (tmp / "checkpoint.json").write_text(json.dumps(meta, indent=1))
    meta = json.loads(meta_path.read_text())
    if progress:
        progress(f"gem5: checkpoint {key} written in {meta['host_seconds']:.0f} s host")
    return final / "cpt", meta


def uncompress_memory(cpt: Path, progress: Progress | None = None,
                      key: str | None = None) -> list[Path]:
    """Store each gzip-compressed memory file of checkpoint directory ``cpt`` (gem5's
    ``*.pmem``) uncompressed, as a sparse file, in place; returns the files converted.

    The contents gem5 reads are the same bytes, so runs restored either way are identical;
    only the restore is faster. Each file is replaced atomically: an interrupted conversion
    leaves the compressed file, converted on the next call. A copy of a checkpoint should
    keep the holes (``cp``, ``rsync -S``, ``tar -S``), or it takes the memory's full size
    on disk."""
    converted = []
    for pmem in sorted(cpt.glob("*.pmem")):
        with open(pmem, "rb") as f:
            if f.read(2) != GZIP_MAGIC:
                continue
        if progress:
            progress(f"gem5: storing {pmem.name} of checkpoint {key or cpt.parent.name} "
                     f"uncompressed and sparse (once: faster restores)")
        tmp = pmem.with_name(f".{pmem.name}.{os.getpid()}.tmp")
        try:
            with gzip.open(pmem, "rb") as src, open(tmp, "wb") as dst:
                while block := src.read(HOLE_BLOCK):
                    if block == _ZEROS[:len(block)]:
                        dst.seek(len(block), os.SEEK_CUR)
                    else:
                        dst.write(block)
                # The file ends where the memory does, even if that is inside a hole.
                dst.truncate()
                dst.flush()
                os.fsync(dst.fileno())
            os.replace(tmp, pmem)
        finally:
            tmp.unlink(missing_ok=True)
        # Read once now: the first restore after the conversion took 7.7 s where one after
        # reading the file took 3.0 and later ones 2.4 (bench/gem5.md, "The restore").
        with open(pmem, "rb") as f:
            while f.read(16 << 20):
                pass
        converted.append(pmem)
    return converted
