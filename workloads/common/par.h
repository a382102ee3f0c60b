/*
 * par.h - the thread team of the study-4 parallel kernels (Brecht's processor pools).
 *
 * A job starts as one thread; when it reaches its parallel part it creates the other p-1
 * threads (in Hector's system each creation asks the scheduler for a processor, so threads
 * exist only while the job needs them), the team works in phases separated by barriers, and
 * the helpers are joined at the end.  Work is split into contiguous blocks by thread index,
 * and every reduction is combined in thread order, so results are bit-identical for every p.
 */
#ifndef PAR_H
#define PAR_H

#include <pthread.h>
#include "wl.h"

#define PAR_MAX 64

struct par_team {
	int p;
	pthread_barrier_t barrier;
	void (*body)(int id, void *arg);
	void *arg;
};

struct par_start { struct par_team *team; int id; };

static inline void *par_trampoline(void *v)
{
	struct par_start *s = v;
	s->team->body(s->id, s->team->arg);
	return NULL;
}

/* Run body(id, arg) on p threads (the caller is thread 0) and wait for all of them. */
static inline void par_run(struct par_team *t, int p, void (*body)(int, void *), void *arg)
{
	pthread_t tid[PAR_MAX];
	struct par_start st[PAR_MAX];
	t->p = p;
	t->body = body;
	t->arg = arg;
	if (pthread_barrier_init(&t->barrier, NULL, (unsigned)p))
		wl_die("cannot create a barrier for %d threads", p);
	for (int i = 1; i < p; i++) {
		st[i].team = t;
		st[i].id = i;
		if (pthread_create(&tid[i], NULL, par_trampoline, &st[i]))
			wl_die("cannot create thread %d of %d (no processor free?)", i, p);
	}
	body(0, arg);
	for (int i = 1; i < p; i++)
		pthread_join(tid[i], NULL);
	pthread_barrier_destroy(&t->barrier);
}

static inline void par_sync(struct par_team *t) { pthread_barrier_wait(&t->barrier); }

/* Block [lo, hi) of n items for thread id of p: sizes differ by at most one. */
static inline void par_block(int id, int p, long n, long *lo, long *hi)
{
	long base = n / p, extra = n % p;
	*lo = id * base + (id < extra ? id : extra);
	*hi = *lo + base + (id < extra ? 1 : 0);
}

static inline int par_threads_arg(const char *s)
{
	return (int)wl_int("--threads", s, 1, PAR_MAX);
}

#endif
