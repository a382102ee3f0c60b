"""The workload registry: every program the four studies run, as data, and how to build them.

One folder per workload under ``workloads/`` holds a ``workload.toml`` (what it is, which
studies use it, its arguments per size class, the outputs to check) and its C sources.
``build_all`` compiles them all statically into a root-file-system overlay for the guest image;
``characterise`` measures their cache behaviour with cachegrind and stores it as data in
``workloads/characterisation.json``, which ``run.py workloads`` shows.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import click

from .errors import UserError
from .paths import WORKLOADS, cache_dir
from .store import hash_bytes, hash_file, hash_files, hash_json, publish_dir, write_atomic

# Guest programs are static glibc binaries. musl would make them a tenth of the size (the
# gem5 guest unpacks its initramfs at every boot), but musl formats and parses floating
# point with x87 long double arithmetic, which gem5 v24's X86 models execute wrongly
# (printf("%f") of a musl binary overruns its buffer on gem5; glibc uses integer code).
GUEST_CC = "gcc"
CFLAGS = ["-O2", "-Wall", "-Wextra", "-Werror", "-static"]
COMMON = WORKLOADS / "common"
CHARACTERISATION = WORKLOADS / "characterisation.json"
GUEST_BIN = "opt/schedlab/bin"
GUEST_REGISTRY = "opt/schedlab/workloads.json"
SIZE_CLASSES = ("smoke", "paper")

_TOP_KEYS = {"summary", "studies", "substitutes", "sources", "ldflags", "sizes", "kind", "notes"}
_SIZE_KEYS = {"args", "expect", "note", "until_stopped"}


@dataclass(frozen=True)
class Workload:
    """One entry of the registry (one ``workloads/<name>/workload.toml``)."""

    name: str
    dir: Path
    summary: str
    studies: tuple[int, ...]
    substitutes: str
    sources: tuple[str, ...]
    ldflags: tuple[str, ...]
    size_table: dict = field(repr=False)
    kind: str = ""
    notes: str = ""

    @property
    def sizes(self) -> list[str]:
        return list(self.size_table)

    def args(self, size: str = "smoke") -> list[str]:
        if size not in self.size_table:
            raise UserError(f"workload {self.name} has no size '{size}'; "
                            f"choose one of {', '.join(self.size_table)}")
        return list(self.size_table[size]["args"])

    def expect(self, size: str = "smoke") -> dict:
        self.args(size)  # validates the size name
        return dict(self.size_table[size].get("expect", {}))

    def stops_by_itself(self, size: str = "smoke") -> bool:
        """False if this size runs until SIGTERM/SIGINT (base vectors, endless memlat)."""
        self.args(size)
        return not self.size_table[size].get("until_stopped", False)

    def check(self, metrics: dict, size: str = "smoke") -> list[str]:
        """Problems with a run's parsed output (empty if it matches every expected value)."""
        problems = []
        for key, want in self.expect(size).items():
            if key not in metrics:
                problems.append(f"{self.name}: output has no '{key}' (expected {want})")
            elif not _same(metrics[key], want):
                problems.append(f"{self.name}: {key}={metrics[key]}, expected {want}")
        return problems

    def source_paths(self) -> list[Path]:
        return [(self.dir / s).resolve() for s in self.sources]

    def content_hash(self) -> str:
        """Hash of what this workload's binary is built from (its sources, toml, common/)."""
        files = {*self.source_paths(), (self.dir / "workload.toml").resolve(),
                 *(p.resolve() for p in COMMON.glob("*") if p.is_file())}
        return hash_files(files, WORKLOADS.resolve())

    def as_data(self) -> dict:
        """The registry entry as the guest sees it (workloads.json)."""
        return {
            "summary": self.summary,
            "studies": list(self.studies),
            "substitutes": self.substitutes,
            "kind": self.kind,
            "binary": f"/{GUEST_BIN}/{self.name}",
            "sizes": {s: {"args": self.args(s), "expect": self.expect(s),
                          "until_stopped": not self.stops_by_itself(s)}
                      for s in self.size_table},
        }


