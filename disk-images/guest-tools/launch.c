/*
 * launch: run one workload the way a run specification asks, and report how it ran.
 *
 * It places the workload (CPU affinity, scheduling class and priority), optionally brackets it
 * with gem5 m5 ops (reset stats + work begin before, work end + dump stats after), captures
 * its stdout, and prints one framed line the host parses:
 *   @@schedlab <nonce> result {"job":..., "rep":..., "exit":..., "elapsed_ns":..., ...}
 * The task's scheduler counters (migrations, context switches) are read from /proc/<pid>/sched
 * after it exits but before it is reaped (waitid with WNOWAIT), so they cover its whole life.
 *
 * With --duration-us N the region of interest ends N microseconds after it began (a timer of
 * this process, so it ends at the workload's duration to the microsecond; timeout(1) of
 * busybox counts whole seconds) and the workload is then sent SIGTERM, with its process
 * group; the result says "stopped":true. The region ends before the signal, not when the
 * workload has gone: its exit (freeing its memory, a program's own clean-up) is not part of
 * what it measures, and took 0.5 to 1.4 ms after 6 ms regions and up to 6 ms after 20 ms
 * ones in gem5 runs that ended the region at the reaping.
 *
 * With --warmup-us W the region of interest (the m5 ops and the --duration-us timer) begins
 * W microseconds after the workload started, so its start-up (exec, page faults, building
 * its input) is outside the region and its caches are warm when the region begins (on gem5
 * the warm-up runs on the Atomic cores, whose caches are the detailed cores' caches). If the
 * workload ends during the warm-up the result says "ended_in_warmup":true.
 *
 * With --caches-on-us C (gem5 runs that fast-forward with the caches bypassed) the launcher
 * issues m5 switchcpu C microseconds before the region begins, or before the workload starts
 * if its warm-up is not longer than C: gem5 then hands the guest from cores whose accesses
 * bypass the caches (fast, but the caches stay cold) to Atomic cores with the caches, so
 * that they are warm when the region begins. The m5 op, not a timer of gem5's, because only
 * the guest knows when its workload started.
 *
 * The workload learns when the region of interest begins from SCHEDLAB_ROI_START_NS
 * (CLOCK_MONOTONIC nanoseconds: its start plus the warm-up, its start without one), so a
 * workload that reports over its whole life (accesses per second, response times) can also
 * report over the region alone (workloads/common/wl.h, wl_roi_start).  The m5 ops come when
 * this process wakes from the warm-up, which a busy machine can delay: the result's
 * "roi_late_ns" says by how much they followed the announced start.
 *
 * The launcher keeps the region's time, so it runs as SCHED_FIFO at the highest priority
 * from before the fork: it sleeps but for its m5 ops and timers, and a CFS launcher whose
 * last CPU a real-time workload fills with RT throttling off (study 1's base vectors) would
 * never run there again, and the workload would never be stopped.  Its child starts as an
 * ordinary task and waits; the launcher places it (CPUs, then class) and lets it execute.
 * The child does not place itself: as a CFS task it may start on a CPU a real-time task
 * fills and never run to do so, and at the launcher's priority it would preempt the task it
 * is to take turns with.
 *
 * With --mark-roi (the runner passes it when it takes a scheduler trace) the region's
 * begin and end are also written to the trace (trace_marker: "schedlab-roi-begin job=NAME
 * rep=N", "schedlab-roi-end ..."), so the quanta read from the trace can be the region's.
 * With --trace-from-roi the runner has left tracing off and the launcher turns it on as the
 * region begins: a run whose kernel functions are timed is traced from its region on, since
 * timing every call before it (study 3's regioning faults) would change what it measures.
 *
 * "launch --promote PID" makes process PID (the runner) SCHED_FIFO at the highest priority
 * too, for the same reason: the runner must wake to stop the background workloads after
 * the last job.
 *
 * With --regions join the workload takes part in region scheduling (kernel-patches 0012:
 * prctl PR_SCHED_REGIONS_JOIN in its own process before it executes, so before it allocates
 * anything, and without its code knowing); with --regions favour it also becomes the process
 * cache partitioning favours (kernel.sched_region_favour, kernel-patches 0021). With --out,
 * its /proc/<pid>/sched_regions is copied there as sched_regions.begin when a warm-up ends
 * and as sched_regions.end just before a --duration-us stop.
 *
 * Usage: launch --job NAME --rep N --nonce X [--cpus LIST] [--policy other|batch|idle|fifo|rr]
 *               [--prio N] [--m5 none|insn|addr] [--out DIR] [--duration-us N] [--warmup-us W]
 *               [--caches-on-us C] [--regions none|join|favour] [--mark-roi]
 *               [--trace-from-roi] [--background]
 *               -- CMD [ARGS...]
 *        launch --promote PID
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "m5op.h"

#define STDOUT_LIMIT (256 * 1024)
/* kernel-patches 0011 */
#define PR_SCHED_REGIONS 0x52474e53
#define PR_SCHED_REGIONS_JOIN 0
#define REGION_FAVOUR_SYSCTL "/proc/sys/kernel/sched_region_favour"

