// SPDX-License-Identifier: GPL-2.0
/*
 * Software mixer: the real-time streaming benchmark of the task-affinity
 * study (De Marchi, Bellasi, Fornaciari, Betz).
 *
 *   wave0 + wave1 -> mixer0 \
 *                            mixer2 -> sample (production timestamp)
 *   wave2 + wave3 -> mixer1 /
 *
 * Seven threads, all SCHED_FIFO at one priority (unless --sched other; without
 * the privilege and without an explicit --sched fifo it falls back to
 * SCHED_OTHER and reports sched=other, sched_fallback=1).
 * Every edge is a single-packet buffer guarded by a mutex and a pair of
 * empty/full semaphores, so each packet hand-over wakes the consumer.
 *
 * With --declare-affinity each consumer names its producers to the kernel
 * (prctl PR_SCHED_TASK_AFFINITY, from kernel-patches/), which places it on
 * a CPU sharing cache with where they ran.
 *
 * stdout: key=value results. Files in --out (default $SCHEDLAB_OUT, else
 * the current directory):
 *   production.csv  production time of every sample (t[n] - t[n-1], ns)
 *   cpus.csv        migrations map: task,first,last,cpus; cpus gives the
 *                   CPU of each sample first..last where the task had its
 *                   input in hand (waves: packet computed; mixers: both
 *                   inputs taken), run-length coded (below)
 *   handover.csv    task,first,last,cpus likewise: the CPU where the task
 *                   handed the sample over (put it into its output buffer),
 *                   '.' where that is the CPU of cpus.csv (it differs when
 *                   the task blocked on a full buffer and moved meanwhile)
 *   exec.csv        execution time per task, every exec_stride-th sample
 *   topology.csv    cpu -> CPUs sharing its last-level cache, as the
 *                   system reports it
 *   tids.csv        task,tid: the thread id of each task (the id under which
 *                   gem5's per-task attribution charges its counters)
 * The cpus code: one symbol per sample -- CPU 0-61 as one character of
 * 0-9a-zA-Z, any CPU as (N), '.' (handover.csv) as said -- and a symbol
 * followed by {K} stands for K samples. So the maps take at most about one
 * byte per task and sample whatever the migrations, and a few bytes for a
 * task that stays put; rows end after about ROW_CHARS characters.
 * Exit 0 only if the pipeline's output equals a sequential recomputation
 * and the timestamps are strictly increasing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/rseq.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef PR_SCHED_TASK_AFFINITY
#define PR_SCHED_TASK_AFFINITY		0x54414646
#define PR_SCHED_TASK_AFFINITY_ADD	0
#define PR_SCHED_TASK_AFFINITY_CLEAR	1
#define PR_SCHED_TASK_AFFINITY_COUNT	2
#endif

enum { WAVE0, WAVE1, WAVE2, WAVE3, MIXER0, MIXER1, MIXER2, NTASKS };
static const char *const task_name[NTASKS] = {
	"wave0", "wave1", "wave2", "wave3", "mixer0", "mixer1", "mixer2",
};
/* Producers of each task; -1: none */
static const int producer[NTASKS][2] = {
	{ -1, -1 }, { -1, -1 }, { -1, -1 }, { -1, -1 },
	{ WAVE0, WAVE1 }, { WAVE2, WAVE3 }, { MIXER0, MIXER1 },
};

/* One packet in flight per edge: the output buffer of each producer */
struct buffer {
	pthread_mutex_t lock;
	sem_t empty;
	sem_t full;
	int16_t *data;
};

struct task {
	int id;
	pid_t tid;
	struct buffer out;		/* unused by mixer2 */
	int16_t *cpu;			/* CPU per sample, input in hand */
	int16_t *cpu_out;		/* CPU per sample, output handed over */
	uint32_t *exec_ns;		/* thread CPU time per sample */
	long kernel_migrations;		/* from /proc, -1 if not available */
	long placements;
	int error;
};

