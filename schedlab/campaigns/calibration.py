"""What a campaign's gem5 runs will cost, from what the committed ones took.

The bench/ model (:mod:`schedlab.campaigns.cost`) prices a run from measured host speeds;
the committed smoke runs of an experiment say how far off it is for that experiment (its
runs, or its study's), and a campaign prices, orders and sums its runs by that.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Callable

import pandas as pd

from schedlab.analysis.store import load_committed
from schedlab.backends.backend import BackendName
from schedlab.campaigns.cost import campaign_host_hours, run_host_seconds
from schedlab.campaigns.experiment import Experiment, label_key, registry, runnable
from schedlab.campaigns.locations import table_paths
from schedlab.runs import RunRequest, request_to_data, work_key


def committed_runs(experiment: Experiment) -> tuple[pd.DataFrame, int]:
    """One row per committed smoke-scale gem5 run of the experiment that records its host
    time and does the work today's definition asks for, and how many others do not (their
    ``work_key`` is none of the definition's: made under an earlier one, with other sizes or
    arguments). Runs collected before the key was recorded count."""
    frame = load_committed(table_paths(experiment, "smoke", "gem5")[""])
    if frame is None or "gem5_host_s" not in frame:
        return pd.DataFrame(), 0
    runs = frame.drop_duplicates("run_id").dropna(subset=["gem5_host_s"])
    if "work_key" not in runs:
        return runs, 0
    keys = {work_key(r) for r in experiment.requests("smoke", "gem5")}
    today = runs["work_key"].isna() | runs["work_key"].isin(keys)
    return runs[today], int((~today).sum())


def measured_run_seconds(experiment: Experiment) -> tuple[int, float] | None:
    """(runs, median gem5 host seconds per run) of the experiment's committed smoke-scale
    gem5 runs of today's definition, or None where no committed table records them.

    A run's seconds are gem5's CPU time where its table records it: the wall clock also
    counts the time gem5 waited for a busy host's CPU or was paused."""
    runs, _ = committed_runs(experiment)
    if not len(runs):
        return None
    return len(runs), float(_run_seconds(runs).median())


def _run_seconds(runs: pd.DataFrame) -> pd.Series:
    """Each run's gem5 CPU time where its table records it, else its wall clock."""
    if "gem5_cpu_s" in runs:
        return runs["gem5_cpu_s"].fillna(runs["gem5_host_s"])
    return runs["gem5_host_s"]


@dataclass(frozen=True)
class StudyCalibration:
    """How the bench/ model misjudges one study's gem5 runs: for each of its experiments
    with committed smoke runs (experiments made of the same runs count once), what those
    runs took against what the model gives them. A study's runs share machines, cores and
    programs, so its ratio is a better guess for its unmeasured experiments than the model
    alone; the studies' ratios differ by a factor of ten."""
    ratios: dict[str, float]      # experiment -> measured / modelled smoke host time

    @property
    def ratio(self) -> float:
        return float(pd.Series(list(self.ratios.values())).median())

    def describe(self) -> str:
        low, high = min(self.ratios.values()), max(self.ratios.values())
        return (f"the model times {self.ratio:.2f}, the median ratio of measured to "
                f"modelled host time over this study's committed experiments "
                f"({', '.join(self.ratios)}: {low:.2f} to {high:.2f})")


def study_calibration(study: str) -> StudyCalibration | None:
    """The :class:`StudyCalibration` of ``study``, or None where none of its experiments
    has committed smoke runs on gem5."""
    ratios, seen = {}, set()
    for name, e in registry().items():
        if e.study != study or not e.implemented:
            continue
        runs, _ = committed_runs(e)
        if not len(runs) or frozenset(runs["run_id"]) in seen:
            continue
        seen.add(frozenset(runs["run_id"]))
        ratio = own_ratio(e)
        if ratio is not None:
            ratios[name] = ratio
    return StudyCalibration(ratios) if ratios else None


def own_ratio(experiment: Experiment) -> float | None:
    """What the experiment's committed smoke runs took against the bench/ model's estimate
    of them (measured / modelled host time), or None without such runs or a model."""
    measured = measured_run_seconds(experiment)
    if measured is None:
        return None
    smoke = experiment.requests("smoke", "gem5")
    model = campaign_host_hours(smoke)
    if not model or math.isnan(model):
        return None
    return len(smoke) * measured[1] / 3600.0 / model


