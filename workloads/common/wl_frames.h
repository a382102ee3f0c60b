/*
 * wl_frames.h - the physical page frames a workload's memory gets, made to depend on a seed.
 *
 * A physically indexed cache places a page by its frame number.  A deterministic simulator
 * running the same request twice gives the program the same frames, so repetitions that
 * differ only in a seed all see one page layout and one pattern of cache-set conflicts,
 * which at a cache's capacity moves the result by up to a factor of two (data/lee/reading.md).
 * Between wl_frames_vary() and wl_frames_done() the program's new pages take a seeded choice
 * of frames: a scratch area twice the size asked for is faulted in, a seeded half of its
 * pages is given back in seeded order (the kernel hands out the frames freed last first,
 * from its per-CPU free lists), and the other half is held until the program's own pages
 * are in, so they cannot take those.
 */
#ifndef WL_FRAMES_H
#define WL_FRAMES_H

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "wl.h"

struct wl_frames {
	char *scratch;
	size_t pages;
	char *chosen;		/* per scratch page: 1 if given back (its address may be reused) */
	uint64_t *given;	/* the frames given back, sorted (none when they cannot be read) */
	size_t ngiven;
};

/* The frame of the page at virtual page number vpn (0 when it cannot be read). */
static inline uint64_t wl_frame_of(int pagemap, uintptr_t vpn)
{
	uint64_t entry = 0;
	if (pagemap < 0 || pread(pagemap, &entry, sizeof entry, (off_t)(vpn * sizeof entry)) != sizeof entry)
		return 0;
	return entry & ((1ULL << 55) - 1);
}

static inline int wl_frames_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static inline struct wl_frames wl_frames_vary(size_t bytes, uint64_t seed)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t pages = 2 * ((bytes + page - 1) / page);
	/* Before the scratch area's faults: these arrays' own pages must not come after them. */
	size_t *order = malloc(pages * sizeof *order);
	char *chosen = calloc(pages, 1);
	uint64_t *given = malloc(pages / 2 * sizeof *given);
	if (!order || !chosen || !given)
		wl_die("out of memory");
	struct wl_frames f = { mmap(NULL, pages * page, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0),
			       pages, chosen, given, 0 };
	if (f.scratch == MAP_FAILED)
		wl_die("cannot map %zu bytes of scratch memory to vary page frames", pages * page);
	/* A seeded half of the pages: the first half of a partial shuffle. */
	wl_rng rng = wl_seed(seed ^ 0x5eed5eed5eed5eedULL);
	for (size_t i = 0; i < pages; i++)
		order[i] = i;
	for (size_t i = 0; i < pages / 2; i++) {
		size_t j = i + wl_below(&rng, pages - i), t = order[i];
		order[i] = order[j];
		order[j] = t;
		chosen[order[i]] = 1;
	}
	/*
	 * Given back a run of neighbours at a time (what the program's pages take is the set of
	 * frames, not their order), and with munmap: the guest kernel has no madvise.
	 */
	int pagemap = open("/proc/self/pagemap", O_RDONLY);
	for (size_t i = 0; i < pages;) {
		size_t end = i;
		while (end < pages && chosen[end]) {
			uint64_t pfn = wl_frame_of(pagemap, (uintptr_t)(f.scratch + end * page) / page);
			if (pfn)
				f.given[f.ngiven++] = pfn;
			end++;
		}
		if (end > i && munmap(f.scratch + i * page, (end - i) * page))
			wl_die("munmap of scratch pages failed: %s", strerror(errno));
		i = end > i ? end : i + 1;
	}
	if (pagemap >= 0)
		close(pagemap);
	free(order);
	qsort(f.given, f.ngiven, sizeof *f.given, wl_frames_cmp);
	return f;
}

/* The share of the pages of [p, p + bytes) that took a frame given back (-1: unknown). */
static inline double wl_frames_share(const struct wl_frames *f, const void *p, size_t bytes)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = 0, hits = 0;
	int pagemap = open("/proc/self/pagemap", O_RDONLY);
	if (pagemap < 0 || !f->ngiven) {
		if (pagemap >= 0)
			close(pagemap);
		return -1;
	}
	for (uintptr_t a = (uintptr_t)p / page; a < ((uintptr_t)p + bytes + page - 1) / page; a++, n++) {
		uint64_t pfn = wl_frame_of(pagemap, a);
		hits += pfn && bsearch(&pfn, f->given, f->ngiven, sizeof pfn, wl_frames_cmp);
	}
	close(pagemap);
	return n ? (double)hits / n : -1;
}

/*
 * Release the held half once the program's own pages are in; only it: the program's new
 * mappings may lie where the given-back pages were.
 */
static inline void wl_frames_done(struct wl_frames *f)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	for (size_t i = 0; i < f->pages; i++)
		if (!f->chosen[i])
			munmap(f->scratch + i * page, page);
	free(f->chosen);
	free(f->given);
	f->scratch = f->chosen = NULL;
	f->given = NULL;
}

/*
 * A hash of the frame numbers of [p, p + bytes) (/proc/self/pagemap), so two runs can be told
 * apart by their layout; 0 when the frames cannot be read (only root sees them).
 */
static inline uint64_t wl_frames_fnv(const void *p, size_t bytes)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	int pagemap = open("/proc/self/pagemap", O_RDONLY);
	if (pagemap < 0)
		return 0;
	uint64_t h = WL_FNV_INIT, any = 0;
	for (uintptr_t a = (uintptr_t)p / page; a < ((uintptr_t)p + bytes + page - 1) / page; a++) {
		uint64_t pfn = wl_frame_of(pagemap, a);
		any |= pfn;
		h = wl_fnv(h, &pfn, sizeof pfn);
	}
	close(pagemap);
	return any ? h : 0;
}

#endif
