"""What :mod:`schedlab.runs` asks of a backend, and the closed sets of names a request uses.

A run is resolved once (:func:`schedlab.runs.prepare`) into a spec and a run id; the parts of
that which depend on where it runs, and the running itself, belong to a :class:`Backend`:

- ``check``: refuse, with one line, what the backend cannot run (before anything is built);
- ``boot_args``: kernel arguments it needs from the request (QEMU: a NUMA layout given on
  the command line);
- ``identity``: what it adds to the spec, hashed into the run id (the whole kernel command
  line; on gem5 the core model, the fast-forward, the board plan's code), and the board plan;
- ``execute``: run the prepared run in a staging directory, returning the guest's console
  and what the backend reports;
- ``collect``: fold that report into the run's result rows (on gem5 each region's
  statistics, per-task attribution, sampled windows), returning the run's problems.

``timing_model`` says what a backend can measure: gem5 models caches and latencies (IPC,
misses); QEMU (TCG) shows placement and the guest's clock only.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Protocol, runtime_checkable

from schedlab.backends.gem5.plan import CPU_TYPES, BoardPlan
from schedlab.errors import UserError

if TYPE_CHECKING:   # runs.py imports this module: its types only for annotations
    from schedlab.machine import MachineSpec
    from schedlab.runs import PreparedRun, RunRequest

Progress = Callable[[str], None]


class BackendName(StrEnum):
    QEMU = "qemu"
    GEM5 = "gem5"


# gem5's core models a run may ask for, named by the gem5 script's own list (plan.py, which
# gem5's Python reads without this package's host side).
CpuModel = StrEnum("CpuModel", {model.upper(): model for model in CPU_TYPES})


BACKENDS = tuple(b.value for b in BackendName)
CPU_MODELS = tuple(c.value for c in CpuModel)


@runtime_checkable
class Backend(Protocol):
    name: BackendName
    timing_model: bool          # caches and latencies modelled (IPC, misses), or not
    attributes_tasks: bool      # counters split per task at each context switch (an m5 op)
    default_timeout_s: float    # host seconds a run may take unless the request says
    trace_buffer_kb: int        # per-CPU scheduler-trace buffer unless the request says

    def check(self, request: RunRequest) -> None: ...

    def boot_args(self, request: RunRequest, machine: MachineSpec) -> list[str]: ...

    def identity(self, request: RunRequest, machine: MachineSpec,
                 boot_args: list[str]) -> tuple[dict, BoardPlan | None]: ...

    def execute(self, prepared: PreparedRun, out: Path,
                progress: Progress) -> tuple[str, dict]: ...

    def collect(self, prepared: PreparedRun, rows: list[dict], info: dict) -> list[str]: ...


def _named(choices: type[StrEnum], name: str, what: str):
    """The member of ``choices`` called ``name``; else a one-line error listing them."""
    try:
        return choices(name)
    except ValueError:
        raise UserError(f"unknown {what} {name!r}; choose one of "
                        f"{', '.join(c.value for c in choices)}") from None


def backend_name(name: str) -> BackendName:
    return _named(BackendName, name, "backend")


def cpu_model(name: str) -> CpuModel:
    return _named(CpuModel, name, "gem5 CPU")


def get_backend(name: str) -> Backend:
    """The backend of that name (its module imported on first use)."""
    chosen = backend_name(name)
    if chosen is BackendName.QEMU:
        from schedlab.backends.qemu import QEMU_BACKEND
        return QEMU_BACKEND
    from schedlab.backends.gem5.backend import GEM5_BACKEND
    return GEM5_BACKEND
