/*
 * m5op.h: gem5 "m5 ops" (pseudo-instructions) on X86, shared by m5.c and launch.c.
 *
 * Two forms, as gem5 accepts on X86: the instruction form (opcode 0x0f 0x04 followed by a
 * 16-bit function code; simulated CPUs only, it faults on real hardware, QEMU and KVM), and
 * the address form (a load from the page gem5 maps at 0xFFFF0000, at offset func << 8; it
 * works under KVM too and needs /dev/mem). Arguments travel in rdi, rsi, rdx, rcx (gem5's
 * X86PseudoInstABI); the result in rax.
 *
 * launch.c issues its ops with these functions instead of running the m5 program: a process
 * (a shell and m5) costs about a million simulated instructions, and those around
 * workbegin/workend would fall inside the region of interest.
 */
#ifndef SCHEDLAB_M5OP_H
#define SCHEDLAB_M5OP_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define M5_ADDR_BASE 0xFFFF0000UL

enum m5_func {
	M5_EXIT = 0x21,
	M5_RESETSTATS = 0x40,
	M5_DUMPSTATS = 0x41,
	M5_DUMPRESETSTATS = 0x42,
	M5_CHECKPOINT = 0x43,
	M5_WRITEFILE = 0x4f,
	M5_READFILE = 0x50,
	M5_SWITCHCPU = 0x52,
	M5_WORKBEGIN = 0x5a,
	M5_WORKEND = 0x5b,
};

/* The function code is an immediate of the instruction, so each op needs its own asm. */
#define M5_INSN(code, a0, a1, a2, a3) ({                                      \
	uint64_t ret_;                                                        \
	register uint64_t a3_ __asm__("rcx") = (a3);                          \
	__asm__ volatile(".byte 0x0f, 0x04\n\t.word " #code                   \
			 : "=a"(ret_)                                         \
			 : "D"(a0), "S"(a1), "d"(a2), "r"(a3_) : "memory");   \
	ret_; })

static volatile uint8_t *m5_page;	/* mapped: the address form is in use */

static inline uint64_t m5_addr_op(unsigned int func, uint64_t a0, uint64_t a1, uint64_t a2,
				  uint64_t a3)
{
	uint64_t ret;
	volatile uint8_t *where = m5_page + ((uintptr_t)func << 8);
	register uint64_t a3_ __asm__("rcx") = a3;

	__asm__ volatile("movq (%1), %0"
			 : "=a"(ret)
			 : "r"(where), "D"(a0), "S"(a1), "d"(a2), "r"(a3_) : "memory");
	return ret;
}

static inline uint64_t m5_op(unsigned int func, uint64_t a0, uint64_t a1, uint64_t a2,
			     uint64_t a3)
{
	if (m5_page)
		return m5_addr_op(func, a0, a1, a2, a3);
	switch (func) {
	case M5_EXIT: return M5_INSN(0x21, a0, a1, a2, a3);
	case M5_RESETSTATS: return M5_INSN(0x40, a0, a1, a2, a3);
	case M5_DUMPSTATS: return M5_INSN(0x41, a0, a1, a2, a3);
	case M5_DUMPRESETSTATS: return M5_INSN(0x42, a0, a1, a2, a3);
	case M5_CHECKPOINT: return M5_INSN(0x43, a0, a1, a2, a3);
	case M5_WRITEFILE: return M5_INSN(0x4f, a0, a1, a2, a3);
	case M5_READFILE: return M5_INSN(0x50, a0, a1, a2, a3);
	case M5_SWITCHCPU: return M5_INSN(0x52, a0, a1, a2, a3);
	case M5_WORKBEGIN: return M5_INSN(0x5a, a0, a1, a2, a3);
	case M5_WORKEND: return M5_INSN(0x5b, a0, a1, a2, a3);
	}
	return 0;
}

/* The address form: map gem5's m5-op page through /dev/mem; 0 on success. */
static inline int m5_use_addr(void)
{
	int fd = open("/dev/mem", O_RDWR | O_SYNC);
	void *page;

	if (fd < 0) {
		perror("m5: /dev/mem (needed by the address form)");
		return -1;
	}
	page = mmap(NULL, 0x10000, PROT_READ | PROT_WRITE, MAP_SHARED, fd, M5_ADDR_BASE);
	close(fd);
	if (page == MAP_FAILED) {
		perror("m5: mmap of the m5 op page");
		return -1;
	}
	m5_page = page;
	return 0;
}

#endif