static long samples = 150000;
static long packet_len = 512;		/* int16 values per packet */
static int declare_affinity;
static int use_fifo = 1;
static int fifo_required;	/* --sched fifo given explicitly */
static int sched_fallback;
static int rt_prio = 50;
static int verify = 1;
static const char *outdir;

static struct task tasks[NTASKS];
static uint64_t *stamp_ns;		/* production time of each sample */
static uint64_t out_checksum;
static pthread_barrier_t start_barrier;
static pthread_mutex_t fatal_lock = PTHREAD_MUTEX_INITIALIZER;

static void usage_error(const char *msg, const char *arg)
{
	fprintf(stderr, "mixer: %s%s%s (usage: mixer [--samples N] [--packet BYTES] [--declare-affinity] [--sched fifo|other] [--prio P] [--no-verify] [--out DIR])\n",
		msg, arg ? ": " : "", arg ? arg : "");
	exit(2);
}

static long parse_long(const char *s, long lo, long hi, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || !*s || *end || v < lo || v > hi)
		usage_error(what, s);
	return v;
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Deterministic wave content, so a sequential run can check the pipeline */
static void fill_wave(int16_t *p, int wave, long n)
{
	uint32_t phase = (uint32_t)(n * packet_len) * (uint32_t)(wave + 3);
	long i;

	for (i = 0; i < packet_len; i++, phase += (uint32_t)(wave + 3))
		p[i] = (int16_t)((phase * 2654435761u) >> 16);
}

static void mix(int16_t *out, const int16_t *a, const int16_t *b)
{
	long i;

	for (i = 0; i < packet_len; i++)
		out[i] = (int16_t)(((int32_t)a[i] + (int32_t)b[i]) / 2);
}

static uint64_t checksum_step(uint64_t sum, const int16_t *p)
{
	long i;

	for (i = 0; i < packet_len; i++)
		sum = sum * 1099511628211u + (uint16_t)p[i];
	return sum;
}

static void take(struct buffer *b, int16_t *dst)
{
	sem_wait(&b->full);
	pthread_mutex_lock(&b->lock);
	memcpy(dst, b->data, packet_len * sizeof(*dst));
	pthread_mutex_unlock(&b->lock);
	sem_post(&b->empty);
}

static void put(struct buffer *b, const int16_t *src)
{
	sem_wait(&b->empty);
	pthread_mutex_lock(&b->lock);
	memcpy(b->data, src, packet_len * sizeof(*src));
	pthread_mutex_unlock(&b->lock);
	sem_post(&b->full);
}

static void read_kernel_counters(struct task *t)
{
	char line[128];
	FILE *f;

	t->kernel_migrations = -1;
	t->placements = -1;
	f = fopen("/proc/thread-self/task_affinity", "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "migrations: %ld", &t->kernel_migrations);
		sscanf(line, "placements: %ld", &t->placements);
	}
	fclose(f);
}

/*
 * The migrations map is sched_getcpu() at every sample. glibc reads it from the
 * thread's rseq area where the kernel has rseq, else through the vDSO, which on
 * x86 uses LSL on a per-CPU segment; gem5 v24 does not model LSL and leaves the
 * selector itself (123) in the result. Check it once per thread against the
 * kernel's own answer, so that a map cannot be silently wrong.
 */
static void check_getcpu(const struct task *t)
{
	unsigned int kernel_cpu = 0;
	int tries, before = -1, after = -1;

#ifdef FAKE_CPUS	/* tests/test_mixer.py's stand-in getcpu is not the kernel's */
	return;
#endif
	for (tries = 0; tries < 3; tries++) {
		before = sched_getcpu();
		if (syscall(SYS_getcpu, &kernel_cpu, NULL, NULL))
			return;		/* nothing to check against */
		after = sched_getcpu();
		if (before == (int)kernel_cpu && after == (int)kernel_cpu)
			return;		/* else it may have moved between the calls */
	}
	pthread_mutex_lock(&fatal_lock);
	fprintf(stderr, "mixer: %s: sched_getcpu() says CPU %d but the kernel says CPU %u: build the guest kernel with CONFIG_RSEQ, so that glibc reads the CPU from rseq rather than through the vDSO's LSL\n",
		task_name[t->id], before, kernel_cpu);
	exit(1);
}