def _same(got, want) -> bool:
    if isinstance(want, bool) or isinstance(got, bool):
        return str(got).lower() == str(want).lower()
    if isinstance(want, (int, float)) and isinstance(got, (int, float)):
        return got == want
    return str(got) == str(want)


def _bad(name: str, msg: str) -> UserError:
    return UserError(f"workloads/{name}/workload.toml: {msg}")


def _load_one(d: Path) -> Workload:
    name = d.name
    try:
        with open(d / "workload.toml", "rb") as f:
            raw = tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise _bad(name, f"not valid TOML ({e})") from None
    unknown = set(raw) - _TOP_KEYS
    if unknown:
        raise _bad(name, f"unknown key(s) {', '.join(sorted(unknown))}; "
                         f"allowed: {', '.join(sorted(_TOP_KEYS))}")
    for key in ("summary", "studies", "sources", "sizes"):
        if key not in raw:
            raise _bad(name, f"missing required key '{key}'")
    if not isinstance(raw["summary"], str) or not raw["summary"].strip():
        raise _bad(name, "'summary' must be a non-empty string")
    studies = raw["studies"]
    if (not isinstance(studies, list) or not studies
            or not all(isinstance(s, int) and 1 <= s <= 4 for s in studies)):
        raise _bad(name, "'studies' must be a non-empty list of study numbers 1..4")
    sources = raw["sources"]
    if not isinstance(sources, list) or not sources or not all(isinstance(s, str) for s in sources):
        raise _bad(name, "'sources' must be a non-empty list of C file names")
    for s in sources:
        if not (d / s).is_file():
            raise _bad(name, f"source '{s}' does not exist")
    ldflags = raw.get("ldflags", [])
    if not isinstance(ldflags, list) or not all(isinstance(s, str) for s in ldflags):
        raise _bad(name, "'ldflags' must be a list of strings")
    for key in ("substitutes", "kind", "notes"):
        if not isinstance(raw.get(key, ""), str):
            raise _bad(name, f"'{key}' must be a string")
    sizes = raw["sizes"]
    if not isinstance(sizes, dict) or "smoke" not in sizes:
        raise _bad(name, "needs at least [sizes.smoke]")
    for size, entry in sizes.items():
        if not isinstance(entry, dict):
            raise _bad(name, f"[sizes.{size}] must be a table")
        extra = set(entry) - _SIZE_KEYS
        if extra:
            raise _bad(name, f"[sizes.{size}] has unknown key(s) {', '.join(sorted(extra))}")
        args = entry.get("args")
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise _bad(name, f"[sizes.{size}] needs args = a list of strings")
        expect = entry.get("expect", {})
        if not isinstance(expect, dict) or not all(
                isinstance(v, (str, int, float, bool)) for v in expect.values()):
            raise _bad(name, f"[sizes.{size}] expect must map output keys to values")
        if not isinstance(entry.get("until_stopped", False), bool):
            raise _bad(name, f"[sizes.{size}] until_stopped must be true or false")
    return Workload(
        name=name, dir=d, summary=raw["summary"].strip(), studies=tuple(studies),
        substitutes=raw.get("substitutes", ""), sources=tuple(sources), ldflags=tuple(ldflags),
        size_table=sizes, kind=raw.get("kind", ""),
        notes=raw.get("notes", ""))


def load_registry(root: Path = WORKLOADS) -> dict[str, Workload]:
    """Every ``<root>/*/workload.toml``, validated, by name (sorted)."""
    registry = {}
    for d in sorted(p for p in root.iterdir() if (p / "workload.toml").is_file()):
        if not d.name.replace("_", "").replace("-", "").isalnum():
            raise _bad(d.name, "folder name must be letters, digits, '_' or '-'")
        registry[d.name] = _load_one(d)
    return registry


def get(name: str) -> Workload:
    registry = load_registry()
    if name not in registry:
        raise UserError(f"unknown workload '{name}'; run 'python3 run.py workloads' to list them")
    return registry[name]


