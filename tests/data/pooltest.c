/*
 * pooltest - start processor-pool jobs one step at a time and report where their threads run.
 *
 * Usage: pooltest [--join] STEP...     or     pooltest --probe
 *   jN    start a job of N threads: a process, then N-1 threads it creates one by one
 *   gK:N  job K (numbered from 1 in start order) creates N more threads
 *   xK    job K ends (all its threads)
 *   s     sleep one second (every thread keeps checking its CPU)
 *   p     print /proc/sched_pools
 *   wPATH=VALUE  write VALUE to PATH (a sysctl) while the jobs run; prints wN=0 or -errno
 * Each job is a process forked by this driver, which asks once with PR_SCHED_POOLS_SPAWN
 * that its forks be jobs (placed at fork); with --join each job asks itself with
 * PR_SCHED_POOLS_JOIN instead (placed at the call). After each step that places threads it
 * prints jobK=<cpu of each thread, in creation order; -errno for a thread not created>,
 * or jobK_fork=-errno. At the end every job ends and prints jobK_moved= (times one of its
 * threads saw another CPU than its first) and jobK_pinned= (threads that
 * sched_setaffinity() refused to move, i.e. bound by pools).
 * --probe checks the prctl itself and prints key=value lines.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define PR_SCHED_POOLS		0x504f4f4c
#define PR_SCHED_POOLS_JOIN	0
#define PR_SCHED_POOLS_SPAWN	1
#define PR_SCHED_POOLS_GET	2

#define MAX_JOBS	32
#define MAX_THREADS	32
#define NO_CPU		(-1000)

/* One job, shared between the driver and the job's process */
struct job {
	pid_t pid;
	int want;			/* threads asked for so far */
	int done;			/* threads created or refused so far */
	int quit;
	int cpu[MAX_THREADS];		/* first CPU of each thread, or -errno */
	int moved;
	int pinned;
};

static struct job *jobs;
static int njobs;
static int join_mode;

static int load(int *p)
{
	return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

static void store(int *p, int v)
{
	__atomic_store_n(p, v, __ATOMIC_SEQ_CST);
}

static long pools_prctl(long cmd, long arg)
{
	long rc = prctl(PR_SCHED_POOLS, cmd, arg, 0, 0);

	return rc < 0 ? -errno : rc;
}

/* 1 if sched_setaffinity() refuses to let the caller run anywhere (bound by pools) */
static int pinned(void)
{
	cpu_set_t all;
	int cpu;

	CPU_ZERO(&all);
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		CPU_SET(cpu, &all);
	return sched_setaffinity(0, sizeof(all), &all) && errno == EINVAL;
}

struct thread_arg {
	struct job *job;
	int index;
};

/* Every thread of a job: report its CPU, then watch that it never changes */
static void watch(struct job *job, int index)
{
	int first = sched_getcpu();

	if (pinned())
		__atomic_add_fetch(&job->pinned, 1, __ATOMIC_SEQ_CST);
	store(&job->cpu[index], first);
	while (!load(&job->quit)) {
		if (sched_getcpu() != first)
			__atomic_add_fetch(&job->moved, 1, __ATOMIC_SEQ_CST);
		usleep(2000);
	}
}

static void *thread_main(void *p)
{
	struct thread_arg *arg = p;

	watch(arg->job, arg->index);
	return NULL;
}

/*
 * The job's process, whose main thread is the job's first thread: it creates the
 * threads the driver asks for, one at a time, and watches its own CPU meanwhile.
 */
static void job_main(struct job *job)
{
	static struct thread_arg args[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	int created[MAX_THREADS] = { 0 };
	int first, n, rc;

	if (join_mode) {
		rc = pools_prctl(PR_SCHED_POOLS_JOIN, 0);
		if (rc) {
			store(&job->cpu[0], (int)rc);
			store(&job->done, 1);
			exit(0);
		}
	}
	first = sched_getcpu();
	if (pinned())
		__atomic_add_fetch(&job->pinned, 1, __ATOMIC_SEQ_CST);
	store(&job->cpu[0], first);
	store(&job->done, 1);
	for (n = 1; !load(&job->quit); ) {
		if (sched_getcpu() != first)
			__atomic_add_fetch(&job->moved, 1, __ATOMIC_SEQ_CST);
		if (n >= load(&job->want)) {
			usleep(2000);
			continue;
		}
		args[n].job = job;
		args[n].index = n;
		rc = pthread_create(&tid[n], NULL, thread_main, &args[n]);
		if (rc) {
			store(&job->cpu[n], -rc);
		} else {
			created[n] = 1;
			while (load(&job->cpu[n]) == NO_CPU)
				usleep(1000);
		}
		n++;
		store(&job->done, n);
	}
	while (n--)
		if (created[n])
			pthread_join(tid[n], NULL);
	exit(0);
}

static void print_job(int k)
{
	struct job *job = &jobs[k];
	int i;

	printf("job%d=", k + 1);
	for (i = 0; i < load(&job->done); i++)
		printf("%s%d", i ? "," : "", load(&job->cpu[i]));
	printf("\n");
	fflush(stdout);
}

static void wait_done(struct job *job)
{
	while (load(&job->done) < load(&job->want))
		usleep(1000);
}

static void start_job(int nthreads)
{
	struct job *job = &jobs[njobs++];
	pid_t pid;

	store(&job->want, nthreads);
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		printf("job%d_fork=%d\n", njobs, -errno);
		job->pid = -1;
		return;
	}
	if (!pid)
		job_main(job);
	job->pid = pid;
	wait_done(job);
	print_job(njobs - 1);
}

static void end_job(struct job *job)
{
	if (job->pid <= 0)
		return;
	store(&job->quit, 1);
	waitpid(job->pid, NULL, 0);
	job->pid = 0;
}

static void print_file(const char *path)
{
	char line[256];
	FILE *f = fopen(path, "r");

	printf("=== file %s\n", path);
	while (f && fgets(line, sizeof(line), f))
		fputs(line, stdout);
	printf("=== end\n");
	fflush(stdout);
	if (f)
		fclose(f);
}

/* Write @value to @path, as echo would, and say how it went: 0 or -errno */
static int write_file(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY);
	int rc = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, value, strlen(value)) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