/*
 * A region-scheduled workload's counters (/proc/<pid>/sched_regions, kernel-patches 0019)
 * are copied into its output folder when its region of interest begins and just before
 * the stop that ends it: merges and teardowns are counted there only (the tracepoints do
 * not tell them apart), and the counters go with the address space when the process
 * exits. The end's copy runs in the stop timer's handler, so it uses async-signal-safe
 * calls only, on paths made before the timer is armed.
 */
static char regions_proc[64], regions_begin[4200], regions_end[4200];

static void copy_regions(const char *dst)
{
	char chunk[4096];
	ssize_t got;
	int from, to;

	if (!regions_proc[0])
		return;
	from = open(regions_proc, O_RDONLY);
	if (from < 0)
		return;
	to = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (to >= 0) {
		while ((got = read(from, chunk, sizeof(chunk))) > 0)
			if (write(to, chunk, (size_t)got) != got)
				break;
		close(to);
	}
	close(from);
}

static volatile pid_t stop_pid;
static volatile sig_atomic_t stopped;

static void end_roi(void);

static void stop_workload(int sig)
{
	(void)sig;
	if (stop_pid > 0) {
		copy_regions(regions_end);
		end_roi();
		kill(-stop_pid, SIGTERM);
		stopped = 1;
	}
}

static void die(const char *msg, const char *arg)
{
	fprintf(stderr, "launch: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
	exit(2);
}

/*
 * The system call rather than the C library's wrapper, which some libcs (musl) refuse
 * with ENOSYS because POSIX defines it per process and Linux per thread; here it sets the
 * calling thread, which is what a freshly forked single-threaded child is.
 */
static int set_scheduler(pid_t pid, int policy, const struct sched_param *param)
{
	return (int)syscall(SYS_sched_setscheduler, pid, policy, param);
}

/* The highest SCHED_FIFO priority, for the processes that keep a run's time. */
static int promote(pid_t pid, int flags)
{
	struct sched_param top = { .sched_priority = sched_get_priority_max(SCHED_FIFO) };

	return set_scheduler(pid, SCHED_FIFO | flags, &top);
}


static int parse_cpus(const char *list, cpu_set_t *set)
{
	char *copy = strdup(list), *save = NULL, *tok;

	CPU_ZERO(set);
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		long lo = strtol(tok, &end, 10), hi = lo;

		if (end == tok)
			return -1;
		if (*end == '-')
			hi = strtol(end + 1, &end, 10);
		if (*end || lo < 0 || hi < lo || hi >= CPU_SETSIZE)
			return -1;
		for (long c = lo; c <= hi; c++)
			CPU_SET(c, set);
	}
	free(copy);
	return 0;
}

static int parse_policy(const char *name)
{
	if (!strcmp(name, "other"))
		return SCHED_OTHER;
	if (!strcmp(name, "batch"))
		return SCHED_BATCH;
	if (!strcmp(name, "idle"))
		return SCHED_IDLE;
	if (!strcmp(name, "fifo"))
		return SCHED_FIFO;
	if (!strcmp(name, "rr"))
		return SCHED_RR;
	return -1;
}

/* In the workload's process, before it executes: join region scheduling, favoured or not. */
static void join_regions(const char *mode)
{
	FILE *f;

	if (!strcmp(mode, "none"))
		return;
	if (prctl(PR_SCHED_REGIONS, PR_SCHED_REGIONS_JOIN, 0, 0, 0))
		die("prctl(PR_SCHED_REGIONS) (a kernel with region scheduling?)", strerror(errno));
	if (strcmp(mode, "favour"))
		return;
	f = fopen(REGION_FAVOUR_SYSCTL, "w");
	if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f))
		die("cannot write " REGION_FAVOUR_SYSCTL, strerror(errno));
}