def parse_output(text: str) -> dict:
    """``key=value`` lines to a dict; decimal ints and floats become numbers (0x.. stays text)."""
    out: dict = {}
    for line in text.splitlines():
        key, sep, value = line.strip().partition("=")
        key = key.strip()
        if not sep or not key or " " in key:
            continue
        value = value.strip()
        try:
            out[key] = int(value, 10)
        except ValueError:
            try:
                out[key] = float(value)
            except ValueError:
                out[key] = value
    return out


# ---------------------------------------------------------------------------------------------
# Building


def _gcc_identity() -> str:
    try:
        return subprocess.run([GUEST_CC, "--version"], capture_output=True, text=True,
                              check=True).stdout.splitlines()[0]
    except (OSError, subprocess.CalledProcessError):
        raise UserError(f"{GUEST_CC} not found; install it (apt-get install gcc libc6-dev)") from None


def guest_compile_command(sources: list[Path], out: Path, ldflags: list[str] = (),
                          cflags: list[str] = CFLAGS) -> list[str]:
    """The compiler command for a static guest program (workloads, guest tools)."""
    return [GUEST_CC, *cflags, f"-I{COMMON}", *map(str, sources), "-o", str(out), *ldflags]


def _run_compiler(cmd: list[str], what: str) -> None:
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        lines = [ln for ln in r.stderr.splitlines() if "error" in ln] or r.stderr.splitlines()
        first = lines[0] if lines else f"{GUEST_CC} exited {r.returncode}"
        raise UserError(f"building {what} failed: {first}")


def _compile(sources: list[Path], out: Path, ldflags: list[str], what: str) -> None:
    _run_compiler(guest_compile_command(sources, out, ldflags), what)


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
                           f"-Dmain={_main_symbol(name)}", f"-I{COMMON}", str(src),
                           "-o", str(obj)], f"workload {name}")
            objects.append(obj)
        ldflags += [f for f in w.ldflags if f not in ldflags]
    dispatch = work / "dispatch.c"
    dispatch.write_text(_DISPATCH_C % {
        "declarations": "\n".join(f"int {_main_symbol(n)}(int, char **);" for n in registry),
        "entries": "\n".join(f'\t{{ "{n}", {_main_symbol(n)} }},' for n in registry),
        "multicall": MULTICALL})
    progress(f"workloads: linking {MULTICALL}")
    _run_compiler([GUEST_CC, *CFLAGS, str(dispatch), *map(str, objects),
                   "-o", str(bindir / MULTICALL), *ldflags], MULTICALL)
    for name in registry:
        (bindir / name).symlink_to(MULTICALL)


def _static_libs_identity() -> str:
    """The C library linked into every binary: a libc upgrade must rebuild them."""
    parts = []
    for lib in ("libc.a", "libm.a"):
        r = subprocess.run([GUEST_CC, f"-print-file-name={lib}"], capture_output=True,
                           text=True)
        path = Path(r.stdout.strip())
        if not path.is_absolute() or not path.is_file():
            raise UserError(f"static {lib} not found; install libc6-dev (needed for -static)")
        parts.append(hash_file(path))
    return hash_bytes(*parts)


def _inputs_hash(registry: dict[str, Workload]) -> str:
    files = [p for p in WORKLOADS.rglob("*")
             if p.is_file() and p.suffix in (".c", ".h", ".toml", ".S", ".inc")
             and "__pycache__" not in p.parts]
    return hash_bytes(hash_files(files, WORKLOADS), hash_json(CFLAGS), _gcc_identity(),
                      _static_libs_identity(), hash_json(sorted(registry)), _DISPATCH_C)


def build_all(progress: Callable[[str], None] = print) -> Path:
    """Compile every workload into a rootfs overlay; return its directory (cached by content).

    The overlay holds ``opt/schedlab/bin/schedlab-workloads`` (one static ELF with every
    workload), a symbolic link ``opt/schedlab/bin/<name>`` to it per workload, and
    ``opt/schedlab/workloads.json``.
    """
    registry = load_registry()
    final = cache_dir() / "workloads" / _inputs_hash(registry)
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


