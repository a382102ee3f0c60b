"""Compiling guest programs: the workloads (one static multicall binary) and users' programs.

Guest programs are static glibc binaries built with ``-Wall -Wextra -Werror``. Every
workload is linked into one binary that dispatches on its name; the overlay it goes into is
cached under a content hash of the sources, the compiler and the static C library.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from functools import cache
from pathlib import Path
from typing import Callable

from schedlab.errors import UserError
from schedlab.guest import reproducible
from schedlab.guest.workloads import COMMON, GUEST_BIN, GUEST_REGISTRY, Workload, load_registry
from schedlab.paths import REPO, WORKLOADS, cache_dir
from schedlab.store import (file_signature, hash_bytes, hash_file, hash_files, hash_json,
                            publish_dir)

# Guest programs are static glibc binaries. musl would make them a tenth of the size (the
# gem5 guest unpacks its initramfs at every boot), but musl formats and parses floating
# point with x87 long double arithmetic, which gem5 v24's X86 models execute wrongly
# (printf("%f") of a musl binary overruns its buffer on gem5; glibc uses integer code).
GUEST_CC = "gcc"
CFLAGS = ["-O2", "-Wall", "-Wextra", "-Werror", "-static"]
# Bump when the build below changes the bytes it makes. 2: reproducible (path maps, the
# exact toolchain in the key; schedlab.guest.reproducible).
RECIPE_VERSION = "2"


@cache
def _gcc_identity() -> str:
    try:
        return subprocess.run([GUEST_CC, "--version"], capture_output=True, text=True,
                              check=True).stdout.splitlines()[0]
    except (OSError, subprocess.CalledProcessError):
        raise UserError(f"{GUEST_CC} not found; "
                        "install it (apt-get install gcc libc6-dev)") from None


def guest_compile_command(sources: list[Path], out: Path, ldflags: list[str] = (),
                          cflags: list[str] = CFLAGS) -> list[str]:
    """The compiler command for a static guest program (workloads, guest tools). The clone's
    location is mapped away: an assert()'s __FILE__ would otherwise carry it into the binary."""
    return [GUEST_CC, *cflags, *reproducible.prefix_maps(REPO), f"-I{COMMON}",
            *map(str, sources), "-o", str(out), *ldflags]


def _run_compiler(cmd: list[str], what: str) -> None:
    r = subprocess.run(cmd, capture_output=True, text=True, env=reproducible.build_env())
    if r.returncode != 0:
        lines = [ln for ln in r.stderr.splitlines() if "error" in ln] or r.stderr.splitlines()
        first = lines[0] if lines else f"{GUEST_CC} exited {r.returncode}"
        raise UserError(f"building {what} failed: {first}")


# All workloads are linked into one static binary that dispatches on the name it is run
# as (busybox-style), with a symbolic link per workload: one copy of static glibc instead
# of 39 (1.5 MB instead of 31 MB), because the gem5 guest unpacks its initramfs with an
# Atomic CPU at every boot. Each workload's main() is renamed at compile time; the code a
# workload executes, and so its cache behaviour, is its own.
MULTICALL = "schedlab-workloads"
_DISPATCH_C = """\
#include <stdio.h>
#include <string.h>
%(declarations)s
static const struct { const char *name; int (*main)(int, char **); } workloads[] = {
%(entries)s
};

int main(int argc, char **argv)
{
	const char *slash = strrchr(argv[0], '/');
	const char *name = slash ? slash + 1 : argv[0];
	size_t i;

	if (!strcmp(name, "%(multicall)s") && argc > 1) {
		argv++;
		argc--;
		name = argv[0];
	}
	for (i = 0; i < sizeof(workloads) / sizeof(workloads[0]); i++)
		if (!strcmp(name, workloads[i].name))
			return workloads[i].main(argc, argv);
	fprintf(stderr, "%(multicall)s: no workload named %%s\\n", name);
	return 127;
}
"""


def _main_symbol(name: str) -> str:
    return f"schedlab_main_{name}"


def _build_multicall(registry: dict[str, "Workload"], bindir: Path, work: Path,
                     progress: Callable[[str], None]) -> None:
    objects: list[Path] = []
    ldflags: list[str] = []
    for i, (name, w) in enumerate(registry.items(), 1):
        progress(f"workloads: [{i}/{len(registry)}] compiling {name}")
        for src in w.source_paths():
            obj = work / f"{name}--{src.stem}.o"
            _run_compiler([GUEST_CC, *[f for f in CFLAGS if f != "-static"], "-c",
                           *reproducible.prefix_maps(REPO), f"-Dmain={_main_symbol(name)}",
                           f"-I{COMMON}", str(src), "-o", str(obj)], f"workload {name}")
            objects.append(obj)
        ldflags += [f for f in w.ldflags if f not in ldflags]
    dispatch = work / "dispatch.c"
    dispatch.write_text(_DISPATCH_C % {
        "declarations": "\n".join(f"int {_main_symbol(n)}(int, char **);" for n in registry),
        "entries": "\n".join(f'\t{{ "{n}", {_main_symbol(n)} }},' for n in registry),
        "multicall": MULTICALL})
    progress(f"workloads: linking {MULTICALL}")
    _run_compiler([GUEST_CC, *CFLAGS, *reproducible.prefix_maps(work), str(dispatch),
                   *map(str, objects), "-o", str(bindir / MULTICALL), *ldflags], MULTICALL)
    for name in registry:
        (bindir / name).symlink_to(MULTICALL)


def _static_libs_identity() -> str:
    """The C library linked into every binary: a libc upgrade must rebuild them."""
    return hash_bytes(*(hash_file(_static_lib(lib)) for lib in ("libc.a", "libm.a")))


