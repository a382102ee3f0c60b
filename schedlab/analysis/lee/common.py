"""What study 3's figure families share: colours, the QEMU timing note, machines, caches' names."""

from __future__ import annotations

import importlib
from pathlib import Path


import pandas as pd

from schedlab.backends.backend import get_backend
from schedlab.analysis.figures import FigureContext
from schedlab.machine import format_cpus, load_machine


POLICY_COLOURS = {"region-confine": "#4c72b0", "region-unify": "#dd8452",
                  "vanilla": "#4c72b0", "region-balance": "#dd8452",
                  "region-partition": "#55a868", "alone": "#8c8c8c"}
CACHE_COLOURS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52")
PROGRAM_COLOURS = ("#4c72b0", "#c44e52", "#55a868", "#8c8c8c", "#8172b2")


def _timing_note(ctx: FigureContext) -> str:
    if get_backend(ctx.backend).timing_model:
        return ""
    return (" On QEMU the rates are the guest's wall clock on a loaded host, and a hinting "
            "fault costs far more (relative to an access) than on gem5: regions form "
            "differently (see the regions columns), the mechanics are what is shown.")


def _per_machine(frame: pd.DataFrame):
    machines = list(dict.fromkeys(frame["machine"])) if len(frame) else []
    return machines or ["-"]


def _cache_names(machine: str, caches: list[int]) -> dict[int, str]:
    """Cache id (its first CPU, as the tables number it) -> "L2, CPUs 0-1" from the
    catalogue; by the id alone for a machine it does not hold."""
    from schedlab.errors import UserError
    try:
        spec = load_machine(machine)
    except UserError:      # a user's machine file the figure cannot see
        return {c: f"cache of CPU {c}" for c in caches}
    groups = {min(g): g for g in spec.llc_groups}
    return {c: f"{spec.llc.name.upper()}, CPUs {format_cpus(groups.get(c, (c,)))}"
            for c in caches}


def finish(fig, ctx: FigureContext, dest: Path, caption_extra: str = "") -> Path:
    """``schedlab.analysis.figures.finish`` for every figure family, looked up at each call
    as the package's own ``finish`` (``schedlab.analysis.lee.finish``): one name, which the
    tests' ``drawn_figure(lee)`` swaps to keep the figures of all the families unsaved. The
    lookup runs at the call, when the package is loaded: no module imports it at load."""
    return importlib.import_module(__package__).finish(fig, ctx, dest, caption_extra)