static void *task_main(void *arg)
{
	struct task *t = arg;
	int16_t *a = malloc(packet_len * sizeof(*a));
	int16_t *b = malloc(packet_len * sizeof(*b));
	int16_t *o = malloc(packet_len * sizeof(*o));
	uint64_t sum = 0, cpu_prev;
	long n;
	int k;

	if (!a || !b || !o) {
		t->error = ENOMEM;
		pthread_barrier_wait(&start_barrier);
		pthread_barrier_wait(&start_barrier);
		return NULL;
	}
	t->tid = (pid_t)syscall(SYS_gettid);
	check_getcpu(t);
	/* Every tid is known after the first barrier: declare, then start */
	pthread_barrier_wait(&start_barrier);
	if (declare_affinity) {
		for (k = 0; k < 2; k++) {
			int p = producer[t->id][k];

			if (p >= 0 && prctl(PR_SCHED_TASK_AFFINITY,
					    PR_SCHED_TASK_AFFINITY_ADD,
					    (unsigned long)tasks[p].tid, 0, 0)) {
				/* Measuring without the graph would mislead */
				pthread_mutex_lock(&fatal_lock);
				fprintf(stderr, "mixer: %s cannot declare its producers (kernel without task-affinity?): %s\n",
					task_name[t->id], strerror(errno));
				exit(1);
			}
		}
	}
	pthread_barrier_wait(&start_barrier);

	cpu_prev = now_ns(CLOCK_THREAD_CPUTIME_ID);
	for (n = 0; n < samples; n++) {
		uint64_t cpu_now;

		if (t->id <= WAVE3) {
			fill_wave(o, t->id, n);
		} else {
			take(&tasks[producer[t->id][0]].out, a);
			take(&tasks[producer[t->id][1]].out, b);
			mix(o, a, b);
		}
		t->cpu[n] = (int16_t)sched_getcpu();
		if (t->id == MIXER2) {
			stamp_ns[n] = now_ns(CLOCK_MONOTONIC);
			sum = checksum_step(sum, o);
		} else {
			put(&t->out, o);
		}
		t->cpu_out[n] = (int16_t)sched_getcpu();
		cpu_now = now_ns(CLOCK_THREAD_CPUTIME_ID);
		t->exec_ns[n] = (uint32_t)(cpu_now - cpu_prev > UINT32_MAX ?
					   UINT32_MAX : cpu_now - cpu_prev);
		cpu_prev = cpu_now;
	}
	if (t->id == MIXER2)
		out_checksum = sum;
	read_kernel_counters(t);
	free(a);
	free(b);
	free(o);
	return NULL;
}

static uint64_t sequential_checksum(void)
{
	int16_t *w[4], *m0, *m1, *m2;
	uint64_t sum = 0;
	long n;
	int k;

	for (k = 0; k < 4; k++)
		w[k] = malloc(packet_len * sizeof(int16_t));
	m0 = malloc(packet_len * sizeof(int16_t));
	m1 = malloc(packet_len * sizeof(int16_t));
	m2 = malloc(packet_len * sizeof(int16_t));
	for (n = 0; n < samples; n++) {
		for (k = 0; k < 4; k++)
			fill_wave(w[k], k, n);
		mix(m0, w[0], w[1]);
		mix(m1, w[2], w[3]);
		mix(m2, m0, m1);
		sum = checksum_step(sum, m2);
	}
	for (k = 0; k < 4; k++)
		free(w[k]);
	free(m0);
	free(m1);
	free(m2);
	return sum;
}

static FILE *open_out(const char *name)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", outdir, name);
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "mixer: cannot write %s: %s\n", path, strerror(errno));
		exit(1);
	}
	return f;
}

