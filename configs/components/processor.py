"""The cores of a machine: Atomic (boot), Timing (in-order), O3 (out-of-order) or KVM.

Every core carries its own CPUID values from the plan, so the Linux guest sees the
catalogue's last-level-cache groups: gem5's default CPUID gives every core initial APIC id 0
and no shared cache, and Linux then builds no shared-LLC scheduling domain. The values are
set on each core's ISA object, for boot and restore cores alike (the guest re-reads CPUID
only at boot, but a restored core must not disagree with the kernel's view).

- "o3":     X86O3CPU with the catalogue's pipeline width and ROB, and queue sizes the plan
            derives from them (schedlab.backends.gem5.plan.O3Plan documents how);
- "timing": X86TimingSimpleCPU, our in-order core (gem5 v24's MinorCPU panics on X86 full
            system with an invalid micro-op, so it is not offered);
- "atomic": X86AtomicSimpleCPU, for booting to the checkpoint and fast-forwarding with the
            caches on (functional warming);
- "noncaching": X86NonCachingSimpleCPU, an Atomic core whose accesses bypass the caches
            (the system in atomic_noncaching mode): fast-forwarding where cache state
            does not matter, about 1.6 times as fast (bench/gem5.md);
- "kvm":    X86KvmCPU for booting where /dev/kvm works (usePerf off: perf counters are
            not available to guests here). Not usable on this project's hosts.

Boot and direct restores use a PlanProcessor (one model, cores at board.processor.cores<i>
.core), so an Atomic checkpoint restores into any model. Runs normally use a
FastForwardProcessor: restored Atomic cores run the guest up to the region of interest,
then the detailed cores are switched in; or restored NonCaching cores hand over to Atomic
cores with the caches shortly before the region, and those to the detailed cores.
"""

from typing import List, Optional, Sequence

from gem5.components.boards.mem_mode import MemMode
from gem5.components.processors.base_cpu_core import BaseCPUCore
from gem5.components.processors.base_cpu_processor import BaseCPUProcessor
from gem5.components.processors.switchable_processor import SwitchableProcessor
from gem5.isas import ISA

from schedlab.backends.gem5.plan import CorePlan, O3Plan

CPU_CLASSES = {"atomic": "X86AtomicSimpleCPU", "noncaching": "X86NonCachingSimpleCPU",
               "timing": "X86TimingSimpleCPU", "o3": "X86O3CPU", "kvm": "X86KvmCPU"}


def _cpu_class(cpu: str):
    import m5.objects as o
    if cpu not in CPU_CLASSES:
        raise ValueError(f"unknown cpu {cpu!r}; choose one of {', '.join(CPU_CLASSES)}")
    try:
        return getattr(o, CPU_CLASSES[cpu])
    except AttributeError:
        raise ValueError(f"this gem5 binary has no {CPU_CLASSES[cpu]}") from None


def make_cores(cores: Sequence[CorePlan], cpu: str,
               o3: Optional[O3Plan] = None) -> List[BaseCPUCore]:
    """One core of model ``cpu`` per entry of ``cores``, with its CPUID values; O3 cores
    take their widths and structure sizes from ``o3``."""
    if cpu == "o3" and o3 is None:
        raise ValueError("O3 cores need their O3Plan (widths, ROB and queue sizes)")
    cls = _cpu_class(cpu)
    out = []
    for c in cores:
        sim = cls(cpu_id=c.index)
        if cpu == "o3":
            for key, value in o3.params().items():
                setattr(sim, key, value)
        if cpu == "kvm":
            sim.usePerf = False
        core = BaseCPUCore(core=sim, isa=ISA.X86)
        for isa in sim.isa:
            isa.FamilyModelStepping = list(c.cpuid_family_model_stepping)
            isa.LongModeAddressSize = list(c.cpuid_long_mode_address_size)
        out.append(core)
    return out


