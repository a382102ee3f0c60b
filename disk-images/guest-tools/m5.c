/*
 * m5: issue gem5 "m5 ops" (pseudo-instructions) from the guest on X86.
 *
 * Two forms, as gem5 accepts on X86: the instruction form (opcode 0x0f 0x04 followed by a
 * 16-bit function code; simulated CPUs only, it faults on real hardware, QEMU and KVM), and
 * the address form (a load from the page gem5 maps at 0xFFFF0000, at offset func << 8; it
 * works under KVM too and needs /dev/mem). Arguments travel in rdi, rsi, rdx; the result in
 * rax. Only the runner calls this, and only when the backend is gem5.
 *
 * Usage: m5 [--addr] exit|resetstats|dumpstats|dumpresetstats|checkpoint|workbegin|workend
 *        m5 [--addr] readfile   (copies the host file given to gem5's readfile to stdout)
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <termios.h>
#include <unistd.h>

#define M5_ADDR_BASE 0xFFFF0000UL

enum m5_func {
	M5_EXIT = 0x21,
	M5_RESETSTATS = 0x40,
	M5_DUMPSTATS = 0x41,
	M5_DUMPRESETSTATS = 0x42,
	M5_CHECKPOINT = 0x43,
	M5_READFILE = 0x50,
	M5_WORKBEGIN = 0x5a,
	M5_WORKEND = 0x5b,
};

/* The function code is an immediate of the instruction, so each op needs its own asm. */
#define M5_INSN(code, a0, a1, a2) ({                                          \
	uint64_t ret_;                                                        \
	__asm__ volatile(".byte 0x0f, 0x04\n\t.word " #code                   \
			 : "=a"(ret_) : "D"(a0), "S"(a1), "d"(a2) : "memory");  \
	ret_; })

static volatile uint8_t *m5_page;

static uint64_t m5_addr_op(unsigned int func, uint64_t a0, uint64_t a1, uint64_t a2)
{
	uint64_t ret;
	volatile uint8_t *where = m5_page + ((uintptr_t)func << 8);

	__asm__ volatile("movq (%1), %0"
			 : "=a"(ret) : "r"(where), "D"(a0), "S"(a1), "d"(a2) : "memory");
	return ret;
}

static int use_addr;

static uint64_t m5_op(unsigned int func, uint64_t a0, uint64_t a1, uint64_t a2)
{
	if (use_addr)
		return m5_addr_op(func, a0, a1, a2);
	switch (func) {
	case M5_EXIT: return M5_INSN(0x21, a0, a1, a2);
	case M5_RESETSTATS: return M5_INSN(0x40, a0, a1, a2);
	case M5_DUMPSTATS: return M5_INSN(0x41, a0, a1, a2);
	case M5_DUMPRESETSTATS: return M5_INSN(0x42, a0, a1, a2);
	case M5_CHECKPOINT: return M5_INSN(0x43, a0, a1, a2);
	case M5_READFILE: return M5_INSN(0x50, a0, a1, a2);
	case M5_WORKBEGIN: return M5_INSN(0x5a, a0, a1, a2);
	case M5_WORKEND: return M5_INSN(0x5b, a0, a1, a2);
	}
	return 0;
}

static void map_page(void)
{
	int fd = open("/dev/mem", O_RDWR | O_SYNC);

	if (fd < 0) {
		perror("m5: /dev/mem (needed by --addr)");
		exit(2);
	}
	m5_page = mmap(NULL, 0x10000, PROT_READ | PROT_WRITE, MAP_SHARED, fd, M5_ADDR_BASE);
	if (m5_page == MAP_FAILED) {
		perror("m5: mmap of the m5 op page");
		exit(2);
	}
}

static int readfile(void)
{
	static char buf[64 * 1024];
	uint64_t offset = 0, got;

	/* Touch the buffer so gem5 finds it mapped when it writes through the page table. */
	memset(buf, 0, sizeof(buf));
	while ((got = m5_op(M5_READFILE, (uintptr_t)buf, sizeof(buf), offset)) > 0) {
		if (fwrite(buf, 1, got, stdout) != got)
			return 1;
		offset += got;
	}
	return fflush(stdout) != 0;
}

int main(int argc, char **argv)
{
	static const struct { const char *name; unsigned int func; } ops[] = {
		{ "exit", M5_EXIT }, { "resetstats", M5_RESETSTATS },
		{ "dumpstats", M5_DUMPSTATS }, { "dumpresetstats", M5_DUMPRESETSTATS },
		{ "checkpoint", M5_CHECKPOINT }, { "workbegin", M5_WORKBEGIN },
		{ "workend", M5_WORKEND },
	};
	int i = 1;

	if (i < argc && strcmp(argv[i], "--addr") == 0) {
		use_addr = 1;
		map_page();
		i++;
	}
	if (i + 1 != argc) {
		fprintf(stderr, "usage: m5 [--addr] exit|resetstats|dumpstats|dumpresetstats|"
			"checkpoint|workbegin|workend|readfile\n");
		return 2;
	}
	if (strcmp(argv[i], "readfile") == 0)
		return readfile();
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		if (strcmp(argv[i], ops[k].name) == 0) {
			/*
			 * gem5's 8250 UART has no FIFO: the tty sends one character per
			 * transmit interrupt. Whatever it still holds when gem5 exits is lost,
			 * and a checkpoint would replay it after every restore. Not a tty
			 * (output redirected): nothing to wait for.
			 */
			if (ops[k].func == M5_EXIT || ops[k].func == M5_CHECKPOINT)
				tcdrain(STDOUT_FILENO);
			m5_op(ops[k].func, 0, 0, 0);
			return 0;
		}
	}
	fprintf(stderr, "m5: unknown op '%s'\n", argv[i]);
	return 2;
}
