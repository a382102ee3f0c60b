/*
 * bv_0 - base vector with negligible cache footprint (study 1, Kazempour et al.).
 *
 * Interleaved with a benchmark on the same CPU it keeps that CPU busy for its quantum while
 * leaving the benchmark's cache state intact: the "high affinity" condition.  The work is a
 * register-only recurrence in a loop of a few instructions, so it touches one or two I-cache
 * lines and no data lines at all.  Loops until SIGTERM/SIGINT, or for --passes N.
 */
#include "wl.h"

int main(int argc, char **argv)
{
	wl_prog = "bv_0";
	long long passes = 0;
	WL_OPTS(argc, argv) {
		if (WL_IS("--passes")) passes = wl_int("--passes", WL_VAL, 0, 1LL << 40);
		else WL_BAD();
	}
	wl_catch_stop();
	uint64_t x = 1;
	long long done = 0;
	double t0 = wl_now();
	while (!wl_stop && (passes == 0 || done < passes)) {
		/* The asm barrier keeps x in a register yet stops the compiler folding the loop away. */
		for (int i = 0; i < 4096; i++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			__asm__ volatile("" : "+r"(x));
		}
		done++;
	}
	double dt = wl_now() - t0;
	printf("passes=%lld\n", done);
	wl_hex("checksum", x);
	printf("seconds=%.6f\n", dt);
	return 0;
}
