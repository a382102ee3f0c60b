/*
 * memlat - the two-region memory-latency micro-benchmark of region scheduling (study 3,
 * Lee & Schwan).
 *
 * Two regions of --region-size bytes each are traversed randomly: every cache line of a region
 * is a node of one random cycle (a seeded shuffle), and each access loads the next node's
 * address from the current one, so accesses are dependent, defeat prefetchers and cost a full
 * memory latency when the region is not cached.  After --access-time accesses the traversal
 * switches to the other region (where it left off).  With both regions in one cache the run is
 * as fast as that cache allows; the region scheduler can instead map each region to its own
 * cache ("unification").  Runs for --accesses N (0 = until SIGTERM/SIGINT) and reports accesses
 * per second and region switches, over its life and over the region of interest (roi_*: from
 * the first switch after the launcher's announced start, so a rate never mixes a partial
 * burst in).  --frames seeded makes the physical pages of the regions depend on the seed too
 * (wl_frames.h): gem5 gives the same request the same frames, and at a cache's capacity the
 * frames' cache sets decide the misses.  --threads 2 adds a thread that only sleeps, so the
 * process has two users of its memory, as a multi-threaded program has: Linux's NUMA balancing
 * protects the pages of a single-threaded process only where they are off its node, and every
 * page of a multi-threaded one (the yardstick of bench/bench_regions.py --yardstick).
 */
#include <pthread.h>
#include <unistd.h>

#include "wl.h"
#include "wl_frames.h"

#define LINE 64

struct node {
	struct node *next;
	uint64_t pad[LINE / 8 - 1];
};

/* One random cycle through all lines, so a traversal visits each line once per lap. */
static struct node *make_region(size_t lines, wl_rng *rng)
{
	struct node *r = wl_alloc(lines * sizeof *r);
	size_t *perm = malloc(lines * sizeof *perm);
	if (!perm)
		wl_die("out of memory");
	for (size_t i = 0; i < lines; i++)
		perm[i] = i;
	for (size_t i = lines - 1; i > 0; i--) {
		size_t j = wl_below(rng, i + 1), t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	for (size_t i = 0; i < lines; i++)
		r[perm[i]].next = &r[perm[(i + 1) % lines]];
	free(perm);
	return r;
}

static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	wl_prog = "memlat";
	uint64_t size = 0;
	long long access_time = -1, accesses = 1 << 24, seed = 1;
	int vary_frames = 0, threads = 1;
	WL_OPTS(argc, argv) {
		if (WL_IS("--region-size")) size = wl_size("--region-size", WL_VAL);
		else if (WL_IS("--access-time")) access_time = wl_int("--access-time", WL_VAL, 1, 1LL << 40);
		else if (WL_IS("--accesses")) accesses = wl_int("--accesses", WL_VAL, 0, 1LL << 50);
		else if (WL_IS("--seed")) seed = wl_int("--seed", WL_VAL, 0, 1LL << 62);
		else if (WL_IS("--threads")) threads = (int)wl_int("--threads", WL_VAL, 1, 2);
		else if (WL_IS("--frames")) {
			if (strcmp(WL_VAL, "seeded") && strcmp(WL_VAL, "kernel"))
				wl_die("--frames is kernel (whatever the kernel gives) or seeded, not '%s'", WL_VAL);
			vary_frames = !strcmp(WL_VAL, "seeded");
		}
		else WL_BAD();
	}
	if (size == 0 || access_time < 0)
		wl_die("--region-size and --access-time are required, e.g. --region-size 2MiB --access-time 4096");
	if (size % LINE || size < 2 * LINE)
		wl_die("--region-size must be a multiple of %d B and at least %d B", LINE, 2 * LINE);
	wl_rng rng = wl_seed((uint64_t)seed);
	size_t lines = size / LINE;
	struct wl_frames frames = { 0 };
	if (vary_frames)
		frames = wl_frames_vary(2 * size, (uint64_t)seed);
	struct node *region[2] = { make_region(lines, &rng), make_region(lines, &rng) };
	double seeded_share = -1;
	if (vary_frames) {
		seeded_share = (wl_frames_share(&frames, region[0], size) +
				wl_frames_share(&frames, region[1], size)) / 2;
		wl_frames_done(&frames);
	}
	struct node *cur[2] = { region[0], region[1] };
	pthread_t helper;
	if (threads == 2 && pthread_create(&helper, NULL, sleeper, NULL))
		wl_die("cannot start the sleeping thread");
	wl_catch_stop();
	long long done = 0, switches = 0;
	int which = 0;
	double t0 = wl_now(), roi = wl_roi_start(), t_roi = t0;
	long long done_before_roi = 0;
	int in_roi = roi <= t0;
	while (!wl_stop && (accesses == 0 || done < accesses)) {
		long long burst = access_time;
		if (accesses && burst > accesses - done)
			burst = accesses - done;
		struct node *p = cur[which];
		for (long long i = 0; i < burst; i++)
			p = p->next;
		cur[which] = p;
		done += burst;
		if (burst == access_time) {
			which ^= 1;
			switches++;
		}
		if (!in_roi && (t_roi = wl_now()) >= roi) {
			in_roi = 1;
			done_before_roi = done;
		}
	}
	double t_end = wl_now(), dt = t_end - t0;
	double roi_dt = in_roi ? t_end - t_roi : 0;
	long long roi_done = in_roi ? done - done_before_roi : 0;
	/* Where each traversal stopped is a function of the seed and the counts only. */
	uint64_t h = WL_FNV_INIT;
	for (int r = 0; r < 2; r++) {
		uint64_t pos = (uint64_t)(cur[r] - region[r]);
		h = wl_fnv(h, &pos, sizeof pos);
	}
	printf("accesses=%lld\nregion_switches=%lld\n", done, switches);
	printf("region_bytes=%" PRIu64 "\nworking_set_bytes=%" PRIu64 "\n", size, 2 * size);
	wl_hex("checksum", h);
	uint64_t layout[2] = { wl_frames_fnv(region[0], size), wl_frames_fnv(region[1], size) };
	wl_hex("frames_fnv", layout[0] && layout[1] ? wl_fnv(WL_FNV_INIT, layout, sizeof layout) : 0);
	if (vary_frames && seeded_share >= 0)
		printf("frames_seeded_share=%.3f\n", seeded_share);
	printf("seconds=%.6f\naccesses_per_sec=%.4e\nns_per_access=%.3f\n", dt,
	       dt > 0 ? done / dt : 0.0, done ? dt * 1e9 / done : 0.0);
	printf("roi_accesses=%lld\nroi_seconds=%.6f\nroi_accesses_per_sec=%.4e\n", roi_done,
	       roi_dt, roi_dt > 0 ? roi_done / roi_dt : 0.0);
	return 0;
}
