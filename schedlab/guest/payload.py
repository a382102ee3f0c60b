"""What one run brings into the guest after it booted: the run's payload.

The boot image holds only what no workload changes (the runner, the guest tools, busybox),
so a boot checkpoint serves every version of the workloads and every user program. Each
run's payload is one uncompressed newc cpio archive, entries at their guest paths:

- ``/schedlab/spec.sh``: the run specification (:class:`schedlab.guest.protocol.GuestSpec`);
- ``/schedlab/bin/``, ``/schedlab/workloads.json``: the registry's workloads (the overlay
  :func:`schedlab.guest.programs.build_all` builds);
- ``/schedlab/user/<name>``: the user's programs;
- the shared libraries and the dynamic loader of dynamically linked user programs, at the
  paths the host's ``ldd`` resolves them to (``/lib/x86_64-linux-gnu/libnuma.so.1``,
  ``/lib64/ld-linux-x86-64.so.2``), and the files of ``--overlay`` directories at their
  paths below the guest's root.

The runner (disk-images/rootfs/init) mounts a tmpfs at /schedlab (before gem5's boot
checkpoint) and unpacks the archive from / with the guest tool ``m5 unpack``
(disk-images/guest-tools/m5.c; ``m5 unpackfile`` on QEMU): the run's programs land in that
tmpfs, libraries and overlays in the guest's root (the initramfs, itself in memory). It
takes directories, regular files and symbolic links; every directory is an entry of its
own, before what it holds, and the unpacker creates no other. Transport: gem5 serves the
archive to the guest's readfile m5 op after the boot checkpoint; QEMU gets it as the file
``/payload.cpio`` inside a small initramfs appended to the image's. The readfile op needs
no device: a second disk would need PCI and an IDE driver in a kernel booted with
``pci=off`` (every probed device costs Atomic boot time), and a 9p or virtio share does not
exist in gem5's X86 board. Uncompressed,
because the guest unpacks it on simulated cores (gzip would cost tens of millions of
instructions for the 1.5 MB of workloads).
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from schedlab.errors import UserError
from schedlab.guest.image import write_cpio
from schedlab.store import hash_bytes, hash_file, hash_json

Progress = Callable[[str], None]

# Where the runner mounts the payload's tmpfs, and where its parts go below it.
PAYLOAD_ROOT = "/schedlab"
SPEC = f"{PAYLOAD_ROOT}/spec.sh"
USER_BIN = f"{PAYLOAD_ROOT}/user"
# QEMU: the payload as a file of the appended initramfs (outside the tmpfs mounted over
# /schedlab, which would hide it).
QEMU_PAYLOAD = "/payload.cpio"
# Guest paths an overlay may not replace: the runner, its tools, the payload's own tree and
# the kernel's pseudo filesystems.
_PROTECTED = ("init", "bin/busybox", "opt/schedlab", "schedlab", "proc", "sys", "dev")


@dataclass
class Payload:
    """The files of one run's payload: guest path -> host file (or text), plus trees copied
    as they are (the workloads overlay, --overlay directories; symbolic links kept)."""

    files: dict[str, Path | str] = field(default_factory=dict)
    trees: list[Path] = field(default_factory=list)

    def identity(self) -> dict:
        """Content hashes of everything but the spec (the spec is hashed on its own)."""
        out: dict[str, str] = {}
        for tree in self.trees:
            for p in sorted(tree.rglob("*")):
                if p.is_symlink():
                    out["/" + str(p.relative_to(tree))] = "-> " + str(p.readlink())
                elif p.is_file():
                    out["/" + str(p.relative_to(tree))] = hash_file(p)
        for guest, src in self.files.items():
            if guest != SPEC:
                out[guest] = hash_file(src) if isinstance(src, Path) else hash_bytes(src)
        return out

    def write(self, dest: Path, progress: Progress = print) -> Path:
        """The archive, written by the project's one cpio writer (gen_init_cpio)."""
        with tempfile.TemporaryDirectory() as tmp:
            entries: dict[str, str] = {}
            dirs: set[str] = set()

            def parents(guest: str) -> None:
                parent = os.path.dirname(guest)
                while parent not in ("/", "") and parent not in dirs:
                    dirs.add(parent)
                    parent = os.path.dirname(parent)

            for tree in self.trees:
                for p in sorted(tree.rglob("*")):
                    guest = "/" + str(p.relative_to(tree))
                    parents(guest)
                    if p.is_symlink():
                        entries[guest] = f"slink {guest} {p.readlink()} 0777 0 0"
                    elif p.is_dir():
                        dirs.add(guest)
                    else:
                        entries[guest] = f"file {guest} {p} {_mode(p)} 0 0"
            for i, (guest, src) in enumerate(sorted(self.files.items())):
                parents(guest)
                if isinstance(src, str):
                    text = Path(tmp) / f"text{i}"
                    text.write_text(src)
                    entries[guest] = f"file {guest} {text} 0644 0 0"
                else:
                    entries[guest] = f"file {guest} {src.resolve()} {_mode(src)} 0 0"
            lines = [f"dir {d} 0755 0 0" for d in sorted(dirs)] + \
                [entries[g] for g in sorted(entries)]
            return write_cpio(lines, dest, progress)


