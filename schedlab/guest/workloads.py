"""The workload registry: every program the four studies run, as data.

One folder per workload under ``workloads/`` holds a ``workload.toml`` (what it is, which
studies use it, its arguments per size class, the outputs to check) and its C sources.
Building them is :mod:`schedlab.guest.programs`; their cache characterisation (cachegrind)
is :mod:`schedlab.guest.characterise`.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from schedlab.errors import UserError
from schedlab.guest import inputs as input_files
from schedlab.guest.packages import LOCK_NAME, ProgramSpec, guest_executable, parse_program
from schedlab.paths import WORKLOADS
from schedlab.store import file_signature, hash_files

# Shared C code of the workloads (timing, output, m5 ops): part of every content hash.
COMMON = WORKLOADS / "common"
# Where the workloads are in the guest (below its root): in the run's payload, which the
# runner unpacks into a tmpfs at /schedlab after the boot (schedlab.guest.payload).
GUEST_BIN = "schedlab/bin"
GUEST_REGISTRY = "schedlab/workloads.json"
# A run the launcher stopped at its duration: killed by its SIGTERM (128 + 15) or ended at once.
STOPPED_STATUSES = frozenset({0, 143})
# Where a real program's inputs are in the guest (in the payload's tmpfs).
GUEST_INPUTS = "/schedlab/inputs"
SIZE_CLASSES = ("smoke", "paper")

_TOP_KEYS = {"summary", "studies", "substitutes", "sources", "ldflags", "sizes", "kind", "notes",
             "program", "inputs"}
# work: the size's instructions relative to smoke, where known (campaign cost estimates).
# inputs, stdin, stdout: real programs only (schedlab.guest.inputs; '{NAME}' in args, stdin
# names an input's guest path; stdout is a file in the job's output directory).
_SIZE_KEYS = {"args", "expect", "note", "until_stopped", "work", "inputs", "stdin", "stdout"}


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
    # A real program from Debian packages (schedlab.guest.packages); None: compiled here.
    program: ProgramSpec | None = None
    # A real program's inputs every size reads (a top-level [inputs] table); a size's own
    # inputs of the same name replace them.
    shared_inputs: dict = field(default_factory=dict, repr=False)

    @property
    def sizes(self) -> list[str]:
        return list(self.size_table)

    @property
    def is_real_program(self) -> bool:
        return self.program is not None

    @property
    def stop_statuses(self) -> frozenset[int]:
        """Exit statuses of a run the launcher stopped at its duration: killed by its
        SIGTERM (143), ended at once (0), or a real program's own on a signal."""
        own = self.program.stopped_exit if self.program else None
        return STOPPED_STATUSES | ({own} if own is not None else set())

    def inputs(self, size: str = "smoke") -> dict[str, dict]:
        """The size's input definitions by name (schedlab.guest.inputs)."""
        self.args(size)
        return {**self.shared_inputs, **self.size_table[size].get("inputs", {})}

    def input_guest_path(self, size: str, name: str) -> str:
        return f"{GUEST_INPUTS}/{self.name}/{size}/{name}"

    def command(self, size: str = "smoke") -> tuple[list[str], str | None, str | None]:
        """A real program's argv (guest paths), its stdin (a guest path) and its stdout (a
        file in the job's output directory), the inputs' names replaced by their paths."""
        paths = {n: self.input_guest_path(size, n) for n in self.inputs(size)}
        entry = self.size_table[size]
        stdin = entry.get("stdin")
        return ([guest_executable(self.name, self.program),
                 *(a.format(**paths) for a in self.args(size))],
                stdin.format(**paths) if stdin else None, entry.get("stdout"))

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
        """Hash of what this workload's binary is built from (its sources, toml, common/);
        a real program's: its toml and its packages' lock."""
        if self.is_real_program:   # its inputs are made by the generators' code
            files = {self.dir / "workload.toml", self.dir / LOCK_NAME,
                     input_files.SOURCE}
            return hash_files({f.resolve() for f in files}, WORKLOADS.resolve().parent)
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
    program = (parse_program(raw["program"], f"workloads/{name}/workload.toml")
               if "program" in raw else None)
    if program and "sources" in raw:
        raise _bad(name, "a real program ([program]) has no C sources; drop 'sources'")
    for key in ("summary", "studies", "sizes") + (() if program else ("sources",)):
        if key not in raw:
            raise _bad(name, f"missing required key '{key}'")
    if not isinstance(raw["summary"], str) or not raw["summary"].strip():
        raise _bad(name, "'summary' must be a non-empty string")
    studies = raw["studies"]
    if (not isinstance(studies, list) or not studies
            or not all(isinstance(s, int) and 1 <= s <= 4 for s in studies)):
        raise _bad(name, "'studies' must be a non-empty list of study numbers 1..4")
    sources = raw.get("sources", [])
    if not program and (not isinstance(sources, list) or not sources
                        or not all(isinstance(s, str) for s in sources)):
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
    shared = raw.get("inputs", {})
    if shared and not program:
        raise _bad(name, "[inputs]: only a real program ([program]) takes inputs")
    if not isinstance(shared, dict):
        raise _bad(name, "[inputs] must map names to generator tables")
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
        _check_program_size(name, size, entry, program, shared)
    return Workload(
        name=name, dir=d, summary=raw["summary"].strip(), studies=tuple(studies),
        substitutes=raw.get("substitutes", ""), sources=tuple(sources), ldflags=tuple(ldflags),
        size_table=sizes, kind=raw.get("kind", ""),
        notes=raw.get("notes", ""), program=program, shared_inputs=shared)