def build_user_program(path: Path) -> Path:
    """A user's program for ``run.py run --workload``: a static ELF as is, or a .c compiled."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"workload program '{path}' does not exist")
    data = path.read_bytes()
    if data[:4] == b"\x7fELF":
        if len(data) < 64:
            raise UserError(f"'{path}' is a truncated ELF file")
        if _elf_is_dynamic(data):
            raise UserError(f"'{path}' is dynamically linked; the guest has no libraries: "
                            f"relink it with -static")
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
        src = tmp / path.name
        src.write_bytes(data)
        _compile([src], tmp / path.stem, ["-pthread", "-lm"], str(path))
        src.unlink()
    return out


# ---------------------------------------------------------------------------------------------
# Characterisation with cachegrind

# The machines whose caches every workload is characterised on (study 1's two machines and
# study 3's Westmere); their geometries come from the catalogue (configs/machines.toml).
CHARACTERISE_ON = ("clovertown-e5320", "niagara", "westmere-x5660")
# cachegrind needs a power-of-two number of sets and lines no shorter than the host's widest
# register (32 B with AVX): Niagara's 16 B-line D1 is modelled with 32 B lines; "approx"
# records every such change.
MIN_LINE = 32


def _pow2_geometry(size: int, assoc: int, line: int) -> tuple[tuple[int, int, int], str]:
    """Nearest cachegrind-legal geometry (power-of-two sets), and a note if it changed."""
    note = ""
    if line < MIN_LINE:
        note = f"{line} B lines modelled as {MIN_LINE} B (cachegrind minimum); "
        line = MIN_LINE
    sets = size // (assoc * line)
    if sets > 0 and sets & (sets - 1) == 0:
        return (size, assoc, line), note.rstrip("; ")
    p2 = 1 << max(0, (sets - 1).bit_length())
    new_assoc = max(1, round(size / (p2 * line)))
    new = (p2 * new_assoc * line, new_assoc, line)
    return new, note + f"{size}B {assoc}-way modelled as {new[0]}B {new_assoc}-way"


def geometries(machines: tuple[str, ...] = CHARACTERISE_ON) -> dict[str, dict]:
    """cachegrind I1/D1/LL geometries of catalogue machines (LL = the machine's last level)."""
    from . import machine

    out = {}
    for mname in machines:
        spec = machine.load_machine(mname)
        l1 = {c.kind: c for c in spec.caches if c.level == 1}
        if "instruction" not in l1 or "data" not in l1:
            raise UserError(f"machine {mname} has no split L1; choose another to characterise on")
        entry, notes = {}, []
        for level, cache in (("I1", l1["instruction"]), ("D1", l1["data"]), ("LL", spec.llc)):
            geo, note = _pow2_geometry(cache.size, cache.assoc, cache.line)
            entry[level] = geo
            if note:
                notes.append(f"{level} {note}")
        entry["approx"] = "; ".join(notes)
        out[mname] = entry
    return out


def _parse_cachegrind(text: str) -> dict:
    """Totals from a cachegrind.out file's 'events:' and 'summary:' lines."""
    events = summary = None
    for line in text.splitlines():
        if line.startswith("events:"):
            events = line.split()[1:]
        elif line.startswith("summary:"):
            summary = [int(x) for x in line.split()[1:]]
    if not events or not summary:
        raise UserError("cachegrind produced no summary; is valgrind working?")
    return dict(zip(events, summary))


def cachegrind(argv: list[str], geo: dict, timeout: float = 600) -> dict:
    """Run argv under cachegrind with the given I1/D1/LL; return its event totals."""
    if shutil.which("valgrind") is None:
        raise UserError("valgrind not found; install it (apt-get install valgrind)")
    with tempfile.TemporaryDirectory(prefix="schedlab-cg-") as tmp:
        out = Path(tmp) / "cg.out"
        cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=yes", f"--cachegrind-out-file={out}",
               *(f"--{lvl}={','.join(map(str, geo[lvl]))}" for lvl in ("I1", "D1", "LL")),
               *argv]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=tmp,
                           env={**os.environ, "SCHEDLAB_OUT": tmp})
        if r.returncode != 0:
            last = (r.stderr.strip().splitlines() or ["?"])[-1]
            raise UserError(f"cachegrind run of {Path(argv[0]).name} failed: {last}")
        return _parse_cachegrind(out.read_text())


