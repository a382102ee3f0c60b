"""Does the guest see the modelled machine? Compare the runner's facts with the gem5 plan.

The in-guest runner reports what Linux built (``disk-images/rootfs/init``, report_topology):
per CPU its package id, core siblings and scheduling-domain spans, and the NUMA nodes. On
gem5 these must follow the catalogue: the cores sharing a last-level cache form one package
(the plan's CPUID values say so) with a multi-core (MC) scheduling domain spanning exactly
them, and the NUMA nodes (numa_emu_cpus of kernel-patches/0009) hold the catalogue's cores
and the memory of the model's banks for that node.
"""

from __future__ import annotations

from schedlab.backends.gem5.plan import BoardPlan
from schedlab.machine import format_cpus


def _mask(cpus) -> int:
    return sum(1 << c for c in cpus)


def _span(text: str) -> int:
    """A /proc/schedstat domain span (hex, 32-bit groups separated by commas) as an int."""
    return int(text.replace(",", ""), 16)


def topology_problems(plan: BoardPlan, machine: dict, facts: dict[str, str]) -> list[str]:
    """Each way the guest's view differs from the model (empty: it matches)."""
    n = plan.num_cores
    problems = []
    online = facts.get("cpus.online")
    if online != format_cpus(range(n)):
        problems.append(f"guest has CPUs {online}, the model {format_cpus(range(n))}")
    packages = plan.guest_packages()
    for group in packages:
        for cpu in group:
            want_pkg = str(plan.cores[cpu].guest_physical_id)
            if facts.get(f"cpu{cpu}.package") != want_pkg:
                problems.append(f"cpu{cpu}: package {facts.get(f'cpu{cpu}.package')}, "
                                f"modelled {want_pkg}")
            if facts.get(f"cpu{cpu}.core_siblings") != format_cpus(group):
                problems.append(f"cpu{cpu}: core siblings {facts.get(f'cpu{cpu}.core_siblings')}"
                                f", modelled LLC group {format_cpus(group)}")
            spans = [_span(facts[k]) for k in sorted(
                (k for k in facts if k.startswith(f"cpu{cpu}.domain") and k.endswith(".span")),
                key=lambda k: int(k.split(".")[1][len("domain"):]))]
            if len(group) > 1 and (not spans or spans[0] != _mask(group)):
                problems.append(f"cpu{cpu}: first scheduling domain spans "
                                f"{hex(spans[0]) if spans else 'nothing'}, the LLC group "
                                f"{hex(_mask(group))}")
            if len(packages) > 1 and (not spans or spans[-1] != _mask(range(n))):
                problems.append(f"cpu{cpu}: no scheduling domain spans all CPUs")
    nodes = machine["nodes"]
    if len(nodes) > 1:
        for k, node in enumerate(nodes):
            seen = facts.get(f"node{k}.cpus")
            if seen != format_cpus(node):
                problems.append(f"node{k}: guest CPUs {seen}, modelled {format_cpus(node)}")
        if f"node{len(nodes)}.cpus" in facts:
            problems.append(f"guest has more than the modelled {len(nodes)} NUMA nodes")
        problems += _node_memory_problems(plan, facts)
    return problems


# A node's MemTotal leaves out what the kernel reserved on it (its image and initramfs,
# page structures, the firmware's hole): about 28 MiB in all on Hector, most on node 0.
NODE_RESERVED_MAX = 32 << 10        # KiB
NODE_RESERVED_SHARE = 0.1


def _node_memory_problems(plan, facts: dict[str, str]) -> list[str]:
    """The guest's nodes must be the model's banks: each node's memory at most its banks and
    no less than them minus what the kernel reserves, or the latency classes the model
    charges would not be the guest's nodes. A node given memory beyond its banks exceeds
    them, whatever the kernel reserved on it."""
    problems = []
    for node, _, size in plan.memory.node_ranges():
        seen = facts.get(f"node{node}.mem_kb")
        if seen is None:
            continue
        kib = size >> 10
        least = kib - max(NODE_RESERVED_MAX, NODE_RESERVED_SHARE * kib)
        if not least <= int(seen) <= kib:
            problems.append(f"node{node}: guest memory {int(seen) >> 10} MiB, modelled banks "
                            f"{kib >> 10} MiB")
    return problems
