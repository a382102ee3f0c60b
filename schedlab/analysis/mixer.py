"""Host-side analysis of the software mixer (workloads/mixer, study 2).

The mixer leaves four CSV files in its output directory (a run's
``artifacts/mixer/<rep>/`` or, natively, ``--out``):

- ``production.csv``: production time of every sample after the first (t[n] - t[n-1], ns);
- ``cpus.csv``: the migrations map, rows ``task,first,last,cpus``: the CPU of each sample
  first..last where the task had its input in hand (a wave its computed packet, a mixer both
  inputs taken), run-length coded (:func:`decode_cpus`: one character per CPU 0-61, ``(N)``
  for any CPU, ``{K}`` after a symbol for K samples), so the map takes at most about one
  byte per task and sample whatever the migrations;
- ``handover.csv``: likewise the CPU where the task handed each sample over (wrote it to its
  output buffer and posted), ``.`` where that is the CPU of ``cpus.csv``; it differs when the
  task blocked on the full buffer and moved meanwhile;
- ``exec.csv``: execution time (thread CPU time) per task, every ``exec_stride``-th sample;
- ``topology.csv``: for each CPU, the CPUs sharing its last-level cache as the guest reports it.

Runs written before this code (``cpus.csv`` as runs ``task,first,last,cpu``, ``handover.csv``
as ``task,sample,cpu`` rows) are read too.

This module turns them into the paper's measures: mu, sigma and rho = mu + 2 sigma of the
production time (Table I), its ECDF (Figs. 7-8), the migrations map task x sample -> CPU
(Fig. 3), CPU changes per task (Fig. 5) and how often a consumer ran in its producers' cache.
"""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from schedlab.errors import UserError
from schedlab.guest.numa import parse_cpulist

TASKS = ("wave0", "wave1", "wave2", "wave3", "mixer0", "mixer1", "mixer2")
# The affinity graph of the benchmark: consumer -> its producers.
PRODUCERS = {"mixer0": ("wave0", "wave1"), "mixer1": ("wave2", "wave3"),
             "mixer2": ("mixer0", "mixer1")}
FILES = ("production.csv", "cpus.csv", "handover.csv", "exec.csv", "topology.csv")


@dataclass(frozen=True)
class Summary:
    """Production-time statistics of one run (ns)."""

    samples: int
    mean: float
    sd: float
    minimum: int
    maximum: int

    @property
    def rho(self) -> float:
        """The paper's real-time metric mu + 2 sigma."""
        return self.mean + 2 * self.sd

    def as_dict(self) -> dict:
        return {"samples": self.samples, "mean_ns": self.mean, "sd_ns": self.sd,
                "rho_ns": self.rho, "min_ns": self.minimum, "max_ns": self.maximum}


@dataclass
class MixerRun:
    """The parsed output files of one mixer run."""

    production_ns: list[int]
    cpu_map: dict[str, list[int]]          # task -> CPU of each sample (input in hand)
    exec_ns: dict[str, list[int]]          # task -> execution time of the sampled samples
    exec_samples: list[int]                # which samples exec_ns holds
    llc_of: dict[int, frozenset[int]]      # CPU -> CPUs sharing its LLC
    handover: dict[str, dict[int, int]] = field(default_factory=dict)  # task -> {sample: CPU}

    def cpu_out(self, task: str) -> list[int]:
        """CPU per sample where ``task`` handed its output over (woke its consumer)."""
        cpus = list(self.cpu_map[task])
        for n, cpu in self.handover.get(task, {}).items():
            cpus[n] = cpu
        return cpus

    @property
    def samples(self) -> int:
        return len(next(iter(self.cpu_map.values())))


def _bad(path: Path, msg: str) -> UserError:
    return UserError(f"mixer output {path}: {msg}")


def _rows(path: Path, header: list[str] | None = None) -> list[dict]:
    if not path.is_file():
        raise _bad(path, "missing; did the mixer run to completion with this --out/SCHEDLAB_OUT?")
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        if header is not None and reader.fieldnames != header:
            raise _bad(path, f"header {reader.fieldnames}, expected {header}")
        return list(reader)


