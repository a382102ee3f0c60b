/*
 * wl_frames.h - the physical page frames a workload's memory gets, made to depend on a seed.
 *
 * A physically indexed cache places a page by its frame number.  A deterministic simulator
 * running the same request twice gives the program the same frames, so repetitions that
 * differ only in a seed all see one page layout and one pattern of cache-set conflicts,
 * and at a cache's capacity the layout decides the misses (data/lee/reading.md).
 * Between wl_frames_vary() and wl_frames_done() the program's new pages take a seeded choice
 * of frames: the pages of a scratch area twice the size asked for are first touched in a
 * seeded order, so each address holds a seeded one of the frames the kernel hands out; its
 * lower half is unmapped (those frames go back to the per-CPU free lists, which hand out
 * the frames freed last first) and its upper half held until the program's own pages are
 * in, so they cannot take those.  Two munmap calls and one fault per page: a page at a time,
 * giving back a seeded half took a simulated Clovertown 0.1 s, past study 3's first phase.
 */
#ifndef WL_FRAMES_H
#define WL_FRAMES_H

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "wl.h"

struct wl_frames {
	char *held;		/* the upper half of the scratch area */
	size_t held_bytes;
	uint64_t *given;	/* the frames given back, sorted (none when they cannot be read) */
	size_t ngiven;
};

/*
 * The frames of the n pages from p (/proc/self/pagemap, one read; root only sees them):
 * how many were read into out[] (0 when they cannot be).
 */
static inline size_t wl_frames_of(const void *p, size_t n, uint64_t *out)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	int pagemap = open("/proc/self/pagemap", O_RDONLY);
	if (pagemap < 0)
		return 0;
	ssize_t got = pread(pagemap, out, n * sizeof *out, (off_t)((uintptr_t)p / page * sizeof *out));
	close(pagemap);
	size_t read = got > 0 ? (size_t)got / sizeof *out : 0, any = 0;
	for (size_t i = 0; i < read; i++) {
		out[i] &= (1ULL << 55) - 1;
		any |= out[i] != 0;
	}
	return any ? read : 0;
}

static inline int wl_frames_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static inline struct wl_frames wl_frames_vary(size_t bytes, uint64_t seed)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t half = (bytes + page - 1) / page, pages = 2 * half;
	/* Allocated before the scratch area's faults, which they must not follow. */
	size_t *order = malloc(pages * sizeof *order);
	uint64_t *given = malloc(half * sizeof *given);
	if (!order || !given)
		wl_die("out of memory");
	char *scratch = mmap(NULL, pages * page, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (scratch == MAP_FAILED)
		wl_die("cannot map %zu bytes of scratch memory to vary page frames", pages * page);
	wl_rng rng = wl_seed(seed ^ 0x5eed5eed5eed5eedULL);
	for (size_t i = 0; i < pages; i++)
		order[i] = i;
	for (size_t i = pages - 1; i > 0; i--) {
		size_t j = wl_below(&rng, i + 1), t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (size_t i = 0; i < pages; i++)
		scratch[order[i] * page] = 1;
	free(order);
	struct wl_frames f = { scratch + half * page, half * page, given,
			       wl_frames_of(scratch, half, given) };
	if (munmap(scratch, half * page))
		wl_die("munmap of scratch memory failed: %s", strerror(errno));
	qsort(f.given, f.ngiven, sizeof *f.given, wl_frames_cmp);
	return f;
}

/* The share of the pages of [p, p + bytes) that took a frame given back (-1: unknown). */
static inline double wl_frames_share(const struct wl_frames *f, const void *p, size_t bytes)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = (bytes + page - 1) / page, hits = 0;
	uint64_t *frames = malloc(n * sizeof *frames);
	size_t read = frames && f->ngiven ? wl_frames_of(p, n, frames) : 0;
	for (size_t i = 0; i < read; i++)
		hits += frames[i] && bsearch(&frames[i], f->given, f->ngiven, sizeof *frames,
					     wl_frames_cmp);
	free(frames);
	return read ? (double)hits / read : -1;
}

/* Release the held half once the program's own pages are in. */
static inline void wl_frames_done(struct wl_frames *f)
{
	munmap(f->held, f->held_bytes);
	free(f->given);
	f->held = NULL;
	f->given = NULL;
}

/*
 * A hash of the frame numbers of [p, p + bytes), so two runs can be told apart by their
 * layout; 0 when the frames cannot be read.
 */
static inline uint64_t wl_frames_fnv(const void *p, size_t bytes)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = (bytes + page - 1) / page;
	uint64_t *frames = malloc(n * sizeof *frames), h = WL_FNV_INIT;
	size_t read = frames ? wl_frames_of(p, n, frames) : 0;
	if (read)
		h = wl_fnv(h, frames, read * sizeof *frames);
	free(frames);
	return read ? h : 0;
}

#endif
