"""The gem5 backend: locate and check gem5, boot to a cached checkpoint, restore and run.

gem5 is a prerequisite the user builds (``build/X86/gem5.fast`` of gem5 v24.0, see the
README); ``GEM5`` names the binary. The gem5-side code is ``configs/schedlab_gem5.py`` with
``configs/components/``; both build the board from the plan in ``schedlab/gem5_plan.py``.

Flow:
- :func:`ensure_checkpoint` boots a machine with Atomic cores until the in-guest runner
  issues ``m5 checkpoint``, and keeps the checkpoint under ``<cache>/gem5-checkpoints/<key>``
  where the key hashes the gem5 binary, the resolved machine, the kernel, the image, the
  kernel command line and our gem5-side code; a second call returns it at once.
- :func:`run` restores that checkpoint into the requested cores (same core count and memory
  size by construction: the same plan), hands the run specification to the guest through
  ``m5 readfile``, and collects console, statistics and metadata into the run directory.

Progress: gem5's progress lines (simulated time, instructions so far, host rate) are passed
to the ``progress`` callable as one-line strings. Any abnormal gem5 end raises
:class:`Gem5Error` (a UserError) carrying the tail of gem5's log.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from . import paths
from .errors import UserError
from .gem5_plan import BoardPlan, boot_args as plan_boot_args, plan_from_dict
from .gem5_stats import parse_stats_file
from .store import hash_bytes, hash_file, hash_json, publish_dir, write_atomic

Progress = Callable[[str], None]

SCRIPT = paths.CONFIGS / "schedlab_gem5.py"
COMPONENTS = paths.CONFIGS / "components"
CONSOLE = "board.pc.com_1.device"
LOG_TAIL_LINES = 25
# Bump when the boot flow (configs/schedlab_gem5.py's boot mode, the boot board's cores,
# devices or memory map in configs/components/) changes the checkpoint it produces.
CHECKPOINT_RECIPE = "3"
# A boot that has not reached the checkpoint after this long is stuck (the 4-core machines
# take about 5 minutes; the 12- and 16-core ones longer).
BOOT_HOST_LIMIT_S = 4 * 3600


class Gem5Error(UserError):
    """gem5 is missing, the wrong version, or ended abnormally (message has the log tail)."""


def gem5_version_required() -> str:
    return str(paths.versions()["gem5"]["version"])


def build_docs() -> str:
    return str(paths.versions()["gem5"]["build_docs"])


# --------------------------------------------------------------------------- locating gem5

@dataclass(frozen=True)
class Gem5Binary:
    path: Path
    version: str
    x86: bool
    hash: str


def find_gem5() -> Path:
    """The binary named by GEM5, or a one-line error saying how to get one."""
    value = os.environ.get("GEM5")
    if not value:
        raise Gem5Error(f"GEM5 is not set; build gem5 {gem5_version_required()} "
                        f"(scons build/X86/gem5.fast, see {build_docs()}) and export "
                        f"GEM5=/path/to/gem5/build/X86/gem5.fast")
    path = Path(value).expanduser()
    if not path.is_file() or not os.access(path, os.X_OK):
        raise Gem5Error(f"GEM5={value} is not an executable file; point it at "
                        f"build/X86/gem5.fast of a gem5 {gem5_version_required()} build")
    return path.resolve()


def _binary_hash(path: Path) -> str:
    """SHA-256 of the binary, cached by (path, size, mtime): hashing ~1 GB takes seconds."""
    st = path.stat()
    memo = paths.cache_dir() / "gem5-binary-hashes.json"
    try:
        known = json.loads(memo.read_text())
    except (OSError, ValueError):
        known = {}
    key = f"{path}:{st.st_size}:{st.st_mtime_ns}"
    if key not in known:
        known[key] = hash_file(path)
        write_atomic(memo, json.dumps(known, indent=1))
    return known[key]


# The binary's version, and whether it can simulate X86 (it has the X86 CPU models).
_PROBE = ("import _m5.core as c, m5.objects as o; "
          "print('SCHEDLAB-GEM5', c.gem5Version, int(hasattr(o, 'X86AtomicSimpleCPU')))")


def probe(path: Path | None = None) -> Gem5Binary:
    """Ask the binary for its version and whether it simulates X86; check the version."""
    path = path or find_gem5()
    # gem5 creates its output directory even for -c; keep it out of the caller's cwd.
    with tempfile.TemporaryDirectory(prefix="schedlab-gem5-probe-") as outdir:
        try:
            out = subprocess.run([str(path), "--quiet", "--outdir", outdir, "-c", _PROBE],
                                 capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise Gem5Error(f"cannot run {path}: {e}") from None
    line = next((ln for ln in out.stdout.splitlines() if ln.startswith("SCHEDLAB-GEM5 ")), None)
    if line is None:
        tail = (out.stderr or out.stdout).strip().splitlines()[-1:] or ["(no output)"]
        raise Gem5Error(f"{path} did not report a gem5 version (exit {out.returncode}): "
                        f"{tail[0]}")
    _, version, x86 = line.split()
    info = Gem5Binary(path, version, x86 == "1", _binary_hash(path))
    check_version(info)
    return info


def check_version(info: Gem5Binary) -> None:
    want = gem5_version_required()
    if not (info.version == want or info.version.startswith(want + ".")):
        raise Gem5Error(f"{info.path} is gem5 {info.version}; schedlab needs gem5 {want}.x "
                        f"(see {build_docs()})")
    if not info.x86:
        raise Gem5Error(f"{info.path} is not built for X86; build build/X86/gem5.fast")


def doctor() -> list[tuple[str, str, str]]:
    """(item, status, how to fix) rows for ``run.py doctor``."""
    rows = []
    try:
        info = probe()
        rows.append(("gem5", f"ok: {info.path} (gem5 {info.version}, X86)", ""))
    except Gem5Error as e:
        rows.append(("gem5", "missing or unusable", str(e)))
    kvm = Path("/dev/kvm")
    usable = kvm.exists() and os.access(kvm, os.R_OK | os.W_OK)
    rows.append(("gem5 KVM boot (optional)",
                 "/dev/kvm present (not verified with gem5)" if usable else "not available",
                 "boots use Atomic cores by default (about 5 minutes per 2-4-core machine); "
                 "try 'run.py boot --cpu kvm' only where KVM guests work"))
    return rows


def config_hash() -> str:
    """Hash of our gem5-side code and the plan module: part of every gem5 run's id (a
    checkpoint's key takes only the boot board's identity, ``checkpoint_key``)."""
    files = [SCRIPT, *sorted(COMPONENTS.glob("*.py")), paths.REPO / "schedlab" / "gem5_plan.py"]
    return hash_bytes(*[p.read_bytes() for p in files])


# --------------------------------------------------------------------------- running gem5

def command(binary: Path, outdir: Path, *, mode: str, machine_json: Path, kernel: Path,
            kernel_args: list[str], cpu: str, checkpoint_dir: Path,
            readfile: Path | None = None, progress_seconds: float = 30.0,
            max_host_seconds: float = 0.0, hierarchy: str = "plan",
            workitem_stats: bool = True, attribute_tasks: bool = False,
            fast_forward: bool = False) -> list[str]:
    """The gem5 command line (stdout/stderr are redirected by the caller)."""
    cmd = [str(binary), "--outdir", str(outdir), str(SCRIPT), "--mode", mode,
           "--machine-json", str(machine_json), "--kernel", str(kernel),
           "--command-line", " ".join(kernel_args), "--cpu", cpu,
           "--checkpoint-dir", str(checkpoint_dir),
           "--progress-seconds", f"{progress_seconds:g}"]
    if readfile is not None:
        cmd += ["--readfile", str(readfile)]
    if max_host_seconds:
        cmd += ["--max-host-seconds", f"{max_host_seconds:g}"]
    if hierarchy != "plan":
        cmd += ["--hierarchy", hierarchy]
    if not workitem_stats:
        cmd += ["--no-workitem-stats"]
    if attribute_tasks:
        cmd += ["--attribute-tasks"]
    if fast_forward:
        cmd += ["--fast-forward"]
    return cmd


def _tail(path: Path, n: int = LOG_TAIL_LINES) -> str:
    try:
        with open(path, errors="replace") as f:
            return "".join(deque(f, maxlen=n))
    except OSError:
        return ""


def execute(cmd: list[str], outdir: Path, progress: Progress | None = None,
            timeout: float | None = None) -> dict:
    """Run gem5, stream its progress, and return the events it reported.

    Writes ``gem5.stdout`` / ``gem5.stderr`` into ``outdir``. Raises Gem5Error if gem5 exits
    non-zero or is killed, with the tail of its logs.
    """
    outdir.mkdir(parents=True, exist_ok=True)
    out_path, err_path = outdir / "gem5.stdout", outdir / "gem5.stderr"
    events: list[dict] = []
    progress_lines: list[dict] = []
    started = time.monotonic()
    with open(out_path, "w") as out, open(err_path, "w") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True, bufsize=1)
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                out.write(line)
                out.flush()
                if line.startswith("schedlab-progress "):
                    data = json.loads(line.split(" ", 1)[1])
                    progress_lines.append(data)
                    if progress:
                        progress(f"gem5: {data['sim_s']:.4f} s simulated, "
                                 f"{data['insts'] / 1e6:.1f} M instructions, "
                                 f"{data['host_s']:.0f} s host, "
                                 f"{data['ips'] / 1e6:.2f} M instructions/host s")
                elif line.startswith("schedlab-event "):
                    data = json.loads(line.split(" ", 1)[1])
                    events.append(data)
                    if progress:
                        progress(f"gem5: {data['event']} at tick {data.get('tick')}")
                if timeout and time.monotonic() - started > timeout:
                    proc.kill()
                    raise Gem5Error(f"gem5 ran longer than {timeout:.0f} s host and was stopped; "
                                    f"logs in {outdir}")
            status = proc.wait()
        except BaseException:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            raise
    host_s = time.monotonic() - started
    if status != 0:
        abnormal = [e for e in events if e["event"] in ("abnormal", "limit")]
        why = (f"ended with {abnormal[-1]}" if abnormal else
               f"exited with status {status}" if status > 0 else f"was killed by signal {-status}")
        tail = _tail(err_path) + _tail(out_path, 10)
        console = _tail(outdir / CONSOLE, 10)
        raise Gem5Error(f"gem5 {why} after {host_s:.0f} s; logs in {outdir}\n"
                        f"--- gem5 log tail ---\n{tail.rstrip()}\n"
                        f"--- guest console tail ---\n{console.rstrip()}")
    return {"events": events, "progress": progress_lines, "host_seconds": round(host_s, 1)}


# --------------------------------------------------------------------------- artefacts

def _attr(obj, name: str):
    """Kernel/image builds arrive as objects (KernelBuild, GuestImage) or as dicts."""
    return obj[name] if isinstance(obj, dict) else getattr(obj, name)


def guest_boot_args(machine: dict, plan: BoardPlan) -> list[str]:
    """Kernel arguments for gem5: plan's base arguments plus the NUMA layout, if any."""
    extra: list[str] = []
    if len(machine["nodes"]) > 1:
        from .kernel_params import numa_boot_args
        per_node = [r[2] >> 20 for r in plan.memory.node_ranges()]
        extra = numa_boot_args(machine["nodes"], per_node, machine["memory"]["distances"])
    return plan_boot_args(plan, extra)