def summarise(production_ns: list[int]) -> Summary:
    """mu, sigma (sample standard deviation), min and max of the production times."""
    if len(production_ns) < 2:
        raise UserError(f"need at least 2 production times for a spread, got {len(production_ns)}")
    n = len(production_ns)
    mean = math.fsum(production_ns) / n
    var = math.fsum((x - mean) ** 2 for x in production_ns) / (n - 1)
    return Summary(n + 1, mean, math.sqrt(var), min(production_ns), max(production_ns))


def ecdf(values: list[int]) -> tuple[list[int], list[float]]:
    """Empirical CDF: sorted distinct values and the fraction of samples <= each."""
    xs = sorted(values)
    out_x: list[int] = []
    out_y: list[float] = []
    n = len(xs)
    for i, x in enumerate(xs):
        if i + 1 < n and xs[i + 1] == x:
            continue
        out_x.append(x)
        out_y.append((i + 1) / n)
    return out_x, out_y


def read_production(path: Path) -> list[int]:
    rows = _rows(path, ["production_ns"])
    try:
        values = [int(r["production_ns"]) for r in rows]
    except ValueError:
        raise _bad(path, "a production time is not an integer") from None
    if any(v <= 0 for v in values):
        raise _bad(path, "timestamps are not strictly increasing (a production time <= 0)")
    return values


# The cpus code of cpus.csv and handover.csv (workloads/mixer/mixer.c write_map).
CPU_SYMBOLS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_RUN = re.compile(r"(?:([0-9a-zA-Z.])|\((-?\d+)\))(?:\{(\d+)\})?")
SAME = None  # handover.csv's '.': handed over on the CPU where the input was taken


def decode_cpus(code: str, same_allowed: bool = False) -> list[int | None]:
    """One CPU per sample from a cpus field: ``0``-``9a-zA-Z`` are CPUs 0-61, ``(N)`` is
    CPU N, ``.`` (if ``same_allowed``) is :data:`SAME`; ``{K}`` after a symbol repeats it K
    times. Raises ValueError on anything else."""
    out: list[int | None] = []
    pos = 0
    while pos < len(code):
        m = _RUN.match(code, pos)
        if not m:
            raise ValueError(f"unreadable at character {pos + 1}: {code[pos:pos + 12]!r}")
        char, number, count = m.groups()
        times = int(count) if count is not None else 1
        if times < 1:
            raise ValueError(f"a run of {times} samples at character {pos + 1}")
        if number is not None:
            cpu: int | None = int(number)
        elif char == ".":
            if not same_allowed:
                raise ValueError(f"'.' at character {pos + 1} (only handover.csv has it)")
            cpu = SAME
        else:
            cpu = CPU_SYMBOLS.index(char)
        out.extend([cpu] * times)
        pos = m.end()
    return out


def _read_maps(path: Path, same_allowed: bool) -> dict[str, list[int | None]]:
    """task -> one entry per sample from rows task,first,last,cpus, checked: known tasks,
    rows following each other from sample 0, each row's code covering first..last."""
    out: dict[str, list[int | None]] = {}
    for r in _rows(path, ["task", "first", "last", "cpus"]):
        task = r["task"]
        if task not in TASKS:
            raise _bad(path, f"unknown task {task!r}")
        cpus = out.setdefault(task, [])
        try:
            first, last = int(r["first"]), int(r["last"])
            decoded = decode_cpus(r["cpus"] or "", same_allowed)
        except ValueError as e:
            raise _bad(path, f"{task}: row {r['first']}..{r['last']}: {e}") from None
        if first != len(cpus) or last < first:
            raise _bad(path, f"{task}: run {first}..{last} does not follow sample {len(cpus) - 1}")
        if len(decoded) != last - first + 1:
            raise _bad(path, f"{task}: row {first}..{last} codes {len(decoded)} samples, "
                             f"not {last - first + 1}")
        cpus.extend(decoded)
    return out


