"""The guest: what runs inside the simulated machine, and how it is built.

- ``kernel``: Linux 6.1 from the pinned Debian source with ``kernel-patches/`` applied.
- ``image``: the root filesystem (busybox, the runner, guest tools, workloads) as an
  initramfs and an ext4 image; the project's one cpio writer.
- ``workloads``: the workload registry (``workloads/*/workload.toml``) as data.
- ``programs``: compiling the workloads and users' programs into static guest binaries.
- ``characterise``: the workloads' cache behaviour measured with cachegrind.
- ``protocol``: the host side of the in-guest runner's protocol (spec in, results out).
- ``policies``: scheduler policies (``kernel-patches/policies.toml``).
- ``numa``: NUMA layouts on the kernel command line.

All of it is the same for both backends; what differs per backend is in
:mod:`schedlab.backends`.
"""
