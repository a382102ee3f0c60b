"""Experiment definitions: one per paper figure or table, a matrix of runs at two scales.

An :class:`Experiment` names a figure or table of one of the four studies
(``kazempour-fig4``, ``demarchi-table1``, ...) and knows how to expand into run requests
at a scale:

- ``smoke``: every condition of the figure, reduced (fewer quanta, samples, repetitions;
  shorter regions) as far as the figure still says something: from under an hour to tens
  of host hours on gem5 (``reproduce --list``). What is reduced is written on the figure
  itself (:attr:`Experiment.reductions`).
- ``paper``: the paper's full matrix and repetition counts.

Each request carries its coordinates as its label (condition, benchmark, repetition, ...),
and the label is part of the run's id. gem5 is deterministic, so a repetition must differ
in something the guest sees: every repetition ``rep`` is the guest seed ``rep`` (the
guest's random generator is reseeded from it after the restore: address-space layouts,
stack canaries; and gem5's random number generator), and each definition says what else
differs (:attr:`Experiment.repetition`); :func:`check_definition` refuses a matrix in which
two requests differ only in their label.

Definitions are small declarative Python, one module per study (``kazempour``,
``demarchi``, ``lee``, ``brecht``), collected in :data:`EXPERIMENTS`.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Callable

from schedlab.errors import UserError
from schedlab.runs import RunRequest


class Scale(StrEnum):
    """How much of a figure's matrix a campaign runs (see the module's docstring)."""
    SMOKE = "smoke"
    PAPER = "paper"


SCALES = tuple(s.value for s in Scale)


@dataclass(frozen=True)
class Analysis:
    """How a study's runs become its tables, figures and summary (``schedlab.analysis``)."""

    draw: Callable          # (experiment, tables or the main table, context, png) -> [pngs]
    collect: Callable | None = None    # run directories -> {part: table}; None: one table
    summary: Callable | None = None    # (experiment, tables) -> changes with intervals
    parts: tuple[str, ...] = ("",)     # the tables' parts; "" is the main one

    def with_parts(self, *parts: str) -> "Analysis":
        return dataclasses.replace(self, parts=("", *parts))


@dataclass(frozen=True)
class Experiment:
    """One figure or table of a study, as a matrix of runs.

    ``matrix(scale, backend)`` returns the run requests; its :class:`Analysis` turns their
    results into tables and the figure (:mod:`schedlab.campaigns.reproduce`). An
    experiment that cannot run yet says why in ``missing`` (for instance the scheduler it
    needs is not written yet); it is still listed and costed. An experiment that runs, but
    not yet on every backend, says why per backend in ``unavailable``: its runs on that
    backend are listed and costed, and ``reproduce`` refuses them with that reason.
    """

    name: str
    study: str
    kind: str                                   # "figure" or "table"
    title: str                                  # what it shows, in the paper's terms
    matrix: Callable[[str, str], list[RunRequest]]
    metric: str                                 # the main column the figure plots
    repetition: str                             # what differs between repetitions
    analysis: Analysis                          # tables, figure and summary of its runs
    reductions: dict[str, str] = field(default_factory=dict)  # scale -> what is reduced
    missing: str = ""                           # why it cannot run yet ("" = implemented)
    notes: str = ""                             # where the model differs, shown on the figure
    backends: tuple[str, ...] = ("gem5", "qemu")
    unavailable: dict[str, str] = field(default_factory=dict)  # backend -> why not yet

    @property
    def implemented(self) -> bool:
        return not self.missing

    def requests(self, scale: str, backend: str) -> list[RunRequest]:
        if scale not in SCALES:
            raise UserError(f"unknown scale {scale!r}; choose one of {', '.join(SCALES)}")
        if backend not in self.backends:
            raise UserError(f"{self.name} runs on {' or '.join(self.backends)}, not {backend}")
        # Every repetition is also a guest seed (RunRequest.seed: the guest's random generator
        # and gem5's), besides what the definition varies itself.
        requests = [dataclasses.replace(r, seed=int(r.label.get("rep", 0)))
                    for r in self.matrix(scale, backend)]
        check_definition(self.name, requests)
        return requests


