"""How much guest work a job is: the instructions of one region of interest and the CPUs it
keeps busy. Campaign cost estimates (schedlab.campaigns.cost) and the sampling check of a
run (schedlab.runs.check_sampling) both size a job this way.

The instructions of a region are the workload's measured count (cachegrind, at its smoke
size; ``workloads/characterisation.json``) or, for a region bounded by a duration, the
duration times the clock times the busy CPUs at an assumed IPC of 1 (an upper bound for
in-order cores, about the busy O3 cores' IPC), whichever is smaller; a job given arguments
of its own (which may change its work) counts its duration only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from schedlab.errors import UserError
from schedlab.guest.characterise import load_characterisation
from schedlab.guest.workloads import get

if TYPE_CHECKING:   # runs.py imports this module: its types only for annotations
    from schedlab.runs import RunRequest, WorkloadRequest

ASSUMED_IPC = 1.0
# A paper size class runs this many times the smoke instructions (paper sizes take 1 to
# 10 s natively against well under one for smoke; workloads/README.md); other classes are
# taken to be smoke-like.
PAPER_SIZE_FACTOR = 10.0
# Duration of a region bounded neither by the workload nor by a duration.
UNBOUNDED_REGION_S = 1.0


def _relative_work(workload: str, size: str) -> float:
    """Instructions of ``size`` relative to smoke: the registry's ``work`` where given."""
    known = get(workload).size_table.get(size, {}).get("work")
    if known is not None:
        return float(known)
    return PAPER_SIZE_FACTOR if size.startswith("paper") else 1.0


def region_instructions(job: WorkloadRequest, clock_hz: int, busy: int,
                        regions: dict[str, float] | None = None) -> float:
    """Estimated guest instructions of one region of interest of ``job`` (``busy``: the
    CPUs kept busy; ``regions``: regions measured on the machine, by workload)."""
    measured = load_characterisation().get(job.workload, {})
    count = next((m["instructions"] for m in measured.values()), None)
    if count is None:
        count = (regions or {}).get(job.workload)
    if job.args and job.duration is not None:
        count = None          # its own arguments may change its work: the duration bounds it
    if count is not None and job.size != "smoke":
        count *= _relative_work(job.workload, job.size)
    if job.duration is not None:
        region = job.duration * clock_hz * busy * ASSUMED_IPC
        return min(region, count) if count else region
    if count is not None:
        return count          # cachegrind counts every thread of the program
    return UNBOUNDED_REGION_S * clock_hz * busy * ASSUMED_IPC


def threads(program: WorkloadRequest) -> int:
    """The threads of one program: the last ``--threads`` of its size's arguments and its
    own (the registry's parallel programs take it), else one."""
    try:
        args = [*get(program.workload).args(program.size), *program.args]
    except UserError:         # the user's own binary: its arguments only
        args = list(program.args)
    given = [n for flag, n in zip(args, args[1:]) if flag == "--threads"]
    return int(given[-1]) if given and given[-1].isdigit() else 1


def busy_cpus(request: RunRequest, job: WorkloadRequest, cores: int) -> int:
    """CPUs a run keeps busy while ``job`` runs (its jobs run one after another): the job's
    threads and each background program's, as far as there are cores."""
    return min(cores, threads(job) + sum(threads(b) for b in request.background))