def miss_rates(ev: dict) -> dict:
    """I1, D1 and LL miss rates (LL per reference, i.e. of all I+D accesses) from totals."""
    ir = ev.get("Ir", 0)
    data = ev.get("Dr", 0) + ev.get("Dw", 0)
    i1m = ev.get("I1mr", 0)
    d1m = ev.get("D1mr", 0) + ev.get("D1mw", 0)
    llm = ev.get("ILmr", 0) + ev.get("DLmr", 0) + ev.get("DLmw", 0)
    return {
        "instructions": ir,
        "data_refs": data,
        "i1_miss_rate": i1m / ir if ir else 0.0,
        "d1_miss_rate": d1m / data if data else 0.0,
        "ll_miss_rate": llm / (ir + data) if ir + data else 0.0,
        "ll_local_miss_rate": llm / (i1m + d1m) if i1m + d1m else 0.0,
        "ll_mpki": 1000.0 * llm / ir if ir else 0.0,
    }


def characterise(names: list[str] | None = None, progress: Callable[[str], None] = print,
                 out: Path = CHARACTERISATION) -> dict:
    """Run each workload at smoke size under cachegrind for each geometry; store the rates."""
    registry = load_registry()
    names = names or list(registry)
    for n in names:
        if n not in registry:
            raise UserError(f"unknown workload '{n}'; run 'python3 run.py workloads' to list them")
    overlay = build_all(progress)
    geos = geometries()
    data = json.loads(out.read_text()) if out.is_file() else {}
    data.setdefault("workloads", {})
    data.setdefault("sources", {})
    data["geometries"] = {m: {k: (list(v) if isinstance(v, tuple) else v) for k, v in g.items()}
                          for m, g in geos.items()}
    data["size_class"] = "smoke"
    data["tool"] = "valgrind --tool=cachegrind (LRU, write-allocate, inclusive-ish LL model)"
    for n in names:
        w = registry[n]
        if w.kind == "driver":  # it only spawns other workloads; those are characterised
            continue
        entry = {}
        for m, g in geos.items():
            progress(f"characterise: {n} on {m}")
            argv = [str(overlay / GUEST_BIN / n), *w.args("smoke")]
            entry[m] = {k: (round(v, 6) if isinstance(v, float) else v)
                        for k, v in miss_rates(cachegrind(argv, g)).items()}
        data["workloads"][n] = entry
        data["sources"][n] = w.content_hash()
        write_atomic(out, json.dumps(data, indent=1, sort_keys=True) + "\n")
        os.chmod(out, 0o644)  # a repository file, not a private temporary
    return data


def load_characterisation(with_sources: bool = False):
    """Miss rates per workload and machine (and, if asked, the source hash each was made from)."""
    if not CHARACTERISATION.is_file():
        return ({}, {}) if with_sources else {}
    try:
        data = json.loads(CHARACTERISATION.read_text())
        if with_sources:
            return data.get("workloads", {}), data.get("sources", {})
        return data.get("workloads", {})
    except json.JSONDecodeError:
        raise UserError(f"{CHARACTERISATION} is not valid JSON; regenerate it with "
                        f"'python3 run.py workloads --characterise'") from None


# ---------------------------------------------------------------------------------------------
# CLI


def _pct(x) -> str:
    return "-" if x is None else f"{100 * x:.2f}%"


@click.command("workloads")
@click.argument("name", required=False)
@click.option("--characterise", "do_char", is_flag=True,
              help="Re-run cachegrind (smoke size) for NAME, or for every workload, and store it.")
