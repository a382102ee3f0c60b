"""The re-make of every figure at one frozen commit (issue 53; the plan is docs/remake.md).

:func:`plan` lists the four studies' experiments in the order the re-make runs them, each
with its runs, its repetitions, its price and what those repetitions can resolve:

- **Order**: the experiments whose tables the most claims of the ledger read
  (``data/claims.toml``) first, so that a re-make stopped part-way has settled as many
  claims as it could; ties in the papers' order. A run that several experiments share
  (lee-fig9 and lee-overheads, demarchi's figures) is made, and priced, once: at the first.
- **Price**: each run as ``reproduce --dry-run`` prices it
  (:func:`schedlab.campaigns.calibration.run_seconds_estimate`), in host hours one run at a
  time; a snapshot, since committed runs re-calibrate it.
- **Repetitions**: the definitions' own (each study's ``REPS``). The rule that chose them
  (docs/remake.md; :func:`study_repetitions`): the fewest, from 2, at which two bars need
  differ by no more than :data:`RESOLVE` of the mean to be a direction at 95 %, given the
  study's most variable recorded metric between guest seeds
  (``bench/results/variability-*.json``); where that asks more than the budget allows, what
  fits. Each step's ``resolves`` is what its caption will say: its own metric's spread, as
  :func:`schedlab.analysis.variability.spread_for` picks it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from schedlab.analysis.claims import load_ledger
from schedlab.analysis.variability import Spread, resolvable_sd, spread_for, spreads
from schedlab.campaigns.calibration import request_key, run_seconds_estimate
from schedlab.campaigns.experiment import Scale, registry

STUDIES = ("kazempour", "demarchi", "lee", "brecht")
RESOLVE = 0.05          # the difference of two bars (a fraction of the mean) to resolve
MAX_REPS = 10           # the papers' largest repetition count (De Marchi's)


@dataclass(frozen=True)
class Step:
    """One experiment of the re-make."""

    experiment: str
    study: str
    claims: tuple[str, ...]     # the ledger's claims that read its tables
    runs: int                   # its runs at the plan's scale
    new_runs: int               # of those, not made by an earlier step
    hours: float                # host hours of the new runs, one at a time
    repetitions: int            # a condition's repetitions in its definition
    spread: Spread | None       # the spread its caption states (None: not measured)

    @property
    def resolves(self) -> float:
        """The smallest difference of two bars its repetitions tell from zero at 95 %, as a
        fraction of the mean (NaN without a measured spread)."""
        if self.spread is None:
            return math.nan
        return resolvable_sd(self.repetitions) * self.spread.pooled_cv


@dataclass(frozen=True)
class StudyRepetitions:
    """What a study's spread asks of its repetitions, and what its definitions run."""

    study: str
    spread: Spread | None       # its most variable recorded metric (None: none recorded)
    asked: int                  # the fewest that resolve RESOLVE (MAX_REPS if none does)
    chosen: int                 # its definitions' smoke repetitions
    hours: float                # its steps' host hours at ``chosen``

    @property
    def hours_asked(self) -> float:
        """Its host hours at ``asked`` repetitions (runs grow with the repetitions)."""
        return self.hours * self.asked / self.chosen


def study_repetitions(steps: list[Step]) -> list[StudyRepetitions]:
    """Per study: the spread that binds, the repetitions it asks and those the plan runs."""
    recorded = spreads()
    out = []
    for study in STUDIES:
        mine = [s for s in steps if s.study == study]
        own = [m.spread for m in mine if m.spread] + [
            s for s in recorded if s.experiment in {m.experiment for m in mine}]
        worst = max(own, key=lambda s: s.pooled_cv, default=None)
        asked = 2 if worst is None else next(
            (reps for reps in range(2, MAX_REPS + 1)
             if resolvable_sd(reps) * worst.pooled_cv <= RESOLVE), MAX_REPS)
        chosen = max(s.repetitions for s in mine)
        out.append(StudyRepetitions(study, worst, asked, chosen, sum(s.hours for s in mine)))
    return out


def claims_by_experiment() -> dict[str, tuple[str, ...]]:
    """Experiment -> the IDs of the claims whose rules read its tables."""
    found: dict[str, list[str]] = {}
    for claim in load_ledger():
        for rule in claim.rules:
            for name in rule.experiments:
                ids = found.setdefault(name, [])
                if claim.id not in ids:
                    ids.append(claim.id)
    return {name: tuple(ids) for name, ids in found.items()}


def plan(scale: str = Scale.SMOKE) -> list[Step]:
    """The re-make's steps, in order (see the module's docstring)."""
    defined = registry()
    experiments = [e for e in defined.values() if e.study in STUDIES and e.implemented]
    claims = claims_by_experiment()
    papers_order = {e.name: i for i, e in enumerate(experiments)}
    experiments.sort(key=lambda e: (-len(claims.get(e.name, ())), papers_order[e.name]))
    seconds = run_seconds_estimate([e.name for e in experiments], scale, "gem5")
    made: set[str] = set()
    steps = []
    for e in experiments:
        requests = e.requests(scale, "gem5")
        new = [r for r in requests if request_key(r) not in made]
        made.update(request_key(r) for r in new)
        reps = len({r.label.get("rep", 0) for r in requests})
        spread = spread_for(e.study, e.name, e.metric, lambda name: defined[name].study)
        steps.append(Step(e.name, e.study, claims.get(e.name, ()), len(requests), len(new),
                          sum(seconds(r) for r in new) / 3600.0, reps, spread))
    return steps


def _percent(x: float) -> str:
    return "-" if math.isnan(x) else f"{100 * x:.2g} %"


def markdown(steps: list[Step]) -> str:
    """The plan as the tables docs/remake.md holds: the studies' repetitions, then the
    steps in order."""
    lines = ["| study | most variable metric (experiment, seeds) | its sd / mean | "
             f"repetitions to resolve {100 * RESOLVE:.0f} % | host hours then | repetitions "
             "run | host hours |", "|---|---|---|---|---|---|---|"]
    for r in study_repetitions(steps):
        where = (f"{r.spread.metric} ({r.spread.experiment}, {r.spread.seeds})" if r.spread
                 else "not measured")
        lines.append(f"| {r.study} | {where} | "
                     f"{_percent(r.spread.pooled_cv) if r.spread else '-'} | "
                     f"{r.asked}{'+' if r.spread and r.asked == MAX_REPS else ''} | "
                     f"{r.hours_asked:.1f} | {r.chosen} | {r.hours:.1f} |")
    lines += ["", "| # | experiment | claims | runs | new runs | repetitions | its caption's "
              "spread (metric) | resolves | host hours | total |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    total = 0.0
    for i, s in enumerate(steps, 1):
        total += s.hours
        spread = f"{_percent(s.spread.pooled_cv)} ({s.spread.metric})" if s.spread else "-"
        lines.append(f"| {i} | {s.experiment} | {', '.join(s.claims) or '-'} | {s.runs} | "
                     f"{s.new_runs} | {s.repetitions} | {spread} | {_percent(s.resolves)} | "
                     f"{s.hours:.1f} | {total:.1f} |")
    return "\n".join(lines)
