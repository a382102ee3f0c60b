/*
 * reseed: make what the guest draws at random a function of the run's repetition seed.
 *
 * Usage: reseed SEED   (a decimal integer; the run specification's seed_guest call)
 *
 * A gem5 run restores a boot checkpoint: the kernel's entropy pool, and so every address
 * space layout, stack canary and AT_RANDOM (glibc's pointer guard and hash seeds) of the
 * programs the run starts, is the checkpoint's. That is deterministic, but it ties those
 * accidents to the boot instead of to the run: every repetition of a run would share them,
 * and a rebuilt kernel would shift all of them at once. This tool mixes 512 bits expanded
 * from SEED into the kernel's input pool, credited (RNDADDENTROPY), and forces the
 * generator to reseed from the pool now (RNDRESEEDCRNG), so everything drawn from here on
 * follows from the checkpoint and the seed: one checkpoint serves every seed, the same seed
 * gives the same draws, another seed other draws. Both ioctls need CAP_SYS_ADMIN (the
 * runner is root).
 *
 * It then prints where a freshly executed program's first anonymous mapping landed (it
 * executes itself with --probe): the layout the run's programs get, as evidence that the
 * seed took effect (the runner reports it as the fact random.mmap_probe).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/random.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define SEED_WORDS 16	/* 512 bits: twice what the kernel needs to call its pool ready */

/* splitmix64 (Steele, Lea and Flood): spreads one integer over well-mixed words. */
static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int probe(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return 1;
	printf("%p\n", p);
	return fflush(stdout) != 0;
}

int main(int argc, char **argv)
{
	struct {
		struct rand_pool_info info;
		uint32_t words[SEED_WORDS];
	} entropy;
	uint64_t state;
	char *end;
	int fd, status, i;
	pid_t pid;

	if (argc == 2 && !strcmp(argv[1], "--probe"))
		return probe();
	if (argc != 2 || !*argv[1]) {
		fprintf(stderr, "usage: reseed SEED\n");
		return 2;
	}
	errno = 0;
	state = strtoull(argv[1], &end, 10);
	if (errno || *end) {
		fprintf(stderr, "reseed: the seed must be a decimal integer, not '%s'\n", argv[1]);
		return 2;
	}
	for (i = 0; i < SEED_WORDS; i += 2) {
		uint64_t w = splitmix64(&state);

		entropy.words[i] = (uint32_t)w;
		entropy.words[i + 1] = (uint32_t)(w >> 32);
	}
	entropy.info.entropy_count = SEED_WORDS * 32;
	entropy.info.buf_size = sizeof(entropy.words);
	fd = open("/dev/urandom", O_WRONLY);
	if (fd < 0 || ioctl(fd, RNDADDENTROPY, &entropy) || ioctl(fd, RNDRESEEDCRNG)) {
		perror("reseed: /dev/urandom");
		return 1;
	}
	close(fd);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", "reseed", "--probe", (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		fprintf(stderr, "reseed: the layout probe failed\n");
		return 1;
	}
	return 0;
}