def checkpoint_key(binary: Gem5Binary, machine: dict, kernel_hash: str, image_hash: str,
                   kernel_args: list[str], cpu: str = "atomic") -> str:
    """What a boot checkpoint depends on: the gem5 binary, the board's boot identity (cores
    with their CPUID values, clock, memory map; ``BoardPlan.boot_identity``), the kernel,
    the image, the kernel command line and the boot cores.

    A checkpoint holds memory, device and CPU state, not cache contents (classic caches
    are written back when gem5 drains for it), and Atomic boot cores take no latency from
    the caches, so cache sizes and latencies are not in the key: a "what if the L2 were
    8 MiB" run restores the machine's own checkpoint. A change to the boot flow or to the
    boot board's objects in configs/ must bump CHECKPOINT_RECIPE."""
    return hash_json({"recipe": CHECKPOINT_RECIPE, "gem5": binary.hash,
                      "board": plan_from_dict(machine).boot_identity(), "kernel": kernel_hash,
                      "image": image_hash, "args": kernel_args, "boot_cpu": cpu})[:20]


def checkpoint_root() -> Path:
    return paths.cache_dir() / "gem5-checkpoints"


def ensure_checkpoint(machine: dict, kernel, image, kernel_args: list[str] | None = None,
                      progress: Progress | None = print, cpu: str = "atomic",
                      binary: Gem5Binary | None = None) -> tuple[Path, dict]:
    """The cached boot checkpoint of ``machine``, booting once if it does not exist.

    Returns (checkpoint directory, metadata). ``kernel`` has ``.vmlinux`` (with the image's
    initramfs built in) and ``.hash``; ``image`` has ``.hash``.
    """
    binary = binary or probe()
    plan = plan_from_dict(machine)
    kernel_args = list(kernel_args if kernel_args is not None else guest_boot_args(machine, plan))
    if cpu == "kvm" and "schedlab.m5=addr" not in kernel_args:
        # Under KVM the m5 instruction form traps; the runner then uses the address form.
        kernel_args.append("schedlab.m5=addr")
    key = checkpoint_key(binary, machine, _attr(kernel, "hash"), _attr(image, "hash"),
                         kernel_args, cpu)
    final = checkpoint_root() / key
    meta_path = final / "checkpoint.json"
    if meta_path.is_file():
        meta = json.loads(meta_path.read_text())
        if progress:
            progress(f"gem5: reusing checkpoint {key} of {machine['name']} "
                     f"(booted in {meta['host_seconds']:.0f} s host)")
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
        machine_json = tmp / "machine.json"
        machine_json.write_text(json.dumps(machine, indent=1, sort_keys=True))
        cmd = command(binary.path, logs, mode="boot", machine_json=machine_json,
                      kernel=Path(_attr(kernel, "vmlinux")), kernel_args=kernel_args, cpu=cpu,
                      checkpoint_dir=tmp / "cpt", max_host_seconds=BOOT_HOST_LIMIT_S)
        result = execute(cmd, logs, progress)
        if not (tmp / "cpt" / "m5.cpt").is_file():
            raise Gem5Error(f"gem5 booted {machine['name']} but wrote no checkpoint: the guest "
                            f"never issued 'm5 checkpoint'; console: {logs / CONSOLE}")
        shutil.move(str(logs), str(tmp / "boot"))
        ck = next(e for e in result["events"] if e["event"] == "checkpoint")
        meta = {"key": key, "machine": machine["name"], "gem5": binary.version,
                "gem5_hash": binary.hash, "kernel": _attr(kernel, "hash"),
                "image": _attr(image, "hash"), "kernel_args": kernel_args, "boot_cpu": cpu,
                "config_hash": config_hash(), "command": cmd,
                "host_seconds": result["host_seconds"], "tick": ck["tick"],
                "insts": ck.get("insts"), "created": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                   time.gmtime())}
        (tmp / "checkpoint.json").write_text(json.dumps(meta, indent=1))
    meta = json.loads(meta_path.read_text())
    if progress:
        progress(f"gem5: checkpoint {key} written in {meta['host_seconds']:.0f} s host")
    return final / "cpt", meta


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


