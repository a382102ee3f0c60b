"""Main memory of a machine: one SimpleMemory bank per package or NUMA node.

Uniform machines (Clovertown, Niagara, ...) get one bank covering the whole (capped)
memory. NUMA machines get one bank per NUMA node (Westmere: one per socket) or, where the
catalogue distinguishes own-module from same-station memory, one per package (Hector's
4 MB processor modules). Each bank answers after the catalogue's local latency; the extra
latency of same-node and remote banks is added on the path from each requester
(hierarchy.py), so it depends on who asks. Bandwidth is SimpleMemory's default (the
catalogue gives none).
"""

from typing import List, Sequence, Tuple

from m5.objects import AddrRange, Port, SimpleMemory

from gem5.components.boards.abstract_board import AbstractBoard
from gem5.components.memory.abstract_memory_system import AbstractMemorySystem
from gem5.utils.override import overrides

from schedlab.backends.gem5.plan import BankPlan


class PlanMemory(AbstractMemorySystem):
    """Banks of fixed-latency memory (the machine's memory controllers: the chipset's on the
    front-side-bus machines, each socket's integrated controller on Westmere, each processor
    module's memory on Hector) that together cover [0, size)."""

    def __init__(self, banks: Sequence[BankPlan], latency_ns: float, jitter_ns: float = 0.0):
        """
        :param banks: the banks in address order, each a contiguous range of bytes
            (``start``, ``size``); together they cover [0, total size) without gaps.
        :param latency_ns: the access latency of every bank in nanoseconds (the
            catalogue's local memory latency; gem5 keeps it to the picosecond).
        :param jitter_ns: a random extra latency of every access, uniform in [0, it]
            nanoseconds (SimpleMemory's ``latency_var``, drawn from gem5's random number
            generator, which the run's seed seeds); 0: none.
        """
        super().__init__()
        self._size = sum(b.size for b in banks)
        starts = [b.start for b in banks]
        if starts != [sum(b.size for b in banks[:i]) for i in range(len(banks))]:
            raise ValueError(f"PlanMemory: banks must cover memory from 0 in order without "
                             f"gaps, got {[(b.start, b.size) for b in banks]}")
        latency = f"{latency_ns:.3f}ns"
        self.banks = [SimpleMemory(latency=latency, latency_var=f"{jitter_ns:.3f}ns",
                                   range=AddrRange(b.start, size=b.size))
                      for b in banks]

    @overrides(AbstractMemorySystem)
    def incorporate_memory(self, board: AbstractBoard) -> None:
        pass

    @overrides(AbstractMemorySystem)
    def get_mem_ports(self) -> Sequence[Tuple[AddrRange, Port]]:
        """(range, port) of every bank, in the order of ``banks``."""
        return [(bank.range, bank.port) for bank in self.banks]

    @overrides(AbstractMemorySystem)
    def get_memory_controllers(self):
        return list(self.banks)

    @overrides(AbstractMemorySystem)
    def get_size(self) -> int:
        return self._size

    @overrides(AbstractMemorySystem)
    def set_memory_range(self, ranges: List[AddrRange]) -> None:
        # The X86Board hands us one range [0, size); our banks partition it already.
        if len(ranges) != 1 or int(ranges[0].start) != 0 or ranges[0].size() != self._size:
            raise ValueError(f"PlanMemory expects one range [0, {self._size}) from the board, "
                             f"got {ranges}")

    @overrides(AbstractMemorySystem)
    def get_uninterleaved_range(self) -> List[AddrRange]:
        return [AddrRange(0, size=self._size)]
