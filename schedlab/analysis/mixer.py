"""Host-side analysis of the software mixer (workloads/mixer, study 2).

The mixer leaves four CSV files in its output directory (a run's
``artifacts/mixer/<rep>/`` or, natively, ``--out``):

- ``production.csv``: production time of every sample after the first (t[n] - t[n-1], ns);
- ``cpus.csv``: the migrations map as runs ``task,first,last,cpu``: the CPU where the task had
  sample first..last's input in hand (a wave its computed packet, a mixer both inputs taken);
- ``handover.csv``: ``task,sample,cpu`` for the samples a task handed over (wrote to its output
  buffer and posted) on another CPU, having blocked on the full buffer and moved meanwhile;
- ``exec.csv``: execution time (thread CPU time) per task, every ``exec_stride``-th sample;
- ``topology.csv``: for each CPU, the CPUs sharing its last-level cache as the guest reports it.

This module turns them into the paper's measures: mu, sigma and rho = mu + 2 sigma of the
production time (Table I), its ECDF (Figs. 7-8), the migrations map task x sample -> CPU
(Fig. 3), CPU changes per task (Fig. 5) and how often a consumer ran in its producers' cache.
"""

from __future__ import annotations

import csv
import math
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


def read_cpu_map(path: Path) -> dict[str, list[int]]:
    """Expand the runs of cpus.csv to task -> CPU per sample; checks the runs tile the samples."""
    rows = _rows(path, ["task", "first", "last", "cpu"])
    runs: dict[str, list[tuple[int, int, int]]] = {}
    for r in rows:
        runs.setdefault(r["task"], []).append((int(r["first"]), int(r["last"]), int(r["cpu"])))
    if set(runs) != set(TASKS):
        raise _bad(path, f"tasks {sorted(runs)}, expected {list(TASKS)}")
    out: dict[str, list[int]] = {}
    lengths = set()
    for task, task_runs in runs.items():
        cpus: list[int] = []
        for first, last, cpu in task_runs:
            if first != len(cpus) or last < first:
                raise _bad(path, f"{task}: run {first}..{last} does not follow sample {len(cpus) - 1}")
            cpus.extend([cpu] * (last - first + 1))
        out[task] = cpus
        lengths.add(len(cpus))
    if len(lengths) != 1:
        raise _bad(path, f"tasks cover different sample counts {sorted(lengths)}")
    return out


def read_handover(path: Path, samples: int) -> dict[str, dict[int, int]]:
    out: dict[str, dict[int, int]] = {}
    for r in _rows(path, ["task", "sample", "cpu"]):
        task, n = r["task"], int(r["sample"])
        if task not in TASKS or not 0 <= n < samples:
            raise _bad(path, f"bad row {r}")
        out.setdefault(task, {})[n] = int(r["cpu"])
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
    return "CPU " + ",".join(map(str, used)) if len(used) < 2 else "CPUs " + ",".join(map(str, used))


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