def _builds(spec: dict, progress: Progress | None):
    """(kernel with the image's initramfs built in, image) for a run spec.

    The runner's spec (schedlab.runs) carries the QEMU kernel and the image as
    ``kernel_build``/``image_build`` (``kernel``/``image`` are their hashes); gem5's X86
    loader takes no separate initrd, so the gem5 kernel is that kernel rebuilt with the
    image's initramfs inside (cached; a relink). A spec whose ``kernel`` is already a build
    object (the self-test) is used as it is."""
    kernel, image = spec.get("kernel"), spec.get("image")
    if image is None or isinstance(image, str):
        image = spec.get("image_build")
    if kernel is not None and not isinstance(kernel, str) and \
            (isinstance(kernel, dict) or hasattr(kernel, "vmlinux")):
        return kernel, image
    if image is None:
        raise UserError("gem5 run spec has no image build; it needs the guest image whose "
                        "initramfs goes into the kernel")
    from .kernel import build_kernel
    return build_kernel(initramfs=Path(_attr(image, "initramfs")),
                        progress=progress or (lambda s: None)), image


def run_kernel_args(machine: dict, plan: BoardPlan, extra: list[str] | tuple[str, ...] = ()):
    """The gem5 base arguments plus the spec's own (policy / request) arguments."""
    base = guest_boot_args(machine, plan)
    return base + [a for a in extra if a not in base]


