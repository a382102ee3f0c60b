"""Study 3's tables and figures: region scheduling (Lee & Schwan), from the region tracepoints.

The package, by job: ``trace`` (the region tracepoints and /proc/<pid>/sched_regions
counters, one job's numbers, the cache timeline), ``tables`` (``collect``: the compact tables
"", "events", "responses" and "programs"), ``schema`` (their columns, declared: ``SCHEMAS``),
``costs`` (Fig. 9's normalised performance, the cost of a micro-schedule, ``summary``),
``programs`` (the programs of a mix: kinds, IPC changes, moves), the figure families ``fig9``
(Fig. 9 and the overheads), ``benchmarks`` (Figs. 18-23 and Fig. 17's bars), ``fig17``
(Fig. 17's placements) and ``consolidation`` (Figs. 24 and 25), with ``common`` what they
share, and ``drawing`` (``draw``, an experiment to its family). Every name is also here.
"""

from __future__ import annotations

from schedlab.analysis.figures import finish
from schedlab.analysis.lee.schema import (Column, COORDINATES, EVENTS, MAIN, PROGRAMS, RESPONSES,
                                          Schema, SCHEMAS, WHEN)
from schedlab.analysis.lee.trace import (cache_timeline, change_counts, exit_unmapping, job_trace,
                                         mark_undone, parse_region_trace, parse_sched_regions,
                                         REGION_COUNTERS, region_counters, region_states)
from schedlab.analysis.lee.tables import ARRIVAL_SLACK_MS, collect, _job_wakeups, _responses
from schedlab.analysis.lee.costs import (_condition, MICRO_SCHEDULE_FUNCTIONS,
                                         MICRO_SCHEDULE_PARTS, micro_schedule_cost,
                                         micro_schedule_parts, normalised,
                                         NUMA_BALANCING_FUNCTIONS, numa_balancing_costs,
                                         pair_fits, PAPER_MICRO_RATE, summary)
from schedlab.analysis.lee.programs import (micro_counts, moved_in_roi, program_changes,
                                            program_kind, program_kinds, region_pages_at_roi,
                                            short_program_name)
from schedlab.analysis.lee.common import (CACHE_COLOURS, _cache_names, _per_machine, POLICY_COLOURS,
                                          PROGRAM_COLOURS, _timing_note)
from schedlab.analysis.lee.fig9 import _cost_panel, _fig9, _overheads
from schedlab.analysis.lee.benchmarks import (_benchmark_panels, _benchmarks, _counts_panel, _has,
                                              _mix_moves_panel, MOVED_NOTE, _programs_panel,
                                              _timeline)
from schedlab.analysis.lee.fig17 import _placement
from schedlab.analysis.lee.consolidation import (_consolidation, LATE_WAKEUP, _late_wakeup_note,
                                                 _response_ecdf)
from schedlab.analysis.lee.drawing import draw

__all__ = ["Column", "COORDINATES", "EVENTS", "MAIN", "PROGRAMS", "RESPONSES", "Schema", "SCHEMAS",
           "WHEN", "cache_timeline", "change_counts", "exit_unmapping", "job_trace", "mark_undone",
           "parse_region_trace", "parse_sched_regions", "REGION_COUNTERS", "region_counters",
           "region_states", "ARRIVAL_SLACK_MS", "collect", "_job_wakeups", "_responses",
           "_condition", "MICRO_SCHEDULE_FUNCTIONS", "MICRO_SCHEDULE_PARTS", "micro_schedule_cost",
           "micro_schedule_parts", "normalised", "NUMA_BALANCING_FUNCTIONS",
           "numa_balancing_costs", "pair_fits",
           "PAPER_MICRO_RATE",
           "summary", "micro_counts", "moved_in_roi", "program_changes", "program_kind",
           "program_kinds", "region_pages_at_roi", "short_program_name", "CACHE_COLOURS",
           "_cache_names", "_per_machine", "POLICY_COLOURS", "PROGRAM_COLOURS", "_timing_note",
           "_cost_panel", "_fig9", "_overheads", "_benchmark_panels", "_benchmarks",
           "_counts_panel", "_has", "_mix_moves_panel", "MOVED_NOTE", "_programs_panel",
           "_timeline", "_placement", "_consolidation", "LATE_WAKEUP", "_late_wakeup_note",
           "_response_ecdf", "draw", "finish"]
