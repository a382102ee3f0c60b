"""Typed, validated machine descriptions read from the catalogue (configs/machines.toml).

A :class:`MachineSpec` is what every backend and every analysis reads: the gem5 configs build
their board from it, the QEMU backend its -smp/-numa arguments, analysis its labels. This
module uses only the standard library so that gem5's embedded Python can import it as well.

Overrides (``--set l2.size=8MiB``) are applied to the raw catalogue entry before validation,
so a hypothetical machine is checked exactly like a catalogued one. So are the machines of a
user's machine file (``--machines FILE``): entries in the catalogue's form, each standing alone
or deriving from a catalogue machine (``base = "clovertown-e5320"`` plus what changes), named
``FILE:NAME`` wherever a machine name goes.
"""

from __future__ import annotations

import copy
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

try:
    from schedlab.errors import UserError
except ImportError:  # imported by path from gem5's interpreter, outside the package
    class UserError(Exception):  # type: ignore[no-redef]
        pass

CATALOGUE = Path(__file__).resolve().parent.parent / "configs" / "machines.toml"

_SIZE_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
_FREQ_UNITS = {"hz": 1, "khz": 10**3, "mhz": 10**6, "ghz": 10**9}
SHARING_SCOPES = ("core", "package", "node", "machine")
CACHE_KINDS = ("instruction", "data", "unified")
PIPELINE_KINDS = ("in-order", "out-of-order")
# The guest kernel's tick rates (Linux's CONFIG_HZ choices). 1000 unless a machine says: a
# SCHED_RR timeslice is a whole number of ticks, and study 1 needs 2 ms ones.
TICK_RATES = (100, 250, 300, 1000)
DEFAULT_TICK_HZ = 1000      # kernel-patches/guest.config's CONFIG_HZ (a test checks they agree)


def tick_hz_of(machine: dict) -> int:
    """The guest tick rate of a resolved machine's dict (``MachineSpec.to_dict``), which
    names it only when it is not the default."""
    return machine.get("tick_hz", DEFAULT_TICK_HZ)


# The keys each table may hold; anything else is a typo and is rejected, never ignored.
_MACHINE_KEYS = {"description", "studies", "clock", "cores", "packages", "nodes", "pipeline",
                 "notes", "variants", "caches", "memory", "reserved_cores", "tick_hz"}
_PIPELINE_KEYS = {"kind", "width", "rob_entries"}
_CACHE_KEYS = {"level", "kind", "size", "assoc", "line", "latency", "shared_by", "groups"}
_MEMORY_KEYS = {"size_per_node", "latency", "delay"}
_LATENCY_KEYS = {"local", "node", "remote", "jitter"}
_DELAY_KEYS = {"cycles", "max_cycles", "remote_cycles_per_delay"}
# A user machine file's entries may also name the machine they derive from.
_USER_MACHINE_KEYS = _MACHINE_KEYS | {"base"}
# Machine names become parts of run ids and directory names.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")


def parse_size(value, what: str) -> int:
    """Bytes from 32768, "32KiB", "32KB" or "4 MiB" (cache convention: KB/MB/GB are binary)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    m = re.fullmatch(r"\s*([-+]?\d+)\s*([kmg]?)(i?b)?\s*", str(value), re.IGNORECASE)
    if not m:
        raise UserError(f"{what}: cannot read size {value!r}; write it like 32KiB, 4MiB or 2GiB")
    return int(m.group(1)) * _SIZE_UNITS[m.group(2).lower()]


def parse_frequency(value, what: str) -> int:
    """Hz from 1860000000, "1.86GHz" or "16.67MHz"."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmg]?hz)\s*", str(value), re.IGNORECASE)
    if not m:
        raise UserError(f"{what}: cannot read clock {value!r}; write it like 1.86GHz or 600MHz")
    return round(float(m.group(1)) * _FREQ_UNITS[m.group(2).lower()])


