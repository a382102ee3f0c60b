/*
 * streams - the job-stream driver of study 4 (Brecht): N streams start together, each runs
 * the parallel kernels one after another in its own order, and the response time of every job
 * (spawn to exit) is recorded.
 *
 * Stream s runs --repeat rounds of the --apps list rotated by s places (so streams do not run
 * the same kernel in lock-step), each job as `<bindir>/<app> --threads P`, followed by that
 * application's --app-args if given (e.g. --app-args "mm=--n 96": a smaller problem, for a
 * simulated machine on which the paper's problems take hours).  Kernels print
 * their own results (discarded here: their exit status is their check).  Output: one line
 * job.<stream>.<index>.<app>=<seconds> per job (its response time), then per-application
 * and overall means; and per job a line span.<stream>.<index>.<app>=<pid> <start> <end>:
 * the job's process id and the seconds from the streams' common start to its spawn and to
 * its exit (the response time is end - start), with clock0, that common start on the
 * guest's CLOCK_MONOTONIC, so the analysis can place each job in time and find its threads
 * in the scheduler's trace.
 *
 * With --pool-jobs 1 every job this driver spawns is a job of the kernel's processor pools
 * (PR_SCHED_POOLS_SPAWN, the sched/pools patches of kernel-patches/): its threads are
 * placed in the pools and bound, one per processor, while the driver itself holds none.
 */
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "wl.h"
#include <pthread.h>

extern char **environ;

#define PR_SCHED_POOLS		0x504f4f4c
#define PR_SCHED_POOLS_SPAWN	1

#define MAX_APPS 16
#define MAX_STREAMS 64
#define MAX_APP_ARGS 8

static char *apps[MAX_APPS];
/* Per application: the --app-args it is given, as "name" then its arguments. */
static char *app_args[MAX_APPS][MAX_APP_ARGS + 2];
static int napp_args;
static int napps, repeat = 1, threads = 2, nstreams = 1;
static char bindir[PATH_MAX];
static double t_start;

/* "APP=ARG ARG ...": APP's extra arguments, split on spaces. */
static void add_app_args(char *spec)
{
	char *eq = strchr(spec, '=');
	int n = 0;

	if (!eq || eq == spec)
		wl_die("--app-args wants APP=ARGS, e.g. \"mm=--n 96\", not '%s'", spec);
	if (napp_args == MAX_APPS)
		wl_die("--app-args given for more than %d applications", MAX_APPS);
	*eq = 0;
	app_args[napp_args][n++] = spec;
	for (char *tok = strtok(eq + 1, " "); tok; tok = strtok(NULL, " ")) {
		if (n == MAX_APP_ARGS + 1)
			wl_die("--app-args for %s: more than %d arguments", spec, MAX_APP_ARGS);
		app_args[napp_args][n++] = tok;
	}
	napp_args++;
}

/* The extra arguments of app (NULL-terminated), or an empty list. */
static char **extra_args(const char *app)
{
	static char *none[] = { NULL };

	for (int i = 0; i < napp_args; i++)
		if (!strcmp(app_args[i][0], app))
			return &app_args[i][1];
	return none;
}

struct stream {
	int id;
	double *resp, *start;
	pid_t *pid;
	int failed;
};

static void *run_stream(void *v)
{
	struct stream *s = v;
	char path[PATH_MAX + 64], targ[16];
	snprintf(targ, sizeof targ, "%d", threads);
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	for (int k = 0; k < repeat * napps; k++) {
		const char *app = apps[(k + s->id) % napps];
		snprintf(path, sizeof path, "%s/%s", bindir, app);
		char *args[MAX_APP_ARGS + 4] = { (char *)app, "--threads", targ };
		char **extra = extra_args(app);
		for (int i = 0; extra[i]; i++)
			args[3 + i] = extra[i];
		pid_t pid;
		double t0 = wl_now();
		if (posix_spawn(&pid, path, &fa, NULL, args, environ) != 0) {
			s->failed = k + 1;
			break;
		}
		int st;
		while (waitpid(pid, &st, 0) < 0)
			;
		s->start[k] = t0 - t_start;
		s->resp[k] = wl_now() - t0;
		s->pid[k] = pid;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			s->failed = k + 1;
			break;
		}
	}
	posix_spawn_file_actions_destroy(&fa);
	return NULL;
}

