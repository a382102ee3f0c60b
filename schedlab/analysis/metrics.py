"""Metrics the studies report, computed from tidy tables.

- IPC = committed instructions / core cycles over a region of interest.
- MPI = misses of a cache level / committed instructions (the papers' unit; MPKI = 1000 MPI).
- rho = mu + 2 sigma of the sample production time (study 2).
- A change between two conditions is reported with a 95 % confidence interval from a
  bootstrap of the runs (deterministic seed), which makes no normality assumption and says
  honestly how little two or three repetitions pin down.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

BOOTSTRAP_SAMPLES = 4000
SEED = 20261123


def change_with_ci(base: np.ndarray, other: np.ndarray, level: float = 0.95
                   ) -> tuple[float, float, float]:
    """Relative change of the mean of ``other`` over the mean of ``base`` (%), and its
    bootstrap confidence interval (resampling each group's runs with replacement)."""
    base, other = np.asarray(base, float), np.asarray(other, float)
    change = 100.0 * (other.mean() - base.mean()) / base.mean()
    rng = np.random.default_rng(SEED)
    b = rng.choice(base, (BOOTSTRAP_SAMPLES, len(base))).mean(axis=1)
    o = rng.choice(other, (BOOTSTRAP_SAMPLES, len(other))).mean(axis=1)
    boot = 100.0 * (o - b) / b
    lo, hi = np.quantile(boot, [(1 - level) / 2, (1 + level) / 2])
    return change, float(lo), float(hi)


def paired_summary(frame: pd.DataFrame, metric: str, group: str, condition: str,
                   base: str, other: str) -> pd.DataFrame:
    """Per ``group`` value: n, mean under ``base`` and ``other``, and the change with its CI."""
    rows = []
    for g, sub in frame.groupby(group, sort=False):
        a = sub[sub[condition] == base][metric].dropna().to_numpy()
        b = sub[sub[condition] == other][metric].dropna().to_numpy()
        if len(a) == 0 or len(b) == 0:
            continue
        change, lo, hi = change_with_ci(a, b)
        rows.append({group: g, "n": min(len(a), len(b)), f"{metric} {base}": a.mean(),
                     f"{metric} {other}": b.mean(), "change %": change,
                     "95% CI low %": lo, "95% CI high %": hi})
    return pd.DataFrame(rows)
