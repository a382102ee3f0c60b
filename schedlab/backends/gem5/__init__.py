"""The gem5 backend, one module per job.

- ``binary``: find the user's gem5 (``GEM5``), check its version, hash it.
- ``plan``: the board plan, pure data derived from a resolved machine (cores, CPUID values,
  cache instances, memory banks and NUMA links); gem5's Python builds the board from it.
- ``process``: run the gem5 binary, stream its progress and events.
- ``checkpoint``: boot once with Atomic cores and keep the checkpoint.
- ``run``: restore a checkpoint into detailed cores and run one guest spec.
- ``stats``: parse stats.txt; the per-region metrics (IPC, misses per kilo-instruction).
- ``attribution``: per-task counters at the guest's context switches (runs inside gem5).
- ``topology``: does the guest see the modelled machine?
- ``selftest``: a minimal guest that exercises boot, checkpoint and restore on its own.

``plan`` and ``attribution`` are imported by gem5's embedded Python (``configs/``), so they
and this file use the standard library only.
"""
