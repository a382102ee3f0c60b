"""Everything the gem5 script is told, as one typed document.

The host (``schedlab.backends.gem5.checkpoint`` for a boot, ``run`` for a run) fills a
:class:`Gem5Options`, :func:`schedlab.backends.gem5.process.command` writes it as JSON into
gem5's output directory and names it on the command line (``--options FILE``), and the
script (``configs/schedlab_gem5.py``) reads the same class back: one declaration of the
script's options, checked on both sides. Standard library only: gem5's Python imports it.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path

MODES = ("boot", "run")
# Core models of a run (plan.CPU_TYPES) and of a boot (atomic, or kvm where it works).
CPUS = ("atomic", "timing", "o3", "kvm")
HIERARCHIES = ("plan", "stock", "stock-matched")
PATHS = ("kernel", "checkpoint_dir", "readfile")


@dataclass(frozen=True)
class RunSettings:
    """How a run (mode "run") simulates, beyond its machine, cores and guest: the part of
    the options a gem5 job (``schedlab.backends.gem5.run.Gem5Job``) carries from the request.
    A boot takes the defaults."""

    # "plan" (ours); "stock": gem5's PrivateL1SharedL2CacheHierarchy; "stock-matched": the
    # same with our latencies and no prefetchers (the overhead benchmark).
    hierarchy: str = "plan"
    # gem5 resets the statistics at m5 workbegin and dumps them at m5 workend (False when
    # the guest's launcher does both itself).
    workitem_stats: bool = True
    # A dump of the whole run's statistics when it ends well (False: the regions' dumps are
    # all that is read).
    exit_stats: bool = True
    # Charge per-CPU counters to tasks at the guest kernel's context-switch m5 op
    # (m5_fail with code prev_pid << 8 | cpu).
    attribute_tasks: bool = False
    # Restore into Atomic cores, switch to the run's cores at each m5 workbegin and back at
    # each m5 workend.
    fast_forward: bool = False
    # With fast_forward: restore into NonCaching cores (caches bypassed and empty) that hand
    # over to Atomic cores with the caches at the guest's m5 switchcpu.
    bypass_caches: bool = False
    # With fast_forward: "U,W,D" (schedlab.backends.gem5.sampling) inside each region.
    sampling: str | None = None
    seed: int | None = None            # gem5's random number generator (the run's seed)
    # Simulated seconds a region of interest may last: a workload that was not stopped at
    # its duration (0: no limit).
    max_region_seconds: float = 0.0

    def problems(self) -> list[str]:
        """What makes these settings unusable (each a sentence naming the field); what
        depends on the cores (sampling, bypassing the caches) the script checks against
        the cores it runs."""
        if self.hierarchy not in HIERARCHIES:
            return [f"hierarchy {self.hierarchy!r} is not one of {', '.join(HIERARCHIES)}"]
        return []


@dataclass(frozen=True)
class Gem5Options:
    mode: str                          # "boot" (to a checkpoint) or "run" (restore and run)
    machine: dict                      # the resolved machine (MachineSpec.to_dict())
    kernel: Path                       # vmlinux with the image built in
    command_line: str                  # the whole kernel command line
    checkpoint_dir: Path               # boot: where to write it; run: what to restore
    cpu: str | None = None             # core model (None: boot atomic, run the plan's)
    readfile: Path | None = None       # served to the guest's m5 readfile (the payload)
    settings: RunSettings = field(default_factory=RunSettings)
    progress_seconds: float = 30.0     # host seconds between progress lines
    max_seconds: float = 0.0           # simulated seconds before stopping (0: no limit)
    max_host_seconds: float = 0.0      # host seconds before stopping (0: no limit)
    extra: dict = field(default_factory=dict, compare=False)   # never set: see problems()

    def problems(self) -> list[str]:
        """What makes these options unusable (each a sentence naming the field)."""
        out = []
        if self.mode not in MODES:
            out.append(f"mode {self.mode!r} is not one of {', '.join(MODES)}")
        if self.cpu is not None and self.cpu not in CPUS:
            out.append(f"cpu {self.cpu!r} is not one of {', '.join(CPUS)}")
        out += self.settings.problems()
        if self.extra:
            out.append(f"unknown options {', '.join(sorted(self.extra))}")
        return out

    def to_json(self) -> str:
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if f.name != "extra"}
        data["settings"] = dataclasses.asdict(self.settings)
        return json.dumps({k: str(v) if isinstance(v, Path) else v for k, v in data.items()},
                          indent=1, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, text: str) -> "Gem5Options":
        data = json.loads(text)
        known = {f.name for f in dataclasses.fields(cls)} - {"extra"}
        given = {k: Path(v) if k in PATHS and v is not None else v
                 for k, v in data.items() if k in known}
        extra = {k: v for k, v in data.items() if k not in known}
        settings = given.pop("settings", {})
        names = {f.name for f in dataclasses.fields(RunSettings)}
        extra.update({f"settings.{k}": v for k, v in settings.items() if k not in names})
        return cls(**given, settings=RunSettings(**{k: v for k, v in settings.items()
                                                   if k in names}), extra=extra)

    def write(self, path: Path) -> Path:
        path.write_text(self.to_json())
        return path

    @classmethod
    def read(cls, path: Path) -> "Gem5Options":
        return cls.from_json(Path(path).read_text())