@click.option("--build", "do_build", is_flag=True, help="Build every workload and print the overlay.")
def workloads_command(name: str | None, do_char: bool, do_build: bool) -> None:
    """List the workloads with their cache characterisation, or show one in detail."""
    if do_build:
        click.echo(build_all(click.echo))
        return
    registry = load_registry()
    if name is not None and name not in registry:
        raise UserError(f"unknown workload '{name}'; run 'python3 run.py workloads' to list them")
    if do_char:
        characterise([name] if name else None, progress=click.echo)
    chars, made_from = load_characterisation(with_sources=True)
    stale = {n for n, w in registry.items() if n in chars and made_from.get(n) != w.content_hash()}
    machines = sorted({m for c in chars.values() for m in c})
    if name is None:
        header = f"{'name':<15} {'studies':<8} {'kind':<12}"
        for m in machines:
            header += f" {m[:18] + ' I1/D1/LL':<34}"
        click.echo(header + " summary")
        for n, w in registry.items():
            row = f"{n:<15} {','.join(map(str, w.studies)):<8} {w.kind:<12}"
            for m in machines:
                c = chars.get(n, {}).get(m)
                cell = ("/".join(_pct(c[k]) for k in ("i1_miss_rate", "d1_miss_rate",
                                                      "ll_miss_rate")) if c else "not measured")
                row += f" {cell:<34}"
            click.echo(row + " " + w.summary + (" [characterisation stale]" if n in stale else ""))
        if stale:
            click.echo("stale: sources changed since measured; python3 run.py workloads NAME --characterise")
        if not chars:
            click.echo("(no characterisation yet: python3 run.py workloads --characterise)")
        return
    w = registry[name]
    click.echo(f"name:        {w.name}")
    click.echo(f"summary:     {w.summary}")
    click.echo(f"kind:        {w.kind}")
    click.echo(f"studies:     {', '.join(map(str, w.studies))}")
    click.echo(f"substitutes: {w.substitutes or '-'}")
    click.echo(f"sources:     {', '.join(w.sources)}   ldflags: {' '.join(w.ldflags) or '-'}")
    if w.notes:
        click.echo(f"notes:       {w.notes}")
    for s in w.sizes:
        tail = "   (runs until SIGTERM/SIGINT)" if not w.stops_by_itself(s) else ""
        click.echo(f"size {s}: {w.name} {' '.join(w.args(s))}{tail}")
        exp = w.expect(s)
        if exp:
            click.echo("    check: " + ", ".join(f"{k}={v}" for k, v in exp.items()))
    c = chars.get(name)
    if name in stale:
        click.echo("characterisation is stale (sources changed since it was measured)")
    if not c and w.kind == "driver":
        click.echo("characterisation: none (a driver: see the workloads it runs)")
    elif not c:
        click.echo(f"characterisation: none (python3 run.py workloads {name} --characterise)")
    for m, r in sorted((c or {}).items()):
        click.echo(f"cachegrind on {m} (smoke): I1 {_pct(r['i1_miss_rate'])}  "
                   f"D1 {_pct(r['d1_miss_rate'])}  LL {_pct(r['ll_miss_rate'])} of refs  "
                   f"(LL local {_pct(r['ll_local_miss_rate'])}, {r['ll_mpki']:.2f} MPKI, "
                   f"{r['instructions']:,} instructions)")


def run_native(name: str, size: str = "smoke", timeout: float = 60,
               extra: list[str] | None = None) -> tuple[subprocess.CompletedProcess, dict]:
    """Run one workload natively (quick checks): (process, parsed output).

    It runs in a scratch directory (also its $SCHEDLAB_OUT), so files a workload writes beside
    it never land in the caller's directory.
    """
    w = get(name)
    exe = binary(name)
    with tempfile.TemporaryDirectory(prefix="schedlab-run-") as tmp:
        r = subprocess.run([str(exe), *w.args(size), *(extra or [])], capture_output=True,
                           text=True, timeout=timeout, cwd=tmp,
                           env={**os.environ, "LC_ALL": "C", "SCHEDLAB_OUT": tmp})
    return r, parse_output(r.stdout)
