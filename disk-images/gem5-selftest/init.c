/*
 * A minimal PID 1 for testing schedlab's gem5 backend on its own (tests/test_gem5_integration.py),
 * independent of the project's in-guest runner. It
 *   1. prints what Linux made of the modelled topology (packages, core siblings, sched domains),
 *   2. issues `m5 checkpoint` (the boot run saves the checkpoint there and exits),
 *   3. after a restore, reads its run spec with `m5 readfile` ("loop N": iterations),
 *   4. runs a small memory-touching loop between `m5 workbegin` and `m5 workend`,
 *   5. ends the simulation with `m5 exit`.
 * m5 ops use gem5's x86 instruction form (0x0f 0x04 + 16-bit function code); arguments in
 * rdi, rsi, rdx, result in rax (gem5 src/sim/pseudo_inst.hh, util/m5).
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <termios.h>
#include <unistd.h>

#define M5OP(name, func)                                                              \
	static inline uint64_t name(uint64_t a, uint64_t b, uint64_t c)               \
	{                                                                             \
		uint64_t ret;                                                         \
		__asm__ volatile(".byte 0x0f, 0x04\n\t.word " #func                   \
				 : "=a"(ret) : "D"(a), "S"(b), "d"(c) : "memory");    \
		return ret;                                                           \
	}
M5OP(m5_exit, 0x21)
M5OP(m5_checkpoint, 0x43)
M5OP(m5_readfile, 0x50)
M5OP(m5_workbegin, 0x5a)
M5OP(m5_workend, 0x5b)

/*
 * gem5's 8250 UART has no FIFO and sends one character per transmit interrupt: wait until
 * the tty has sent everything, or gem5 exits (or checkpoints) with output still queued.
 */
static void drain_console(void)
{
	fflush(stdout);
	tcdrain(STDOUT_FILENO);
}

static void cat_line(const char *label, const char *path)
{
	char buf[256] = "";
	FILE *f = fopen(path, "r");
	if (f) {
		if (!fgets(buf, sizeof buf, f))
			buf[0] = 0;
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = 0;
	printf(" %s=%s", label, buf[0] ? buf : "?");
}

static void topology(void)
{
	char path[256];
	for (int cpu = 0; cpu < 64; cpu++) {
		snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology", cpu);
		if (access(path, F_OK))
			break;
		printf("GUEST-TOPOLOGY cpu=%d", cpu);
		snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", cpu);
		cat_line("package", path);
		snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/core_siblings_list", cpu);
		cat_line("siblings", path);
		printf(" domains=");
		for (int d = 0; d < 8; d++) {
			char name[64] = "";
			snprintf(path, sizeof path, "/sys/kernel/debug/sched/domains/cpu%d/domain%d/name", cpu, d);
			FILE *f = fopen(path, "r");
			if (!f)
				break;
			if (fgets(name, sizeof name, f))
				name[strcspn(name, "\n")] = 0;
			fclose(f);
			printf("%s%s", d ? "," : "", name);
		}
		printf("\n");
	}
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "physical id", 11) || !strncmp(line, "core id", 7))
			printf("GUEST-CPUINFO %s", line);
	if (f)
		fclose(f);
	fflush(stdout);
}

static volatile uint64_t sink;

int main(void)
{
	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	int fd = open("/dev/console", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 0), dup2(fd, 1), dup2(fd, 2);
	}
	mount("proc", "/proc", "proc", 0, NULL);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	topology();
	printf("GUEST-READY\n");
	drain_console();
	m5_checkpoint(0, 0, 0);

	/* Execution continues here after a restore (and, on the boot run, never: gem5 exits). */
	char spec[256] = "";
	uint64_t n = m5_readfile((uint64_t)spec, sizeof spec - 1, 0);
	spec[n < sizeof spec ? n : 0] = 0;
	long loops = 100000;
	sscanf(spec, "loop %ld", &loops);
	printf("GUEST-SPEC %s loops=%ld\n", spec[0] ? "read" : "empty", loops);
	fflush(stdout);

	static uint64_t data[8192]; /* 64 KiB: larger than L1, smaller than L2 */
	m5_workbegin(0, 0, 0);
	uint64_t acc = 0;
	for (long i = 0; i < loops; i++) {
		uint64_t j = (i * 2654435761u) & 8191;
		data[j] += i;
		acc += data[(j * 7) & 8191];
	}
	sink = acc;
	m5_workend(0, 0, 0);
	printf("GUEST-DONE loops=%ld acc=%llu\n", loops, (unsigned long long)acc);
	drain_console();
	m5_exit(0, 0, 0);
	for (;;)
		pause();
}
