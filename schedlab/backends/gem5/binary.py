"""Locating gem5: the ``GEM5`` binary, its version and X86 support, and its hash.

gem5 is a prerequisite the user builds (``build/X86/gem5.fast`` of gem5 v24.0, see the
README); ``GEM5`` names the binary. Its hash is part of every checkpoint key and run record.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from schedlab import paths
from schedlab.backends.gem5.codetext import read_code
from schedlab.errors import UserError
from schedlab.store import file_signature, hash_bytes, hash_file, write_atomic

SCRIPT = paths.CONFIGS / "schedlab_gem5.py"
COMPONENTS = paths.CONFIGS / "components"


class Gem5Error(UserError):
    """gem5 is missing, the wrong version, or ended abnormally (message has the log tail)."""

    @classmethod
    def not_set(cls) -> "Gem5Error":
        return cls(f"GEM5 is not set; build gem5 {gem5_version_required()} "
                   f"(scons build/X86/gem5.fast, see {build_docs()}) and export "
                   f"GEM5=/path/to/gem5/build/X86/gem5.fast")


def gem5_version_required() -> str:
    return str(paths.versions()["gem5"]["version"])


def build_docs() -> str:
    return str(paths.versions()["gem5"]["build_docs"])


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
        raise Gem5Error.not_set()
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
    if not os.environ.get("GEM5"):
        # gem5 is optional: without it runs use QEMU (functional results only).
        rows.append(("gem5", "not set (optional: runs use QEMU, no timing results)",
                     str(Gem5Error.not_set())))
    else:
        try:
            info = probe()
            rows.append(("gem5", f"ok: {info.path} (gem5 {info.version}, X86)", ""))
        except Gem5Error as e:
            rows.append(("gem5", "unusable", str(e)))
    kvm = Path("/dev/kvm")
    usable = kvm.exists() and os.access(kvm, os.R_OK | os.W_OK)
    rows.append(("gem5 KVM boot (optional)",
                 "/dev/kvm present (not verified with gem5)" if usable else "not available",
                 "boots use Atomic cores by default (about 5 minutes per 2-4-core machine); "
                 "try 'run.py boot --cpu kvm' only where KVM guests work"))
    return rows


def gem5_side_files(repo: Path = paths.REPO) -> list[Path]:
    """The files of this repository that gem5's Python loads: our script, its components,
    and the modules of this package the script imports, with their packages' ``__init__``
    files (Python runs those too)."""
    configs, here = repo / "configs", repo / "schedlab" / "backends" / "gem5"
    # Every module of configs/ (the script, plan_board, the components): gem5 loads them all.
    return [*sorted(configs.glob("*.py")), *sorted((configs / COMPONENTS.name).glob("*.py")),
            repo / "schedlab" / "__init__.py", here.parent / "__init__.py",
            here / "__init__.py", here / "plan.py", here / "attribution.py",
            here / "sampling.py", here / "options.py"]


def config_hash(repo: Path = paths.REPO) -> str:
    """Hash of the gem5-side code (:func:`gem5_side_files`, by path within the repository
    and :func:`code_of` their content): part of every gem5 run's id (a checkpoint's key
    takes only the boot board's identity, ``checkpoint_key``)."""
    files = gem5_side_files(repo)
    return hash_bytes(*[part for p in files
                        for part in (p.relative_to(repo).as_posix(), code_of(p))])


_CODE: dict[tuple, str] = {}


def code_of(path: Path) -> str:
    """:func:`read_code` of ``path``, remembered for as long as the file is unchanged."""
    key = file_signature(path)
    if key not in _CODE:
        _CODE[key] = read_code(path)
    return _CODE[key]