int main(int argc, char **argv)
{
	wl_prog = "streams";
	char applist[1024] = "fft,hough,mm,neural,pde,simplex";
	int pool_jobs = 0;
	bindir[0] = 0;
	WL_OPTS(argc, argv) {
		if (WL_IS("--streams")) nstreams = (int)wl_int("--streams", WL_VAL, 1, MAX_STREAMS);
		else if (WL_IS("--threads")) threads = (int)wl_int("--threads", WL_VAL, 1, 64);
		else if (WL_IS("--repeat")) repeat = (int)wl_int("--repeat", WL_VAL, 1, 10000);
		else if (WL_IS("--apps")) snprintf(applist, sizeof applist, "%s", WL_VAL);
		else if (WL_IS("--bindir")) snprintf(bindir, sizeof bindir, "%s", WL_VAL);
		else if (WL_IS("--pool-jobs")) pool_jobs = (int)wl_int("--pool-jobs", WL_VAL, 0, 1);
		else if (WL_IS("--app-args")) add_app_args(WL_VAL);
		else WL_BAD();
	}
	for (char *tok = strtok(applist, ","); tok; tok = strtok(NULL, ",")) {
		if (napps == MAX_APPS)
			wl_die("--apps lists more than %d applications", MAX_APPS);
		if (!*tok || strchr(tok, '/') || strchr(tok, '.'))
			wl_die("--apps wants kernel names such as fft,mm, not '%s'", tok);
		apps[napps++] = tok;
	}
	if (napps == 0)
		wl_die("--apps is empty; give kernel names such as fft,hough,mm");
	if (!bindir[0]) { /* beside this program: /schedlab/bin in the guest */
		ssize_t len = readlink("/proc/self/exe", bindir, sizeof bindir - 1);
		if (len <= 0)
			wl_die("cannot find my own directory; pass --bindir");
		bindir[len] = 0;
		*strrchr(bindir, '/') = 0;
	}
	for (int i = 0; i < napp_args; i++) {
		int listed = 0;
		for (int a = 0; a < napps; a++)
			listed |= !strcmp(apps[a], app_args[i][0]);
		if (!listed)
			wl_die("--app-args names %s, which --apps does not run", app_args[i][0]);
	}
	char path[PATH_MAX + 64];
	for (int a = 0; a < napps; a++) {
		snprintf(path, sizeof path, "%s/%s", bindir, apps[a]);
		if (access(path, X_OK))
			wl_die("no kernel '%s' in %s (known: fft, hough, mm, neural, pde, simplex)", apps[a], bindir);
	}
	/* Jobs outside the pools would measure another scheduler: refuse to run without them */
	if (pool_jobs && prctl(PR_SCHED_POOLS, PR_SCHED_POOLS_SPAWN, 0, 0, 0))
		wl_die("--pool-jobs: the kernel refuses PR_SCHED_POOLS_SPAWN (%s): is it built with "
		       "the pools patches and kernel.sched_pools = 1?", strerror(errno));
	int njobs = repeat * napps;
	struct stream st[MAX_STREAMS];
	pthread_t tid[MAX_STREAMS];
	t_start = wl_now();
	for (int s = 0; s < nstreams; s++) {
		st[s].id = s;
		st[s].failed = 0;
		st[s].resp = calloc(njobs, sizeof(double));
		st[s].start = calloc(njobs, sizeof(double));
		st[s].pid = calloc(njobs, sizeof(pid_t));
		if (!st[s].resp || !st[s].start || !st[s].pid)
			wl_die("out of memory");
		if (pthread_create(&tid[s], NULL, run_stream, &st[s]))
			wl_die("cannot start stream %d", s);
	}
	for (int s = 0; s < nstreams; s++)
		pthread_join(tid[s], NULL);
	double total = wl_now() - t_start;
	for (int s = 0; s < nstreams; s++)
		if (st[s].failed) {
			int k = st[s].failed - 1;
			wl_fail("stream %d job %d (%s) failed or could not start", s, k,
				apps[(k + s) % napps]);
		}
	double sum_all = 0;
	printf("streams=%d\nthreads=%d\njobs=%d\n", nstreams, threads, nstreams * njobs);
	for (int s = 0; s < nstreams; s++)
		for (int k = 0; k < njobs; k++) {
			printf("job.%d.%d.%s=%.6f\n", s, k, apps[(k + s) % napps], st[s].resp[k]);
			sum_all += st[s].resp[k];
		}
	for (int a = 0; a < napps; a++) {
		double sum = 0;
		int cnt = 0;
		for (int s = 0; s < nstreams; s++)
			for (int k = 0; k < njobs; k++)
				if ((k + s) % napps == a) {
					sum += st[s].resp[k];
					cnt++;
				}
		printf("mean.%s=%.6f\n", apps[a], sum / cnt);
	}
	printf("clock0=%.6f\n", t_start);
	for (int s = 0; s < nstreams; s++)
		for (int k = 0; k < njobs; k++)
			printf("span.%d.%d.%s=%d %.6f %.6f\n", s, k, apps[(k + s) % napps],
			       (int)st[s].pid[k], st[s].start[k], st[s].start[k] + st[s].resp[k]);
	printf("mean_all=%.6f\nseconds=%.6f\n", sum_all / (nstreams * njobs), total);
	return 0;
}
