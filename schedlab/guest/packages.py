"""Real programs from Debian packages, brought into the guest with what they need.

A workload whose workload.toml has a ``[program]`` table is not compiled: it is a program
of Debian packages (``packages``, the program's ``path`` in them, ``data``: globs of other
files of those packages it reads, such as models or dictionaries). Its ``packages.lock``,
beside the toml and made by ``python3 run.py workloads NAME --lock``, pins every package
whose files reach the guest: the named ones and the providers of the program's shared
libraries (its ELF DT_NEEDED closure, glibc's loader included), each with its exact version
and the SHA-256 of its .deb from Debian's index.

The build downloads each locked .deb (``apt-get download NAME=VERSION``, nothing is
installed on the host), checks its hash and unpacks it (``dpkg-deb -x``) into the cache.
The run's payload then carries the program, its libraries (from the locked packages, never
the host's) and its data files at their Debian paths below the guest's root, and the
executable itself at ``/schedlab/pkg/<workload>/<name>`` so that it replaces none of the
image's busybox applets (Debian's gzip is /bin/gzip too). Only the runs that use a program
carry it. The lock's hashes enter the run id and the run's provenance: Debian's mirror
serves only current versions, so a version that is gone is a one-line error naming the fix
(a new lock, which renames the runs), never a silent substitute.

Some packages make a file when they are installed, which the program then reads: Debian's
``gap`` starts from the workspace its maintainer script saves (``update-gap-workspace``).
A ``[program.install]`` table makes such a file here the same way, by running the program
once on the host in a tree of its locked packages (:func:`installed_file`); the run carries
the file at its guest path, and the table enters the run id.
"""

from __future__ import annotations

import fnmatch
import os
import re
import subprocess
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Callable

from elftools.common.exceptions import ELFError
from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile

from schedlab.errors import UserError
from schedlab.paths import cache_dir
from schedlab.store import file_signature, hash_bytes, hash_file, publish_dir, write_atomic

Progress = Callable[[str], None]

LOCK_NAME = "packages.lock"
# Where the executable goes in the guest (in the payload's tmpfs).
GUEST_PKG = "/schedlab/pkg"
# Directories glibc's loader searches by default on Debian (multiarch first).
_DEFAULT_LIB_DIRS = ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64",
                     "/usr/lib64", "/lib", "/usr/lib")
# The package with the loader and the C library: every lock has it, so the guest runs the
# locked glibc, not the host's.
LIBC = "libc6"


@dataclass(frozen=True)
class Deb:
    """One locked package: what ``apt-get download`` fetches and what its hash must be."""

    name: str
    version: str
    filename: str
    sha256: str
    size: int

    def as_toml(self) -> str:
        return (f'[[package]]\nname = "{self.name}"\nversion = "{self.version}"\n'
                f'filename = "{self.filename}"\nsha256 = "{self.sha256}"\nsize = {self.size}\n')


@dataclass(frozen=True)
class InstallStep:
    """A ``[program.install]`` table: the program run once with ``args`` and ``stdin`` in
    a tree of its locked packages, leaving the file ``makes`` (a guest path)."""

    makes: str
    args: tuple[str, ...] = ()
    stdin: str = ""

    def identity(self) -> str:
        """What the run id records of it (with the recipe :func:`installed_file` follows)."""
        return hash_bytes(INSTALL_RECIPE, self.makes, *self.args, self.stdin)


@dataclass(frozen=True)
class ProgramSpec:
    """A workload.toml's ``[program]`` table."""

    packages: tuple[str, ...]
    path: str
    data: tuple[str, ...] = ()
    # Directories of Debian alternatives (update-alternatives makes the link in the loader's
    # directory at install time; no package ships it): a library found there goes to the
    # guest at the multiarch directory, where the link would be.
    library_dirs: tuple[str, ...] = ()
    # Guest seconds its start-up takes whatever the CPU does (a program whose parts wait for
    # each other on timers): a region of interest must not begin before (0: none measured).
    startup_s: float = 0.0
    # The status it exits with when the launcher's SIGTERM stops it at its duration, for a
    # program that catches the signal and ends on its own (None: the signal kills it, 143).
    stopped_exit: int | None = None
    # A file the package makes when installed (its maintainer script's work), made here.
    install: InstallStep | None = None

    @property
    def guest_name(self) -> str:
        return PurePosixPath(self.path).name


