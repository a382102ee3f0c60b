"""Build the guest Linux kernel from Debian's pinned linux-source package and kernel-patches/.

Recipe: extract the tarball once (a pristine tree), keep one work tree beside it, apply the
quilt-style ``kernel-patches/series`` with ``patch -p1``, configure ``tinyconfig`` plus every
``kernel-patches/*.config`` fragment (sorted by name), check that every requested option
survived ``olddefconfig``, and build ``bzImage`` (QEMU) and ``vmlinux`` (gem5).

Outputs are cached under ``<cache>/kernel/<key>/`` where the key hashes the source version,
the patches, the fragments, an optional built-in initramfs, the exact build toolchain and this
recipe's version, so an unchanged kernel is never rebuilt. The build is byte-reproducible
(:mod:`schedlab.guest.reproducible`): fixed stamps, the source and object trees mapped away,
and the built-in initramfs named relative to the object tree, so neither the date nor the
cache's location reaches the kernel's bytes (its embedded config included). The work and
object trees persist between builds, and files a previous series patched are restored from
the pristine tree with a fresh mtime, so a change to one patch recompiles only what it
touches.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Callable

from schedlab import paths
from schedlab.errors import UserError
from schedlab.guest import reproducible
from schedlab.machine import DEFAULT_TICK_HZ
from schedlab.store import hash_bytes, hash_file, locked, publish_dir

# Bump when the recipe below changes in a way that changes the kernel it produces.
# 2: reproducible (fixed stamps, path maps, the initramfs named relative to the objects).
RECIPE_VERSION = "2"
# The built-in initramfs is copied into the object tree under this name and named by it,
# relative (make runs there), so the cache's location stays out of the embedded config.
INITRAMFS_NAME = "schedlab-initramfs.cpio"

Progress = Callable[[str], None]


@dataclass(frozen=True)
class KernelBuild:
    """A built kernel: ``vmlinux`` (ELF, for gem5) and ``bzImage`` (for QEMU)."""

    dir: Path
    hash: str

    @property
    def vmlinux(self) -> Path:
        return self.dir / "vmlinux"

    @property
    def bzimage(self) -> Path:
        return self.dir / "bzImage"

    @property
    def config(self) -> Path:
        return self.dir / "config"

    def artefacts(self) -> dict[str, str]:
        """The built files' hashes: provenance of every run that boots this kernel."""
        return reproducible.artefact_hashes({"vmlinux": self.vmlinux, "bzImage": self.bzimage})


def source_tarball() -> tuple[Path, str]:
    """The pinned source tarball and its package version; a clear error if either is off."""
    pin = paths.versions()["kernel"]
    tarball = Path(os.environ.get("SCHEDLAB_KERNEL_TARBALL", pin["tarball"]))
    install = f"apt-get install {pin['package']}={pin['version']}"
    if not tarball.is_file():
        raise UserError(f"Linux source {tarball} is missing (Debian package {pin['package']} "
                        f"{pin['version']}); install it with '{install}'")
    if "SCHEDLAB_KERNEL_TARBALL" not in os.environ:
        installed = _installed_version(pin["package"])
        if installed != pin["version"]:
            raise UserError(f"{pin['package']} {installed or '(none)'} is installed but "
                            f"versions.toml pins {pin['version']}; run '{install}' or update "
                            f"the pin in versions.toml")
    return tarball, pin["version"]


@cache
def _installed_version(package: str) -> str:
    """The Debian package's installed version ("" if none); asked once per process."""
    return subprocess.run(["dpkg-query", "-W", "-f=${Version}", package],
                          capture_output=True, text=True).stdout.strip()


def series() -> list[Path]:
    """The patches named by kernel-patches/series, in order."""
    series_file = paths.KERNEL_PATCHES / "series"
    patches = []
    for line in series_file.read_text().splitlines():
        name = line.split("#", 1)[0].strip()
        if not name:
            continue
        patch = paths.KERNEL_PATCHES / name
        if not patch.is_file():
            raise UserError(f"kernel-patches/series names {name}, which does not exist; "
                            f"add the patch or remove the line")
        patches.append(patch)
    return patches