def _read_old_cpu_runs(path: Path) -> dict[str, list[int]]:
    """cpus.csv as older mixers wrote it: one row per run, ``task,first,last,cpu``."""
    runs: dict[str, list[tuple[int, int, int]]] = {}
    for r in _rows(path, ["task", "first", "last", "cpu"]):
        runs.setdefault(r["task"], []).append((int(r["first"]), int(r["last"]), int(r["cpu"])))
    out: dict[str, list[int]] = {}
    for task, task_runs in runs.items():
        cpus: list[int] = []
        for first, last, cpu in task_runs:
            if first != len(cpus) or last < first:
                raise _bad(path, f"{task}: run {first}..{last} does not follow sample "
                                 f"{len(cpus) - 1}")
            cpus.extend([cpu] * (last - first + 1))
        out[task] = cpus
    return out


def _header(path: Path) -> list[str] | None:
    if not path.is_file():
        _rows(path)  # the missing-file error
    with open(path, newline="") as f:
        return next(csv.reader(f), None)


def read_cpu_map(path: Path) -> dict[str, list[int]]:
    """task -> CPU per sample from cpus.csv; checks every task is there, the rows tile the
    samples from 0 and all tasks cover as many samples."""
    if _header(path) == ["task", "first", "last", "cpu"]:
        out = _read_old_cpu_runs(path)
    else:
        out = _read_maps(path, same_allowed=False)  # type: ignore[assignment]
    if set(out) != set(TASKS):
        raise _bad(path, f"tasks {sorted(out)}, expected {list(TASKS)}")
    lengths = {len(cpus) for cpus in out.values()}
    if len(lengths) != 1:
        raise _bad(path, f"tasks cover different sample counts {sorted(lengths)}")
    return out


def read_handover(path: Path, samples: int) -> dict[str, dict[int, int]]:
    """task -> {sample: CPU} for the samples a task handed over on another CPU than the one
    where it took the input."""
    out: dict[str, dict[int, int]] = {}
    if _header(path) == ["task", "sample", "cpu"]:  # older mixers: one row per such sample
        for r in _rows(path, ["task", "sample", "cpu"]):
            task, n = r["task"], int(r["sample"])
            if task not in TASKS or not 0 <= n < samples:
                raise _bad(path, f"bad row {r}")
            out.setdefault(task, {})[n] = int(r["cpu"])
        return out
    maps = _read_maps(path, same_allowed=True)
    if set(maps) != set(TASKS):
        raise _bad(path, f"tasks {sorted(maps)}, expected {list(TASKS)}")
    for task, cpus in maps.items():
        if len(cpus) != samples:
            raise _bad(path, f"{task} covers {len(cpus)} samples, cpus.csv {samples}")
        moved = {n: cpu for n, cpu in enumerate(cpus) if cpu is not SAME}
        if moved:
            out[task] = moved  # type: ignore[assignment]
    return out


def read_topology(path: Path) -> dict[int, frozenset[int]]:
    rows = _rows(path, ["cpu", "llc_cpus", "source"])
    out = {}
    for r in rows:
        cpu = int(r["cpu"])
        out[cpu] = frozenset(parse_cpulist(r["llc_cpus"])) if r["llc_cpus"] else frozenset({cpu})
    return out


def read_exec(path: Path) -> tuple[list[int], dict[str, list[int]]]:
    rows = _rows(path, ["sample", *TASKS])
    return ([int(r["sample"]) for r in rows], {t: [int(r[t]) for r in rows] for t in TASKS})


def read_tids(path: Path) -> dict[str, int]:
    """task -> thread id (tids.csv; absent from runs made before the mixer wrote it)."""
    if not path.is_file():
        return {}
    return {r["task"]: int(r["tid"]) for r in _rows(path, ["task", "tid"])}


def load(directory: Path, llc_groups: list[list[int]] | None = None) -> MixerRun:
    """Read a run's files. ``llc_groups`` (e.g. the machine's) overrides the guest's topology."""
    directory = Path(directory)
    production = read_production(directory / "production.csv")
    cpu_map = read_cpu_map(directory / "cpus.csv")
    exec_samples, exec_ns = read_exec(directory / "exec.csv")
    if llc_groups is not None:
        llc_of = {c: frozenset(g) for g in llc_groups for c in g}
    else:
        llc_of = read_topology(directory / "topology.csv")
    samples = len(next(iter(cpu_map.values())))
    handover = read_handover(directory / "handover.csv", samples)
    run = MixerRun(production, cpu_map, exec_ns, exec_samples, llc_of, handover)
    if len(production) != run.samples - 1:
        raise _bad(directory, f"{len(production)} production times for {run.samples} samples")
    return run