class PlanProcessor(BaseCPUProcessor):
    """All cores of the machine, of one CPU model, each with its CPUID values."""

    def __init__(self, cores: Sequence[CorePlan], cpu: str, o3: Optional[O3Plan] = None):
        """
        :param cores: the machine's cores in index order, with their CPUID values.
        :param cpu: the core model: "atomic", "timing", "o3" or "kvm".
        :param o3: pipeline widths, ROB, queue and register-file sizes (needed for "o3").
        """
        super().__init__(cores=make_cores(cores, cpu, o3))
        self._cpu_type = cpu  # SimObjects accept only parameters and children as public attributes

    def all_cores(self) -> list:
        return list(self.get_cores())


class FastForwardProcessor(SwitchableProcessor):
    """Fast cores that a run restores into and fast-forwards on, plus switched-out cores
    of the detailed model that take over for each region of interest.

    The fast cores sit where the boot's cores sat (board.processor.cores<i>.core), so the
    boot checkpoint restores into them; the detailed ones are board.processor.detailed<i>
    .core, which is where their statistics appear. Restoring straight into detailed cores
    would simulate the runner's set-up (reading the specification, reporting the topology,
    applying the policy: tens of millions of instructions) at detailed speed.

    The fast cores are Atomic cores with the caches, so the caches are warm wherever the
    region begins; or, with ``bypass_caches``, NonCaching cores (the system in
    atomic_noncaching mode), whose accesses skip the caches' lookups and leave them empty,
    and Atomic cores (board.processor.warming<i>.core) take over for the last stretch
    before each region (:meth:`warm_caches`) to fill them. Handing back from cores that
    used the caches to NonCaching ones writes every cache back and empties it (gem5's
    switchCpus), so no stale line survives the bypassed stretch."""

    def __init__(self, cores: Sequence[CorePlan], cpu: str, o3: Optional[O3Plan] = None,
                 bypass_caches: bool = False):
        """
        :param cores: the machine's cores in index order, with their CPUID values (every
            model's cores carry them).
        :param cpu: the detailed model switched in for regions: "timing" or "o3".
        :param o3: pipeline widths, ROB, queue and register-file sizes (needed for "o3").
        :param bypass_caches: fast-forward on NonCaching cores, with Atomic cores to warm
            the caches before each region.
        """
        sets = {"cores": make_cores(cores, "noncaching" if bypass_caches else "atomic"),
                "detailed": make_cores(cores, cpu, o3)}
        if bypass_caches:
            sets["warming"] = make_cores(cores, "atomic")
        super().__init__(switchable_cores=sets, starting_cores="cores")
        self._bypass_caches = bypass_caches
        self._in = "cores"

    def incorporate_processor(self, board) -> None:
        super().incorporate_processor(board)
        board.set_mem_mode(MemMode.ATOMIC_NONCACHING if self._bypass_caches
                           else MemMode.ATOMIC)

    def _switch(self, to: str) -> bool:
        if self._in == to:
            return False
        self.switch_to_processor(to)
        self._in = to
        return True

    def switch_to_detailed(self) -> bool:
        """Swap the detailed cores in; False if they already are."""
        return self._switch("detailed")

    def warm_caches(self) -> bool:
        """Hand the fast-forward to cores with the caches: from NonCaching cores to the
        Atomic ones; False if the caches are on already (or never were bypassed)."""
        return self._in == "cores" and self._bypass_caches and self._switch("warming")

    def switch_to_functional_warming(self) -> bool:
        """Atomic cores with the caches (between a sampled region's windows); False if they
        are in already."""
        return self._switch("warming" if self._bypass_caches else "cores")

    def switch_to_fast_forward(self) -> bool:
        """Back to the fast cores (after a region); False if they are in already."""
        return self._switch("cores")

    def fast_forward_model(self) -> str:
        """The fast-forward cores' model, as event lines name it."""
        return "noncaching" if self._bypass_caches else "atomic"

    def schedule_inst_stops(self, distances: dict) -> None:
        """An exit (ExitEvent.MAX_INSTS) when core ``cpu`` of the cores now in has committed
        ``distances[cpu]`` more instructions (sampling: schedlab.backends.gem5.sampling).
        The stop stays with that core object; gem5 cannot cancel it."""
        cores = self.get_cores()
        for cpu, n in distances.items():
            cores[cpu].get_simobject().scheduleInstStopAnyThread(int(n))

    def all_cores(self) -> list:
        return list(self._all_cores())
