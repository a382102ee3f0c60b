"""A gem5 run: restore a machine's boot checkpoint into detailed cores and run one guest spec.

The run executor (:mod:`schedlab.runs`) hands over a :class:`Gem5Job`, everything resolved:
the machine and its board plan (built once), the guest kernel, the whole kernel command
line (the one the run id hashes) and the runner's spec text. :func:`run` restores the
machine's checkpoint (booting once if there is none), serves the run's payload (its spec,
workloads and programs: schedlab.guest.payload) to ``m5 readfile``, and writes console.log,
stats.json, gem5.json (and attribution.json, sampling.json) into the run's staging
directory. The guest's results come back through ``m5 writefile`` (report.txt: the
runner's framed lines; artifacts.tar; trace.txt, the scheduler trace read straight from
tracefs) rather than the 8250 console.
"""

from __future__ import annotations

import json
import os
import shutil
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from schedlab.backends.gem5.binary import Gem5Error, config_hash, probe
from schedlab.backends.gem5.checkpoint import GuestKernel, ensure_checkpoint
from schedlab.backends.gem5.options import Gem5Options, RunSettings
from schedlab.backends.gem5.plan import CPU_TYPES, BoardPlan
from schedlab.backends.gem5.process import CONSOLE, command, execute
from schedlab.backends.gem5.stats import parse_stats_file
from schedlab.errors import UserError
from schedlab.store import disk_full, keep_failed, write_atomic

Progress = Callable[[str], None]
# In gem5's output directory: the payload served to m5 readfile; what the guest's m5
# writefile writes (disk-images/rootfs/init).
READFILE = "readfile"
REPORT = "report.txt"
ARTIFACTS = "artifacts.tar"
TRACE = "trace.txt"          # the scheduler trace, straight from tracefs
SAMPLING = "sampling.json"       # the sampled windows' counters (--sampling)


@dataclass(frozen=True)
class Gem5Job:
    """One gem5 run, resolved: the machine and its board plan, the cores, the guest, and
    how it simulates (``settings``: the part of the gem5 script's options the request
    decides; options.RunSettings says what each means). What is left to :func:`run` is
    where the checkpoint and the payload are."""

    machine: dict                   # MachineSpec.to_dict(), as gem5's script reads it
    plan: BoardPlan
    cpu: str                        # the detailed cores: o3, timing or atomic
    kernel: GuestKernel
    kernel_args: tuple[str, ...]    # the whole kernel command line
    readfile: str | bytes           # served to the guest's ``m5 readfile`` (the payload)
    settings: RunSettings = RunSettings(fast_forward=True)
    timeout: float | None = None    # host seconds
    boot_cpu: str = "atomic"
    # The gem5-side code's hash as the run id has it (the spec's gem5_config), recorded in
    # gem5.json: hashing the tree again when gem5 starts, after a boot of minutes, recorded
    # an edit made meanwhile as the run's code. None: hashed now (benchmarks, tools).
    config_hash: str | None = None

    def __post_init__(self) -> None:
        if self.cpu not in CPU_TYPES:
            raise UserError(f"unknown gem5 CPU {self.cpu!r}; choose one of {', '.join(CPU_TYPES)}")
        if self.settings.sampling and (not self.settings.fast_forward or self.cpu == "atomic"):
            raise UserError("sampling switches Atomic cores to detailed ones: it needs "
                            "--fast-forward and --cpu timing or o3")
        if self.settings.bypass_caches and (not self.settings.fast_forward
                                            or self.cpu == "atomic"):
            raise UserError("bypassing the caches is a way of fast-forwarding: it needs "
                            "--fast-forward and --cpu timing or o3")

    def options(self, checkpoint: Path, readfile: Path) -> Gem5Options:
        """What the gem5 script is told to run this job from ``checkpoint``."""
        return Gem5Options(
            mode="run", machine=self.machine, kernel=self.kernel.vmlinux,
            command_line=" ".join(self.kernel_args), cpu=self.cpu, checkpoint_dir=checkpoint,
            readfile=readfile, settings=self.settings)


def label_roi(dumps: list[dict], events: list[dict]) -> None:
    """Mark (``schedlab.roi`` = 1) the first dump at or after each ``m5 workend``: the
    region of interest, whether gem5 dumped at workend or the guest's dumpstats did."""
    ends = sorted(e["tick"] for e in events if e["event"] == "workend")
    for d in dumps:
        d["schedlab.roi"] = 0
    for end in ends:
        for d in dumps:
            if d.get("finalTick", -1) >= end:
                d["schedlab.roi"] = 1
                break


