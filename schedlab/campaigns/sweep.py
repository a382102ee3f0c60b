"""``run.py sweep``: a grid of machine parameters, one run per point, a table and a plot.

A sweep is a campaign whose matrix is the cartesian product of the values given for one or
more parameters (``--set l2.size=1MiB,2MiB,4MiB --set l2.assoc=8,16``: 6 points) and,
optionally, of policies. Every point is an ordinary run request: the machine with that
point's overrides (validated like any ``--set``), the same workloads. So it runs through
the campaign executors (this host or SLURM), and it resumes like a campaign: the same
point is the same run id, found and reused. Each request's label is its point, so the
results table has one column per swept parameter.

Boot checkpoints on gem5 depend only on the board's cores, clock and memory map
(``BoardPlan.boot_identity``): a sweep over caches restores one checkpoint at every point;
a sweep over the clock or the cores boots once per value.
"""

from __future__ import annotations

import io
import itertools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pandas as pd

from schedlab import paths
from schedlab.analysis import sweep as sweep_figure
from schedlab.analysis.figures import FigureContext, metric_label, provenance
from schedlab.analysis.tables import table
from schedlab.campaigns.experiment import check_definition
from schedlab.campaigns.reproduce import run_requests
from schedlab.errors import UserError
from schedlab.machine import load_machine
from schedlab.backends.gem5.backend import check_sampling
from schedlab.runs import RunRequest, WorkloadRequest
from schedlab.store import write_atomic

Say = Callable[[str], None]
# The swept dimension that is not a machine parameter.
POLICY = "policy"
# What a sweep plots unless told: the figure's metric where gem5 gives it, else the
# job's elapsed time on the guest's clock.
DEFAULT_METRIC = {"gem5": "gem5_ipc", "qemu": "wall_s"}


@dataclass(frozen=True)
class Axis:
    """One swept parameter (an override key, or ``policy``) and its values, in order."""

    key: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class Sweep:
    name: str
    machine: str                       # as the requests carry it (machine_ref)
    axes: tuple[Axis, ...]
    fixed: tuple[str, ...]             # KEY=VALUE overrides of every point
    jobs: tuple[WorkloadRequest, ...]
    backend: str
    cpu: str = "o3"
    policy: str | None = None          # when policy is not swept
    attribute_tasks: bool = False
    sampling: str | None = None        # gem5: "U,W,D" or a preset for every point

    def points(self) -> list[dict[str, str]]:
        """Every point of the grid, the first axis varying slowest."""
        keys = [a.key for a in self.axes]
        return [dict(zip(keys, values))
                for values in itertools.product(*(a.values for a in self.axes))]

    def request(self, point: dict[str, str]) -> RunRequest:
        overrides = self.fixed + tuple(f"{k}={v}" for k, v in point.items() if k != POLICY)
        return RunRequest(machine=self.machine, jobs=self.jobs, backend=self.backend,
                          overrides=overrides, policy=point.get(POLICY, self.policy),
                          cpu=self.cpu, attribute_tasks=self.attribute_tasks,
                          sampling=self.sampling, label=dict(point))

    def requests(self) -> list[RunRequest]:
        """The runs, each point's machine validated first (its error names the point)."""
        out = []
        for point in self.points():
            request = self.request(point)
            try:
                check_sampling(request, load_machine(request.machine, request.overrides))
            except UserError as e:
                where = " ".join(f"{k}={v}" for k, v in point.items())
                raise UserError(f"sweep point {where}: {e}") from None
            out.append(request)
        check_definition(self.name, out)
        return out


def parse_settings(settings: tuple[str, ...], policies: str | None
                   ) -> tuple[tuple[Axis, ...], tuple[str, ...]]:
    """``--set KEY=V1,V2,...`` and ``--policy P1,P2`` into swept axes (two or more values)
    and fixed overrides (one value)."""
    axes, fixed = [], []
    for item in settings:
        key, sep, text = item.partition("=")
        key = key.strip()
        values = tuple(v.strip() for v in text.split(","))
        if not sep or not key or not all(values):
            raise UserError(f"--set {item!r} is not KEY=VALUE[,VALUE...]; write it like "
                            f"l2.size=1MiB,2MiB,4MiB")
        if key in (a.key for a in axes) or any(f.startswith(key + "=") for f in fixed):
            raise UserError(f"--set {key} is given twice; give all its values in one "
                            f"--set {key}=V1,V2,...")
        if len(set(values)) != len(values):
            raise UserError(f"--set {item!r} repeats a value; each point must differ")
        if len(values) == 1:
            fixed.append(f"{key}={values[0]}")
        else:
            axes.append(Axis(key, values))
    if policies and "," in policies:
        names = tuple(p.strip() for p in policies.split(","))
        if not all(names) or len(set(names)) != len(names):
            raise UserError(f"--policy {policies!r}: give distinct policy names, comma-separated")
        axes.append(Axis(POLICY, names))
    if not axes:
        raise UserError("nothing to sweep: give at least one --set KEY=V1,V2,... with two or "
                        "more values (or --policy P1,P2)")
    return tuple(axes), tuple(fixed)


def default_name(machine_name: str, axes: tuple[Axis, ...]) -> str:
    return re.sub(r"[^A-Za-z0-9_.+-]", "_",
                  f"{machine_name}--" + "+".join(a.key for a in axes))


def outputs(name: str) -> dict[str, Path]:
    """Where a sweep's table (parquet and CSV) and figure go."""
    root = paths.results_dir()
    return {"parquet": root / "sweeps" / f"{name}.parquet",
            "csv": root / "sweeps" / f"{name}.csv",
            "figure": root / "figures" / f"{name}.png"}


@dataclass
class SweepResult:
    table: Path
    csv: Path
    figure: Path
    runs: int


def run_sweep(sweep: Sweep, metric: str | None, jobs: int | None = None,
              executor: str = "local", slurm: dict | None = None,
              say: Say = print) -> SweepResult:
    """Run every point not finished yet, gather the table, plot ``metric``."""
    requests = sweep.requests()
    report = run_requests(requests, sweep.name, jobs, executor, say, slurm or {})
    frame = table(report.run_dirs())
    metric = metric or DEFAULT_METRIC[sweep.backend]
    if metric not in frame:
        numeric = [c for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c])
                   and c not in ("job_rep", "exit")]
        raise UserError(f"metric {metric!r} is not in this sweep's results; choose one of "
                        + ", ".join(numeric))
    out = outputs(sweep.name)
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    write_atomic(out["parquet"], buffer.getvalue())
    write_atomic(out["csv"], frame.to_csv(index=False))
    machine = load_machine(sweep.machine, sweep.fixed)
    title = (f"{metric_label(metric)} over " + " x ".join(a.key for a in sweep.axes)
             + f" on {machine.name}" + (f" ({', '.join(sweep.fixed)})" if sweep.fixed else ""))
    ctx = FigureContext(name=sweep.name, title=title, scale="", backend=sweep.backend,
                        provenance=provenance(frame))
    figure = sweep_figure.draw(frame, metric, [a.key for a in sweep.axes], ctx,
                               out["figure"])
    return SweepResult(out["parquet"], out["csv"], figure, ctx.provenance.get("runs", 0))
