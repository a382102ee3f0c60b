"""The gem5 board plan derived from the catalogue: pure Python, no gem5 needed.

Asserts the derived structure for every machine: which cores share which cache instance,
sizes and latencies in gem5 units, per-core CPUID values, the 3 GiB memory cap, and
Hector's NUMA latencies with the ring-delay knob reproducing the ring-delay latencies of the
catalogue (configs/machines.toml).
"""

import json

import pytest

from schedlab.backends.gem5.plan import (
    CACHE_BUS, CPUID1_EBX_LOW, SYSTEM_BUS, X86_BOARD_MAX_MEMORY, PlanError, boot_args,
    plan_from_dict,
)
from schedlab.machine import load_machine, machine_names


def plan(name, overrides=()):
    return plan_from_dict(load_machine(name, list(overrides)).to_dict())


@pytest.mark.parametrize("name", machine_names())
def test_every_machine_has_a_plan(name):
    spec = load_machine(name)
    p = plan(name)
    assert p.num_cores == spec.cores
    assert p.clock_hz == spec.clock_hz
    # every catalogue cache has one instance per group, with the catalogue's parameters
    for c in spec.caches:
        inst = p.instances(c.name)
        assert [i.cores for i in inst] == [tuple(g) for g in c.groups]
        for i in inst:
            assert (i.size, i.assoc, i.latency_cycles) == (c.size, c.assoc,
                                                           c.latency.cycles(spec.clock_hz))
            assert i.tag_latency == i.data_latency == i.latency_cycles
    # every core reaches exactly one instance of each cache
    for core in p.cores:
        names = [p.cache(n).cache for n in core.caches]
        assert sorted(names) == sorted(c.name for c in spec.caches)
    # the plan survives a JSON round trip (gem5 reads machine.json)
    assert plan_from_dict(json.loads(json.dumps(spec.to_dict()))) == p
    json.dumps(p.to_dict())
    assert p.memory.size <= X86_BOARD_MAX_MEMORY
    assert sum(b.size for b in p.memory.banks) == p.memory.size


def test_clovertown_mmp_two_l2_groups():
    p = plan("clovertown-e5320")
    assert p.sharing()["l2"] == [[0, 1], [2, 3]]
    assert p.sharing()["l1d"] == [[0], [1], [2], [3]]
    assert p.cache("l1d_2").parent == "l2_1"
    assert p.cache("l1i_1").parent == "l2_0"
    assert p.cache("l2_1").parent is None
    assert p.cache("l2_0").size == 4 << 20 and p.cache("l2_0").assoc == 16
    assert p.cache("l2_0").latency_cycles == 14
    assert p.clock == "1860000000Hz"
    assert p.default_cpu == "o3"


def _decode_cpuid(core) -> dict:
    """A core's CPUID registers decoded by the x86 specification. gem5's X86ISA parameters
    list each leaf as [EAX, EBX, EDX, ECX] (``CpuidResult(rax, rbx, rdx, rcx)`` in gem5's
    src/arch/x86/cpuid.hh). Leaf 1: EBX[31:24] the initial APIC id, EBX[15:8] the CLFLUSH
    line in 8-byte units, EDX bit 9 an on-chip APIC. Leaf 0x80000008: ECX[7:0] the number of
    cores in the package less one, ECX[15:12] how many low APIC id bits number the core in
    the package (Linux: package id = APIC id >> those bits)."""
    eax1, ebx1, edx1, ecx1 = core.cpuid_family_model_stepping
    eax8, ebx8, edx8, ecx8 = core.cpuid_long_mode_address_size
    return {"apic_id": ebx1 >> 24, "clflush_bytes": ((ebx1 >> 8) & 0xFF) * 8,
            "apic": bool(edx1 >> 9 & 1), "cores": (ecx8 & 0xFF) + 1,
            "core_bits": (ecx8 >> 12) & 0xF, "address_bits": (eax8 & 0xFF, eax8 >> 8 & 0xFF)}