@dataclass(frozen=True)
class Latency:
    """A latency as the catalogue gives it: in core cycles or in nanoseconds."""

    value: float
    unit: str  # "cycles" or "ns"

    @classmethod
    def parse(cls, value, what: str) -> Latency:
        m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(cycles?|ns)\s*", str(value))
        if not m:
            raise UserError(f"{what}: cannot read latency {value!r}; "
                            "write it like 14cycles or 100ns")
        unit = "ns" if m.group(2) == "ns" else "cycles"
        return cls(float(m.group(1)), unit)

    def cycles(self, clock_hz: int) -> int:
        if self.unit == "cycles":
            return round(self.value)
        return max(1, round(self.value * 1e-9 * clock_hz))

    def ns(self, clock_hz: int) -> float:
        return self.value if self.unit == "ns" else self.value / clock_hz * 1e9

    def __str__(self) -> str:
        return f"{self.value:g}{self.unit}"


def format_size(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale}{unit}"
    return f"{n}B"


def format_cpus(cpus) -> str:
    """Linux cpulist form: 0-3,8."""
    cpus = sorted(cpus)
    runs, start = [], None
    for i, c in enumerate(cpus):
        if start is None:
            start = c
        if i + 1 == len(cpus) or cpus[i + 1] != c + 1:
            runs.append(f"{start}" if start == c else f"{start}-{c}")
            start = None
    return ",".join(runs)


def _is_power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


@dataclass(frozen=True)
class Cache:
    """One cache level of the machine; ``groups`` lists the cores sharing each instance."""

    name: str
    level: int
    kind: str
    size: int
    assoc: int
    line: int
    latency: Latency
    groups: tuple[tuple[int, ...], ...]

    @property
    def sets(self) -> int:
        return self.size // (self.assoc * self.line)

    @property
    def shared(self) -> bool:
        return any(len(g) > 1 for g in self.groups)

    def group_of(self, core: int) -> tuple[int, ...]:
        return next(g for g in self.groups if core in g)


@dataclass(frozen=True)
class Pipeline:
    kind: str
    width: int
    rob_entries: int | None = None


@dataclass(frozen=True)
class Memory:
    """Main memory: per-node size and access latencies (local, within node, remote)."""

    size_per_node: int
    local: Latency
    node: Latency | None
    remote: Latency | None
    delay_cycles: int
    remote_cycles_per_delay: int
    # A random extra latency of every memory access, uniform in [0, jitter] and drawn from
    # the run's seed (gem5's SimpleMemory latency_var): the perturbation with which
    # Alameldeen and Wood (HPCA 2003) sample a deterministic simulator's space variability.
    # None: none (the catalogue's machines; ``--set memory.latency.jitter=4ns`` adds it).
    jitter: Latency | None = None

    def remote_cycles(self, clock_hz: int) -> int | None:
        """Off-node latency in core cycles, the ring delay included."""
        if self.remote is None:
            return None
        return self.remote.cycles(clock_hz) + self.delay_cycles * self.remote_cycles_per_delay