def fragments() -> list[Path]:
    return sorted(paths.KERNEL_PATCHES.glob("*.config"))


def _initramfs_fragment() -> str:
    """The config lines that build the initramfs (copied to INITRAMFS_NAME) into the kernel.
    Uncompressed: gem5 boots with Atomic cores at ~1.5 M instructions per host second, and
    gunzipping a 30 MB archive in the guest costs about a billion instructions."""
    return f'CONFIG_INITRAMFS_SOURCE="{INITRAMFS_NAME}"\nCONFIG_INITRAMFS_COMPRESSION_NONE=y\n'


def _tick_fragment(tick_hz: int) -> str:
    """The config lines of a machine's tick rate other than guest.config's default."""
    return f"# CONFIG_HZ_{DEFAULT_TICK_HZ} is not set\nCONFIG_HZ_{tick_hz}=y\n"


def build_key(initramfs: Path | None = None, tick_hz: int = DEFAULT_TICK_HZ) -> str:
    tarball, version = source_tarball()
    parts: list[bytes | str] = [RECIPE_VERSION, version, str(tarball.stat().st_size),
                                reproducible.toolchain_identity()]
    for f in series() + fragments():
        parts += [f.name, f.read_bytes()]
    if initramfs is not None:
        parts += ["initramfs", hash_file(initramfs), _initramfs_fragment()]
    if tick_hz != DEFAULT_TICK_HZ:  # only then, so the 1000 Hz kernel keeps its hash
        parts += ["tick", _tick_fragment(tick_hz)]
    return hash_bytes(*parts)[:16]


def planned_kernel(initramfs: Path | None = None,
                   tick_hz: int = DEFAULT_TICK_HZ) -> KernelBuild:
    """The kernel :func:`build_kernel` would return, named without building it (its files
    may not exist): what a run id needs."""
    key = build_key(initramfs, tick_hz)
    return KernelBuild(paths.cache_dir() / "kernel" / key, key)


def build_kernel(initramfs: Path | None = None, progress: Progress = print,
                 jobs: int | None = None, tick_hz: int = DEFAULT_TICK_HZ) -> KernelBuild:
    """Return the cached kernel for the current patches and config, building it if needed.

    With ``initramfs`` (a cpio archive) the archive is built into the kernel: gem5's X86
    board loads a kernel but no separate initrd. ``tick_hz``: the machine's tick rate
    (``MachineSpec.tick_hz``); each rate builds in an object tree of its own, since a new
    CONFIG_HZ recompiles nearly everything.
    """
    planned = planned_kernel(initramfs, tick_hz)
    key, final = planned.hash, planned.dir
    if (final / "bzImage").is_file():
        return planned
    tarball, version = source_tarball()
    with locked(paths.cache_dir() / "kernel-src" / "lock",
                waiting=lambda: progress("kernel: waiting for another process's kernel build "
                                         "to finish (the build tree is shared; minutes)")):
        if (final / "bzImage").is_file():  # built by another process while we waited
            return KernelBuild(final, key)
        started = time.monotonic()
        root = paths.cache_dir() / "kernel-src" / version
        pristine, work, objects = _prepare_trees(root, tarball, progress, tick_hz)
        _apply_series(pristine, work, progress)
        config = _configure(work, objects, initramfs, progress, tick_hz)
        _make(work, objects, jobs or os.cpu_count() or 2, progress)
        with publish_dir(final) as out:
            shutil.copy2(objects / "vmlinux", out / "vmlinux")
            shutil.copy2(objects / "arch/x86/boot/bzImage", out / "bzImage")
            shutil.copy2(config, out / "config")
            (out / "build-seconds").write_text(f"{time.monotonic() - started:.1f}\n")
        progress(f"kernel: built {key} in {time.monotonic() - started:.0f} s")
    return KernelBuild(final, key)


