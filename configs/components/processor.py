"""The cores of a machine: Atomic (boot), Timing (in-order), O3 (out-of-order) or KVM.

Every core carries its own CPUID values from the plan, so the Linux guest sees the
catalogue's last-level-cache groups: gem5's default CPUID gives every core initial APIC id 0
and no shared cache, and Linux then builds no shared-LLC scheduling domain. The values are
set on each core's ISA object, for boot and restore cores alike (the guest re-reads CPUID
only at boot, but a restored core must not disagree with the kernel's view).

- "o3":     X86O3CPU with the catalogue's pipeline width and ROB, and queue sizes the plan
            derives from them (schedlab.gem5_plan.O3Plan documents how);
- "timing": X86TimingSimpleCPU, our in-order core (gem5 v24's MinorCPU panics on X86 full
            system with an invalid micro-op, so it is not offered);
- "atomic": X86AtomicSimpleCPU, for booting to the checkpoint;
- "kvm":    X86KvmCPU for booting where /dev/kvm works (usePerf off: perf counters are
            not available to guests here). Not usable on this project's hosts.

The processor is always a BaseCPUProcessor whose cores sit at the same object paths
(board.processor.cores<i>.core), so an Atomic checkpoint restores into any of them.
"""

from gem5.components.processors.base_cpu_core import BaseCPUCore
from gem5.components.processors.base_cpu_processor import BaseCPUProcessor
from gem5.isas import ISA


def _cpu_class(cpu: str):
    import m5.objects as o
    classes = {"atomic": "X86AtomicSimpleCPU", "timing": "X86TimingSimpleCPU",
               "o3": "X86O3CPU", "kvm": "X86KvmCPU"}
    if cpu not in classes:
        raise ValueError(f"unknown cpu {cpu!r}; choose one of {', '.join(classes)}")
    try:
        return getattr(o, classes[cpu])
    except AttributeError:
        raise ValueError(f"this gem5 binary has no {classes[cpu]}") from None


class PlanProcessor(BaseCPUProcessor):
    """All cores of the plan, of one CPU model."""

    def __init__(self, plan, cpu: str):
        cls = _cpu_class(cpu)
        cores = []
        for c in plan.cores:
            sim = cls(cpu_id=c.index)
            if cpu == "o3":
                for key, value in plan.o3.params().items():
                    setattr(sim, key, value)
            if cpu == "kvm":
                sim.usePerf = False
            core = BaseCPUCore(core=sim, isa=ISA.X86)
            for isa in sim.isa:
                isa.FamilyModelStepping = list(c.cpuid_family_model_stepping)
                isa.LongModeAddressSize = list(c.cpuid_long_mode_address_size)
            cores.append(core)
        super().__init__(cores=cores)
        self._cpu_type = cpu  # SimObjects accept only parameters and children as public attributes
