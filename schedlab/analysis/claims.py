"""The claims ledger: the four papers' 23 published results (data/claims.toml) held against
the committed gem5 tables by one rule family.

A rule compares two conditions of one table: per run a value (a column, a sum of columns, or
the mean of a run's rows), then per *member* (a benchmark, an application, a machine; or the
whole table) the change of the ``other`` condition's mean over the ``base`` condition's, in %,
with the 95 % interval of ``metrics.change_with_ci`` over the runs (Welch's t; the interval
the figures print), and n, the runs per condition. A member holds the paper's direction when
its interval lies on the paper's side of zero: an effect inside the interval is no direction.
A "no effect" claim holds where the whole interval lies within its stated tolerance. A
"level" (a quantity the paper reports, L2's cost of a micro-schedule) holds per member where
our mean over the runs lies within the stated factor of the paper's number.

Verdicts (one family for all 23):
- reproduced: at least ``need`` members hold, and the magnitude is within the stated factor
  of the paper's number (where the ledger states one);
- partly: enough members hold but the magnitude is off, or only some members hold; a claim
  with several parts (rules) whose parts disagree, or whose other parts cannot be tested;
- not reproduced: no member holds (the interval includes zero, or excludes it the other way);
  for a "no effect" claim, an interval wholly beyond the tolerance;
- not testable at this scale: no committed table has the condition, or fewer than 2 runs per
  condition (no interval, so no direction), or a "no effect" interval too wide to tell.

The papers are a yardstick, never a target (data/claims.toml's header): nothing here feeds
back into a model, workload or definition.
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from schedlab import paths
from schedlab.analysis.metrics import change_with_ci
from schedlab.analysis.store import DATA, committed_path, load_committed
from schedlab.errors import UserError

LEDGER = paths.REPO / "data" / "claims.toml"
SCALE, BACKEND = "smoke", "gem5"       # the committed tables the ledger reads
STUDIES = ("kazempour", "demarchi", "lee", "brecht")
# "level": not a change between two conditions but a quantity the paper reports (L2's cost of
# a micro-schedule): ours per member within ``factor`` of the paper's ``levels``.
DIRECTIONS = ("increase", "decrease", "none", "level")
VERDICTS = ("reproduced", "partly", "not reproduced", "not testable at this scale")
REPRODUCED, PARTLY, NOT_REPRODUCED, UNTESTABLE = VERDICTS
NOT_MEASURED = "not yet measured"


# ---------------------------------------------------------------------------------------------
# The ledger as data

@dataclass(frozen=True)
class Rule:
    """How our number is computed: a table, the value per run, two conditions compared per
    member, and what the comparison must show."""

    what: str                          # which part of the claim this rule tests (one line)
    direction: str = "none"            # the paper's: increase, decrease, none (no effect)
    untestable: str = ""               # why no committed table can test it (then nothing else)
    experiments: tuple[str, ...] = ()  # each one's table; several are stacked (column
    part: str = ""                     # "experiment" names the source)
    metric: tuple[str, ...] = ()       # a column, or columns summed per row
    square: bool = False               # the metric squared (a variance from an sd column)
    derived: str = ""                  # a per-run value computed here (DERIVED) instead
    select: dict = field(default_factory=dict)     # column -> value or list of values
    normalise: dict = field(default_factory=dict)  # divide by this condition's mean per member
    condition: str = ""                # the column whose two values are compared
    base: object = None
    other: object = None               # a value, or a list: then each value is a member
    members: tuple[str, ...] = ()      # columns whose values are the claim's members
    need: int | str = "all"            # members that must hold: a number or "all"
    beyond: float | None = None        # a member holds only if its change (%) is beyond this
    tolerance: float | None = None     # "none": the interval must lie within +- this (%)
    paper: float | tuple[float, float] | None = None   # the paper's number to compare with
    scale: str = "change"              # the paper's number is a "change" (%) or a "ratio"
    magnitude_of: str = "mean"         # which members' value: mean, max (the most in the
    factor: float = 2.0                # direction) or a member's name
    leader: str | tuple[str, ...] = ""  # this member (these members) must change most
    levels: dict = field(default_factory=dict)   # "level": the paper's number per value of
    unit: str = ""                               # the first member column, and its unit


@dataclass(frozen=True)
class Claim:
    id: str
    study: str
    paper: str
    figure: str
    condition: str
    metric: str
    direction: str
    numbers: str                       # the paper's numbers, as it reports them
    mechanism: str
    rules: tuple[Rule, ...]


CLAIM_KEYS = {"id": str, "study": str, "paper": str, "figure": str, "condition": str,
              "metric": str, "direction": str, "numbers": str, "mechanism": str, "rule": list}
RULE_KEYS = {"what": str, "direction": str, "untestable": str, "experiments": list,
             "part": str, "metric": (str, list), "square": bool, "derived": str,
             "select": dict, "normalise": dict, "condition": str, "base": object,
             "other": object, "members": list, "need": (int, str), "beyond": (int, float),
             "tolerance": (int, float), "paper": (int, float, list), "scale": str,
             "magnitude_of": str, "factor": (int, float), "leader": (str, list), "levels": dict,
             "unit": str}
LEVEL_KEYS = {"what": str, "direction": str, "experiments": list, "part": str,
              "metric": (str, list), "derived": str, "select": dict, "members": list,
              "levels": dict, "unit": str, "factor": (int, float)}


def load_ledger(path: Path = LEDGER) -> list[Claim]:
    """The ledger, checked: an unknown key, a missing field or a wrong type is a one-line
    UserError naming the claim and the key."""
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise UserError(f"claims ledger {path}: {e}") from None
    unknown = set(data) - {"claim"}
    if unknown:
        raise UserError(f"claims ledger {path}: unknown top-level key(s) {sorted(unknown)}; "
                        f"the ledger holds only [[claim]] tables")
    claims, seen = [], set()
    for i, raw in enumerate(data.get("claim", [])):
        where = f"claims ledger {path.name}, claim {raw.get('id', f'#{i + 1}')}"
        _check_keys(raw, CLAIM_KEYS, where, required=set(CLAIM_KEYS))
        if raw["id"] in seen:
            raise UserError(f"{where}: the id is used twice")
        seen.add(raw["id"])
        if raw["study"] not in STUDIES:
            raise UserError(f"{where}: study {raw['study']!r} is not one of {', '.join(STUDIES)}")
        if raw["direction"] not in DIRECTIONS:
            raise UserError(f"{where}: direction {raw['direction']!r} is not one of "
                            f"{', '.join(DIRECTIONS)}")
        if not raw["rule"]:
            raise UserError(f"{where}: no [[claim.rule]]; give one (or one with 'untestable')")
        rules = tuple(_rule(r, f"{where}, rule {j + 1}") for j, r in enumerate(raw["rule"]))
        claims.append(Claim(**{k: v for k, v in raw.items() if k != "rule"}, rules=rules))
    if not claims:
        raise UserError(f"claims ledger {path}: no [[claim]] in it")
    return claims


def _check_keys(raw: dict, types: dict, where: str, required: set[str]) -> None:
    unknown = sorted(set(raw) - set(types))
    if unknown:
        raise UserError(f"{where}: unknown key(s) {unknown}; known: {', '.join(types)}")
    missing = sorted(required - set(raw))
    if missing:
        raise UserError(f"{where}: missing field(s) {missing}")
    for key, value in raw.items():
        if types[key] is not object and not isinstance(value, types[key]):
            raise UserError(f"{where}: {key} = {value!r} has the wrong type")


def _rule(raw: dict, where: str) -> Rule:
    if "untestable" in raw:
        _check_keys(raw, {"what": str, "untestable": str, "direction": str}, where,
                    required={"what", "untestable"})
        return Rule(**raw)
    if raw.get("direction") == "level":
        _check_keys(raw, LEVEL_KEYS, where, required={"what", "direction", "experiments",
                                                      "members", "levels"})
    else:
        _check_keys(raw, RULE_KEYS, where, required={"what", "direction", "experiments",
                                                      "condition", "base", "other"})
    if raw["direction"] not in DIRECTIONS:
        raise UserError(f"{where}: direction {raw['direction']!r} is not one of "
                        f"{', '.join(DIRECTIONS)}")
    if ("metric" in raw) == ("derived" in raw):
        raise UserError(f"{where}: give exactly one of metric and derived")
    if "derived" in raw and raw["derived"] not in DERIVED:
        raise UserError(f"{where}: derived {raw['derived']!r} is not one of "
                        f"{', '.join(DERIVED)}")
    if raw["direction"] == "none" and "tolerance" not in raw:
        raise UserError(f"{where}: a 'none' (no effect) rule needs a tolerance (%)")
    if raw.get("scale", "change") not in ("change", "ratio"):
        raise UserError(f"{where}: scale must be 'change' or 'ratio'")
    if isinstance(raw.get("need"), str) and raw["need"] != "all":
        raise UserError(f"{where}: need must be a number or 'all'")
    out = dict(raw)
    out["experiments"] = tuple(raw["experiments"])
    out["members"] = tuple(raw.get("members", ()))
    if "metric" in raw:
        out["metric"] = (raw["metric"],) if isinstance(raw["metric"], str) else tuple(raw["metric"])
    if isinstance(raw.get("leader"), list):
        out["leader"] = tuple(raw["leader"])
    if isinstance(raw.get("paper"), list):
        if len(raw["paper"]) != 2:
            raise UserError(f"{where}: paper = [low, high] takes two numbers")
        out["paper"] = tuple(float(x) for x in raw["paper"])
    return Rule(**out)


# ---------------------------------------------------------------------------------------------
# Per-run values computed here (none of the study modules gives them per run)

def _cpus_per_task(samples: pd.DataFrame) -> pd.DataFrame:
    """De Marchi's Fig. 3 as one number per run: how many CPUs a mixer task ran on over the
    run's samples (the mean over the seven tasks): 1 when pinned, the CPU count when it
    wanders. From the per-sample CPU map (valid in every committed run: its README)."""
    cpus = [c for c in samples if c.startswith("cpu_")]
    keys = [c for c in samples if c not in cpus + ["sample", "production_ns"]]
    per_run = samples.groupby(keys, dropna=False)[cpus].nunique()
    return per_run.mean(axis=1).rename("value").reset_index()


# The mixer's task graph (workloads/mixer/mixer.c): each consumer and the producers whose
# packets it takes.
MIXER_EDGES = (("mixer0", "wave0"), ("mixer0", "wave1"), ("mixer1", "wave2"),
               ("mixer1", "wave3"), ("mixer2", "mixer0"), ("mixer2", "mixer1"))


def _consumer_with_producer(samples: pd.DataFrame) -> pd.DataFrame:
    """De Marchi's "a consumer runs where its producer ran" as one number per run: the share
    of (sample, edge of the task graph) in which the consumer ran the sample on the CPU its
    producer ran it on (1: every consumer beside each of its producers, which a consumer of
    two producers reaches only when they share its CPU)."""
    keys = [c for c in samples if not c.startswith("cpu_") and c not in ("sample",
                                                                          "production_ns")]
    same = sum((samples[f"cpu_{consumer}"] == samples[f"cpu_{producer}"]).astype(float)
               for consumer, producer in MIXER_EDGES) / len(MIXER_EDGES)
    per_run = samples[keys].assign(value=same).groupby(keys, dropna=False)["value"].mean()
    return per_run.reset_index()


def _micro_schedule(column: str):
    """Lee's cost of a micro-schedule per run (lee.micro_schedule_cost over the overheads
    table): ``cycles_per_micro`` or ``overhead_at_700`` (in %: the paper's rate)."""
    def per_run(frame: pd.DataFrame) -> pd.DataFrame:
        from schedlab.analysis.lee import micro_schedule_cost
        cost = micro_schedule_cost(frame)
        value = cost[column] * (100.0 if column.startswith("overhead") else 1.0)
        run = (cost["machine"].astype(str) + " " + cost["region_size"].astype(str) + " rep "
               + cost["rep"].astype(str))
        return cost.assign(value=value, run_id=run, experiment=frame["experiment"].iloc[0])
    return per_run


DERIVED = {"cpus_per_task": _cpus_per_task,
           "consumer_with_producer": _consumer_with_producer,
           "cycles_per_micro": _micro_schedule("cycles_per_micro"),
           "overhead_at_700": _micro_schedule("overhead_at_700")}


# ---------------------------------------------------------------------------------------------
# Computing one rule

@dataclass(frozen=True)
class Member:
    name: str
    n: int                             # runs per condition (the fewer of the two)
    change: float                      # % of other's mean over base's
    low: float                         # 95 % interval of the change (Welch's t)
    high: float
    ratio: float                       # other's mean over base's
    holds: bool                        # shows the paper's direction (or no effect)
    against: bool                      # shows the opposite (or an effect beyond tolerance)


@dataclass(frozen=True)
class Outcome:
    rule: Rule
    verdict: str
    why: str                           # one line: what decided the verdict
    members: tuple[Member, ...] = ()
    ours: str = ""                     # our number, with n and interval
    tables: tuple[Path, ...] = ()


class PartNotMade(UserError):
    """A rule's table that no committed run has made yet (a part or an experiment defined
    after the committed runs)."""


def table_of(study: str, experiment: str, part: str = "") -> Path:
    return committed_path(study, experiment, SCALE, BACKEND, part)


def rule_frame(rule: Rule, study: str, data: Path = DATA) -> tuple[pd.DataFrame, list[Path]]:
    """Per run: the condition, the members' columns and ``value``."""
    frames, used = [], []
    for experiment in rule.experiments:
        path = data / table_of(study, experiment, rule.part).relative_to(DATA)
        frame = load_committed(path)
        if frame is None or frame.empty:
            # A table the committed runs predate: a part kept since (lee-fig24's programs),
            # or an experiment defined since (brecht-mm). The rule waits for the runs that
            # make it; tests/test_claims.py checks that every name is a defined experiment.
            if rule.part and load_committed(data / table_of(study, experiment).relative_to(
                    DATA)) is not None:
                raise PartNotMade(f"the committed {experiment} runs predate its "
                                  f"{rule.part!r} table; the re-make makes it")
            raise PartNotMade(f"no committed {experiment} table yet; the re-make makes it")
        frames.append(frame.assign(experiment=experiment))
        used.append(path)
    frame = pd.concat(frames, ignore_index=True)
    # A selection on the normalising condition's column comes after normalising (K6 keeps
    # the low-affinity runs, each over its high-affinity mean).
    later = {c: w for c, w in rule.select.items() if c in rule.normalise}
    frame = _selected(frame, {c: w for c, w in rule.select.items() if c not in later})
    if rule.derived:
        frame = DERIVED[rule.derived](frame)
    else:
        missing = [c for c in rule.metric if c not in frame]
        if missing:
            raise UserError(f"{', '.join(map(str, used))} has no column {missing[0]!r}")
        value = frame[list(rule.metric)].sum(axis=1, min_count=len(rule.metric))
        frame = frame.assign(value=value ** 2 if rule.square else value)
    keys = ["experiment", *([rule.condition] if rule.condition else []), *rule.members] + (
        ["run_id"] if "run_id" in frame else [])
    keys += [c for c in rule.normalise if c not in keys]
    # A table with several rows per run (jobs, programs, responses): the run's mean, the
    # sample the figures take too (brecht.run_means, lee's per-program bars).
    frame = frame.groupby(list(dict.fromkeys(keys)), dropna=False)["value"].mean().reset_index()
    if rule.normalise:
        # Each run over its member's mean in the reference condition (e.g. K6: the low-
        # affinity IPC as a share of the high-affinity IPC of the same machine).
        group = ["experiment", *rule.members]
        ref = frame.copy()
        for column, wanted in rule.normalise.items():
            ref = ref[ref[column] == wanted]
        ref = ref.groupby(group)["value"].mean().rename("reference")
        frame = frame.join(ref, on=group)
        frame = frame.assign(value=frame["value"] / frame["reference"])
    return _selected(frame, later), used


def _selected(frame: pd.DataFrame, select: dict) -> pd.DataFrame:
    for column, wanted in select.items():
        frame = frame[frame[column].isin(wanted if isinstance(wanted, list) else [wanted])]
    return frame


def _same(a, b) -> bool:
    return str(a) == str(b)


def compute(rule: Rule, study: str, data: Path = DATA) -> Outcome:
    """One rule's members, verdict and our number."""
    if rule.untestable:
        return Outcome(rule, UNTESTABLE, rule.untestable)
    if rule.direction == "level":
        return _level(rule, study, data)
    try:
        frame, used = rule_frame(rule, study, data)
    except PartNotMade as e:
        return Outcome(rule, UNTESTABLE, str(e))
    if frame.empty:
        chosen = ", ".join(f"{c} = {w!r}" for c, w in rule.select.items())
        return Outcome(rule, UNTESTABLE, f"no runs with {chosen} in "
                       f"{', '.join(p.name for p in used)}", tables=tuple(used))
    others = rule.other if isinstance(rule.other, list) else [rule.other]
    members = []
    groups = frame.groupby(list(rule.members), sort=True) if rule.members else [((), frame)]
    for key, sub in groups:
        key = key if isinstance(key, tuple) else (key,)
        for other in others:
            base = sub[sub[rule.condition].map(lambda v: _same(v, rule.base))]["value"].dropna()
            them = sub[sub[rule.condition].map(lambda v, o=other: _same(v, o))]["value"].dropna()
            if len(base) == 0 or len(them) == 0:
                continue
            name = " ".join(map(str, key + ((other,) if len(others) > 1 else ()))) or "all"
            members.append(_member(rule, name, base.to_numpy(), them.to_numpy()))
    if not members:
        return Outcome(rule, UNTESTABLE, f"no runs of {rule.condition} = {rule.base!r} and "
                       f"{rule.other!r} in {', '.join(p.name for p in used)}", tables=tuple(used))
    verdict, why = _verdict(rule, members)
    return Outcome(rule, verdict, why, tuple(members), _ours(rule, members), tuple(used))


def _level(rule: Rule, study: str, data: Path) -> Outcome:
    """A quantity the paper reports: per member our mean over the runs (its 95 % t interval
    beside it), within ``factor`` of the paper's number for the member's first column."""
    frame, used = rule_frame(rule, study, data)
    rows, held = [], 0
    for key, sub in frame.groupby(list(rule.members), sort=True):
        key = key if isinstance(key, tuple) else (key,)
        paper = rule.levels.get(str(key[0]))
        values = sub["value"].dropna().to_numpy()
        if paper is None or len(values) < 2:
            continue
        mean = float(values.mean())
        half = float(stats.t.ppf(0.975, len(values) - 1) * values.std(ddof=1)
                     / math.sqrt(len(values)))
        ratio = mean / paper
        ok = 1 / rule.factor <= ratio <= rule.factor
        held += ok
        rows.append(f"{' '.join(map(str, key))}: {mean:.3g} ± {half:.2g} {rule.unit} (n="
                    f"{len(values)}) against {paper:g}, {ratio:.2g}x")
    if not rows:
        return Outcome(rule, UNTESTABLE, "no member with the paper's number and 2 runs",
                       tables=tuple(used))
    count = f"{held} of {len(rows)} within {rule.factor:g}x of the paper's number"
    verdict = (REPRODUCED if held == len(rows) else PARTLY if held else NOT_REPRODUCED)
    return Outcome(rule, verdict, count, ours="; ".join(rows), tables=tuple(used))


def _member(rule: Rule, name: str, base: np.ndarray, other: np.ndarray) -> Member:
    n = min(len(base), len(other))
    change, low, high = change_with_ci(base, other)
    ratio = float(other.mean() / base.mean())
    if n < 2:                          # one run has no interval: neither way
        return Member(name, n, change, math.nan, math.nan, ratio, False, False)
    if rule.direction == "none":
        tol = rule.tolerance
        holds = -tol <= low and high <= tol
        against = low > tol or high < -tol
    else:
        sign = 1 if rule.direction == "increase" else -1
        holds = (low > 0) if sign > 0 else (high < 0)
        if holds and rule.beyond is not None:
            holds = sign * change > sign * rule.beyond
        against = (high < 0) if sign > 0 else (low > 0)
    return Member(name, n, change, low, high, ratio, holds, against)


def _verdict(rule: Rule, members: list[Member]) -> tuple[str, str]:
    if all(m.n < 2 for m in members):
        return UNTESTABLE, "fewer than 2 runs per condition: no interval, so no direction"
    need = len(members) if rule.need == "all" else min(int(rule.need), len(members))
    held = [m for m in members if m.holds]
    against = [m for m in members if m.against]
    count = f"{len(held)} of {len(members)} hold (need {need})"
    if rule.direction == "none":
        if against:
            return NOT_REPRODUCED, (f"an effect beyond ±{rule.tolerance:g} % in "
                                    f"{', '.join(m.name for m in against)}")
        if len(held) >= need:
            return REPRODUCED, f"{count}: every interval within ±{rule.tolerance:g} %"
        if held:
            return PARTLY, f"{count}; the others' intervals reach beyond ±{rule.tolerance:g} %"
        return UNTESTABLE, (f"no interval lies wholly within ±{rule.tolerance:g} % nor "
                            f"wholly beyond it: undecided at this scale")
    if not held:
        opposite = f"; {len(against)} the other way" if against else ""
        return NOT_REPRODUCED, f"no member shows the paper's {rule.direction}{opposite}"
    if len(held) < need:
        return PARTLY, count
    if rule.leader:
        leaders = (rule.leader,) if isinstance(rule.leader, str) else rule.leader
        sign = 1 if rule.direction == "increase" else -1
        top = sorted(members, key=lambda m: -sign * m.change)[:len(leaders)]
        if {m.name for m in top} != set(leaders):
            return PARTLY, (f"{count}, but {', '.join(m.name for m in top)}, not "
                            f"{', '.join(leaders)}, change most")
    if rule.paper is None:
        return REPRODUCED, count
    ours = _magnitude(rule, members)
    lo, hi = rule.paper if isinstance(rule.paper, tuple) else (rule.paper, rule.paper)
    if rule.scale == "ratio" or rule.direction == "decrease":
        lo, hi = min(lo, hi), max(lo, hi)
    within = _within(ours, lo, hi, rule.factor)
    unit = "x" if rule.scale == "ratio" else " %"
    where = f"ours {ours:+.3g}{unit} vs the paper's {_paper(rule)}"
    if within:
        return REPRODUCED, f"{count}; {where}: within {rule.factor:g}x"
    return PARTLY, f"{count}; {where}: not within {rule.factor:g}x"


def _magnitude(rule: Rule, members: list[Member]) -> float:
    """Our number to hold against the paper's: a change (%) or a ratio."""
    pick = (lambda m: m.ratio) if rule.scale == "ratio" else (lambda m: m.change)
    if rule.magnitude_of == "mean":
        return float(np.mean([pick(m) for m in members]))
    if rule.magnitude_of == "max":
        sign = 1 if rule.direction == "increase" else -1
        return pick(max(members, key=lambda m: sign * pick(m)))
    named = [m for m in members if m.name == rule.magnitude_of]
    if not named:
        raise UserError(f"magnitude_of {rule.magnitude_of!r} names no member of the rule "
                        f"'{rule.what}' (members: {', '.join(m.name for m in members)})")
    return pick(named[0])


def _within(ours: float, lo: float, hi: float, factor: float) -> bool:
    """Whether ``ours`` lies within ``factor`` of the paper's [lo, hi], on its side of zero
    (a change of the other sign is never within a factor)."""
    if lo < 0 or hi < 0:
        ours, lo, hi = -ours, -hi, -lo
    return ours > 0 and lo / factor <= ours <= hi * factor


def _paper(rule: Rule) -> str:
    unit = "x" if rule.scale == "ratio" else " %"
    if isinstance(rule.paper, tuple):
        return f"{rule.paper[0]:+g}..{rule.paper[1]:+g}{unit}"
    return f"{rule.paper:+g}{unit}"


def _ours(rule: Rule, members: list[Member]) -> str:
    def one(m: Member) -> str:
        if m.n < 2:
            return f"{m.change:+.3g} % (n={m.n}, no interval)"
        return f"{m.change:+.3g} % [{m.low:+.3g}, {m.high:+.3g}] (n={m.n})"
    if len(members) == 1:
        return one(members[0])
    mean = float(np.mean([m.change for m in members]))
    lows, highs = [m.low for m in members], [m.high for m in members]
    ns = sorted({m.n for m in members})
    return (f"{len(members)} members, mean {mean:+.3g} %, intervals from "
            f"{np.nanmin(lows):+.3g} to {np.nanmax(highs):+.3g} (n={'/'.join(map(str, ns))}); "
            f"{sum(m.holds for m in members)} hold")


# ---------------------------------------------------------------------------------------------
# A claim's row

@dataclass(frozen=True)
class Row:
    claim: Claim
    verdict: str
    outcomes: tuple[Outcome, ...]
    stale: tuple[str, ...]             # the committed tables used that are stale

    @property
    def ours(self) -> str:
        parts = [f"{o.rule.what}: {o.ours or '—'} → {o.verdict} ({o.why})"
                 for o in self.outcomes]
        return "; ".join(parts)


def combine(verdicts: list[str]) -> str:
    """A claim's verdict from its parts': all alike gives that verdict; untestable parts
    beside testable ones cap it at partly, as do parts that disagree."""
    if len(set(verdicts)) == 1:
        return verdicts[0]
    testable = [v for v in verdicts if v != UNTESTABLE]
    if set(testable) == {NOT_REPRODUCED}:
        return NOT_REPRODUCED
    return PARTLY


_STALE = re.compile(r"^- stale: `([^`]+)`", re.M)


def stale_tables(study: str, data: Path = DATA) -> set[str]:
    """The study's committed tables that its README's "Currency" section lists as stale
    (tests/test_currency.py keeps that list true; computing currency here would hash the
    whole tree's simulation inputs for every row)."""
    readme = data / study / "README.md"
    if not readme.is_file():
        return set()
    text = readme.read_text()
    section = text[text.find("## Currency"):] if "## Currency" in text else ""
    return set(_STALE.findall(section))


def evaluate(claim: Claim, data: Path = DATA) -> Row:
    outcomes = tuple(compute(r, claim.study, data) for r in claim.rules)
    stale = stale_tables(claim.study, data)
    # The README lists an experiment's main table; its parts (--jobs, ...) come with it.
    used = {p.name.split(f"--{BACKEND}")[0] + f"--{BACKEND}.csv"
            for o in outcomes for p in o.tables}
    return Row(claim, combine([o.verdict for o in outcomes]), outcomes,
               tuple(sorted(used & stale)))


def select(claims: list[Claim], wanted: tuple[str, ...]) -> list[Claim]:
    """The claims of the named studies and IDs (all when none is named)."""
    if not wanted:
        return claims
    ids = {c.id.lower(): c for c in claims}
    out = []
    for w in wanted:
        if w.lower() in STUDIES:
            out += [c for c in claims if c.study == w.lower()]
        elif w.lower() in ids:
            out.append(ids[w.lower()])
        else:
            raise UserError(f"unknown study or claim {w!r}; choose from "
                            f"{', '.join(STUDIES)} or {', '.join(c.id for c in claims)}")
    return list({c.id: c for c in out}.values())      # each once, in the order asked
