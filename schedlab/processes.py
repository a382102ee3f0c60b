"""Child processes that do not outlive their parent.

A campaign driver killed with ``kill -9`` cannot clean up; its run workers, and their gem5
or QEMU, must not run on as orphans that a resumed campaign would race. Linux's
``PR_SET_PDEATHSIG`` has the kernel send the child a signal when its parent dies.
"""

from __future__ import annotations

import ctypes
import signal

PR_SET_PDEATHSIG = 1


def die_with_parent(sig: int = signal.SIGKILL) -> None:
    """``preexec_fn`` for subprocess.Popen: the child gets ``sig`` when its parent dies."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)