def run(spec: dict, run_dir: Path, progress: Progress | None = print) -> dict:
    """Restore the machine's checkpoint into ``spec['cpu']`` cores and run the guest spec.

    ``spec``: ``machine`` (MachineSpec.to_dict()), ``cpu`` (o3|timing|atomic),
    ``guest_spec_text`` (served to ``m5 readfile``), ``kernel_command_line`` (the whole
    command line, as ``runs.prepare`` puts it in the run's id) or ``boot_args`` (extra kernel
    arguments, e.g. a policy's, to which the gem5 base arguments are added), and the builds: ``kernel_build`` and
    ``image_build`` (or ``kernel``/``image`` objects with .vmlinux/.hash and .hash); optional
    ``timeout`` (host seconds), ``hierarchy`` ("plan", or "stock" / "stock-matched" for
    the overhead benchmark), ``workitem_stats`` (default True: gem5 resets the statistics at ``m5
    workbegin`` and dumps them at ``m5 workend``; False if the guest does it itself),
    ``fast_forward`` (default True: restore into Atomic cores and switch to ``cpu`` cores at
    each ``m5 workbegin``, back at each ``m5 workend``; False: ``cpu`` cores throughout).
    Writes console.log, stats.json, gem5.json (and attribution.json) into run_dir; gem5's
    output directory run_dir/gem5 holds gem5.stdout/.stderr, stats.txt, the console, and the
    machine.json / readfile.txt it was given.
    """
    machine = spec["machine"]
    plan = plan_from_dict(machine)
    cpu = spec.get("cpu") or plan.default_cpu
    if cpu not in ("o3", "timing", "atomic"):
        raise UserError(f"unknown gem5 cpu {cpu!r}; choose o3, timing or atomic")
    binary = probe()
    kernel, image = _builds(spec, progress)
    # The command line the run's id was made from (runs.prepare), else the same derivation.
    kernel_args = list(spec.get("kernel_command_line")
                       or run_kernel_args(machine, plan, spec.get("boot_args") or ()))
    cpt, meta = ensure_checkpoint(machine, kernel, image, kernel_args, progress,
                                  cpu=spec.get("boot_cpu", "atomic"), binary=binary)
    # Our inputs live in gem5's output directory, so nothing of the caller's is overwritten.
    outdir = run_dir / "gem5"
    outdir.mkdir(parents=True, exist_ok=True)
    machine_json = outdir / "machine.json"
    machine_json.write_text(json.dumps(machine, indent=1, sort_keys=True))
    readfile = outdir / "readfile.txt"
    readfile.write_text(spec["guest_spec_text"])
    cmd = command(binary.path, outdir, mode="run", machine_json=machine_json,
                  kernel=Path(_attr(kernel, "vmlinux")), kernel_args=kernel_args,
                  cpu=cpu, checkpoint_dir=cpt, readfile=readfile,
                  hierarchy=spec.get("hierarchy", "plan"),
                  workitem_stats=spec.get("workitem_stats", True),
                  attribute_tasks=bool(spec.get("attribute_tasks")),
                  fast_forward=spec.get("fast_forward", True))
    info = {"gem5_version": binary.version, "gem5_binary": str(binary.path),
            "gem5_hash": binary.hash, "config_hash": config_hash(), "command": cmd,
            "checkpoint": meta, "cpu": cpu, "plan": plan.to_dict()}
    write_atomic(run_dir / "gem5.json", json.dumps(info, indent=1))
    try:
        result = execute(cmd, outdir, progress, timeout=spec.get("timeout"))
    except Gem5Error as e:
        # The run directory is unpublished on failure; keep gem5's logs where they survive.
        kept = paths.cache_dir() / "gem5-failed" / f"{time.strftime('%Y%m%dT%H%M%S')}-{run_dir.name}"
        shutil.copytree(outdir, kept, ignore=shutil.ignore_patterns("*.cpt", "readfile.txt"))
        raise Gem5Error(str(e).replace(str(outdir), str(kept))) from None
    finally:
        if (outdir / CONSOLE).exists():
            shutil.copyfile(outdir / CONSOLE, run_dir / "console.log")
    dumps = parse_stats_file(outdir / "stats.txt")
    label_roi(dumps, result["events"])
    write_atomic(run_dir / "stats.json", json.dumps(dumps))
    attribution = None
    if (outdir / "attribution.json").exists():
        attribution = json.loads((outdir / "attribution.json").read_text())
        write_atomic(run_dir / "attribution.json", json.dumps(attribution, indent=1))
    info.update(events=result["events"], host_seconds=result["host_seconds"],
                progress=result["progress"])
    write_atomic(run_dir / "gem5.json", json.dumps(info, indent=1))
    console = (run_dir / "console.log").read_text(errors="replace") \
        if (run_dir / "console.log").exists() else ""
    return {"console": console, "stats": dumps, "events": result["events"],
            "host_seconds": result["host_seconds"], "attribution": attribution}


