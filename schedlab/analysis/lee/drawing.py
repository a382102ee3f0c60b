"""Study 3's figures: ``draw`` dispatches an experiment to its figure family."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from schedlab.analysis.figures import FigureContext
from schedlab.analysis.lee.benchmarks import _benchmarks
from schedlab.analysis.lee.consolidation import _consolidation, _late_wakeup_note, _response_ecdf
from schedlab.analysis.lee.fig17 import _placement
from schedlab.analysis.lee.fig9 import _fig9, _overheads


def draw(experiment, tables: dict[str, pd.DataFrame], ctx: FigureContext,
         dest: Path) -> list[Path]:
    frame, events = tables[""], tables.get("events", pd.DataFrame())
    name = experiment.name
    if name == "lee-fig9":
        return _fig9(frame, ctx, dest)
    if name == "lee-overheads":
        return _overheads(frame, ctx, dest)
    if name == "lee-fig17":
        programs = tables.get("programs")
        placed = (programs is not None and "llc" in programs
                  and programs["llc"].notna().any())
        return _benchmarks(frame, events, experiment, ctx, dest, "region-balance",
                           programs) + (
            [_placement(programs, frame, events, "region-balance", ctx,
                        dest.with_name(dest.stem + "--placement.png"))] if placed else [])
    if name == "lee-fig18-23":
        return _benchmarks(frame, events, experiment, ctx, dest, "region-unify")
    if name == "lee-fig24":
        responses = tables.get("responses")
        first = ([_response_ecdf(frame, responses, ctx, dest)]
                 if responses is not None and len(responses) else [])
        bars = dest.with_name(dest.stem + "--percentiles.png") if first else dest
        return first + _consolidation(
            frame, [(("roi_p50_ms", "roi_p90_ms", "roi_p99_ms", "roi_max_ms"),
                     "response time (ms, guest clock)")], ctx, bars,
            "The media server's response-time percentiles over the requests that arrived "
            "in its ROI (its own measurement; on QEMU its whole life): alone, beside omnetpp "
            "with the default scheduler, beside it with partitioning that favours the media "
            "server." + _late_wakeup_note(responses))
    if name == "lee-fig25":
        return _consolidation(frame, [(("roi_ms_per_row", "roi_cpu_ms_per_row"),
                                       "ms per image row (guest clock)"),
                                      (("task_l1d_mpki", "task_llc_mpki"),
                                       "misses per 1000 instructions")], ctx, dest,
                              "The ray tracer's elapsed time and CPU time (all its threads) "
                              "per row it rendered in its ROI (on QEMU its whole life; on "
                              "gem5 the ROI ends with the program or at its bound), "
                              "alone and beside omnetpp; on gem5 also the misses of its main "
                              "thread (one of its two rendering threads; per-task "
                              "attribution).")
    raise ValueError(f"no figure for {name}")