def parse_program(raw, where: str) -> ProgramSpec:
    if not isinstance(raw, dict):
        raise UserError(f"{where}: [program] must be a table")
    unknown = set(raw) - {"packages", "path", "data", "library_dirs", "startup_s",
                          "stopped_exit", "install"}
    if unknown:
        raise UserError(f"{where}: [program] has unknown key(s) {', '.join(sorted(unknown))}")
    packages, path, data = raw.get("packages"), raw.get("path"), raw.get("data", [])
    if not (isinstance(packages, list) and packages
            and all(isinstance(p, str) and p for p in packages)):
        raise UserError(f"{where}: [program] needs packages = the Debian package names")
    if not isinstance(path, str) or not path.startswith("/"):
        raise UserError(f"{where}: [program] needs path = the program's absolute path in "
                        f"its package (dpkg-deb -c shows it)")
    if not isinstance(data, list) or not all(isinstance(d, str) and d.startswith("/")
                                             for d in data):
        raise UserError(f"{where}: [program] data must be a list of absolute paths or globs")
    library_dirs = raw.get("library_dirs", [])
    if not isinstance(library_dirs, list) or not all(
            isinstance(d, str) and d.startswith("/") for d in library_dirs):
        raise UserError(f"{where}: [program] library_dirs must be a list of absolute paths")
    startup_s = raw.get("startup_s", 0.0)
    if isinstance(startup_s, bool) or not isinstance(startup_s, (int, float)) or startup_s < 0:
        raise UserError(f"{where}: [program] startup_s must be a number of seconds, 0 or more")
    stopped_exit = raw.get("stopped_exit")
    if stopped_exit is not None and (isinstance(stopped_exit, bool) or
                                     not isinstance(stopped_exit, int)
                                     or not 0 < stopped_exit < 256):
        raise UserError(f"{where}: [program] stopped_exit must be an exit status, 1 to 255")
    install = _parse_install(raw["install"], where) if "install" in raw else None
    return ProgramSpec(tuple(packages), path, tuple(data), tuple(library_dirs),
                       float(startup_s), stopped_exit, install)


def _parse_install(raw, where: str) -> InstallStep:
    if not isinstance(raw, dict) or set(raw) - {"makes", "args", "stdin"}:
        raise UserError(f"{where}: [program.install] is a table of makes, args and stdin")
    makes, args, stdin = raw.get("makes"), raw.get("args", []), raw.get("stdin", "")
    if not isinstance(makes, str) or not makes.startswith("/") or ".." in makes.split("/"):
        raise UserError(f"{where}: [program.install] needs makes = the guest path of the "
                        f"file it makes")
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args) or any(
            a.startswith("/") for a in args) or not isinstance(stdin, str):
        raise UserError(f"{where}: [program.install] args are strings and stdin a string; "
                        f"paths in them are relative to the guest's root (the step runs "
                        f"there), never absolute")
    return InstallStep(makes, tuple(args), stdin)


# ---------------------------------------------------------------- the lock
def read_lock(workload_dir: Path) -> tuple[Deb, ...]:
    path = workload_dir / LOCK_NAME
    name = workload_dir.name
    if not path.is_file():
        raise UserError(f"workloads/{name} has no {LOCK_NAME}; make it with "
                        f"'python3 run.py workloads {name} --lock'")
    try:
        raw = tomllib.loads(path.read_text())
        debs = tuple(Deb(p["name"], p["version"], p["filename"], p["sha256"], int(p["size"]))
                     for p in raw["package"])
    except (tomllib.TOMLDecodeError, KeyError, TypeError, ValueError) as e:
        raise UserError(f"workloads/{name}/{LOCK_NAME} is damaged ({e}); make it again with "
                        f"'python3 run.py workloads {name} --lock'") from None
    return debs


def lock_identity(debs: tuple[Deb, ...]) -> dict[str, str]:
    """What the run id and provenance record of a lock: each .deb's name and hash."""
    return {d.filename: d.sha256 for d in debs}