static void write_topology(void)
{
	FILE *f = open_out("topology.csv");
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	long cpu;

	fprintf(f, "cpu,llc_cpus,source\n");
	for (cpu = 0; cpu < ncpu; cpu++) {
		char path[128], list[256] = "", best[256] = "";
		const char *source = "none";
		int idx;
		FILE *c;

		/* The highest cache index is the last level */
		for (idx = 0; idx < 8; idx++) {
			snprintf(path, sizeof(path),
				 "/sys/devices/system/cpu/cpu%ld/cache/index%d/shared_cpu_list",
				 cpu, idx);
			c = fopen(path, "r");
			if (!c)
				break;
			if (fgets(list, sizeof(list), c)) {
				strcpy(best, list);
				source = "cache";
			}
			fclose(c);
		}
		if (!best[0]) {
			/* Minimal kernels lack cacheinfo: the package is the
			 * best guess (it is the LLC on the machines we model)
			 */
			snprintf(path, sizeof(path),
				 "/sys/devices/system/cpu/cpu%ld/topology/package_cpus_list", cpu);
			c = fopen(path, "r");
			if (c) {
				if (fgets(best, sizeof(best), c))
					source = "package";
				fclose(c);
			}
		}
		best[strcspn(best, "\n")] = 0;
		fprintf(f, "%ld,\"%s\",%s\n", cpu, best, source);
	}
	fclose(f);
}

#define ROW_CHARS 4000
#define SAME_CPU (1 << 20)	/* handover.csv: handed over where taken */

static const char cpu_symbols[] =
	"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

static int map_symbol(const int16_t *cpu, const int16_t *same_as, long n)
{
	return same_as && cpu[n] == same_as[n] ? SAME_CPU : cpu[n];
}

/* One run: the symbol, repeated when short, else followed by {count} */
static int format_run(char *buf, int symbol, long count)
{
	char one[16];
	int len, i;

	if (symbol == SAME_CPU)
		len = snprintf(one, sizeof(one), ".");
	else if (symbol >= 0 && symbol < (int)sizeof(cpu_symbols) - 1)
		len = snprintf(one, sizeof(one), "%c", cpu_symbols[symbol]);
	else
		len = snprintf(one, sizeof(one), "(%d)", symbol);
	if (len == 1 && count <= 4) {
		for (i = 0; i < count; i++)
			buf[i] = one[0];
		return (int)count;
	}
	if (count == 1)
		return sprintf(buf, "%s", one);
	return sprintf(buf, "%s{%ld}", one, count);
}

/* Rows task,first,last,cpus of one task's map (same_as: '.' where equal) */
static void write_map(FILE *f, int k, const int16_t *cpu, const int16_t *same_as)
{
	char row[ROW_CHARS + 64];
	long first = 0, n = 0;
	int len = 0;

	while (n < samples) {
		int symbol = map_symbol(cpu, same_as, n);
		long end = n + 1;

		while (end < samples && map_symbol(cpu, same_as, end) == symbol)
			end++;
		len += format_run(row + len, symbol, end - n);
		n = end;
		if (len >= ROW_CHARS || n == samples) {
			row[len] = 0;
			fprintf(f, "%s,%ld,%ld,%s\n", task_name[k], first, n - 1, row);
			first = n;
			len = 0;
		}
	}
}

static void write_outputs(void)
{
	long stride = samples > 10000 ? (samples + 9999) / 10000 : 1;
	FILE *f;
	long n;
	int k;

	f = open_out("production.csv");
	fprintf(f, "production_ns\n");
	for (n = 1; n < samples; n++)
		fprintf(f, "%llu\n", (unsigned long long)(stamp_ns[n] - stamp_ns[n - 1]));
	fclose(f);

	f = open_out("cpus.csv");
	fprintf(f, "task,first,last,cpus\n");
	for (k = 0; k < NTASKS; k++)
		write_map(f, k, tasks[k].cpu, NULL);
	fclose(f);

	f = open_out("handover.csv");
	fprintf(f, "task,first,last,cpus\n");
	for (k = 0; k < NTASKS; k++)
		write_map(f, k, tasks[k].cpu_out, tasks[k].cpu);
	fclose(f);

	f = open_out("tids.csv");
	fprintf(f, "task,tid\n");
	for (k = 0; k < NTASKS; k++)
		fprintf(f, "%s,%d\n", task_name[k], (int)tasks[k].tid);
	fclose(f);

	f = open_out("exec.csv");
	fprintf(f, "sample");
	for (k = 0; k < NTASKS; k++)
		fprintf(f, ",%s", task_name[k]);
	fprintf(f, "\n");
	for (n = 0; n < samples; n += stride) {
		fprintf(f, "%ld", n);
		for (k = 0; k < NTASKS; k++)
			fprintf(f, ",%u", tasks[k].exec_ns[n]);
		fprintf(f, "\n");
	}
	fclose(f);
	printf("exec_stride=%ld\n", stride);

	write_topology();
}