@pytest.mark.parametrize("name", machine_names())
def test_cpuid_values_decode_to_the_catalogue_llc_groups(name):
    # The oracle is the catalogue (not the plan): decoding each core's CPUID as a guest
    # does must give back the machine's LLC groups.
    spec = load_machine(name)
    cores = [_decode_cpuid(c) for c in plan(name).cores]
    assert all(c["apic"] and c["clflush_bytes"] == 64 for c in cores)
    assert all(c["address_bits"] == (48, 48) for c in cores)
    ids = [c["apic_id"] for c in cores]
    assert len(set(ids)) == len(ids) and max(ids) < 256      # xAPIC ids are 8 bits
    packages: dict[int, list[int]] = {}
    for i, c in enumerate(cores):
        mask = (1 << c["core_bits"]) - 1
        assert c["cores"] <= mask + 1          # the core-id field can number every core
        packages.setdefault(c["apic_id"] >> c["core_bits"], []).append(i)
    assert sorted(packages.values()) == sorted(list(g) for g in spec.llc_groups)
    biggest = max(len(g) for g in spec.llc_groups)
    assert {c["cores"] for c in cores} == {biggest}


def test_cpuid_values_reproduce_design_notes():
    # Worked by hand from design.md: Clovertown E5320, two L2 groups of two cores -> initial
    # APIC ids 0, 1 | 2, 3, one core-id bit, two cores per package: leaf 1 EBX = id << 24 |
    # 0x805 (CLFLUSH 8 x 8 B, brand 5); leaf 0x80000008 ECX = 1 << 12 | (2 - 1).
    p = plan("clovertown-e5320")
    assert [c.cpuid_family_model_stepping for c in p.cores] == [
        (0x00020F51, ebx, 0xEFDBFBFF, 0x00000209)
        for ebx in (0x00000805, 0x01000805, 0x02000805, 0x03000805)]
    assert [c.cpuid_long_mode_address_size for c in p.cores] == [(0x3030, 0, 0, 0x1001)] * 4
    # Westmere: two groups of six -> three core-id bits, ids 0-5 and 8-13, ECX = 3 << 12 | 5.
    w = plan("westmere-x5660")
    assert [c.cpuid_family_model_stepping[1] >> 24 for c in w.cores] == [
        0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13]
    assert {c.cpuid_long_mode_address_size for c in w.cores} == {(0x3030, 0, 0, 0x3005)}
    assert CPUID1_EBX_LOW == 0x805


@pytest.mark.parametrize("name,groups", [
    ("niagara", [[0, 1, 2, 3, 4, 5, 6, 7]]),
    ("clovertown-e5320-mup", [[0, 1]]),
    ("clovertown-e5320-ump", [[0], [1]]),
    ("core-i7-920", [[0, 1, 2, 3]]),
    ("xeon-e5440", [[0, 1], [2, 3]]),
    ("clovertown-x5365", [[0, 1], [2, 3]]),
    ("hector", [[i] for i in range(16)]),
])
def test_guest_sees_catalogue_llc_groups(name, groups):
    p = plan(name)
    assert [list(g) for g in p.llc_groups] == groups
    assert p.guest_packages() == groups
    assert p.apic_ids_match_firmware


def test_westmere_six_core_groups_use_apic_id_gaps():
    # As on the real part: each 6-core L3 group owns an 8-id block of APIC ids.
    p = plan("westmere-x5660")
    assert p.sharing()["l3"] == [list(range(6)), list(range(6, 12))]
    assert [c.apic_id for c in p.cores] == [0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13]
    assert {c.cpuid_long_mode_address_size[3] for c in p.cores} == {(3 << 12) | 5}
    assert p.guest_packages() == [list(range(6)), list(range(6, 12))]
    assert not p.apic_ids_match_firmware
    assert any("APIC id mismatch" in n for n in p.notes)


@pytest.mark.parametrize("groups", [
    [[0, 1, 2], [3, 4, 5]],            # odd-sized groups
    [[0, 2], [1, 3]],                  # interleaved groups
    [[0], [1, 2, 3]],                  # unequal groups
])
def test_any_llc_partition_is_seen_by_the_guest(groups):
    n = sum(len(g) for g in groups)
    d = load_machine("clovertown-e5320").to_dict()
    d["cores"] = n
    d["packages"] = groups
    d["nodes"] = [list(range(n))]
    for c in d["caches"]:
        c["groups"] = groups if c["name"] == "l2" else [[i] for i in range(n)]
    p = plan_from_dict(d)
    assert sorted(p.guest_packages()) == sorted(sorted(g) for g in groups)
    assert len({c.apic_id for c in p.cores}) == n


