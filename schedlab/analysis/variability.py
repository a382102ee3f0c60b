"""How far a figure's bars move between repetitions that differ only in the guest's seed,
and the smallest difference of two bars that its repetitions can tell from that.

gem5 is deterministic, so a figure's spread is what its repetitions sample (Alameldeen and
Wood, HPCA 2003: space variability). ``bench/bench_variability.py`` measures it per study
over guest seeds and appends its records to ``bench/results/variability-*.json``; those
records are the one source of what a caption says about it (bench/reproducibility.md reads
them too). A difference between two bars of R repetitions each is a direction at 95 % only
beyond t(2R - 2, 0.975) x sqrt(2 / R) pooled standard deviations (two-sample t test).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from scipy import stats

from schedlab import paths
from schedlab.errors import UserError

RECORDS = paths.BENCH_RESULTS
PATTERN = "variability-*.json"


def resolvable_sd(repetitions: int) -> float:
    """The smallest difference of two means of ``repetitions`` runs each, in pooled standard
    deviations, that a two-sided two-sample t test at 95 % tells from zero (inf below 2)."""
    if repetitions < 2:
        return math.inf
    return float(stats.t.ppf(0.975, 2 * repetitions - 2)) * math.sqrt(2 / repetitions)


@dataclass(frozen=True)
class Spread:
    """One record's spread of a metric over guest seeds (bench_variability's conditions)."""

    experiment: str
    metric: str
    seeds: int
    runs: int
    commit: str
    date: str
    pooled_cv: float           # pooled standard deviation over the conditions' mean

    @classmethod
    def of(cls, record: dict) -> "Spread":
        conditions = record["conditions"]
        pooled_sd = math.sqrt(sum(c["sd"] ** 2 for c in conditions) / len(conditions))
        mean = sum(c["mean"] for c in conditions) / len(conditions)
        # The seeds that finished (a record collected from a stopped campaign has fewer
        # than it asked for).
        return cls(record["experiment"], record["metric"], min(int(c["n"]) for c in conditions),
                   sum(int(c["n"]) for c in conditions), record["commit"], record["date"],
                   pooled_sd / abs(mean) if mean else math.inf)


def spreads(where: Path = RECORDS) -> list[Spread]:
    """Every recorded spread, the latest record of an experiment and metric last."""
    found = []
    for path in sorted(where.glob(PATTERN)):
        found += [Spread.of(r) for r in json.loads(path.read_text())]
    return sorted(found, key=lambda s: s.date)


def spread_for(study: str, experiment: str, metric: str, study_of,
               where: Path = RECORDS) -> Spread | None:
    """The spread that speaks for a figure: its own experiment's on its metric, else its
    study's on that metric (the latest of each), else its own or its study's on another
    metric: then the most variable of those, so that a caption that borrows another
    metric's spread does not claim a resolution its own metric may not have (study 2's
    mean production time moved by 0.2 % between seeds, its rho by 13 %).
    ``study_of`` names an experiment's study (records of unknown experiments are skipped)."""
    def known_study(s: Spread) -> str | None:
        try:
            return study_of(s.experiment)
        except UserError:   # a record of an experiment since renamed or removed
            return None
    mine = [s for s in spreads(where) if known_study(s) == study]
    for choose in (lambda s: s.experiment == experiment and s.metric == metric,
                   lambda s: s.metric == metric):
        chosen = [s for s in mine if choose(s)]
        if chosen:
            return chosen[-1]
    for choose in (lambda s: s.experiment == experiment, lambda s: True):
        chosen = [s for s in mine if choose(s)]
        if chosen:
            return max(chosen, key=lambda s: s.pooled_cv)
    return None


def caption_note(spread: Spread | None, metric: str, repetitions: int) -> str:
    """What a gem5 figure's caption says of its variability and what it can resolve."""
    if spread is None:
        return ("Variability between guest seeds not measured for this study yet "
                "(bench/reproducibility.md): the whiskers show the repetitions' spread only.")
    measured = ("" if spread.metric == metric
                else f" (measured on {spread.metric}, not this figure's {metric})")
    text = (f"Variability: over {spread.seeds} guest seeds a condition, {spread.experiment}'s "
            f"{spread.metric} moved by {100 * spread.pooled_cv:.2g} % (pooled sd over the "
            f"mean; {spread.runs} gem5 runs at {spread.commit}, "
            f"bench/reproducibility.md){measured}.")
    k = resolvable_sd(repetitions)
    if math.isinf(k):
        return text + (f" With {repetitions} repetition a bar, no difference between bars "
                       f"is a direction.")
    return text + (f" With {repetitions} repetitions a bar, two bars must differ by more than "
                   f"{k:.1f} sd (about {100 * k * spread.pooled_cv:.2g} % of the mean) to be "
                   f"a direction at 95 %.")