/* Newton's method: spares the build a libm for two square roots */
static double root(double x)
{
	double r = x > 1 ? x : 1;
	int i;

	if (x <= 0)
		return 0;
	for (i = 0; i < 200; i++)
		r = 0.5 * (r + x / r);
	return r;
}

static void print_stats(void)
{
	double sum = 0, sq = 0, mean, var;
	uint64_t lo = UINT64_MAX, hi = 0;
	long n;
	int k;

	for (n = 1; n < samples; n++) {
		uint64_t d = stamp_ns[n] - stamp_ns[n - 1];

		sum += (double)d;
		lo = d < lo ? d : lo;
		hi = d > hi ? d : hi;
	}
	mean = sum / (double)(samples - 1);
	for (n = 1; n < samples; n++) {
		double d = (double)(stamp_ns[n] - stamp_ns[n - 1]) - mean;

		sq += d * d;
	}
	var = samples > 2 ? sq / (double)(samples - 2) : 0;
	printf("mean_ns=%.1f\n", mean);
	printf("sd_ns=%.1f\n", root(var));
	printf("rho_ns=%.1f\n", mean + 2 * (root(var)));
	printf("min_ns=%llu\nmax_ns=%llu\n", (unsigned long long)lo,
	       (unsigned long long)hi);
	printf("total_ns=%llu\n",
	       (unsigned long long)(stamp_ns[samples - 1] - stamp_ns[0]));

	for (k = 0; k < NTASKS; k++) {
		double es = 0, eq = 0, em;
		long moves = 0;

		for (n = 0; n < samples; n++) {
			es += tasks[k].exec_ns[n];
			if (n && tasks[k].cpu[n] != tasks[k].cpu[n - 1])
				moves++;
		}
		em = es / (double)samples;
		for (n = 0; n < samples; n++)
			eq += (tasks[k].exec_ns[n] - em) * (tasks[k].exec_ns[n] - em);
		printf("%s_exec_mean_ns=%.1f\n", task_name[k], em);
		printf("%s_exec_var_ns2=%.1f\n", task_name[k],
		       samples > 1 ? eq / (double)(samples - 1) : 0.0);
		printf("%s_cpu_changes=%ld\n", task_name[k], moves);
		if (tasks[k].kernel_migrations >= 0) {
			printf("%s_migrations=%ld\n", task_name[k], tasks[k].kernel_migrations);
			printf("%s_placements=%ld\n", task_name[k], tasks[k].placements);
		}
	}
}

