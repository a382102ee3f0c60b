// SPDX-License-Identifier: MIT
/*
 * numa_linechase: the cycles one cache-line load takes from a given memory bank of a NUMA
 * machine, seen from the bank's own processor module, from another module of its node and
 * from another node (Hector: local, on-station, off-station over the ring).
 *
 * The host passes the banks of the modelled machine (physical range, node, the CPU of the
 * module that owns it) with --bank. Pinned to --alloc-cpu, the program faults in memory a
 * mebibyte at a time (first touch puts it on that CPU's node) and reads /proc/self/pagemap
 * (root: the runner) until --lines pages lie in one bank: the home bank.
 *
 * The chase: one line per page at the same page offset, so all lines fall in one set of a
 * physically indexed L1 (every page offset of a 16 KiB 4-way cache with 16-byte lines
 * names one set); with more lines than ways and LRU, every load misses, and --lines pages
 * stay within a 64-entry TLB. The same loop over two of those lines always hits. A load's
 * cost from the bank is the difference of the two, per access: the instructions, the L1
 * lookup and the timer reads cancel. Each is the median over --trials trials, so a timer
 * tick that lands in a trial does not move it.
 *
 * Set-up (allocation, pagemap) happens before the region of interest when the launcher
 * gives one (SCHEDLAB_ROI_START_NS, run with a warm-up): on gem5 it runs on the fast
 * Atomic cores, the chases on the detailed ones. The launcher starts the region (gem5's
 * switch to detailed cores) somewhat after that time: its warm-up sleep begins after it
 * has forked and placed the program (its "roi_late_ns"), which takes milliseconds on a
 * slow machine, and Atomic cores charge a miss no more than a hit. So the chases begin
 * --settle-ms later (the bench checks the launcher was not later than that). Cycles are
 * read with rdtsc, which on gem5's X86 cores counts core cycles.
 *
 * Output (key=value): home_bank, home_node, scanned_pages, and per class (local, station,
 * remote) <class>_cpu, <class>_miss_cycles, <class>_hit_cycles, <class>_load_cycles.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define MAX_BANKS 64
#define MAX_LINES 64
#define CHUNK (1UL << 20)

struct bank {
	uint64_t start, size;
	int node, cpu;
	int found;
	char *pages[MAX_LINES];
};

static struct bank banks[MAX_BANKS];
static int nbanks;
static long page_size;

static void __attribute__((format(printf, 1, 2))) die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "numa_linechase: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("cannot run on CPU %d: %s", cpu, strerror(errno));
	sched_yield();
}

static void parse_bank(const char *arg)
{
	struct bank *b = &banks[nbanks];

	if (nbanks == MAX_BANKS)
		die("too many --bank options (%s)", arg);
	if (sscanf(arg, "%" SCNi64 ",%" SCNi64 ",%d,%d", &b->start, &b->size, &b->node,
		   &b->cpu) != 4 || !b->size)
		die("--bank wants START,SIZE,NODE,CPU (bytes, e.g. 0x6000000,0x1800000,1,4), "
		    "not '%s'", arg);
	nbanks++;
}

/* The bank holding physical address pa, or NULL. */
static struct bank *bank_of(uint64_t pa)
{
	for (int i = 0; i < nbanks; i++)
		if (pa >= banks[i].start && pa - banks[i].start < banks[i].size)
			return &banks[i];
	return NULL;
}

/* Fault in memory on alloc_cpu's node until `lines` pages lie in one bank; that bank. */
static struct bank *find_home(int alloc_cpu, int lines, long scan_mib, long *scanned)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0)
		die("cannot open /proc/self/pagemap (%s): run as root", strerror(errno));
	pin(alloc_cpu);
	*scanned = 0;
	for (long mib = 0; mib < scan_mib; mib++) {
		char *chunk = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (chunk == MAP_FAILED)
			die("mmap failed: %s", strerror(errno));
		for (unsigned long off = 0; off < CHUNK; off += page_size) {
			uint64_t entry;
			off_t at = (off_t)((uintptr_t)(chunk + off) / page_size) * 8;

			chunk[off] = 1;
			if (pread(fd, &entry, sizeof(entry), at) != sizeof(entry))
				die("reading /proc/self/pagemap failed: %s", strerror(errno));
			(*scanned)++;
			/* Bit 63: present; bits 0-54: the page frame (zero without CAP_SYS_ADMIN). */
			if (!(entry >> 63) || !(entry & ((1ULL << 55) - 1)))
				continue;
			struct bank *b = bank_of((entry & ((1ULL << 55) - 1)) * page_size);

			if (b && b->found < lines) {
				b->pages[b->found++] = chunk + off;
				if (b->found == lines) {
					close(fd);
					return b;
				}
			}
		}
	}
	close(fd);
	return NULL;
}