@dataclass(frozen=True)
class MachineSpec:
    """A machine of the catalogue, resolved (variant and overrides applied) and validated."""

    name: str
    description: str
    studies: tuple[int, ...]
    clock_hz: int
    cores: int
    packages: tuple[tuple[int, ...], ...]
    nodes: tuple[tuple[int, ...], ...]
    pipeline: Pipeline
    caches: tuple[Cache, ...]
    memory: Memory
    reserved_cores: tuple[int, ...] = ()
    tick_hz: int = DEFAULT_TICK_HZ      # the guest kernel's CONFIG_HZ on this machine
    notes: str = ""
    overrides: tuple[str, ...] = ()
    raw: dict = field(default_factory=dict, compare=False, repr=False)

    def cache(self, name: str) -> Cache:
        for c in self.caches:
            if c.name == name:
                return c
        raise UserError(f"machine {self.name} has no cache {name!r}; it has "
                        + ", ".join(c.name for c in self.caches))

    @property
    def llc(self) -> Cache:
        """The last-level cache (highest level; the one whose sharing defines LLC groups)."""
        return max(self.caches, key=lambda c: (c.level, c.kind != "instruction"))

    @property
    def llc_groups(self) -> tuple[tuple[int, ...], ...]:
        return self.llc.groups

    @property
    def memory_size(self) -> int:
        return self.memory.size_per_node * len(self.nodes)

    def node_of(self, core: int) -> int:
        return next(i for i, n in enumerate(self.nodes) if core in n)

    def node_distances(self) -> list[list[int]]:
        """ACPI SLIT-style distances: 10 within a node, 10 x remote/local latency across.

        From the remote latency without the ring delay: the delay is a switch an experiment
        sets on the machine (Hector's), not another machine, so the guest's firmware tables
        stay those of the machine at every delay, as the paper's system software did, and
        every delay restores the machine's one boot checkpoint."""
        local = self.memory.local.cycles(self.clock_hz)
        remote = None if self.memory.remote is None else self.memory.remote.cycles(self.clock_hz)
        far = 20 if remote is None else max(11, round(10 * remote / local))
        n = len(self.nodes)
        return [[10 if i == j else far for j in range(n)] for i in range(n)]

    def to_dict(self) -> dict:
        """The resolved machine as data: written into every run's results, read by gem5 configs."""
        return {
            "name": self.name,
            "description": self.description,
            "studies": list(self.studies),
            "clock_hz": self.clock_hz,
            "cores": self.cores,
            "packages": [list(p) for p in self.packages],
            "nodes": [list(n) for n in self.nodes],
            "reserved_cores": list(self.reserved_cores),
            # Only when not the default, so the other machines' runs keep their ids.
            **({"tick_hz": self.tick_hz} if self.tick_hz != DEFAULT_TICK_HZ else {}),
            "pipeline": {k: v for k, v in vars(self.pipeline).items() if v is not None},
            "caches": [{
                "name": c.name, "level": c.level, "kind": c.kind, "size": c.size,
                "assoc": c.assoc, "line": c.line, "sets": c.sets,
                "latency_cycles": c.latency.cycles(self.clock_hz),
                "groups": [list(g) for g in c.groups],
            } for c in self.caches],
            "llc": self.llc.name,
            "memory": {
                "size_per_node": self.memory.size_per_node,
                "size": self.memory_size,
                "local_ns": self.memory.local.ns(self.clock_hz),
                "local_cycles": self.memory.local.cycles(self.clock_hz),
                "node_cycles": (self.memory.node.cycles(self.clock_hz)
                                if self.memory.node else None),
                "remote_cycles": self.memory.remote_cycles(self.clock_hz),
                "delay_cycles": self.memory.delay_cycles,
                "distances": self.node_distances(),
                # Only when set, so machines without it keep their run ids.
                **({"jitter_ns": self.memory.jitter.ns(self.clock_hz)}
                   if self.memory.jitter else {}),
            },
            "overrides": list(self.overrides),
            "notes": self.notes,
            "catalogue_entry": self.raw,
        }


# --------------------------------------------------------------------------- loading

# Each catalogue or machine file as parsed, by its signature (a campaign resolves a machine
# for every request).
_CATALOGUES: dict[tuple, dict] = {}