def test_niagara_one_l2_and_one_line_size():
    p = plan("niagara")
    assert p.sharing()["l2"] == [list(range(8))]
    assert all(p.cache(f"l1d_{i}").parent == "l2_0" for i in range(8))
    assert p.line == 64
    assert any("one cache-line size" in n for n in p.notes)
    assert p.default_cpu == "timing"


def test_i7_private_l2_shared_l3():
    p = plan("core-i7-920")
    assert p.sharing()["l2"] == [[0], [1], [2], [3]]
    assert p.sharing()["l3"] == [[0, 1, 2, 3]]
    assert p.cache("l1d_3").parent == "l2_3"
    assert p.cache("l2_3").parent == "l3_0"
    assert p.cache("l3_0").latency_cycles == 40
    assert p.o3.width == 4 and p.o3.rob_entries == 128
    params = p.o3.params()
    assert params["issueWidth"] == params["commitWidth"] == 4
    assert params["numROBEntries"] == 128


def test_memory_capped_with_note():
    p = plan("clovertown-e5320")
    assert p.memory.requested == 8 << 30
    assert p.memory.size == 3 << 30 and p.memory.capped
    assert "capped" in p.memory.note and p.memory.note in p.notes
    w = plan("westmere-x5660")
    assert w.memory.size == 3 << 30
    assert [(b.node, b.size) for b in w.memory.banks] == [(0, 1536 << 20), (1, 1536 << 20)]
    assert w.memory.node_ranges() == [(0, 0, 1536 << 20), (1, 1536 << 20, 1536 << 20)]


def test_override_reaches_plan():
    p = plan("clovertown-e5320", ["l2.size=8MiB", "l2.latency=20cycles", "clock=2GHz"])
    assert p.cache("l2_0").size == 8 << 20
    assert p.cache("l2_1").latency_cycles == 20
    assert p.clock_hz == 2_000_000_000
    assert boot_args(p)[-1] == "lpj=2000000"


def test_memory_jitter_is_a_what_if_that_reaches_the_banks_and_not_the_checkpoint():
    base = load_machine("clovertown-e5320")
    jittered = load_machine("clovertown-e5320", ["memory.latency.jitter=4ns"])
    assert "jitter_ns" not in base.to_dict()["memory"]         # other runs keep their ids
    assert plan_from_dict(base.to_dict()).memory.jitter_ns == 0.0
    plan = plan_from_dict(jittered.to_dict())
    assert plan.memory.jitter_ns == 4.0
    # 6 cycles at the Clovertown's 1.86 GHz are 3.2 ns.
    in_cycles = load_machine("clovertown-e5320", ["memory.latency.jitter=6cycles"])
    assert abs(plan_from_dict(in_cycles.to_dict()).memory.jitter_ns - 6 / 1.86) < 0.01
    # A timing what-if: the boot checkpoint is the machine's own.
    assert plan.boot_identity() == plan_from_dict(base.to_dict()).boot_identity()


