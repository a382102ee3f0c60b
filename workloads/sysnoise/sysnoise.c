/*
 * sysnoise - the ordinary background activity of a Linux system, as a named, fixed model
 * (study 2, De Marchi et al.: the mixer ran beside a system's daemons, not alone).
 *
 * Three SCHED_OTHER threads, none bound to a CPU, each waking on an absolute period
 * (clock_nanosleep TIMER_ABSTIME, so the pattern does not drift with the work done):
 *   timer   every  4 ms: one pass over  4 KiB, like per-tick housekeeping (watchdogs,
 *                        timer-driven kernel threads' user-side peers);
 *   daemon  every 10 ms: two passes over 64 KiB, like a logging or monitoring daemon
 *                        (syslog, irqbalance) handling a message;
 *   load    every 10 ms: passes over 256 KiB for 1 ms of its period (a 10 % duty cycle),
 *                        a light non-real-time batch load at nice 10.
 * A pass reads and writes one word per 64-byte line, so each thread's cache footprint is
 * its buffer. The model is the same for every policy it runs beside. Runs until
 * SIGTERM/SIGINT, or for --ms N milliseconds; prints the wake-ups of each thread.
 */
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "wl.h"

struct noise {
	const char *name;
	long period_us;		/* wake-up period */
	size_t bytes;		/* cache footprint */
	int passes;		/* passes per wake-up (0: passes for busy_us instead) */
	long busy_us;		/* time-bounded work per wake-up, for the load */
	int nice;
	double until;		/* wl_now() at which to stop; 0: until a signal */
	long long wakeups;
	long long passes_done;
	uint64_t sum;
};

static uint64_t pass(volatile uint64_t *buf, size_t bytes)
{
	uint64_t s = 0;

	for (size_t i = 0; i < bytes / sizeof(uint64_t); i += 64 / sizeof(uint64_t)) {
		buf[i] += i;
		s += buf[i];
	}
	return s;
}

static void add_us(struct timespec *t, long us)
{
	t->tv_nsec += us * 1000L;
	while (t->tv_nsec >= 1000000000L) {
		t->tv_nsec -= 1000000000L;
		t->tv_sec++;
	}
}

static void *run(void *arg)
{
	struct noise *n = arg;
	volatile uint64_t *buf = wl_alloc(n->bytes);
	struct timespec next;

	/* setpriority on a thread id sets that thread only (Linux). */
	if (n->nice && setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), n->nice))
		wl_die("setpriority(%d) failed", n->nice);
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!wl_stop && (n->until == 0 || wl_now() < n->until)) {
		add_us(&next, n->period_us);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) && !wl_stop)
			;
		if (wl_stop)
			break;
		if (n->passes) {
			for (int p = 0; p < n->passes; p++, n->passes_done++)
				n->sum += pass(buf, n->bytes);
		} else {
			double end = wl_now() + n->busy_us * 1e-6;

			while (wl_now() < end) {
				n->sum += pass(buf, n->bytes);
				n->passes_done++;
			}
		}
		n->wakeups++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	wl_prog = "sysnoise";
	long long ms = 0;

	WL_OPTS(argc, argv) {
		if (WL_IS("--ms"))
			ms = wl_int("--ms", WL_VAL, 1, 1LL << 30);
		else
			WL_BAD();
	}
	wl_catch_stop();
	double until = ms > 0 ? wl_now() + ms / 1000.0 : 0;
	struct noise noise[] = {
		{ "timer", 4000, 4 << 10, 1, 0, 0, until, 0, 0, 0 },
		{ "daemon", 10000, 64 << 10, 2, 0, 0, until, 0, 0, 0 },
		{ "load", 10000, 256 << 10, 0, 1000, 10, until, 0, 0, 0 },
	};
	enum { N = sizeof(noise) / sizeof(noise[0]) };
	pthread_t t[N];

	for (int i = 0; i < N; i++)
		if (pthread_create(&t[i], NULL, run, &noise[i]))
			wl_die("cannot start thread %s", noise[i].name);
	for (int i = 0; i < N; i++)
		pthread_join(t[i], NULL);
	long long passes = 0;
	uint64_t sum = 0;

	for (int i = 0; i < N; i++) {
		printf("%s_wakeups=%lld\n", noise[i].name, noise[i].wakeups);
		passes += noise[i].passes_done;
		sum += noise[i].sum;
	}
	printf("threads=%d\npasses=%lld\n", N, passes);
	/* Printed so the passes cannot be optimised away; it depends on the clock. */
	wl_hex("sum", sum);
	return 0;
}