static void *idle_thread(void *unused)
{
	(void)unused;
	pause();
	return NULL;
}

static int probe(void)
{
	pthread_t tid;

	printf("get_before=%ld\n", pools_prctl(PR_SCHED_POOLS_GET, 0));
	printf("bad_cmd=%ld\n", pools_prctl(7, 0));
	printf("bad_arg=%ld\n", pools_prctl(PR_SCHED_POOLS_JOIN, 1));
	if (pthread_create(&tid, NULL, idle_thread, NULL))
		return 1;
	printf("join_threaded=%ld\n", pools_prctl(PR_SCHED_POOLS_JOIN, 0));
	fflush(stdout);
	if (!fork()) {
		/* A child of a process that is no job: single-threaded */
		printf("child_get=%ld\n", pools_prctl(PR_SCHED_POOLS_GET, 0));
		printf("join=%ld\n", pools_prctl(PR_SCHED_POOLS_JOIN, 0));
		printf("get_joined=%ld\n", pools_prctl(PR_SCHED_POOLS_GET, 0));
		printf("joined_cpu=%d\n", sched_getcpu());
		printf("joined_pinned=%d\n", pinned());
		printf("join_again=%ld\n", pools_prctl(PR_SCHED_POOLS_JOIN, 0));
		exit(0);
	}
	wait(NULL);
	printf("spawn=%ld\n", pools_prctl(PR_SCHED_POOLS_SPAWN, 0));
	printf("get_spawn=%ld\n", pools_prctl(PR_SCHED_POOLS_GET, 0));
	return 0;
}

int main(int argc, char **argv)
{
	int i, k, n, writes = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && !strcmp(argv[1], "--probe"))
		return probe();
	if (argc > 1 && !strcmp(argv[1], "--join")) {
		join_mode = 1;
		argv++;
		argc--;
	}
	jobs = mmap(NULL, MAX_JOBS * sizeof(*jobs), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (jobs == MAP_FAILED) {
		perror("pooltest: mmap");
		return 1;
	}
	for (k = 0; k < MAX_JOBS; k++)
		for (i = 0; i < MAX_THREADS; i++)
			jobs[k].cpu[i] = NO_CPU;
	if (!join_mode && pools_prctl(PR_SCHED_POOLS_SPAWN, 0)) {
		fprintf(stderr, "pooltest: PR_SCHED_POOLS_SPAWN failed\n");
		return 1;
	}
	for (i = 1; i < argc; i++) {
		const char *step = argv[i];

		if (sscanf(step, "j%d", &n) == 1 && n >= 1 && n <= MAX_THREADS &&
		    njobs < MAX_JOBS) {
			start_job(n);
		} else if (sscanf(step, "g%d:%d", &k, &n) == 2 && k >= 1 && k <= njobs &&
			   jobs[k - 1].pid > 0 &&
			   load(&jobs[k - 1].want) + n <= MAX_THREADS) {
			store(&jobs[k - 1].want, load(&jobs[k - 1].want) + n);
			wait_done(&jobs[k - 1]);
			print_job(k - 1);
		} else if (sscanf(step, "x%d", &k) == 1 && k >= 1 && k <= njobs) {
			end_job(&jobs[k - 1]);
		} else if (!strcmp(step, "s")) {
			sleep(1);
		} else if (!strcmp(step, "p")) {
			print_file("/proc/sched_pools");
		} else if (step[0] == 'w' && strchr(step, '=')) {
			char path[256];
			const char *value = strchr(step, '=') + 1;

			snprintf(path, sizeof(path), "%.*s", (int)(value - step - 2), step + 1);
			printf("w%d=%d\n", ++writes, write_file(path, value));
		} else {
			fprintf(stderr, "pooltest: bad step '%s' (jN, gK:N, xK, s, p or wPATH=VALUE)\n", step);
			return 2;
		}
	}
	for (k = 0; k < njobs; k++) {
		end_job(&jobs[k]);
		printf("job%d_moved=%d\njob%d_pinned=%d\n", k + 1, load(&jobs[k].moved),
		       k + 1, load(&jobs[k].pinned));
	}
	return 0;
}