int main(int argc, char **argv)
{
	pthread_t threads[NTASKS];
	pthread_attr_t attr;
	struct sched_param sp;
	int i, k, err, ok = 1;
	long n;

	outdir = getenv("SCHEDLAB_OUT");
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--declare-affinity")) {
			declare_affinity = 1;
			continue;
		}
		if (!strcmp(a, "--no-verify")) {
			verify = 0;
			continue;
		}
		if (!v)
			usage_error("unknown option or missing value", a);
		i++;
		if (!strcmp(a, "--samples")) {
			samples = parse_long(v, 2, 100000000, "bad --samples");
		} else if (!strcmp(a, "--packet")) {
			long bytes = parse_long(v, 2, 1 << 24, "bad --packet");

			if (bytes % 2)
				usage_error("--packet must be even (int16 values)", v);
			packet_len = bytes / 2;
		} else if (!strcmp(a, "--sched")) {
			if (!strcmp(v, "fifo"))
				use_fifo = fifo_required = 1;
			else if (!strcmp(v, "other"))
				use_fifo = 0;
			else
				usage_error("bad --sched (fifo or other)", v);
		} else if (!strcmp(a, "--prio")) {
			rt_prio = (int)parse_long(v, 1, 99, "bad --prio");
		} else if (!strcmp(a, "--out")) {
			outdir = v;
		} else {
			usage_error("unknown option", a);
		}
	}
	if (!outdir || !*outdir)
		outdir = ".";
	mkdir(outdir, 0755);

	stamp_ns = calloc(samples, sizeof(*stamp_ns));
	if (!stamp_ns) {
		fprintf(stderr, "mixer: out of memory for %ld samples\n", samples);
		return 1;
	}
	for (k = 0; k < NTASKS; k++) {
		struct task *t = &tasks[k];

		t->id = k;
		t->cpu = calloc(samples, sizeof(*t->cpu));
		t->cpu_out = calloc(samples, sizeof(*t->cpu_out));
		t->exec_ns = calloc(samples, sizeof(*t->exec_ns));
		t->out.data = calloc(packet_len, sizeof(int16_t));
		if (!t->cpu || !t->cpu_out || !t->exec_ns || !t->out.data) {
			fprintf(stderr, "mixer: out of memory for %ld samples\n", samples);
			return 1;
		}
		pthread_mutex_init(&t->out.lock, NULL);
		sem_init(&t->out.empty, 0, 1);
		sem_init(&t->out.full, 0, 0);
	}
	pthread_barrier_init(&start_barrier, NULL, NTASKS);

	pthread_attr_init(&attr);
	if (use_fifo) {
		pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
		pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
		sp.sched_priority = rt_prio;
		pthread_attr_setschedparam(&attr, &sp);
	}
	for (k = 0; k < NTASKS; k++) {
		err = pthread_create(&threads[k], &attr, task_main, &tasks[k]);
		if (err == EPERM && use_fifo && k == 0 && !fifo_required) {
			/* Unprivileged (native unit tests): run, but say so */
			fprintf(stderr, "mixer: no permission for SCHED_FIFO, running SCHED_OTHER\n");
			use_fifo = 0;
			sched_fallback = 1;
			pthread_attr_destroy(&attr);
			pthread_attr_init(&attr);
			err = pthread_create(&threads[k], &attr, task_main, &tasks[k]);
		}
		if (err) {
			fprintf(stderr, "mixer: cannot start %s thread: %s%s\n",
				use_fifo ? "a SCHED_FIFO" : "a", strerror(err),
				use_fifo ? " (needs CAP_SYS_NICE; --sched other runs without)" : "");
			return 1;
		}
	}
	for (k = 0; k < NTASKS; k++)
		pthread_join(threads[k], NULL);

	for (k = 0; k < NTASKS; k++) {
		if (tasks[k].error) {
			fprintf(stderr, "mixer: %s: %s\n", task_name[k],
				strerror(tasks[k].error));
			return 1;
		}
	}

	printf("samples=%ld\n", samples);
	printf("packet_bytes=%ld\n", packet_len * 2);
	printf("sched=%s\n", use_fifo ? "fifo" : "other");
	printf("sched_fallback=%d\n", sched_fallback);
	printf("declared_affinity=%d\n", declare_affinity);
	printf("getcpu=%s\n", __rseq_size ? "rseq" : "vdso");
	printf("checksum=%016llx\n", (unsigned long long)out_checksum);
	print_stats();
	write_outputs();

	for (n = 1; n < samples; n++) {
		if (stamp_ns[n] <= stamp_ns[n - 1]) {
			printf("monotonic=0\n");
			ok = 0;
			break;
		}
	}
	if (ok)
		printf("monotonic=1\n");
	if (verify) {
		int same = sequential_checksum() == out_checksum;

		printf("verified=%d\n", same);
		ok &= same;
	}
	return ok ? 0 : 1;
}
