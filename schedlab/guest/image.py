"""Build the guest root filesystem: an initramfs (cpio) and an ext4 disk image.

Contents: busybox from Debian's busybox-static with a link per applet, the in-guest runner
(disk-images/rootfs/init) and the guest tools (disk-images/guest-tools/*.c: the m5-op shim and
the workload launcher): only what no workload changes. The workloads and the user's programs
come with each run (schedlab.guest.payload), so one boot checkpoint per kernel and board
serves every version of them. The cpio is
written by the kernel's own usr/gen_init_cpio (built from the pinned source), which records
device nodes such as /dev/console without needing root; the ext4 image by `mke2fs -d`,
without loop mounts. Both are cached under a content hash of everything that goes in.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from schedlab import paths
from schedlab.errors import UserError
from schedlab.guest import kernel, reproducible
from schedlab.guest.programs import guest_compile_command
from schedlab.store import hash_bytes, hash_file, publish_dir

# 3: the workloads left the image for the run's payload (schedlab.guest.payload).
# 4: every cpio entry's mtime is EPOCH, regular files' too (_set_mtimes).
# 5: reproducible: guest tools built with the clone's path mapped away, a fixed ext4 hash
#    seed, the exact toolchain in the key (schedlab.guest.reproducible).
RECIPE_VERSION = "5"
# mke2fs draws the directory-hash seed at random unless given one; any fixed value will do.
EXT4_HASH_SEED = "5c4ed1ab-0000-4000-8000-000000000000"
BUSYBOX = Path("/bin/busybox")
# Fixed timestamps make the archive a function of its contents.
EPOCH = 0

Progress = Callable[[str], None]


@dataclass(frozen=True)
class GuestImage:
    dir: Path
    hash: str

    @property
    def initramfs(self) -> Path:
        return self.dir / "initramfs.cpio"

    @property
    def ext4(self) -> Path:
        return self.dir / "rootfs.ext4"

    @property
    def manifest(self) -> Path:
        return self.dir / "manifest.txt"

    def artefacts(self) -> dict[str, str]:
        """The built files' hashes: provenance of every run on this image."""
        return reproducible.artefact_hashes({"initramfs": self.initramfs})


def _guest_tool_sources() -> list[Path]:
    return sorted((paths.DISK_IMAGES / "guest-tools").glob("*.c"))


def _guest_tool_files() -> list[Path]:
    """Sources and the headers they share (m5op.h): every input of the guest tools."""
    return sorted(p for p in (paths.DISK_IMAGES / "guest-tools").iterdir() if p.is_file())


def _rootfs_files() -> list[Path]:
    root = paths.DISK_IMAGES / "rootfs"
    return sorted(p for p in root.rglob("*") if p.is_file())


def gen_init_cpio(progress: Progress = print) -> Path:
    """The kernel's initramfs writer, compiled once from the pinned source."""
    tarball, version = kernel.source_tarball()
    tool = paths.cache_dir() / "tools" / version / "gen_init_cpio"
    if tool.is_file():
        return tool
    progress("image: building gen_init_cpio from the kernel source")
    source = subprocess.run(["tar", "-xOJf", str(tarball), "--wildcards", "*/usr/gen_init_cpio.c"],
                            capture_output=True, check=True).stdout
    with publish_dir(tool.parent) as tmp:
        (tmp / "gen_init_cpio.c").write_bytes(source)
        _compile([tmp / "gen_init_cpio.c"], tmp / "gen_init_cpio", static=False)
    return tool


def _compile(sources: list[Path], output: Path, static: bool = True) -> None:
    """A static guest program (with the workloads' compiler), or a host tool (gcc)."""
    cmd = (guest_compile_command(sources, output) if static
           else ["gcc", "-O2", "-o", str(output), *map(str, sources)])
    proc = subprocess.run(cmd, capture_output=True, text=True, env=reproducible.build_env())
    if proc.returncode != 0:
        first = (proc.stderr.strip().splitlines() or ["?"])[0]
        raise UserError(f"compiling {sources[0].name} failed: {first}")


def _check_busybox() -> None:
    if not BUSYBOX.is_file():
        raise UserError("busybox is missing; install it with 'apt-get install busybox-static'")
    kind = subprocess.run(["file", "-b", str(BUSYBOX)], capture_output=True, text=True).stdout
    if "statically linked" not in kind and "static-pie" not in kind:
        raise UserError(f"{BUSYBOX} is not static; install Debian's busybox-static package")


def image_key() -> str:
    _, version = kernel.source_tarball()
    parts: list[bytes | str] = [RECIPE_VERSION, version, hash_file(BUSYBOX),
                                reproducible.toolchain_identity()]
    for f in _guest_tool_files() + _rootfs_files():
        parts += [str(f.relative_to(paths.DISK_IMAGES)), f.read_bytes()]
    return hash_bytes(*parts)[:16]


def planned_image() -> GuestImage:
    """The image :func:`build_image` would return, named without building it."""
    key = image_key()
    return GuestImage(paths.cache_dir() / "image" / key, key)