def _run(cmd: list[str], cwd: Path, what: str, **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, **kw)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["(no output)"]
        raise UserError(f"kernel build: {what} failed: {tail[0]}")
    return proc


def _prepare_trees(root: Path, tarball: Path, progress: Progress,
                   tick_hz: int = DEFAULT_TICK_HZ) -> tuple[Path, Path, Path]:
    pristine, work = root / "pristine", root / "work"
    objects = root / ("objects" if tick_hz == DEFAULT_TICK_HZ else f"objects-hz{tick_hz}")
    if not (pristine / "Makefile").is_file():
        progress(f"kernel: extracting {tarball.name} (once)")
        shutil.rmtree(pristine, ignore_errors=True)
        with publish_dir(pristine) as tmp:
            _run(["tar", "-xf", str(tarball), "--strip-components=1", "-C", str(tmp)],
                 tmp, "extracting the source")
    if not (work / "Makefile").is_file():
        shutil.rmtree(work, ignore_errors=True)
        for stale in root.glob("objects*"):
            shutil.rmtree(stale, ignore_errors=True)
        with publish_dir(work) as tmp:
            _run(["cp", "-a", f"{pristine}/.", str(tmp)], root, "copying the source tree")
    objects.mkdir(exist_ok=True)
    return pristine, work, objects


def _apply_series(pristine: Path, work: Path, progress: Progress) -> None:
    """Reset the files the last series touched, then apply the current series.

    A file whose content comes out as the last build left it gets its old timestamp back, so
    make recompiles only what the change really altered (a patched header such as
    include/linux/sched.h would otherwise rebuild nearly the whole kernel).
    """
    manifest = work / ".schedlab-patched-files"
    touched = [t for t in (manifest.read_text().split("\n") if manifest.exists() else []) if t]
    before = {rel: ((work / rel).read_bytes(), (work / rel).stat().st_mtime_ns)
              for rel in touched if (work / rel).is_file()}
    for rel in touched:
        target, original = work / rel, pristine / rel
        if original.exists():
            shutil.copyfile(original, target)  # a fresh mtime makes make rebuild it
        elif target.exists():
            target.unlink()
    manifest.write_text("")
    now_touched: list[str] = []
    for patch in series():
        proc = subprocess.run(["patch", "-p1", "--forward", "--batch", "-i", str(patch)],
                              cwd=work, capture_output=True, text=True)
        now_touched += re.findall(r"^patching file '?([^'\n]+)'?$", proc.stdout, re.MULTILINE)
        manifest.write_text("\n".join(now_touched))
        if proc.returncode != 0:
            raise UserError(f"kernel patch {patch.name} does not apply to the pinned source: "
                            + (proc.stdout.strip().splitlines() or ["?"])[-1])
        progress(f"kernel: applied {patch.name}")
    for rel in now_touched:
        for leftover in (work / f"{rel}.orig", work / f"{rel}.rej"):
            leftover.unlink(missing_ok=True)
    for rel, (content, mtime) in before.items():
        path = work / rel
        if path.is_file() and path.read_bytes() == content:
            os.utime(path, ns=(mtime, mtime))


def _requested_options(fragment_files: list[Path]) -> dict[str, str]:
    """CONFIG_X -> value ('n' for '# CONFIG_X is not set') as the fragments ask."""
    wanted = {}
    for frag in fragment_files:
        for line in frag.read_text().splitlines():
            if m := re.fullmatch(r"(CONFIG_\w+)=(.*)", line.strip()):
                wanted[m.group(1)] = m.group(2)
            elif m := re.fullmatch(r"# (CONFIG_\w+) is not set", line.strip()):
                wanted[m.group(1)] = "n"
    return wanted


def _read_config(config: Path) -> dict[str, str]:
    return _requested_options([config])


