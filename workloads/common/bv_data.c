/*
 * bv_data - base vector with a data footprint of exactly --size bytes (study 1), used as
 * BV_L1D (size = L1 D-cache) and BV_L2 (size = L2).
 *
 * Every pass reads and writes one word in each --stride bytes of a line-aligned buffer, in
 * address order, so each pass touches every line of the footprint (stride defaults to 16 B,
 * the smallest line in the catalogue, Niagara's D1) and leaves them dirty, as a real
 * co-runner would.  Sequential order is deliberate: the BV's job is to evict the benchmark's
 * state each quantum, and a streaming pass does that in the fewest cycles.  The loop itself
 * is a handful of instructions, so the I-footprint is negligible.
 */
#include "wl.h"

int main(int argc, char **argv)
{
	wl_prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	uint64_t size = 0, stride = 16;
	long long passes = 0;
	WL_OPTS(argc, argv) {
		if (WL_IS("--size")) size = wl_size("--size", WL_VAL);
		else if (WL_IS("--stride")) stride = wl_size("--stride", WL_VAL);
		else if (WL_IS("--passes")) passes = wl_int("--passes", WL_VAL, 0, 1LL << 40);
		else WL_BAD();
	}
	if (size == 0)
		wl_die("--size is required, e.g. --size 32KiB");
	if (stride < 8 || (stride & (stride - 1)))
		wl_die("--stride must be a power of two of at least 8 bytes, not %" PRIu64, stride);
	if (size % stride)
		wl_die("--size must be a multiple of --stride (%" PRIu64 " B)", stride);
	uint64_t *buf = wl_alloc(size);
	size_t n = size / sizeof *buf, step = stride / sizeof *buf;
	wl_catch_stop();
	long long done = 0;
	double t0 = wl_now();
	while (!wl_stop && (passes == 0 || done < passes)) {
		for (size_t i = 0; i < n; i += step)
			buf[i] += (uint64_t)done + i;
		done++;
	}
	double dt = wl_now() - t0;
	uint64_t h = WL_FNV_INIT;
	for (size_t i = 0; i < n; i += step)
		h = wl_fnv(h, &buf[i], sizeof buf[i]);
	printf("passes=%lld\nfootprint_bytes=%" PRIu64 "\n", done, size);
	wl_hex("checksum", h);
	printf("seconds=%.6f\n", dt);
	return 0;
}
