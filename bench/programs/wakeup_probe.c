// SPDX-License-Identifier: MIT
/*
 * wakeup_probe: how long a thread's creation and its wake-ups onto another CPU take.
 *
 * On gem5, idle CPUs can miss the write or interrupt that should wake them
 * (configs/README.md, "Periodic tick"); a job of parallel threads then waits at thread
 * creation and at every barrier. This measures it with the guest's own clock (CLOCK_MONOTONIC,
 * nanoseconds):
 *
 * - create_us_<i>: pthread_create of a thread bound to CPU --first-cpu + 1 + i, seen by
 *   the creator (pinned to --first-cpu); start_us_<i>: from the call to the thread's
 *   first instruction.
 * - wake_us_<round>_<i>: the threads block on a condition variable (their CPUs go idle);
 *   the creator broadcasts --rounds times, --gap-ms apart; from the broadcast to each
 *   thread running again.
 *
 * The maxima and medians are printed too (create_max_us, wake_median_us, wake_max_us).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_THREADS 8
#define MAX_ROUNDS 64

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t go = PTHREAD_COND_INITIALIZER;
static int round_no, nthreads, rounds;
static long long start_ns[MAX_THREADS], woke_ns[MAX_ROUNDS][MAX_THREADS];

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void *worker(void *arg)
{
	int me = (int)(long)arg, seen = 0;

	start_ns[me] = now_ns();
	pthread_mutex_lock(&lock);
	while (seen < rounds) {
		while (round_no == seen)
			pthread_cond_wait(&go, &lock);
		seen = round_no;
		woke_ns[seen - 1][me] = now_ns();
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

static int by_value(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int first_cpu = 4, gap_ms = 20;
	pthread_t tid[MAX_THREADS];
	long long created[MAX_THREADS], called[MAX_THREADS], bcast[MAX_ROUNDS];
	long long waits[MAX_ROUNDS * MAX_THREADS], create_max = 0;
	cpu_set_t set;

	nthreads = 3;
	rounds = 10;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--first-cpu"))
			first_cpu = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--threads"))
			nthreads = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--rounds"))
			rounds = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--gap-ms"))
			gap_ms = atoi(argv[i + 1]);
		else
			break;
	}
	if (nthreads < 1 || nthreads > MAX_THREADS || rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "wakeup_probe: --threads 1..%d, --rounds 1..%d\n", MAX_THREADS,
			MAX_ROUNDS);
		return 2;
	}
	CPU_ZERO(&set);
	CPU_SET(first_cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("wakeup_probe: sched_setaffinity");
		return 2;
	}
	for (int i = 0; i < nthreads; i++) {
		pthread_attr_t attr;

		pthread_attr_init(&attr);
		CPU_ZERO(&set);
		CPU_SET(first_cpu + 1 + i, &set);
		pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
		called[i] = now_ns();
		if (pthread_create(&tid[i], &attr, worker, (void *)(long)i)) {
			fprintf(stderr, "wakeup_probe: pthread_create failed\n");
			return 2;
		}
		created[i] = now_ns();
		pthread_attr_destroy(&attr);
	}
	for (int r = 0; r < rounds; r++) {
		struct timespec gap = { gap_ms / 1000, (gap_ms % 1000) * 1000000L };

		nanosleep(&gap, NULL);	/* the workers block: their CPUs go idle */
		pthread_mutex_lock(&lock);
		bcast[r] = now_ns();
		round_no = r + 1;
		pthread_cond_broadcast(&go);
		pthread_mutex_unlock(&lock);
	}
	for (int i = 0; i < nthreads; i++)
		pthread_join(tid[i], NULL);
	for (int i = 0; i < nthreads; i++) {
		long long c = created[i] - called[i];

		printf("create_us_%d=%.1f\nstart_us_%d=%.1f\n", i, c / 1e3, i,
		       (start_ns[i] - called[i]) / 1e3);
		if (c > create_max)
			create_max = c;
	}
	int n = 0;

	for (int r = 0; r < rounds; r++)
		for (int i = 0; i < nthreads; i++) {
			waits[n] = woke_ns[r][i] - bcast[r];
			printf("wake_us_%d_%d=%.1f\n", r, i, waits[n] / 1e3);
			n++;
		}
	qsort(waits, n, sizeof(waits[0]), by_value);
	printf("create_max_us=%.1f\nwake_median_us=%.1f\nwake_max_us=%.1f\n", create_max / 1e3,
	       waits[n / 2] / 1e3, waits[n - 1] / 1e3);
	return 0;
}