def run(job: Gem5Job, run_dir: Path, progress: Progress | None = print) -> dict:
    """Restore the machine's checkpoint into ``job.cpu`` cores and run the guest spec.

    gem5's output directory ``run_dir/gem5`` holds gem5.stdout/.stderr, stats.txt, the
    console, and the options.json / readfile it was given. Returns the console text,
    the parsed statistics dumps (regions of interest marked), gem5's events, its host
    seconds and the per-task attribution (or None).
    """
    binary = probe()
    cpt, meta = ensure_checkpoint(job.machine, job.plan, job.kernel, list(job.kernel_args),
                                  progress, cpu=job.boot_cpu, binary=binary)
    # Our inputs live in gem5's output directory, so nothing of the caller's is overwritten.
    outdir = run_dir / "gem5"
    outdir.mkdir(parents=True, exist_ok=True)
    readfile = outdir / READFILE
    if isinstance(job.readfile, bytes):
        readfile.write_bytes(job.readfile)
    else:
        readfile.write_text(job.readfile)
    options = job.options(cpt, readfile)
    cmd = command(binary.path, outdir, options)
    info = {"gem5_version": binary.version, "gem5_binary": str(binary.path),
            "gem5_hash": binary.hash, "config_hash": job.config_hash or config_hash(),
            "command": cmd, "options": json.loads(options.to_json()),
            "checkpoint": meta, "cpu": job.cpu, "plan": job.plan.to_dict()}
    write_atomic(run_dir / "gem5.json", json.dumps(info, indent=1))
    try:
        result = execute(cmd, outdir, progress, timeout=job.timeout)
    except Gem5Error as e:
        if full := disk_full(run_dir.parent):   # the results directory, not staging
            raise full from e
        # The run directory is unpublished on failure; keep gem5's logs where they survive.
        kept = keep_failed(outdir, run_dir, "gem5",
                           ignore=shutil.ignore_patterns("*.cpt", READFILE))
        raise Gem5Error(str(e).replace(str(outdir), str(kept or outdir))) from None
    finally:
        if (outdir / CONSOLE).exists():
            shutil.copyfile(outdir / CONSOLE, run_dir / "console.log")
    dumps = parse_stats_file(outdir / "stats.txt")
    label_roi(dumps, result["events"])
    write_atomic(run_dir / "stats.json", json.dumps(dumps))
    sampling = None
    if (outdir / SAMPLING).exists():
        sampling = json.loads((outdir / SAMPLING).read_text())
        write_atomic(run_dir / SAMPLING, json.dumps(sampling, indent=1))
    attribution = None
    if (outdir / "attribution.json").exists():
        attribution = json.loads((outdir / "attribution.json").read_text())
        write_atomic(run_dir / "attribution.json", json.dumps(attribution, indent=1))
    info.update(events=result["events"], host_seconds=result["host_seconds"],
                cpu_seconds=result["cpu_seconds"], max_rss_mib=result.get("max_rss_mib"),
                progress=result["progress"])
    write_atomic(run_dir / "gem5.json", json.dumps(info, indent=1))
    console = (run_dir / "console.log").read_text(errors="replace") \
        if (run_dir / "console.log").exists() else ""
    # The runner's report and artifacts, written by the guest's m5 writefile.
    if (outdir / REPORT).exists():
        console += "\n" + (outdir / REPORT).read_text(errors="replace")
    artifacts = read_artifacts(outdir / ARTIFACTS) if (outdir / ARTIFACTS).exists() else {}
    if (outdir / TRACE).exists():    # written out by itself, not in the tar
        artifacts[TRACE] = (outdir / TRACE).read_bytes()
    (outdir / READFILE).unlink(missing_ok=True)   # the payload: workloads, programs
    return {"console": console, "stats": dumps, "events": result["events"],
            "host_seconds": result["host_seconds"], "attribution": attribution,
            "sampling": sampling, "artifacts": artifacts}


def read_artifacts(tar: Path) -> dict[str, bytes]:
    """The files of the runner's artifacts.tar (relative name -> bytes)."""
    out: dict[str, bytes] = {}
    with tarfile.open(tar) as t:
        for member in t.getmembers():
            name = os.path.normpath(member.name)
            if member.isfile() and not name.startswith(("/", "..")):
                f = t.extractfile(member)
                if f is not None:
                    out[name] = f.read()
    return out