@cache
def _static_lib(lib: str) -> Path:
    r = subprocess.run([GUEST_CC, f"-print-file-name={lib}"], capture_output=True, text=True)
    path = Path(r.stdout.strip())
    if not path.is_absolute() or not path.is_file():
        raise UserError(f"static {lib} not found; install libc6-dev (needed for -static)")
    return path


_SOURCES_HASH: dict[tuple, str] = {}


def compiled(registry: dict[str, Workload]) -> dict[str, Workload]:
    """The workloads built here (not the real programs of Debian packages)."""
    return {n: w for n, w in registry.items() if not w.is_real_program}


def _inputs_hash(registry: dict[str, Workload]) -> str:
    registry = compiled(registry)
    folders = [COMMON, *(w.dir for w in registry.values())]
    files = sorted(p for d in folders for p in d.rglob("*")
                   if p.is_file() and p.suffix in (".c", ".h", ".toml", ".S", ".inc")
                   and "__pycache__" not in p.parts)
    # Read again only when a file changed: every run id of a listing needs this hash.
    signature = tuple(file_signature(p) for p in files)
    if signature not in _SOURCES_HASH:
        _SOURCES_HASH[signature] = hash_files(files, WORKLOADS)
    return hash_bytes(RECIPE_VERSION, _SOURCES_HASH[signature], hash_json(CFLAGS),
                      _gcc_identity(), reproducible.toolchain_identity(),
                      _static_libs_identity(), hash_json(sorted(registry)), _DISPATCH_C,
                      GUEST_BIN)


def planned_overlay(registry: dict[str, Workload] | None = None) -> Path:
    """The overlay directory :func:`build_all` would return, named without building it."""
    return cache_dir() / "workloads" / _inputs_hash(registry or load_registry())


def build_all(progress: Callable[[str], None] = print) -> Path:
    """Compile every workload into a rootfs overlay; return its directory (cached by content).

    The overlay holds ``schedlab/bin/schedlab-workloads`` (one static ELF with every
    workload), a symbolic link ``schedlab/bin/<name>`` to it per workload, and
    ``schedlab/workloads.json``: the guest's paths, where each run's payload brings them
    (schedlab.guest.payload).
    """
    registry = compiled(load_registry())
    final = planned_overlay(registry)
    if (final / GUEST_REGISTRY).is_file():
        progress(f"workloads: {len(registry)} programs, cached in {final}")
        return final
    with publish_dir(final) as tmp:
        tmp.chmod(0o755)  # copied as the guest's root: not mkdtemp's private 0700
        bindir = tmp / GUEST_BIN
        bindir.mkdir(parents=True)
        with tempfile.TemporaryDirectory(prefix="schedlab-workloads-") as work:
            _build_multicall(registry, bindir, Path(work), progress)
        data = {name: w.as_data() for name, w in registry.items()}
        (tmp / GUEST_REGISTRY).write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    return final


def binary(name: str, progress: Callable[[str], None] = lambda s: None) -> Path:
    """Host path of one workload's built binary (builds everything if needed)."""
    return build_all(progress) / GUEST_BIN / name


def _elf_is_dynamic(data: bytes) -> bool:
    """True if the ELF asks for a program interpreter (PT_INTERP), i.e. is dynamically linked."""
    is64 = data[4] == 2
    little = data[5] == 1
    order = "little" if little else "big"
    u = lambda off, n: int.from_bytes(data[off:off + n], order)  # noqa: E731
    if is64:
        phoff, phentsize, phnum = u(0x20, 8), u(0x36, 2), u(0x38, 2)
    else:
        phoff, phentsize, phnum = u(0x1C, 4), u(0x2A, 2), u(0x2C, 2)
    for i in range(phnum):
        if u(phoff + i * phentsize, 4) == 3:  # PT_INTERP
            return True
    return False


def is_dynamic(path: Path) -> bool:
    """True for a dynamically linked ELF (its libraries then come with it into the guest)."""
    data = Path(path).read_bytes()
    return data[:4] == b"\x7fELF" and _elf_is_dynamic(data)


def build_user_program(path: Path) -> Path:
    """A user's program for ``run.py run --workload``: an ELF as is (a dynamically linked
    one brings its libraries, schedlab.guest.payload.shared_libraries), or a .c compiled
    (static)."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"workload program '{path}' does not exist")
    data = path.read_bytes()
    if data[:4] == b"\x7fELF":
        if len(data) < 64:
            raise UserError(f"'{path}' is a truncated ELF file")
        if data[4] != 2 or int.from_bytes(data[18:20], "little") != 62:
            raise UserError(f"'{path}' is not an x86-64 program; the guest is x86-64 Linux")
        return path.resolve()
    if path.suffix != ".c":
        raise UserError(f"'{path}' is neither an ELF binary nor a .c file")
    key = hash_bytes(data, hash_json(CFLAGS), _gcc_identity(), path.name)
    final = cache_dir() / "user-programs" / key
    out = final / path.stem
    if out.is_file():
        return out
    with publish_dir(final) as tmp:
        tmp.chmod(0o755)
        # Compile the copy that was hashed; its #line makes gcc name the user's own file
        # (and lines) in every diagnostic, and all of gcc's output is shown on failure.
        src = tmp / path.name
        literal = str(path).replace("\\", "\\\\").replace('"', '\\"')
        src.write_bytes(f'#line 1 "{literal}"\n'.encode() + data)
        r = subprocess.run(guest_compile_command([src], tmp / path.stem, ["-pthread", "-lm"]),
                           capture_output=True, text=True)
        if r.returncode != 0:
            report = r.stderr.replace(str(src), str(path)).rstrip()
            raise UserError(f"building {path} failed ({GUEST_CC} exited {r.returncode}):\n"
                            f"{report or '(no output)'}")
        src.unlink()
    return out