def cpu_changes(cpus: list[int]) -> int:
    """How often consecutive samples of one task ran on different CPUs."""
    return sum(1 for a, b in zip(cpus, cpus[1:]) if a != b)


def shares_cache(run: MixerRun, a: int, b: int) -> bool:
    return b in run.llc_of.get(a, frozenset({a}))


def affine_fraction(run: MixerRun, consumer: str) -> float:
    """Fraction of samples in which ``consumer`` took its input on a CPU sharing the last-level
    cache with the CPU where one of its producers handed that input over."""
    cpus = run.cpu_map[consumer]
    prods = [run.cpu_out(p) for p in PRODUCERS[consumer]]
    hits = sum(1 for n, c in enumerate(cpus) if any(shares_cache(run, c, p[n]) for p in prods))
    return hits / len(cpus)


def report(run: MixerRun) -> dict:
    """Everything the study's tables and figures take from one run, as plain data."""
    out = {"production": summarise(run.production_ns).as_dict(), "tasks": {}}
    for task in TASKS:
        ex = run.exec_ns[task]
        mean = math.fsum(ex) / len(ex)
        var = math.fsum((x - mean) ** 2 for x in ex) / max(1, len(ex) - 1)
        entry = {"cpu_changes": cpu_changes(run.cpu_map[task]),
                 "cpus_used": sorted(set(run.cpu_map[task])),
                 "exec_mean_ns": mean, "exec_var_ns2": var}
        if task in PRODUCERS:
            entry["affine_fraction"] = affine_fraction(run, task)
        out["tasks"][task] = entry
    return out


def write_migrations_map(run: MixerRun, path: Path, step: int = 1) -> None:
    """Dense migrations map for plotting: one row per (every ``step``-th) sample, one CPU
    column per task."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["sample", *TASKS])
        for n in range(0, run.samples, step):
            w.writerow([n, *(run.cpu_map[t][n] for t in TASKS)])


def summary_lines(run: MixerRun) -> list[str]:
    """The production-time summary a CLI prints after a mixer run."""
    s = summarise(run.production_ns)
    lines = [f"mixer: {s.samples} samples, production time mu {s.mean / 1e3:.2f} us, "
             f"sigma {s.sd / 1e3:.2f} us, mu+2sigma {s.rho / 1e3:.2f} us "
             f"(min {s.minimum / 1e3:.2f}, max {s.maximum / 1e3:.2f} us)"]
    for task in TASKS:
        extra = ""
        if task in PRODUCERS:
            extra = f", in producers' cache {100 * affine_fraction(run, task):.1f}% of samples"
        lines.append(f"  {task}: {cpu_changes(run.cpu_map[task])} CPU changes on "
                     f"{format_cpus(run.cpu_map[task])}{extra}")
    return lines


def format_cpus(cpus: list[int]) -> str:
    used = sorted(set(cpus))
    return ("CPU " + ",".join(map(str, used)) if len(used) < 2
            else "CPUs " + ",".join(map(str, used)))


def analyse_run(results: Path, workload: str = "mixer",
                llc_groups: list[list[int]] | None = None) -> list[str]:
    """Summary lines of every repetition of a run directory's mixer output
    (``artifacts/<workload>/<rep>/``). Reads only: the report of a repetition is
    :func:`report` of :func:`load`. Pass the machine's LLC groups
    (``MachineSpec.llc_groups``) to judge cache sharing by the simulated machine's caches."""
    results = Path(results)
    reps = sorted(p for p in (results / "artifacts" / workload).glob("*") if p.is_dir())
    if not reps:
        raise UserError(f"{results}: no artifacts/{workload}/<rep>/ directories with mixer output")
    lines: list[str] = []
    for rep in reps:
        lines += [f"repetition {rep.name}:", *summary_lines(load(rep, llc_groups))]
    return lines