static int use_m5;
static int trace_marker = -1;
static int tracing_on = -1;

/* --mark-roi: the m5 ops mark the region for gem5's statistics only. */
static void mark_roi(const char *edge, const char *job, int rep)
{
	char line[160];
	int n;

	/* --trace-from-roi: the runner left tracing off until now */
	if (tracing_on >= 0 && !strcmp(edge, "begin") && write(tracing_on, "1\n", 2) < 0)
		die("cannot turn tracing on", strerror(errno));
	if (trace_marker < 0)
		return;
	n = snprintf(line, sizeof(line), "schedlab-roi-%s job=%s rep=%d\n", edge, job, rep);
	if (n > 0 && write(trace_marker, line, (size_t)n) < 0)
		trace_marker = -1;
}

static void m5(unsigned int func)
{
	if (use_m5)
		m5_op(func, 0, 0, 0, 0);
}


static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * The region of interest ends once: at the stop timer (in its handler, so only a write and
 * m5 ops, with the mark formatted when the region began) or when the workload was reaped.
 */
static volatile sig_atomic_t roi_open;
static uint64_t roi_began_ns;
static char roi_end_mark[160];
static size_t roi_end_mark_len;

static void begin_roi(const char *job, int rep)
{
	int n = snprintf(roi_end_mark, sizeof(roi_end_mark), "schedlab-roi-end job=%s rep=%d\n",
			 job, rep);

	roi_end_mark_len = n > 0 && (size_t)n < sizeof(roi_end_mark) ? (size_t)n : 0;
	m5(M5_RESETSTATS);
	m5(M5_WORKBEGIN);
	roi_began_ns = now_ns();
	mark_roi("begin", job, rep);
	roi_open = 1;
}

static void end_roi(void)
{
	if (!roi_open)
		return;
	roi_open = 0;
	if (trace_marker >= 0 && roi_end_mark_len &&
	    write(trace_marker, roi_end_mark, roi_end_mark_len) < 0)
		trace_marker = -1;
	m5(M5_WORKEND);
	m5(M5_DUMPSTATS);
}

static void set_roi_start(uint64_t ns)
{
	char value[24];

	snprintf(value, sizeof(value), "%llu", (unsigned long long)ns);
	if (setenv("SCHEDLAB_ROI_START_NS", value, 1))
		die("setenv", strerror(errno));
}

/* One value from /proc/<pid>/sched, e.g. "se.nr_migrations"; -1 if absent. */
static long long sched_stat(pid_t pid, const char *key)
{
	char path[64], line[256];
	long long value = -1;
	size_t len = strlen(key);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/sched", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, len) && (line[len] == ' ' || line[len] == ':')) {
			char *colon = strchr(line, ':');

			if (colon)
				value = atoll(colon + 1);
			break;
		}
	}
	fclose(f);
	return value;
}