def test_hector_numa_banks_and_latencies():
    p = plan("hector")
    assert p.memory.numa and not p.memory.capped
    # The catalogue's 4 x 16 MiB cannot hold the guest: raised to 96 MiB per station, noted.
    assert p.memory.requested == 64 << 20 and p.memory.size == 4 * (96 << 20)
    assert "raised" in p.memory.note and p.memory.note in p.notes
    assert len(p.memory.banks) == 16            # one module per processor
    assert all(b.size == 24 << 20 for b in p.memory.banks)
    assert [b.node for b in p.memory.banks] == [i // 4 for i in range(16)]
    r5 = next(r for r in p.memory.requesters if r.cores == (5,))
    assert r5.bank_class[5] == "local" and r5.bank_latency_cycles[5] == 19
    assert r5.bank_class[4] == "node" and r5.bank_latency_cycles[4] == 29
    assert r5.bank_class[0] == "remote" and r5.bank_latency_cycles[0] == 37
    assert p.line == 16


# Brecht, Hector: cache line load time off-station for each ring delay setting.
HECTOR_TABLE = {0: 37, 4: 49, 8: 61, 16: 85, 32: 133, 64: 229}


@pytest.mark.parametrize("delay,cycles", sorted(HECTOR_TABLE.items()))
def test_hector_delay_knob_reproduces_table(delay, cycles):
    p = plan("hector", [f"memory.delay.cycles={delay}"])
    assert p.memory.remote_cycles == cycles
    for r in p.memory.requesters:
        for lat, cls in zip(r.bank_latency_cycles, r.bank_class):
            assert lat == {"local": 19, "node": 29, "remote": cycles}[cls]


def test_a_numa_bank_answers_after_the_local_latency_less_the_paths_own_cycles():
    # A line load is the catalogue's latency in all: the LLC's lookup and fill and the
    # crossbars on the way charge their cycles, the bank the rest.
    hector, westmere, uniform = plan("hector"), plan("westmere-x5660"), plan("clovertown-e5320")
    l1d = next(c for c in hector.caches if c.cache == "l1d")
    assert hector.memory.path_cycles == l1d.tag_latency + l1d.response_latency + 11 == 13
    assert hector.memory.device_latency_ns == pytest.approx((19 - 13) / 16.67e6 * 1e9)
    l3 = next(c for c in westmere.caches if c.cache == "l3")
    assert westmere.memory.path_cycles == l3.tag_latency + l3.response_latency + 11
    assert westmere.memory.device_latency_ns == pytest.approx(
        (westmere.memory.local_cycles - westmere.memory.path_cycles) / westmere.clock_hz * 1e9)
    assert uniform.memory.path_cycles == 0 and uniform.memory.device_latency_ns == 100.0
    with pytest.raises(PlanError, match="no more than the 13 cycles the path"):
        plan("hector", ["memory.latency.local=13cycles"])


def test_numa_llc_spanning_nodes_is_rejected():
    d = load_machine("westmere-x5660").to_dict()
    for c in d["caches"]:
        if c["name"] == "l3":
            c["groups"] = [list(range(12))]
    with pytest.raises(PlanError, match="several NUMA nodes"):
        plan_from_dict(d)


def test_boot_args():
    args = boot_args(plan("clovertown-e5320-mup"), ["numa=off"])
    for a in ("console=ttyS0", "acpi=off", "pci=off", "tsc=reliable", "nohz=off",
              "schedlab.backend=gem5", "numa=off"):
        assert a in args
    # The TSC's rate and the delay loop are the catalogue clock's, not a calibration's.
    assert "tsc_early_khz=1860000" in args and "lpj=1860000" in args
    assert "tsc_early_khz=16670" in boot_args(plan("hector"))
    # Loops per jiffy follow the kernel's tick: Hector's guest runs at 100 Hz.
    assert "lpj=166700" in boot_args(plan("hector"), tick_hz=100)


def test_hector_checkpoint_boots_with_its_own_tick():
    from schedlab.backends.gem5.checkpoint import guest_boot_args
    m = load_machine("hector").to_dict()
    assert "lpj=166700" in guest_boot_args(m, plan_from_dict(m))


@pytest.mark.parametrize("name,shared", [
    ("clovertown-e5320-mup", True), ("niagara", True), ("xeon-e5440-2core", True),
    ("clovertown-e5320", False), ("core-i7-920", False), ("hector", False),
])
def test_which_machines_the_stock_hierarchy_can_model(name, shared):
    assert plan(name).has_one_shared_l2() is shared


def _numa_fake_split(total: int, hole: int, nodes: int) -> list[int]:
    """Linux 6.1's numa=fake=N split (arch/x86/mm/numa_emulation.c, split_nodes_interleave)
    of [0, total) with a firmware hole of ``hole`` bytes in the first node: node sizes."""
    step = 32 << 20
    size = (total - hole) // nodes
    big = (size % step) * nodes // step
    size -= size % step
    out, start, nid = [0] * nodes, 0, 0
    while start < total:
        end = start + size + (step if nid < big else 0)
        while end - start - (hole if start == 0 else 0) < size:
            end += step
        if total - end < size:
            end = total
        end = min(end, total)
        out[nid % nodes] += end - start
        start, nid = end, nid + 1
    return out


@pytest.mark.parametrize("name", ["hector", "westmere-x5660"])
def test_numa_fake_splits_the_guest_memory_exactly_at_the_banks(name):
    # gem5's X86Board leaves 0x9fc00-0xfffff out of the usable memory.
    p = plan(name)
    nodes = [size for _, _, size in p.memory.node_ranges()]
    assert _numa_fake_split(p.memory.size, 0x100000 - 0x9fc00, len(nodes)) == nodes
    # What went wrong with 64 MiB stations: node 0 got another 32 MiB, node 3 half its own.
    assert _numa_fake_split(4 * (64 << 20), 0x100000 - 0x9fc00, 4) == [
        96 << 20, 64 << 20, 64 << 20, 32 << 20]


@pytest.mark.parametrize("name,per_node", [("westmere-x5660", "1000MiB"), ("hector", "112MiB")])
def test_numa_nodes_off_the_split_step_are_refused(name, per_node):
    with pytest.raises(PlanError, match="multiple of 32 MiB"):
        plan(name, [f"memory.size_per_node={per_node}"])
    # Why: the kernel's split of such a memory would not fall on the banks.
    nodes = len(load_machine(name).nodes)
    size = int(per_node.removesuffix("MiB")) << 20
    assert _numa_fake_split(nodes * size, 0x100000 - 0x9fc00, nodes) != [size] * nodes


@pytest.mark.parametrize("name,per_node", [("westmere-x5660", "1024MiB"), ("hector", "128MiB"),
                                           ("hector", "160MiB")])
def test_numa_nodes_on_the_split_step_split_at_the_banks(name, per_node):
    p = plan(name, [f"memory.size_per_node={per_node}"])
    nodes = [size for _, _, size in p.memory.node_ranges()]
    assert _numa_fake_split(p.memory.size, 0x100000 - 0x9fc00, len(nodes)) == nodes


def test_the_split_step_is_the_kernel_parameters_one():
    from schedlab.backends.gem5.plan import NUMA_FAKE_STEP
    from schedlab.guest.numa import FAKE_NODE_MIN_MIB
    assert NUMA_FAKE_STEP == FAKE_NODE_MIN_MIB << 20


@pytest.mark.parametrize("name", machine_names())
def test_interconnect_every_number_the_hierarchy_uses(name):
    # configs/components type no number: crossbars, page-walk and I/O caches, NUMA links
    # and snoop filters are in the plan, and so in plan.json.
    p = plan(name)
    net = p.interconnect
    assert net.cache_bus == CACHE_BUS and net.page_walk_cache_size == 8 << 10
    if p.memory.numa:
        # Memory traffic takes the per-requester paths; the system bus carries only I/O,
        # interrupts and functional accesses, and each bank has its coherent crossbar.
        assert not net.system_bus.coherent and net.bank_bus == SYSTEM_BUS
        assert net.io_cache is None and net.dma_bridge_latency_ns == 50.0
        assert net.numa_link.mshrs >= 2 * max(c.mshrs for c in p.caches)
    else:
        assert net.system_bus == SYSTEM_BUS and net.system_bus.width == 64
        assert net.io_cache.size == 1024 and net.bank_bus is None and net.numa_link is None
    # A snoop filter tracks every block any cache can hold (a full one panics gem5), in a
    # power of two of at least gem5's default.
    held = (sum(c.size for c in p.caches) + 2 * p.num_cores * net.page_walk_cache_size
            + len(p.memory.requesters) * len(p.memory.banks) * p.line)
    cap = net.snoop_filter_capacity
    assert cap >= max(held, 8 << 20) and cap & (cap - 1) == 0 and cap < 2 * max(held, 8 << 20)
    assert p.to_dict()["interconnect"]["cache_bus"]["width"] == 32


def test_boot_identity_leaves_the_interconnect_out():
    # Boot checkpoints are keyed by the boot identity: cores, clock and memory map only.
    # The snoop filters grow with an 8 MiB L2 (16 -> 32 MiB) and the checkpoint is the same.
    base, big = plan("clovertown-e5320"), plan("clovertown-e5320", ["l2.size=8MiB"])
    assert big.interconnect.snoop_filter_capacity > base.interconnect.snoop_filter_capacity
    assert sorted(base.boot_identity()) == ["clock_hz", "cores", "memory"]
    assert big.boot_identity() == base.boot_identity()