def build_image(progress: Progress = print) -> GuestImage:
    """Return the cached guest image for the current sources, building it if needed."""
    _check_busybox()
    planned = planned_image()
    key, final = planned.hash, planned.dir
    if (final / "rootfs.ext4").is_file():
        return planned
    progress(f"image: assembling {key}")
    with publish_dir(final) as out:
        stage = out / "stage"
        _stage_rootfs(stage)
        entries = _cpio_entries(stage)
        (out / "manifest.txt").write_text("\n".join(entries) + "\n")
        write_cpio(entries, out / "initramfs.cpio", progress)
        _make_ext4(stage, out / "rootfs.ext4")
        shutil.rmtree(stage)
    progress(f"image: built {key} ({(final / 'initramfs.cpio').stat().st_size >> 20} MiB cpio)")
    return GuestImage(final, key)


def _stage_rootfs(stage: Path) -> None:
    for d in ("bin", "dev", "proc", "sys", "tmp", "run", "schedlab", "opt/schedlab/bin"):
        (stage / d).mkdir(parents=True, exist_ok=True)
    shutil.copy2(BUSYBOX, stage / "bin/busybox")
    applets = subprocess.run([str(BUSYBOX), "--list"], capture_output=True, text=True,
                             check=True).stdout.split()
    for applet in applets:
        if applet != "busybox":
            (stage / "bin" / applet).symlink_to("busybox")
    for f in _rootfs_files():
        dest = stage / f.relative_to(paths.DISK_IMAGES / "rootfs")
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(f, dest)
    for src in _guest_tool_sources():
        _compile([src], stage / "opt/schedlab/bin" / src.stem)


def _cpio_entries(stage: Path) -> list[str]:
    """gen_init_cpio's input: every directory, file and link of the stage, plus /dev/console."""
    entries = ["nod /dev/console 0600 0 0 c 5 1"]
    for p in sorted(stage.rglob("*")):
        rel = "/" + str(p.relative_to(stage))
        if p.is_symlink():
            entries.append(f"slink {rel} {p.readlink()} 0777 0 0")
        elif p.is_dir():
            entries.append(f"dir {rel} 0755 0 0")
        else:
            mode = "0755" if p.stat().st_mode & 0o111 else "0644"
            entries.append(f"file {rel} {p} {mode} 0 0")
    return entries


def _make_ext4(stage: Path, image: Path) -> None:
    # mke2fs -d copies each file's times: the checkout's and the build's, unless fixed.
    for p in [stage, *stage.rglob("*")]:
        os.utime(p, (EPOCH, EPOCH), follow_symlinks=False)
    used = sum(p.stat().st_size for p in stage.rglob("*") if p.is_file() and not p.is_symlink())
    size_mib = used // (1 << 20) * 2 + 32
    proc = subprocess.run(
        ["mke2fs", "-q", "-t", "ext4", "-d", str(stage), "-L", "schedlab", "-U", "clear",
         "-E", f"root_owner=0:0,hash_seed={EXT4_HASH_SEED}", "-F", str(image),
         f"{size_mib}M"],
        capture_output=True, text=True,
        env={"E2FSPROGS_FAKE_TIME": "1", "PATH": "/usr/sbin:/sbin:/usr/bin:/bin"})
    if proc.returncode != 0:
        raise UserError(f"mke2fs failed: {proc.stderr.strip().splitlines()[0]}; "
                        "install it with 'apt-get install e2fsprogs'")


def write_cpio(entries: list[str], dest: Path, progress: Progress = print) -> Path:
    """A newc cpio archive from gen_init_cpio entries (``dir``, ``file``, ``nod``, ``slink``
    lines): the project's one cpio writer, so device nodes need no root."""
    tool = gen_init_cpio(progress)
    with tempfile.TemporaryDirectory() as tmp:
        listing = Path(tmp) / "listing"
        listing.write_text("\n".join(entries) + "\n")
        archive = subprocess.run([str(tool), "-t", str(EPOCH), str(listing)],
                                 stdout=subprocess.PIPE, check=True).stdout
    dest.write_bytes(_set_mtimes(archive))
    return dest


# newc: "070701", then 13 fields of 8 hex digits; mtime is the sixth field, the name's
# size the twelfth; name and data are each padded to 4 bytes (after the 110-byte header).
NEWC_HEADER, NEWC_MTIME, NEWC_FILESIZE, NEWC_NAMESIZE = 110, 6 + 5 * 8, 6 + 6 * 8, 6 + 11 * 8


def _set_mtimes(archive: bytes) -> bytes:
    """The archive with every entry's mtime set to EPOCH. gen_init_cpio's ``-t`` dates
    directories, nodes and links only; a regular file keeps its source's mtime, so a
    run's freshly written spec made the guest's input differ from one run of the same
    request to the next (and gem5 runs of it with it: the same run made twice was not the
    same run)."""
    out = bytearray(archive)
    offset = 0
    while offset + NEWC_HEADER <= len(out) and out[offset:offset + 6] == b"070701":
        field = lambda at: int(out[offset + at:offset + at + 8], 16)  # noqa: E731
        out[offset + NEWC_MTIME:offset + NEWC_MTIME + 8] = b"%08X" % EPOCH
        name_end = offset + NEWC_HEADER + field(NEWC_NAMESIZE)
        name = bytes(out[offset + NEWC_HEADER:name_end - 1])
        data = (name_end + 3) & ~3
        offset = (data + field(NEWC_FILESIZE) + 3) & ~3
        if name == b"TRAILER!!!":
            break
    return bytes(out)