static void print_json_string(const char *s, size_t n)
{
	putchar('"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = s[i];

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c == '\n')
			fputs("\\n", stdout);
		else if (c < 0x20 || c >= 0x7f)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

int main(int argc, char **argv)
{
	const char *job = NULL, *nonce = NULL, *cpus = NULL, *policy_name = "other";
	const char *m5_mode = "none", *out = NULL, *regions = "none";
	int rep = 0, prio = 0, background = 0, mark = 0, trace_from_roi = 0, i, fds[2], go[2];
	long long duration_us = 0, warmup_us = 0, caches_on_us = -1;
	int ended_in_warmup = 0;
	cpu_set_t set;
	struct sched_param param;
	int policy;

	if (argc == 3 && !strcmp(argv[1], "--promote")) {
		if (promote(atoi(argv[2]), 0))
			die("cannot make the runner SCHED_FIFO", strerror(errno));
		return 0;
	}
	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(opt, "--background")) {
			background = 1;
			continue;
		}
		if (!strcmp(opt, "--mark-roi")) {
			mark = 1;
			continue;
		}
		if (!strcmp(opt, "--trace-from-roi")) {
			trace_from_roi = 1;
			continue;
		}
		if (!val)
			die("missing value for", opt);
		i++;
		if (!strcmp(opt, "--job"))
			job = val;
		else if (!strcmp(opt, "--rep"))
			rep = atoi(val);
		else if (!strcmp(opt, "--nonce"))
			nonce = val;
		else if (!strcmp(opt, "--cpus"))
			cpus = val;
		else if (!strcmp(opt, "--policy"))
			policy_name = val;
		else if (!strcmp(opt, "--prio"))
			prio = atoi(val);
		else if (!strcmp(opt, "--m5"))
			m5_mode = val;
		else if (!strcmp(opt, "--out"))
			out = val;
		else if (!strcmp(opt, "--duration-us"))
			duration_us = atoll(val);
		else if (!strcmp(opt, "--warmup-us"))
			warmup_us = atoll(val);
		else if (!strcmp(opt, "--caches-on-us"))
			caches_on_us = atoll(val);
		else if (!strcmp(opt, "--regions"))
			regions = val;
		else
			die("unknown option", opt);
	}
	if (i + 1 >= argc)
		die("no command after --", NULL);
	if (!background && (!job || !nonce))
		die("--job and --nonce are required", NULL);
	policy = parse_policy(policy_name);
	if (policy < 0)
		die("unknown --policy (other, batch, idle, fifo, rr)", policy_name);
	if (cpus && parse_cpus(cpus, &set))
		die("bad --cpus list", cpus);
	if (strcmp(m5_mode, "none") && strcmp(m5_mode, "insn") && strcmp(m5_mode, "addr"))
		die("unknown --m5 mode (none, insn, addr)", m5_mode);
	if (strcmp(regions, "none") && strcmp(regions, "join") && strcmp(regions, "favour"))
		die("unknown --regions mode (none, join, favour)", regions);
	use_m5 = strcmp(m5_mode, "none") != 0;
	if (!strcmp(m5_mode, "addr") && m5_use_addr())
		die("cannot map the m5 op page", NULL);
	param.sched_priority = prio;

	if (background) {
		if (set_scheduler(0, policy, &param))
			die("sched_setscheduler", strerror(errno));
		if (cpus && sched_setaffinity(0, sizeof(set), &set))
			die("sched_setaffinity", strerror(errno));
		join_regions(regions);
		execvp(argv[i + 1], argv + i + 1);
		die("cannot run", argv[i + 1]);
	}

	if (out) {
		/* mkdir -p: the runner starts no mkdir process per repetition. */
		char dir[4096];

		snprintf(dir, sizeof(dir), "%s", out);
		for (char *p = dir + 1; *p; p++) {
			if (*p == '/') {
				*p = 0;
				mkdir(dir, 0755);
				*p = '/';
			}
		}
		mkdir(out, 0755);
		setenv("SCHEDLAB_OUT", out, 1);
	}
	if (pipe(fds) || pipe(go))
		die("pipe", strerror(errno));
	if (mark)
		trace_marker = open("/sys/kernel/tracing/trace_marker", O_WRONLY | O_CLOEXEC);
	if (trace_from_roi &&
	    (tracing_on = open("/sys/kernel/tracing/tracing_on", O_WRONLY | O_CLOEXEC)) < 0)
		die("cannot open /sys/kernel/tracing/tracing_on", strerror(errno));
	/* The whole warm-up (and the workload's start) on the caches. */
	if (caches_on_us >= warmup_us)
		m5(M5_SWITCHCPU);
	if (!warmup_us)
		begin_roi(job, rep);
	/*
	 * Reset on fork: a child at the launcher's priority would preempt the task it is to
	 * take turns with before it is placed, and the first quanta of the pair would come out
	 * of turn (seen on QEMU at Q = 10 ms: turns of 1 and 17 ms).
	 */
	if (promote(0, SCHED_RESET_ON_FORK))
		die("sched_setscheduler (the launcher's own SCHED_FIFO)", strerror(errno));
	uint64_t start = now_ns();
	uint64_t roi_start = start + (uint64_t)warmup_us * 1000, roi_late = 0;
	pid_t pid = fork();

	if (pid < 0)
		die("fork", strerror(errno));
	if (pid == 0) {
		char placed;

		/* Its own process group, so a stop at --duration-us reaches its children too. */
		setpgid(0, 0);
		dup2(fds[1], STDOUT_FILENO);
		close(fds[0]);
		close(fds[1]);
		close(go[1]);
		if (read(go[0], &placed, 1) != 1)
			_exit(127);	/* the launcher could not place it and has gone */
		close(go[0]);
		if (out && chdir(out))
			die("chdir", out);
		join_regions(regions);
		set_roi_start(roi_start);
		execvp(argv[i + 1], argv + i + 1);
		die("cannot run", argv[i + 1]);
	}
	close(fds[1]);
	close(go[0]);
	setpgid(pid, pid);	/* before any stop, whichever of the two runs first */
	if (out && strcmp(regions, "none")) {
		snprintf(regions_proc, sizeof(regions_proc), "/proc/%d/sched_regions", (int)pid);
		snprintf(regions_begin, sizeof(regions_begin), "%s/sched_regions.begin", out);
		snprintf(regions_end, sizeof(regions_end), "%s/sched_regions.end", out);
	}
	/*
	 * CPUs first, then class: moved as an ordinary task it cannot preempt anything, and as
	 * a real-time task it then joins the tail of its CPU's queue at its priority.
	 */
	if ((cpus && sched_setaffinity(pid, sizeof(set), &set)) ||
	    set_scheduler(pid, policy, &param)) {
		int err = errno;

		kill(pid, SIGKILL);
		die("cannot place the workload", strerror(err));
	}
	if (write(go[1], "", 1) != 1)
		die("cannot start the workload", strerror(errno));
	close(go[1]);
	if (caches_on_us >= 0 && caches_on_us < warmup_us) {
		uint64_t on = roi_start - (uint64_t)caches_on_us * 1000;
		struct timespec until = { on / 1000000000ULL, on % 1000000000ULL };

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
			;
		m5(M5_SWITCHCPU);
	}
	if (warmup_us) {
		/*
		 * Until the announced start, not for W from here: forking and placing the
		 * workload took 54-68 ms of guest time on Hector's 16.67 MHz cores, which a
		 * relative sleep added to the warm-up (and to roi_late_ns).
		 */
		struct timespec until = { roi_start / 1000000000ULL, roi_start % 1000000000ULL };
		siginfo_t early;

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
			;
		early.si_pid = 0;
		waitid(P_PID, pid, &early, WEXITED | WNOHANG | WNOWAIT);
		ended_in_warmup = early.si_pid == pid;
		copy_regions(regions_begin);
		begin_roi(job, rep);
		roi_late = roi_began_ns - roi_start;
	}
	if (duration_us > 0) {
		struct sigaction sa;
		struct itimerval timer;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = stop_workload;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGALRM, &sa, NULL);
		memset(&timer, 0, sizeof(timer));
		timer.it_value.tv_sec = duration_us / 1000000;
		timer.it_value.tv_usec = duration_us % 1000000;
		stop_pid = pid;
		setitimer(ITIMER_REAL, &timer, NULL);
	}

	static char captured[STDOUT_LIMIT];
	size_t used = 0;
	ssize_t got;
	char discard[4096];

	while ((got = read(fds[0], used < sizeof(captured) ? captured + used : discard,
			   used < sizeof(captured) ? sizeof(captured) - used : sizeof(discard))) > 0)
		if (used < sizeof(captured))
			used += got;

	siginfo_t info;

	waitid(P_PID, pid, &info, WEXITED | WNOWAIT);
	uint64_t elapsed = now_ns() - start;
	long long migrations = sched_stat(pid, "se.nr_migrations");
	long long switches = sched_stat(pid, "nr_switches");
	int status;
	struct rusage ru;

	wait4(pid, &status, 0, &ru);
	stop_pid = 0;
	end_roi();	/* a workload that ended before its duration, or had none */

	int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);

	printf("@@schedlab %s result {\"job\":", nonce);
	print_json_string(job, strlen(job));
	printf(",\"rep\":%d,\"pid\":%d,\"exit\":%d,\"elapsed_ns\":%llu,\"user_us\":%lld,\"sys_us\":%lld,"
	       "\"nvcsw\":%ld,\"nivcsw\":%ld,\"migrations\":%lld,\"switches\":%lld,"
	       "\"stopped\":%s,\"ended_in_warmup\":%s,\"roi_late_ns\":%llu,\"stdout_truncated\":%s,"
	       "\"stdout\":",
	       rep, (int)pid, code, (unsigned long long)elapsed,
	       (long long)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec,
	       (long long)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec,
	       ru.ru_nvcsw, ru.ru_nivcsw, migrations, switches, stopped ? "true" : "false",
	       ended_in_warmup ? "true" : "false", (unsigned long long)roi_late,
	       used == sizeof(captured) ? "true" : "false");
	print_json_string(captured, used);
	printf("}\n");
	return fflush(stdout) != 0;
}