# --------------------------------------------------------------------------- CLI

def _guest_builds(progress: Progress):
    """Build (or reuse) the guest image and the kernel with its initramfs built in."""
    try:
        from .image import build_image
        from .kernel import build_kernel
    except ImportError as e:
        raise UserError(f"the guest image/kernel builders are not available ({e}); "
                        f"update the repository") from None
    image = build_image(progress=progress)
    kernel = build_kernel(initramfs=Path(image.initramfs), progress=progress)
    return kernel, image


def _click():
    import click
    return click


def _make_boot_command():
    click = _click()

    @click.command("boot")
    @click.option("--machine", "machine_name", required=True, help="machine or machine-variant")
    @click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
                  help="override a catalogue value, e.g. --set l2.size=8MiB")
    @click.option("--cpu", type=click.Choice(["atomic", "kvm"]), default="atomic",
                  show_default=True, help="boot cores (kvm only where /dev/kvm works)")
    def boot_command(machine_name, overrides, cpu):
        """Boot a machine in gem5 to the runner's ready marker and keep a checkpoint."""
        from .machine import load_machine
        spec = load_machine(machine_name, list(overrides))
        machine = spec.to_dict()
        plan = plan_from_dict(machine)    # bad input is reported before prerequisites
        binary = probe()
        click.echo(plan.describe())
        kernel, image = _guest_builds(click.echo)
        cpt, meta = ensure_checkpoint(machine, kernel, image, progress=click.echo, cpu=cpu,
                                      binary=binary)
        click.echo(f"checkpoint: {cpt}")
    return boot_command


try:
    boot_command = _make_boot_command()
except ImportError:  # click is a host dependency; gem5's interpreter never imports this
    boot_command = None


if __name__ == "__main__":  # pragma: no cover
    sys.exit(boot_command())