def _configure(work: Path, objects: Path, initramfs: Path | None, progress: Progress,
               tick_hz: int = DEFAULT_TICK_HZ) -> Path:
    frags = fragments()
    if tick_hz != DEFAULT_TICK_HZ:
        tick = objects / "schedlab-tick.config"
        tick.write_text(_tick_fragment(tick_hz))
        frags = frags + [tick]
    if initramfs is not None:
        # Copied afresh every time: its new mtime makes make rebuild the built-in archive.
        shutil.copyfile(initramfs, objects / INITRAMFS_NAME)
        extra = objects / "schedlab-initramfs.config"
        extra.write_text(_initramfs_fragment())
        frags = frags + [extra]
    else:
        (objects / "schedlab-initramfs.config").unlink(missing_ok=True)
        frags = frags + [_empty_initramfs_fragment(objects)]
    progress("kernel: configuring tinyconfig + " + " + ".join(f.name for f in fragments()))
    _run(["make", f"O={objects}", *reproducible.ABSENT_TOOLS, "tinyconfig"], work,
         "make tinyconfig", env=reproducible.build_env())
    _run(["scripts/kconfig/merge_config.sh", "-m", "-O", str(objects),
          str(objects / ".config"), *map(str, frags)], work, "merging config fragments",
         env=reproducible.build_env())
    _run(["make", f"O={objects}", *reproducible.ABSENT_TOOLS, "olddefconfig"], work,
         "make olddefconfig", env=reproducible.build_env())
    config = objects / ".config"
    got = _read_config(config)
    dropped = [f"{option}={value} (got {got.get(option, 'n')})"
               for option, value in _requested_options(frags).items()
               if got.get(option, "n") != value]
    if dropped:
        raise UserError("kernel config: olddefconfig dropped " + ", ".join(dropped)
                        + "; add the options they depend on to kernel-patches/guest.config")
    return config


def _empty_initramfs_fragment(objects: Path) -> Path:
    frag = objects / "schedlab-no-initramfs.config"
    frag.write_text('CONFIG_INITRAMFS_SOURCE=""\n')
    return frag


def _make(work: Path, objects: Path, jobs: int, progress: Progress) -> None:
    """Run make, reporting compiled units (and a percentage once a build has been seen)."""
    estimate_file = objects / ".schedlab-units"
    estimate = int(estimate_file.read_text()) if estimate_file.exists() else 0
    # Both trees mapped away in C and assembler (the kernel maps only the source tree, and
    # only for __FILE__): a build in another cache gives the same bytes.
    maps = " ".join(reproducible.prefix_maps(work.resolve(), objects.resolve()))
    cmd = ["make", f"O={objects}", f"-j{jobs}", f"KCFLAGS={maps}", f"KAFLAGS={maps}",
           *reproducible.ABSENT_TOOLS, "bzImage"]
    log = objects / "build.log"
    progress(f"kernel: make -j{jobs} bzImage (log: {log})")
    units, last, started = 0, 0.0, time.monotonic()
    with open(log, "w") as logf:
        proc = subprocess.Popen(cmd, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, env=reproducible.build_env())
        assert proc.stdout is not None
        for line in proc.stdout:
            logf.write(line)
            if re.match(r"\s+(CC|AS|LD|AR|OBJCOPY|GEN)\s", line):
                units += 1
            now = time.monotonic()
            if now - last >= 15:
                last = now
                pct = f" (~{min(99, 100 * units // estimate)}%)" if estimate else ""
                progress(f"kernel: {units} units built{pct}, {now - started:.0f} s")
        proc.wait()
    if proc.returncode != 0:
        errors = [line for line in log.read_text().splitlines() if "error" in line.lower()]
        raise UserError(f"kernel build failed: {(errors or ['see ' + str(log)])[0].strip()}")
    if units > estimate:
        estimate_file.write_text(str(units))