/* Link line `offset` of each page into one cycle; its first line. */
static void **make_chain(char **pages, int n, unsigned long offset)
{
	for (int i = 0; i < n; i++)
		*(void **)(pages[i] + offset) = pages[(i + 1) % n] + offset;
	return (void **)(pages[0] + offset);
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median cycles per access of `trials` runs of `accesses` dependent loads from p. */
static double chase(void **p, int trials, int accesses)
{
	double per[4096];

	for (int i = 0; i < 4 * accesses; i++)	/* warm the TLB and the loop */
		p = *p;
	for (int t = 0; t < trials; t++) {
		uint64_t t0 = __builtin_ia32_rdtsc();

		for (int i = 0; i < accesses; i++)
			p = *p;
		per[t] = (double)(__builtin_ia32_rdtsc() - t0) / accesses;
	}
	/* Keep the chain's end live so the loop is not optimised away. */
	__asm__ volatile("" : : "r"(p));
	qsort(per, trials, sizeof(per[0]), by_value);
	return per[trials / 2];
}

static void wait_for_region(long settle_ms)
{
	const char *s = getenv("SCHEDLAB_ROI_START_NS");
	struct timespec at;
	long long ns;

	if (!s)
		return;
	ns = atoll(s) + settle_ms * 1000000LL;
	at.tv_sec = ns / 1000000000LL;
	at.tv_nsec = ns % 1000000000LL;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR)
		;
}

static void measure(const char *name, int cpu, struct bank *home, int trials, int accesses,
		    unsigned long offset)
{
	void **miss = make_chain(home->pages, home->found, offset);
	void **hit;
	double miss_cycles, hit_cycles;

	pin(cpu);
	miss_cycles = chase(miss, trials, accesses);
	hit = make_chain(home->pages, 2, offset);
	hit_cycles = chase(hit, trials, accesses);
	printf("%s_cpu=%d\n%s_miss_cycles=%.2f\n%s_hit_cycles=%.2f\n%s_load_cycles=%.2f\n",
	       name, cpu, name, miss_cycles, name, hit_cycles, name, miss_cycles - hit_cycles);
}

int main(int argc, char **argv)
{
	int alloc_cpu = -1, lines = 16, trials = 101, accesses = 256;
	long scan_mib = 96, settle_ms = 0, scanned;
	unsigned long offset = 0x100;

	page_size = sysconf(_SC_PAGESIZE);
	for (int i = 1; i < argc; i++) {
		const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!val)
			die("%s needs a value", opt);
		i++;
		if (!strcmp(opt, "--bank"))
			parse_bank(val);
		else if (!strcmp(opt, "--alloc-cpu"))
			alloc_cpu = atoi(val);
		else if (!strcmp(opt, "--lines"))
			lines = atoi(val);
		else if (!strcmp(opt, "--trials"))
			trials = atoi(val);
		else if (!strcmp(opt, "--accesses"))
			accesses = atoi(val);
		else if (!strcmp(opt, "--scan-mib"))
			scan_mib = atol(val);
		else if (!strcmp(opt, "--settle-ms"))
			settle_ms = atol(val);
		else
			die("unknown option %s (see the comment at the top of numa_linechase.c)", opt);
	}
	if (alloc_cpu < 0 || nbanks < 2)
		die("give --alloc-cpu and the machine's banks (--bank, at least two)");
	if (lines < 5 || lines > MAX_LINES)
		die("--lines must be 5..64: more lines than the L1's 4 ways, fewer than the TLB");
	if (trials < 1 || trials > 4096 || accesses < 1)
		die("--trials must be 1..4096 and --accesses positive");

	struct bank *home = find_home(alloc_cpu, lines, scan_mib, &scanned);

	if (!home)
		die("no bank held %d of the %ld pages faulted in on CPU %d; raise --scan-mib",
		    lines, scanned, alloc_cpu);
	struct bank *station = NULL, *remote = NULL;

	for (int i = 0; i < nbanks; i++) {
		struct bank *b = &banks[i];

		if (b->node == home->node && b->cpu != home->cpu && !station)
			station = b;
		/* Another node, not the system's node 0 if there is a choice. */
		if (b->node != home->node && (!remote || (remote->node == 0 && b->node != 0)))
			remote = b;
	}
	wait_for_region(settle_ms);
	printf("home_bank=%d\nhome_node=%d\nscanned_pages=%ld\n", (int)(home - banks),
	       home->node, scanned);
	measure("local", home->cpu, home, trials, accesses, offset);
	if (station)
		measure("station", station->cpu, home, trials, accesses, offset);
	if (remote)
		measure("remote", remote->cpu, home, trials, accesses, offset);
	return 0;
}
