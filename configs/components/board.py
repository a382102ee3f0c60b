"""The machine as a gem5 X86Board: our processor, hierarchy and memory, our kernel.

Models the catalogue machine's motherboard: gem5's PC platform (southbridge, local and I/O
APICs, serial console, m5 ops) clocked at the machine's core clock, so the caches' and
crossbars' latencies are core cycles. The guest is a vmlinux with its initramfs built in
(gem5's X86 loader takes no separate initrd) and no disk; the run specification reaches the
guest through ``m5 readfile``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from gem5.components.boards.x86_board import X86Board
from gem5.components.cachehierarchies.abstract_cache_hierarchy import AbstractCacheHierarchy
from gem5.components.memory.abstract_memory_system import AbstractMemorySystem
from gem5.components.processors.abstract_processor import AbstractProcessor


class PlanBoard(X86Board):
    """An X86Board with one cache-line size for the whole system and our guest set-up."""

    def __init__(self, clk_freq: str, processor: AbstractProcessor,
                 memory: AbstractMemorySystem, cache_hierarchy: AbstractCacheHierarchy,
                 cache_line_size: int):
        """
        :param clk_freq: the board clock in gem5's notation ("1860000000Hz"): the machine's
            core clock, which also times the caches and crossbars.
        :param processor: the cores (PlanProcessor, or FastForwardProcessor for runs that
            switch to detailed cores at the region of interest).
        :param memory: the memory banks (PlanMemory); at most 3 GiB on an X86Board.
        :param cache_hierarchy: the caches and crossbars (PlanCacheHierarchy, or gem5's
            stock hierarchy for the overhead benchmark).
        :param cache_line_size: bytes; gem5 has one line size per system.
        """
        super().__init__(clk_freq=clk_freq, processor=processor, memory=memory,
                         cache_hierarchy=cache_hierarchy)
        self.cache_line_size = cache_line_size

    def set_guest(self, kernel: Path, command_line: str, readfile: Optional[Path],
                  checkpoint: Optional[Path] = None) -> None:
        """Boot ``kernel`` (an ELF vmlinux) with ``command_line``; hand ``readfile`` to
        ``m5 readfile``; restore from ``checkpoint`` if given. Work items (m5 workbegin /
        workend) exit the simulation loop so the run script can bracket the ROI."""
        self._set_fullsystem(True)
        self.workload.object_file = str(kernel)
        self.workload.command_line = command_line
        if readfile is not None:
            self.readfile = str(readfile)
        self.exit_on_work_items = True
        self._checkpoint = checkpoint