def _apt(args: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(args, capture_output=True, text=True, cwd=cwd,
                              env={**os.environ, "LC_ALL": "C"})
    except OSError:
        raise UserError(f"{args[0]} not found; real programs come from Debian packages "
                        f"and need apt (a Debian or Ubuntu host)") from None


def _index_entry(name: str, version: str | None = None) -> Deb:
    """A package's entry in apt's index (the candidate version unless one is named)."""
    target = f"{name}={version}" if version else name
    r = _apt(["apt-get", "download", "--print-uris", target])
    line = next((ln for ln in r.stdout.splitlines() if ln.startswith("'")), None)
    if r.returncode != 0 or line is None:
        first = (r.stderr.strip().splitlines() or ["no download address"])[-1]
        if version:
            raise UserError(f"Debian's mirror does not serve {target} ({first}); it keeps "
                            f"only current versions: run 'apt-get update', or make a new "
                            f"lock (python3 run.py workloads NAME --lock), which renames "
                            f"the runs that use it")
        raise UserError(f"no Debian package {name} ({first}); run 'apt-get update' or "
                        f"check the name (apt-cache search)")
    _, filename, size, checksum = line.split()
    if not checksum.startswith("SHA256:"):
        raise UserError(f"apt gives no SHA-256 for {target} ({checksum})")
    if version is None:
        version = _apt(["apt-cache", "policy", name]).stdout.split("Candidate:")[1].split()[0]
    return Deb(name, version, filename, checksum.removeprefix("SHA256:"), int(size))


def fetch(deb: Deb, progress: Progress = print) -> Path:
    """The .deb file, downloaded once into the cache and checked against the lock."""
    final = cache_dir() / "debs" / deb.sha256
    path = final / deb.filename
    if path.is_file():
        return path
    progress(f"packages: downloading {deb.name}={deb.version} ({deb.size / 1e6:.1f} MB)")
    with publish_dir(final) as tmp:
        r = _apt(["apt-get", "download", f"{deb.name}={deb.version}"], cwd=tmp)
        got = tmp / deb.filename
        if r.returncode != 0 or not got.is_file():
            _index_entry(deb.name, deb.version)   # the one-line reason if it is gone
            first = (r.stderr.strip().splitlines() or ["?"])[-1]
            raise UserError(f"apt-get download {deb.name}={deb.version} failed: {first}")
        if hash_file(got) != deb.sha256:
            raise UserError(f"{deb.filename}: its SHA-256 is not the lock's; the mirror "
                            f"serves other bytes under this version: make a new lock")
    return path


def unpack(deb: Deb, progress: Progress = print) -> Path:
    """The package's files, unpacked once into the cache (nothing touches the host's /)."""
    final = cache_dir() / "debs-unpacked" / deb.sha256
    if final.is_dir():
        return final
    archive = fetch(deb, progress)
    with publish_dir(final) as tmp:
        r = subprocess.run(["dpkg-deb", "-x", str(archive), str(tmp)], capture_output=True,
                           text=True)
        if r.returncode != 0:
            raise UserError(f"dpkg-deb -x {deb.filename} failed: "
                            f"{(r.stderr.strip().splitlines() or ['?'])[-1]}")
    return final


# ---------------------------------------------------------------- files of a union of packages
class Tree:
    """The union of unpacked packages, looked up by guest path (following their symbolic
    links inside the union, as the guest's root would)."""

    def __init__(self, roots: dict[str, Path]):
        self.roots = roots            # package name -> unpacked directory

    def find(self, guest: str, hops: int = 0) -> tuple[str, Path] | None:
        """(package, host file) of a guest path, links resolved; None if no package has it."""
        if hops > 40:
            return None
        parts = PurePosixPath(guest).parts[1:]
        for i in range(1, len(parts) + 1):
            prefix = "/" + "/".join(parts[:i])
            for pkg, root in self.roots.items():
                host = root / prefix.lstrip("/")
                if host.is_symlink():
                    target = os.readlink(host)
                    base = PurePosixPath(prefix).parent
                    resolved = os.path.normpath(target if target.startswith("/")
                                                else str(base / target))
                    rest = "/".join(parts[i:])
                    return self.find(resolved + ("/" + rest if rest else ""), hops + 1)
                if i == len(parts) and host.is_file():
                    return pkg, host
        # usrmerge: Debian's /lib, /bin are /usr/lib, /usr/bin on a merged system.
        if guest.startswith(("/lib/", "/bin/", "/sbin/", "/lib64/")) and hops == 0:
            return self.find("/usr" + guest, hops + 1)
        return None

    def glob(self, pattern: str) -> list[str]:
        """Guest paths of regular files matching a glob (``**`` crosses directories)."""
        found = set()
        for root in self.roots.values():
            for p in root.rglob("*"):
                guest = "/" + str(p.relative_to(root))
                if p.is_file() and not p.is_symlink() and (
                        fnmatch.fnmatchcase(guest, pattern)
                        or fnmatch.fnmatchcase(guest, pattern.replace("**/", ""))):
                    found.add(guest)
        return sorted(found)


def _needed(host: Path) -> tuple[list[str], list[str], str | None]:
    """DT_NEEDED, RUNPATH/RPATH and the program interpreter of an ELF file."""
    with open(host, "rb") as f:
        try:
            elf = ELFFile(f)
        except ELFError:
            return [], [], None
        needed, runpath, interp = [], [], None
        for seg in elf.iter_segments():
            if seg.header.p_type == "PT_INTERP":
                interp = seg.get_interp_name()
        for sec in elf.iter_sections():
            if isinstance(sec, DynamicSection):
                for tag in sec.iter_tags():
                    if tag.entry.d_tag == "DT_NEEDED":
                        needed.append(tag.needed)
                    elif tag.entry.d_tag in ("DT_RUNPATH", "DT_RPATH"):
                        runpath += (tag.runpath if tag.entry.d_tag == "DT_RUNPATH"
                                    else tag.rpath).split(":")
    return needed, runpath, interp


def closure(tree: Tree, program: str, extra_elves: list[str] = (),
            library_dirs: tuple[str, ...] = ()) -> dict[str, tuple[str, Path]]:
    """Guest path -> (package, host file) of the program, its interpreter and every shared
    library it needs, resolved as glibc's loader would (RUNPATH, then the default
    directories, then the alternatives' ``library_dirs``, placed in the multiarch directory)
    inside the packages. A library no package has is a one-line error."""
    found = tree.find(program)
    if found is None:
        raise UserError(f"{program} is in none of the packages "
                        f"({', '.join(tree.roots)}); check [program] path (dpkg-deb -c)")
    files = {program: found}
    todo = [program, *extra_elves]
    while todo:
        guest = todo.pop()
        if guest not in files:
            hit = tree.find(guest)
            if hit is None:
                continue
            files[guest] = hit
        needed, runpath, interp = _needed(files[guest][1])
        if interp and interp not in files:
            hit = tree.find(interp)
            if hit is None:
                raise UserError(f"{guest} needs the loader {interp}, which no locked "
                                f"package has; add {LIBC} to [program] packages")
            files[interp] = hit
        origin = str(PurePosixPath(guest).parent)
        dirs = [d.replace("$ORIGIN", origin) for d in runpath] + list(_DEFAULT_LIB_DIRS)
        for soname in needed:
            if any(PurePosixPath(g).name == soname for g in files):
                continue
            where = next((f"{d}/{soname}" for d in dirs if tree.find(f"{d}/{soname}")), None)
            guest_lib = where
            if where is None:
                where = next((f"{d}/{soname}" for d in library_dirs
                              if tree.find(f"{d}/{soname}")), None)
                guest_lib = f"{_DEFAULT_LIB_DIRS[1]}/{soname}"
            if where is None:
                raise UserError(f"{guest} needs {soname}, which none of the packages has; "
                                f"add the package that ships it to [program] packages "
                                f"(apt-file search {soname}), or its alternatives' "
                                f"directory to library_dirs")
            files[guest_lib] = tree.find(where)
            todo.append(guest_lib)
    return files


def _depends_closure(names: tuple[str, ...]) -> list[str]:
    """Every package the named ones depend on (Depends and Pre-Depends, recursively)."""
    r = _apt(["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests",
              "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances", *names])
    if r.returncode != 0:
        raise UserError(f"apt-cache depends {' '.join(names)} failed: "
                        f"{(r.stderr.strip().splitlines() or ['?'])[-1]}")
    out = []
    for line in r.stdout.splitlines():
        if not line.startswith(" ") and not line.startswith("<") and line.strip():
            out.append(line.strip())
    return list(dict.fromkeys(out))


def make_lock(workload_dir: Path, spec: ProgramSpec, progress: Progress = print,
              made_by: str | None = None) -> Path:
    """Write ``packages.lock``: the named packages and the providers of the program's
    libraries, at the versions apt's index has now."""
    candidates = _depends_closure((*spec.packages, LIBC))
    progress(f"packages: {len(candidates)} candidates from the dependencies of "
             f"{', '.join(spec.packages)}")
    debs = {}
    for name in candidates:
        try:
            debs[name] = _index_entry(name)
        except UserError:
            continue      # a virtual package: its providers are in the list
    tree = Tree({n: unpack(d, progress) for n, d in debs.items()})
    data = [g for pattern in spec.data for g in tree.glob(pattern)]
    files = closure(tree, spec.path, [g for g in data if _is_elf(tree.find(g)[1])],
                    spec.library_dirs)
    used = {pkg for pkg, _ in files.values()} | set(spec.packages)
    used |= {tree.find(g)[0] for g in data}
    made_by = made_by or f"python3 run.py workloads {workload_dir.name} --lock"
    header = (f"# Made by '{made_by}' from apt's index: the packages whose files\n# reach the "
              f"guest (the program's, its data's and its libraries'), at exact versions and "
              f"hashes.\n\n")
    text = header + "\n".join(debs[n].as_toml() for n in sorted(used))
    write_atomic(workload_dir / LOCK_NAME, text)
    return workload_dir / LOCK_NAME


def _is_elf(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


# ---------------------------------------------------------------- what a run carries
@dataclass(frozen=True)
class ProgramFiles:
    """A real program's files for the payload: guest path -> host file."""

    executable: str               # the executable's guest path
    files: dict[str, Path]

    def identity(self) -> str:
        return hash_bytes(*(f"{g}={hash_file(p)}" for g, p in sorted(self.files.items())))


def guest_executable(workload: str, spec: ProgramSpec) -> str:
    return f"{GUEST_PKG}/{workload}/{spec.guest_name}"


# program_files by (workload, its lock's signature, its [program] table): a campaign
# resolves each of its runs (a study 1 figure has dozens with the same program), and
# finding the files walks every file of the unpacked packages (about 1 s for GAP's).
_PROGRAM_FILES: dict[tuple, ProgramFiles] = {}


def program_files(workload: str, workload_dir: Path, spec: ProgramSpec,
                  progress: Progress = print) -> ProgramFiles:
    """Everything the program needs in the guest, from the locked packages alone."""
    key = (workload, str(workload_dir), file_signature(workload_dir / LOCK_NAME), spec,
           str(cache_dir()))
    found = _PROGRAM_FILES.get(key)
    if found is None or not all(p.exists() for p in found.files.values()):
        found = _PROGRAM_FILES[key] = _program_files(workload, workload_dir, spec, progress)
    return found


def _program_files(workload: str, workload_dir: Path, spec: ProgramSpec,
                   progress: Progress) -> ProgramFiles:
    debs = read_lock(workload_dir)
    missing = {*spec.packages, LIBC} - {d.name for d in debs}
    if missing:
        raise UserError(f"workloads/{workload}/{LOCK_NAME} lacks {', '.join(sorted(missing))}; "
                        f"make it again with 'python3 run.py workloads {workload} --lock'")
    tree = Tree({d.name: unpack(d, progress) for d in debs})
    data = [g for pattern in spec.data for g in tree.glob(pattern)]
    for pattern in spec.data:
        if not tree.glob(pattern):
            raise UserError(f"workloads/{workload}: data '{pattern}' matches no file of the "
                            f"locked packages")
    elves = [g for g in data if _is_elf(tree.find(g)[1])]
    files = {g: host for g, (_, host) in
             closure(tree, spec.path, elves, spec.library_dirs).items()}
    files.update({g: tree.find(g)[1] for g in data})
    if spec.install:
        files[spec.install.makes] = installed_file(workload, tree, debs, spec, files,
                                                   progress)
    executable = guest_executable(workload, spec)
    files[executable] = files.pop(spec.path)
    return ProgramFiles(executable, files)


# How :func:`installed_file` runs a step; part of each step's identity (a change of it
# renames the runs that carry such a file).
INSTALL_RECIPE = "install-1: env -i, setarch -R, cwd = the packages' tree, relative paths"


def installed_file(workload: str, tree: Tree, debs: tuple[Deb, ...], spec: ProgramSpec,
                   files: dict[str, Path], progress: Progress = print) -> Path:
    """The file a package makes when installed, made once (cached by the lock and the step)
    by running the program on the host as its maintainer script would in the guest.

    Only what the step is given can reach the file's bytes, so that it is the same on every
    host (tested): the working directory is a tree of every file of the locked packages at
    its guest path, every path is relative to it (a program may record the paths it read,
    as GAP's workspace does), the environment is empty (GAP records it too) and address
    randomisation is off (GAP's workspace otherwise holds 57 bytes that differ between two
    saves)."""
    step = spec.install
    final = cache_dir() / "installed" / hash_bytes(
        hash_bytes(*sorted(lock_identity(debs).values())), step.identity())
    made = final / PurePosixPath(step.makes).name
    if made.is_file():
        return made
    progress(f"packages: making {step.makes} for {workload}, as its package's installation "
             f"does")
    loader = next(g for g in files if PurePosixPath(g).name.startswith("ld-linux"))
    with publish_dir(final) as tmp, tempfile.TemporaryDirectory(prefix="schedlab-install-",
                                                                dir=tmp.parent) as root:
        for root_dir in tree.roots.values():
            for p in root_dir.rglob("*"):
                guest = "/" + str(p.relative_to(root_dir))
                hit = None if p.is_dir() else tree.find(guest)
                dest = Path(root) / guest.lstrip("/")
                if hit and not dest.exists():
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    dest.symlink_to(hit[1])
        out = Path(root) / step.makes.lstrip("/")
        out.parent.mkdir(parents=True, exist_ok=True)
        dirs = ":".join("." + d for d in _DEFAULT_LIB_DIRS)
        argv = ["setarch", "-R", "." + loader, "--library-path", dirs, "." + spec.path,
                *step.args]
        try:
            r = subprocess.run(argv, input=step.stdin, capture_output=True, text=True,
                               cwd=root, env={}, timeout=600)
        except FileNotFoundError:
            raise UserError("setarch not found; it runs a package's installation step "
                            "without address randomisation (Debian: apt install "
                            "util-linux)") from None
        except subprocess.TimeoutExpired:
            raise UserError(f"{workload}: its installation step ran 10 minutes without "
                            f"ending; check [program.install] (its stdin must end it)") from None
        if r.returncode != 0 or not out.is_file():
            last = ((r.stderr or r.stdout).strip().splitlines() or ["no output"])[-1]
            raise UserError(f"{workload}: its installation step did not make {step.makes} "
                            f"(exit {r.returncode}: {last}); check [program.install]")
        os.replace(out, tmp / made.name)
    return made


def stage(files: ProgramFiles, root: Path) -> dict[str, Path]:
    """The program's files as links below ``root`` at their guest paths, to run it on the
    host (cachegrind) without installing anything: guest path -> staged path."""
    staged = {}
    for guest, host in files.files.items():
        dest = root / guest.lstrip("/")
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.symlink_to(host)
        staged[guest] = dest
    return staged


def host_argv(files: ProgramFiles, root: Path, argv: list[str]) -> list[str]:
    """A staged program's command on the host: through its own loader (the locked glibc,
    not the host's), with guest paths of its files and their directories in the arguments
    made staged paths."""
    staged = stage(files, root)
    loader = next(g for g in files.files if PurePosixPath(g).name.startswith("ld-linux"))
    dirs = ":".join(str(root / d.lstrip("/")) for d in _DEFAULT_LIB_DIRS)

    def on_host(path: str) -> str:   # a file or a directory of the program's files
        if path in staged:
            return str(staged[path])
        if any(g.startswith(path.rstrip("/") + "/") for g in staged):
            return str(root / path.lstrip("/"))
        return path

    def arg_on_host(arg: str) -> str:   # "+I/path", "--in=/path": the path is mapped
        return re.sub(r"/[^\s=,:]+", lambda m: on_host(m.group(0)), arg)

    return [str(staged[loader]), "--library-path", dirs, str(staged[files.executable]),
            *map(arg_on_host, argv[1:])]


def unpacked_bytes(files: ProgramFiles) -> int:
    """What the program adds to a run's payload (the guest unpacks it on simulated cores)."""
    return sum(p.stat().st_size for p in files.files.values())
