"""Backends: where a resolved run executes.

- :mod:`schedlab.backends.qemu`: QEMU TCG, functional (placement, migrations, what the guest
  sees), seconds per run, no caches or latencies.
- :mod:`schedlab.backends.gem5`: gem5 full system, the timing model (IPC, misses).

Both take what :mod:`schedlab.runs` resolved and return the guest's console (and, on gem5,
statistics); only :mod:`schedlab.runs` writes a run directory.
"""