def _check_program_size(name: str, size: str, entry: dict, program: ProgramSpec | None,
                        shared: dict) -> None:
    """A real program's size: its inputs (its own and the shared ones) can be made, and
    args/stdin name only those."""
    io = {"inputs", "stdin", "stdout"} & set(entry)
    if not program:
        if io:
            raise _bad(name, f"[sizes.{size}] {', '.join(sorted(io))}: only a real program "
                             f"([program]) takes inputs, stdin or stdout")
        return
    defined = entry.get("inputs", {})
    if not isinstance(defined, dict):
        raise _bad(name, f"[sizes.{size}] inputs must map names to generator tables")
    for input_name, definition in defined.items():
        input_files.validate(definition, f"workloads/{name}/workload.toml [sizes.{size}] "
                                         f"inputs.{input_name}")
    for input_name, definition in shared.items():
        input_files.validate(definition, f"workloads/{name}/workload.toml [inputs.{input_name}]")
    paths = {n: n for n in {**shared, **defined}}
    for text in [*entry["args"], *(entry[k] for k in ("stdin", "stdout") if k in entry)]:
        if not isinstance(text, str):
            raise _bad(name, f"[sizes.{size}] stdin and stdout must be strings")
        try:
            text.format(**paths)
        except (KeyError, IndexError, ValueError) as e:
            raise _bad(name, f"[sizes.{size}] '{text}' names no input ({e}); define it "
                             f"in [sizes.{size}.inputs]") from None
    out = entry.get("stdout")
    if out is not None and ("/" in out or out in ("", ".", "..")):
        raise _bad(name, f"[sizes.{size}] stdout is a file name in the job's output "
                         f"directory, not '{out}'")


def load_registry(root: Path = WORKLOADS) -> dict[str, Workload]:
    """Every ``<root>/*/workload.toml``, validated, by name (sorted)."""
    registry = {}
    for d in sorted(p for p in root.iterdir() if (p / "workload.toml").is_file()):
        if not d.name.replace("_", "").replace("-", "").isalnum():
            raise _bad(d.name, "folder name must be letters, digits, '_' or '-'")
        registry[d.name] = _load_remembered(d)
    return registry


# Each workload.toml as read and validated, by its signature and its folder's listing.
_LOADED: dict[tuple, Workload] = {}


def _load_remembered(d: Path) -> Workload:
    """:func:`_load_one`, read again only when the toml or the folder's listing changed
    (cost estimates and run ids ask for workloads thousands of times per listing)."""
    key = (file_signature(d / "workload.toml"), tuple(sorted(p.name for p in d.iterdir())))
    if key not in _LOADED:
        _LOADED[key] = _load_one(d)
    return _LOADED[key]


def get(name: str) -> Workload:
    """One workload of the registry (only its own folder is read)."""
    d = WORKLOADS / name
    if not name or "/" in name or name.startswith(".") or not (d / "workload.toml").is_file():
        raise UserError(f"unknown workload '{name}'; run 'python3 run.py workloads' to list them")
    return _load_remembered(d)


def _metric_key(line: str) -> str | None:
    """The key of a ``key=value`` line (a key has no spaces), else None."""
    key, sep, _ = line.strip().partition("=")
    key = key.strip()
    return key if sep and key and " " not in key else None


def plain_output(text: str) -> list[str]:
    """The lines of a program's output that are not ``key=value`` (a user program's own
    messages), without trailing blank lines."""
    lines = [line for line in text.splitlines() if _metric_key(line) is None]
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def parse_output(text: str) -> dict:
    """``key=value`` lines to a dict; decimal ints and floats become numbers (0x.. stays text)."""
    out: dict = {}
    for line in text.splitlines():
        key = _metric_key(line)
        if key is None:
            continue
        value = line.strip().partition("=")[2]
        value = value.strip()
        try:
            out[key] = int(value, 10)
        except ValueError:
            try:
                out[key] = float(value)
            except ValueError:
                out[key] = value
    return out
