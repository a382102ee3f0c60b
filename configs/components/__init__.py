"""gem5-side components of schedlab, written against the gem5 v24.0 standard library.

One part per file, each taking typed, documented values (sizes in bytes, latencies in
cycles of the board clock) rather than the board plan; ``configs/plan_board.py`` hands them
the plan's values (``schedlab.backends.gem5.plan.BoardPlan``):

- ``caches.py``           the classic caches: a catalogue cache instance, the I/O cache, a
                          NUMA link
- ``hierarchy.py``        the parametric classic hierarchy for any sharing pattern and NUMA
- ``memory.py``           main memory: one SimpleMemory bank per package or node
- ``processor.py``        Atomic / Timing / O3 / KVM cores with per-core CPUID values
- ``board.py``            the X86Board carrying them, booting our kernel with a readfile
- ``stock_hierarchy.py``  gem5's PrivateL1SharedL2CacheHierarchy (overhead benchmark only)

These modules import gem5 (``m5``, ``gem5``) and therefore only load inside a gem5 binary
(or over a gem5 source tree, in tests/test_gem5_configs_dry.py).
"""
