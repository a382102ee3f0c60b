"""gem5-side components of schedlab, written against the gem5 v24.0 standard library.

One component per file, each built from a :class:`schedlab.backends.gem5.plan.BoardPlan` (the pure
Python plan derived from the machine catalogue), never from numbers typed here:

- ``caches.py``     one classic cache instance (``PlanCache``)
- ``hierarchy.py``  the parametric classic hierarchy for any sharing pattern and NUMA
- ``memory.py``     main memory: one SimpleMemory bank per package or node
- ``processor.py``  Atomic / Timing / O3 / KVM cores with per-core CPUID values
- ``board.py``      the X86Board carrying them, booting our kernel with a readfile

These modules import gem5 (``m5``, ``gem5``) and therefore only load inside a gem5 binary.
"""