def own_run_ratios(experiment: Experiment) -> dict[str, float]:
    """Per label of today's smoke requests: what the experiment's committed smoke run with
    that label took against the bench/ model's estimate of it (measured / modelled host
    time). The model prices an experiment's runs alike where their costs differ: study 2's
    4-core vanilla runs on machine B took two to five times its other runs. Labels do not
    change with the code (run ids do), so a run keeps its measurement across revisions."""
    runs, _ = committed_runs(experiment)
    smoke = experiment.requests("smoke", "gem5")
    keys = sorted({k for r in smoke for k in r.label} & set(runs.columns))
    if not keys:
        return {}
    seconds = _run_seconds(runs)
    # The program a committed run measured: a label whose program changed since (a stand-in
    # replaced by a real program, which may start ten times longer) is not priced by it,
    # which would cancel the model's account of the change.
    jobs = runs["job"] if "job" in runs else pd.Series([None] * len(runs), index=runs.index)
    measured: dict[str, list[tuple[float, str | None]]] = {}
    for row, s, job in zip(runs[keys].to_dict("records"), seconds, jobs):
        measured.setdefault(label_key(row), []).append(
            (float(s), job if isinstance(job, str) else None))
    ratios = {}
    for r in smoke:
        found = [s for s, job in measured.get(label_key({k: r.label.get(k) for k in keys}), [])
                 if job is None or job == r.jobs[0].workload]
        model = run_host_seconds(r)
        if found and model > 0:         # NaN: a machine bench/ has not measured
            ratios[label_key(r.label)] = float(pd.Series(found).median()) / model
    return ratios


_UNSET = object()


def estimated_hours(experiment: Experiment, scale: str,
                    calibration: StudyCalibration | None | object = _UNSET
                    ) -> tuple[float, str]:
    """Host hours of the experiment's gem5 runs at ``scale``, one at a time, and how that
    is known: "measured" (its committed smoke runs: each run's own where it is committed,
    else the model scaled by all of them, :func:`own_ratio`), "calibrated"
    (the bench/ model scaled by what the committed smoke runs took against the model's
    smoke estimate), "study" (without committed runs of its own: the model scaled by its
    study's :class:`StudyCalibration`; pass it to save finding it again) or "model"
    (bench/ speeds alone: see schedlab/campaigns/cost.py)."""
    requests = experiment.requests(scale, "gem5")
    model = campaign_host_hours(requests)
    measured = measured_run_seconds(experiment)
    if measured is None:
        if calibration is _UNSET:
            calibration = study_calibration(experiment.study)
        if isinstance(calibration, StudyCalibration):
            return model * calibration.ratio, "study"
        return model, "model"
    if scale == "smoke":
        # As the campaign prices its runs: each by its own committed run where there is one
        # (an experiment's runs can differ tenfold), else by all of them.
        seconds = run_seconds_estimate([experiment.name], scale, "gem5")
        return sum(seconds(r) for r in requests) / 3600.0, "measured"
    ratio = own_ratio(experiment)
    return (model * ratio if ratio is not None else math.nan), "calibrated"


def run_seconds_estimate(names: list[str], scale: str, backend: str
                         ) -> Callable[[RunRequest], float]:
    """Host seconds of each run of the figures: the bench/ model times the ratio of the
    figure's committed run with its label (:func:`own_run_ratios`), else of all its
    committed runs (:func:`own_ratio`, as its --dry-run prices it), else of its study's
    (:class:`StudyCalibration`), else 1; a run several figures share takes the first's.
    The campaign starts its costliest runs first by this and says the total: the studies'
    ratios differ by a factor of ten, and runs of one figure by up to five, so the plain
    model would misorder a campaign."""
    if backend != BackendName.GEM5:
        return run_host_seconds
    ratios: dict[str, float] = {}
    calibrations: dict[str, StudyCalibration | None] = {}
    for name in names:
        experiment = runnable(name, backend)
        ratio = own_ratio(experiment)
        if ratio is None:
            if experiment.study not in calibrations:
                calibrations[experiment.study] = study_calibration(experiment.study)
            calibration = calibrations[experiment.study]
            ratio = calibration.ratio if calibration else 1.0
            per_run = {}
        else:
            per_run = own_run_ratios(experiment)
        for r in experiment.requests(scale, backend):
            ratios.setdefault(request_key(r), per_run.get(label_key(r.label), ratio))
    return lambda r: run_host_seconds(r) * ratios.get(request_key(r), 1.0)


def request_key(request: RunRequest) -> str:
    """One key per distinct request (figures that share runs share these)."""
    return json.dumps(request_to_data(request), sort_keys=True)