def _mode(p: Path) -> str:
    return "0755" if p.stat().st_mode & 0o111 else "0644"


# ---------------------------------------------------------------- dynamically linked programs
_LDD_FOUND = re.compile(r"^\s*(\S+) => (/\S+) \(0x[0-9a-f]+\)$")
_LDD_MISSING = re.compile(r"^\s*(\S+) => not found$")
_LDD_LOADER = re.compile(r"^\s*(/\S+) \(0x[0-9a-f]+\)$")


def shared_libraries(program: Path) -> dict[str, Path]:
    """The libraries and the dynamic loader a dynamically linked program needs, as ``ldd``
    resolves them on the host: guest path (where ldd found it, which is also where the
    guest's loader will look) -> host file."""
    proc = subprocess.run(["ldd", str(program)], capture_output=True, text=True)
    if proc.returncode != 0:
        first = (proc.stderr.strip().splitlines() or ["?"])[0]
        raise UserError(f"ldd cannot resolve the libraries of '{program}': {first}; "
                        f"is it an x86-64 Linux program?")
    libs: dict[str, Path] = {}
    for line in proc.stdout.splitlines():
        if m := _LDD_MISSING.match(line):
            raise UserError(f"'{program}' needs {m.group(1)}, which the host does not have; "
                            f"install the package that provides it (apt-file search "
                            f"{m.group(1)})")
        m = _LDD_FOUND.match(line) or _LDD_LOADER.match(line)
        if m:
            guest = m.group(m.lastindex)
            libs[guest] = Path(os.path.realpath(guest))
    if not any(_LDD_LOADER.match(line) for line in proc.stdout.splitlines()):
        raise UserError(f"ldd named no dynamic loader for '{program}'; relink it with -static")
    return libs


def library_path(libs: dict[str, Path]) -> str:
    """LD_LIBRARY_PATH for the guest: every directory a library came from, so a library
    the host found outside the loader's default directories is found in the guest too."""
    return ":".join(dict.fromkeys(os.path.dirname(g) for g in sorted(libs)
                                  if ".so" in os.path.basename(g)))


# ---------------------------------------------------------------- --overlay directories
def check_overlay(directory: str | Path) -> Path:
    """An ``--overlay`` directory: its files are placed at their paths below the guest's
    root. Refuses what would replace the runner or its payload."""
    root = Path(directory)
    if not root.is_dir():
        raise UserError(f"--overlay {directory}: not a directory; give a directory whose "
                        f"files go to the same paths in the guest (DIR/etc/x -> /etc/x)")
    for p in root.rglob("*"):
        rel = str(p.relative_to(root))
        hit = next((x for x in _PROTECTED if rel == x or rel.startswith(x + "/")), None)
        if hit and not p.is_dir():
            raise UserError(f"--overlay {directory}: {rel} would replace the guest's /{hit}, "
                            f"which the runner needs; move it elsewhere in the overlay")
        if not (p.is_dir() or p.is_file() or p.is_symlink()):
            raise UserError(f"--overlay {directory}: {rel} is not a file, directory or link")
    return root.resolve()


def overlay_identity(roots: list[Path]) -> str:
    return hash_json(Payload(trees=roots).identity())