def load_catalogue(path: Path = CATALOGUE) -> dict:
    """The ``[machines.*]`` tables of the catalogue, or of a user machine file: shared
    between calls, so read-only (an entry is copied before it is changed: _entry)."""
    what = "machine catalogue" if path == CATALOGUE else "machine file"
    try:
        st = Path(path).stat()     # (the package's store module is not gem5's to import)
        key = (str(path), st.st_ino, st.st_size, st.st_mtime_ns)
        if key not in _CATALOGUES:
            with open(path, "rb") as f:
                _CATALOGUES[key] = tomllib.load(f)
        data = _CATALOGUES[key]
    except FileNotFoundError:
        fix = "restore it from git" if path == CATALOGUE else "check the path given"
        raise UserError(f"{what} {path} is missing; {fix}") from None
    except IsADirectoryError:
        raise UserError(f"{what} {path} is a directory; name a .toml file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise UserError(f"{what} {path} is not valid TOML: {e}") from None
    machines = data.get("machines", {})
    if path != CATALOGUE and (not machines or set(data) != {"machines"}):
        raise UserError(f"{what} {path} must hold only [machines.NAME] tables, as "
                        f"configs/machines.toml does")
    return machines


def machine_names(path: Path = CATALOGUE) -> list[str]:
    """Every machine and variant name, in catalogue order."""
    names = []
    for name, entry in load_catalogue(path).items():
        names.append(name)
        names += [f"{name}-{v}" for v in entry.get("variants", {})]
    return names


def machine_ref(name: str, machines_file: str | Path | None = None) -> str:
    """The name a run request carries: a catalogue name as it is; a user machine as
    ``/absolute/FILE:NAME``, so the request means the same machine in any worker (a
    campaign's, a SLURM task's) whatever its directory. ``machines_file`` is where
    plain names are looked for first (``--machines FILE``)."""
    file, sep, entry = name.rpartition(":")
    if sep:
        return f"{Path(file).resolve()}:{entry}"
    if machines_file is not None:
        path = Path(machines_file)
        if name in machine_names(path):
            return f"{path.resolve()}:{name}"
        if name not in machine_names():
            raise UserError(f"unknown machine {name!r}: neither in {path} nor in the catalogue; "
                            f"'python3 run.py machines --machines {path}' lists both")
    return name


def load_machine(name: str, overrides: list[str] | tuple[str, ...] = (),
                 path: Path = CATALOGUE) -> MachineSpec:
    """Resolve ``name`` (a machine, ``machine-variant``, or ``FILE:NAME`` of a user machine
    file), apply ``key=value`` overrides."""
    file, sep, entry = name.rpartition(":")
    if sep:
        raw = _user_entry(Path(file), entry)
        name, where = entry, f"machine {entry} ({file})"
    else:
        raw = _entry(load_catalogue(path), name, f"machine {name}")
        if raw is None:
            raise UserError(f"unknown machine {name!r}; run 'python3 run.py machines' to list them")
        where = f"machine {name}"
    for item in overrides:
        _apply_override(raw, item, name)
    return _build(name, raw, tuple(overrides), where)


def _find(machines: dict, name: str) -> tuple[str, str | None] | None:
    """(entry, variant or None) that ``name`` names in ``machines``, or None."""
    if name in machines:
        return name, None
    for candidate, entry in machines.items():
        suffix = name[len(candidate) + 1:]
        if name.startswith(candidate + "-") and suffix in entry.get("variants", {}):
            return candidate, suffix
    return None


def _entry(machines: dict, name: str, where: str) -> dict | None:
    """A copy of the raw entry ``name`` of ``machines`` (a variant restricted to its cores),
    or None if there is none."""
    found = _find(machines, name)
    if found is None:
        return None
    entry, variant = found
    raw = copy.deepcopy(machines[entry])
    _check_keys(raw, _MACHINE_KEYS, where)
    if variant is not None:
        raw = _restrict_to_variant(raw, variant, name)
    return raw


def _user_entry(path: Path, name: str, deriving: tuple[str, ...] = ()) -> dict:
    """The raw entry ``name`` of a user machine file, derived from its base if it has one,
    then (for ``entry-variant``) restricted to the variant's cores."""
    machines = load_catalogue(path)
    taken = set(machine_names())
    for entry in machines:
        if not _NAME.fullmatch(entry):
            raise UserError(f"machine file {path}: machine name {entry!r} may hold only letters, "
                            f"digits and . _ + - (it names result directories)")
        if entry in taken:
            raise UserError(f"machine file {path}: {entry!r} is a catalogue machine's name; "
                            f"rename yours (write base = \"{entry}\" to derive from it)")
    found = _find(machines, name)
    if found is None:
        raise UserError(f"machine file {path} has no machine {name!r}; it has "
                        + ", ".join(machine_names(path)))
    entry, variant = found
    where = f"machine {entry} ({path})"
    raw = copy.deepcopy(machines[entry])
    _check_keys(raw, _USER_MACHINE_KEYS, where)
    base = raw.pop("base", None)
    if base is not None:
        base = str(base)
        if base in deriving + (entry,):
            circle = " -> ".join(deriving + (entry, base))
            raise UserError(f"{where}: the bases go round in a circle ({circle}); one of "
                            f"them must stand alone or derive from a catalogue machine")
        if _find(machines, base) is not None:
            base_raw = _user_entry(path, base, deriving + (entry,))
        else:
            base_raw = _entry(load_catalogue(), base, f"machine {base}")
            if base_raw is None:
                raise UserError(f"{where}: base {base!r} is neither a catalogue machine nor "
                                f"a machine of this file; 'python3 run.py machines' lists them")
        raw = _derived(base_raw, raw, base, where)
    if variant is not None:
        raw = _restrict_to_variant(raw, variant, name)
    return raw


def _merged(base: dict, changes: dict) -> dict:
    """``base`` with ``changes`` merged in, table by table (a value replaces a value)."""
    out = dict(base)
    for key, value in changes.items():
        both_tables = isinstance(value, dict) and isinstance(base.get(key), dict)
        out[key] = _merged(base[key], value) if both_tables else value
    return out


def _derived(base: dict, changes: dict, base_name: str, where: str) -> dict:
    """A machine that is ``base`` with ``changes``. The base's variants name its own cores,
    and a changed machine is none of the studies' machines: neither is inherited."""
    inherited = {k: v for k, v in base.items() if k not in ("variants", "studies")}
    inherited["description"] = f"derived from {base_name}: {base.get('description', '')}"
    if base.get("notes"):
        inherited["notes"] = f"{base_name}'s notes: {base['notes']}"
    raw = _merged(inherited, changes)
    for cname, cache in _require_table(changes.get("caches", {}), f"{where}: caches").items():
        if isinstance(cache, dict) and "shared_by" in cache and "groups" not in cache:
            raw["caches"][cname].pop("groups", None)   # the new scope replaces the old groups
    if "cores" in changes and changes["cores"] != base.get("cores"):
        # Groups inherited for another number of cores would be wrong or, at best,
        # right by accident: the user says how the new cores group.
        change = f"changes cores from {base.get('cores')} to {changes['cores']}"
        if "packages" not in changes:
            raise UserError(f"{where}: {change}; say how they group: add packages = N (the "
                            f"cores split evenly into N chips, each sharing its caches "
                            f"shared_by = \"package\")")
        regrouped = {c for c, cache in changes.get("caches", {}).items()
                     if isinstance(cache, dict) and {"groups", "shared_by"} & set(cache)}
        stale = [c for c, cache in base.get("caches", {}).items()
                 if "groups" in cache and c not in regrouped]
        if stale:
            raise UserError(f"{where}: {change}; cache {stale[0]} lists its groups of "
                            f"{base.get('cores')} cores: give {stale[0]} groups (or a "
                            f"shared_by) for the new cores")
        if base.get("reserved_cores") and "reserved_cores" not in changes:
            raise UserError(f"{where}: {change}; give reserved_cores for the new cores")
    return raw


def _require_table(value, where: str) -> dict:
    if not isinstance(value, dict):
        raise UserError(f"{where} must be a table (a [section] or {{ key = value, ... }}), "
                        f"not {value!r}")
    return value


def _check_keys(table: dict, allowed: set, where: str) -> None:
    _require_table(table, where)
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise UserError(f"{where}: unknown key {unknown[0]!r}; allowed keys: "
                        + ", ".join(sorted(allowed)))


def _split_evenly(items: list[int], parts: int, what: str) -> tuple[tuple[int, ...], ...]:
    if parts < 1 or len(items) % parts:
        raise UserError(f"{what}: {len(items)} cannot be split into {parts} equal groups; "
                        f"choose a divisor of {len(items)}")
    size = len(items) // parts
    return tuple(tuple(items[i:i + size]) for i in range(0, len(items), size))


def _restrict_to_variant(raw: dict, variant: str, name: str) -> dict:
    """Keep only the variant's cores (renumbered from 0), with the groups they fall in."""
    keep = raw["variants"][variant].get("cores")
    cores = int(raw["cores"])
    if not keep or any(c not in range(cores) for c in keep) or len(set(keep)) != len(keep):
        raise UserError(f"{name}: variant cores {keep} must be distinct cores of 0..{cores - 1}")
    packages = _split_evenly(list(range(cores)), int(raw.get("packages", 1)), f"{name}: packages")
    nodes = _split_evenly(list(range(len(packages))), int(raw.get("nodes", 1)), f"{name}: nodes")
    renumber = {old: new for new, old in enumerate(sorted(keep))}
    kept_packages = [p for p in packages if any(c in renumber for c in p)]
    per_package = {sum(c in renumber for c in p) for p in kept_packages}
    if len(per_package) != 1:
        raise UserError(f"{name}: a variant must keep the same number of cores in each package")
    kept_nodes = [n for n in nodes if any(c in renumber for p in n for c in packages[p])]
    out = {k: v for k, v in raw.items() if k != "variants"}
    out["cores"] = len(keep)
    out["packages"] = len(kept_packages)
    out["nodes"] = len(kept_nodes)
    caches = {}
    for cname, c in raw.get("caches", {}).items():
        c = dict(c)
        if "groups" in c:
            groups = [[renumber[x] for x in g if x in renumber] for g in c["groups"]]
            c["groups"] = [g for g in groups if g]
        caches[cname] = c
    out["caches"] = caches
    if "reserved_cores" in raw:
        out["reserved_cores"] = [renumber[c] for c in raw["reserved_cores"] if c in renumber]
    return out


def _override_keys(raw: dict) -> dict[str, tuple]:
    """Every key an override may set, mapped to its path in the raw entry."""
    keys = {"clock": ("clock",), "description": ("description",),
            "packages": ("packages",), "nodes": ("nodes",), "tick_hz": ("tick_hz",)}
    keys |= {f"pipeline.{k}": ("pipeline", k) for k in _PIPELINE_KEYS}
    keys |= {"memory.size_per_node": ("memory", "size_per_node")}
    keys |= {f"memory.latency.{k}": ("memory", "latency", k) for k in _LATENCY_KEYS}
    keys |= {f"memory.delay.{k}": ("memory", "delay", k) for k in _DELAY_KEYS}
    for cname in raw.get("caches", {}):
        keys |= {f"{cname}.{k}": ("caches", cname, k) for k in _CACHE_KEYS - {"groups"}}
    return keys


def _apply_override(raw: dict, item: str, name: str) -> None:
    key, sep, text = item.partition("=")
    key, text = key.strip(), text.strip()
    if not sep or not key or not text:
        raise UserError(f"override {item!r} is not KEY=VALUE; write it like l2.size=8MiB")
    keys = _override_keys(raw)
    if key not in keys:
        raise UserError(f"{name}: cannot override unknown key {key!r}; known keys: "
                        + ", ".join(sorted(keys)))
    value: object = text
    for convert in (int, float):
        try:
            value = convert(text)
            break
        except ValueError:
            pass
    table = raw
    *parents, leaf = keys[key]
    for p in parents:
        table = table.setdefault(p, {})
    if leaf == "shared_by":
        table.pop("groups", None)
    table[leaf] = value


def _int(value, what: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise UserError(f"{what} must be an integer >= {minimum}, not {value!r}")
    return value


def _build(name: str, raw: dict, overrides: tuple[str, ...], where: str) -> MachineSpec:
    _check_keys(raw, _MACHINE_KEYS, where)
    for required in ("clock", "cores", "pipeline", "caches", "memory"):
        if required not in raw:
            raise UserError(f"{where}: missing key {required!r}")
    cores = _int(raw["cores"], f"{where}: cores")
    clock = parse_frequency(raw["clock"], f"{where}: clock")
    if clock <= 0:
        raise UserError(f"{where}: clock must be positive")
    packages = _split_evenly(list(range(cores)), _int(raw.get("packages", 1), f"{where}: packages"),
                             f"{where}: cores into packages")
    node_of_package = _split_evenly(list(range(len(packages))),
                                    _int(raw.get("nodes", 1), f"{where}: nodes"),
                                    f"{where}: packages into nodes")
    nodes = tuple(tuple(c for p in group for c in packages[p]) for group in node_of_package)

    pipe = raw["pipeline"]
    _check_keys(pipe, _PIPELINE_KEYS, f"{where}: pipeline")
    if pipe.get("kind") not in PIPELINE_KINDS:
        raise UserError(f"{where}: pipeline.kind must be one of {', '.join(PIPELINE_KINDS)}, "
                        f"not {pipe.get('kind')!r}")
    pipeline = Pipeline(pipe["kind"], _int(pipe.get("width"), f"{where}: pipeline.width"),
                        pipe.get("rob_entries"))

    scopes = {"core": tuple((c,) for c in range(cores)), "package": packages, "node": nodes,
              "machine": (tuple(range(cores)),)}
    caches = []
    for cname, c in _require_table(raw["caches"], f"{where}: caches").items():
        cwhere = f"{where}: cache {cname}"
        _check_keys(c, _CACHE_KEYS, cwhere)
        if c.get("kind") not in CACHE_KINDS:
            raise UserError(f"{cwhere}: kind must be one of {', '.join(CACHE_KINDS)}")
        size = parse_size(c.get("size"), f"{cwhere}: size")
        if size <= 0:
            raise UserError(f"{cwhere}: size must be positive, not {c.get('size')!r}; "
                            f"write it like 32KiB or 4MiB")
        assoc = _int(c.get("assoc"), f"{cwhere}: assoc")
        line = _int(c.get("line"), f"{cwhere}: line")
        if not _is_power_of_two(line):
            raise UserError(f"{cwhere}: line size {line} is not a power of two; "
                            "use 16, 32, 64 or 128")
        if size % (assoc * line) or not _is_power_of_two(size // (assoc * line)):
            sets = size / (assoc * line)
            raise UserError(
                f"{cwhere}: size {format_size(size)} with {assoc} ways of {line} B lines gives "
                f"{sets:g} sets, not a power of two; choose size = assoc x line x 2^k "
                f"(e.g. {format_size(assoc * line * (1 << max(0, int(sets).bit_length() - 1)))})")
        if "groups" in c:
            groups = tuple(tuple(g) for g in c["groups"])
            flat = sorted(x for g in groups for x in g)
            if flat != list(range(cores)) or any(not g for g in groups):
                raise UserError(f"{cwhere}: groups {c['groups']} do not partition cores "
                                f"0..{cores - 1}; every core must be in exactly one group")
        else:
            scope = c.get("shared_by", "core")
            if scope not in scopes:
                raise UserError(f"{cwhere}: shared_by must be one of {', '.join(SHARING_SCOPES)}, "
                                f"not {scope!r}")
            groups = scopes[scope]
        caches.append(Cache(cname, _int(c.get("level"), f"{cwhere}: level"), c["kind"], size,
                            assoc, line, Latency.parse(c.get("latency"), f"{cwhere}: latency"),
                            groups))
    if not caches:
        raise UserError(f"{where}: at least one cache level is required")
    caches.sort(key=lambda c: (c.level, c.name))
    _check_hierarchy(caches, where)

    mem = raw["memory"]
    _check_keys(mem, _MEMORY_KEYS, f"{where}: memory")
    lat = mem.get("latency", {})
    _check_keys(lat, _LATENCY_KEYS, f"{where}: memory.latency")
    if "local" not in lat:
        raise UserError(f"{where}: memory.latency.local is required")
    delay = mem.get("delay", {})
    _check_keys(delay, _DELAY_KEYS, f"{where}: memory.delay")
    delay_cycles = _int(delay.get("cycles", 0), f"{where}: memory.delay.cycles", 0)
    max_delay = _int(delay.get("max_cycles", 0), f"{where}: memory.delay.max_cycles", 0)
    if delay_cycles > max_delay:
        raise UserError(f"{where}: memory.delay.cycles={delay_cycles} is out of range; "
                        f"this machine allows 0..{max_delay}")
    size_per_node = parse_size(mem.get("size_per_node"), f"{where}: memory.size_per_node")
    if size_per_node < 1 << 20:
        raise UserError(f"{where}: memory.size_per_node must be at least 1MiB")
    memory = Memory(
        size_per_node=size_per_node,
        local=Latency.parse(lat["local"], f"{where}: memory.latency.local"),
        node=Latency.parse(lat["node"], f"{where}: memory.latency.node") if "node" in lat else None,
        remote=(Latency.parse(lat["remote"], f"{where}: memory.latency.remote")
                if "remote" in lat else None),
        delay_cycles=delay_cycles,
        remote_cycles_per_delay=_int(delay.get("remote_cycles_per_delay", 0),
                                     f"{where}: memory.delay.remote_cycles_per_delay", 0),
        jitter=(Latency.parse(lat["jitter"], f"{where}: memory.latency.jitter")
                if "jitter" in lat else None),
    )
    if len(nodes) > 1 and memory.remote is None:
        raise UserError(f"{where}: a machine with {len(nodes)} nodes needs memory.latency.remote")
    total = size_per_node * len(nodes)
    for c in caches:
        if c.size > total:
            raise UserError(f"{where}: cache {c.name} ({format_size(c.size)}) is larger than "
                            f"the machine's memory ({format_size(total)}); give it a smaller "
                            f"size or more memory.size_per_node")

    reserved = tuple(raw.get("reserved_cores", ()))
    if any(c not in range(cores) for c in reserved):
        raise UserError(f"{where}: reserved_cores {list(reserved)} must be cores of 0..{cores - 1}")
    tick_hz = _int(raw.get("tick_hz", DEFAULT_TICK_HZ), f"{where}: tick_hz", 1)
    if tick_hz not in TICK_RATES:
        raise UserError(f"{where}: tick_hz must be one of {', '.join(map(str, TICK_RATES))} "
                        f"(the kernel's CONFIG_HZ choices), not {tick_hz}")
    return MachineSpec(
        name=name, description=raw.get("description", ""), studies=tuple(raw.get("studies", ())),
        clock_hz=clock, cores=cores, packages=packages, nodes=nodes, pipeline=pipeline,
        caches=tuple(caches), memory=memory, reserved_cores=reserved, tick_hz=tick_hz,
        notes=raw.get("notes", ""), overrides=overrides, raw=raw)


def _check_hierarchy(caches: list[Cache], where: str) -> None:
    """Levels start at 1 with split or unified L1; a higher level never splits a lower group."""
    levels = sorted({c.level for c in caches})
    if levels != list(range(1, len(levels) + 1)):
        raise UserError(f"{where}: cache levels {levels} must be 1, 2, ... without gaps")
    for c in caches:
        if c.level > 1 and c.kind != "unified":
            raise UserError(f"{where}: cache {c.name} at level {c.level} must be unified")
    for lower in caches:
        for upper in caches:
            if upper.level == lower.level + 1:
                for g in lower.groups:
                    if not set(g) <= set(upper.group_of(g[0])):
                        raise UserError(
                            f"{where}: cache {upper.name} splits the cores sharing {lower.name} "
                            f"{list(g)}; an outer cache must be shared by at least those cores")