def _identity(request: RunRequest) -> str:
    """What the guest and the model see of a request: everything but its label."""
    return json.dumps(dataclasses.asdict(dataclasses.replace(request, label={})),
                      sort_keys=True, default=str)


def sampling_refusal(request: RunRequest) -> str | None:
    """Why a campaign will not sample this request, or None. The validation
    (bench/gem5.md, "Sampling validation") found sampling to hold only for a program's own
    instructions on detailed cores that are slower than the Atomic ones between windows:
    on Timing cores it saved no host time, and between windows the guest's clock advances
    at an instruction a cycle, so a region bounded by guest time, or shared with programs
    that run on timers and quanta, holds other work than the full run's. ``run --sampling``
    still runs such requests (that is how the validation measured them)."""
    if request.sampling is None:
        return None
    if request.cpu == "timing":
        return ("sampling on Timing cores saves no host time (0.6x to 1.3x in bench/gem5.md: "
                "the Atomic cores between windows are about as slow) and adds sampling "
                "error; run these regions in full")
    bounded = sorted({j.workload for j in request.jobs if j.duration is not None})
    if bounded:
        return (f"sampling a region bounded by guest time ({', '.join(bounded)}): between "
                f"windows the guest's clock runs at an instruction a cycle, so the region "
                f"would hold other work than a full run's (bench/gem5.md); let the "
                f"program's end bound it, or do not sample")
    if request.background:
        return ("sampling beside background programs: their timers and the scheduler's "
                "quanta run on the guest's clock, which sampling distorts, so the programs "
                "interleave otherwise than in a full run (bench/gem5.md); do not sample")
    return None


def label_key(label: dict) -> tuple:
    """A request's label, or the label columns of a committed table's row, as one key that
    compares them: as text (a table read back from CSV gives 4 for "4"), and without empty
    cells (a table of requests of which only some set a coordinate, a size, holds an empty
    cell where a request has none)."""
    return tuple(sorted((k, str(v)) for k, v in label.items()
                        if v is not None and not (isinstance(v, float) and math.isnan(v))))


def check_definition(name: str, requests: list[RunRequest]) -> None:
    """A matrix is sound: no two requests with the same label, no two that differ only
    in their label (on a deterministic simulator they would be one run counted twice), and
    no sampled request where the validation says sampling does not hold."""
    labels: dict[str, RunRequest] = {}
    seen: dict[str, dict] = {}
    for r in requests:
        refusal = sampling_refusal(r)
        if refusal:
            raise UserError(f"{name}: {refusal}")
        key = json.dumps(r.label, sort_keys=True)
        if key in labels:
            raise UserError(f"{name}: two runs share the label {key}; add the coordinate "
                            f"that tells them apart")
        labels[key] = r
        ident = _identity(r)
        if ident in seen:
            raise UserError(f"{name}: runs {seen[ident]} and {r.label} differ only in their "
                            f"label; make repetitions differ in something real (a seed)")
        seen[ident] = r.label


def registry() -> dict[str, Experiment]:
    """Every experiment of the four studies, by name, in the papers' order, and the demo's."""
    from schedlab.campaigns import brecht, demarchi, demo, kazempour, lee
    out: dict[str, Experiment] = {}
    for module in (kazempour, demarchi, lee, brecht, demo):
        for e in module.EXPERIMENTS:
            if e.name in out:
                raise UserError(f"experiment {e.name} is defined twice")
            out[e.name] = e
    return out


def get(name: str) -> Experiment:
    experiments = registry()
    if name not in experiments:
        raise UserError(f"unknown figure {name!r}; 'python3 run.py reproduce --list' lists them")
    return experiments[name]


def runnable(name: str, backend: str) -> Experiment:
    """The experiment, if it is implemented and runs on ``backend``; else a UserError."""
    experiment = get(name)
    if not experiment.implemented:
        raise UserError(f"{name} is not implemented yet: {experiment.missing}")
    if backend in experiment.unavailable:
        raise UserError(f"{name} does not run on {backend} yet: "
                        f"{experiment.unavailable[backend]}")
    return experiment
