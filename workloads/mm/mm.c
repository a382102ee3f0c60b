/*
 * mm - dense matrix multiply C = A B, double precision (study 4, Brecht: MM 192 x 192).
 *
 * Each thread computes a block of rows of C with the i-k-j loop order (streams rows of B,
 * the cache-friendly order of the era's codes).  A and B hold small integers, so every
 * product and sum is exact in double: the check recomputes a sample of entries by the plain
 * dot product and requires exact equality, and the checksum is identical for every p.
 */
#include "par.h"

static int n;
static double *a, *b, *c;
static struct par_team team;

static void body(int id, void *arg)
{
	(void)arg;
	long lo, hi;
	par_block(id, team.p, n, &lo, &hi);
	for (long i = lo; i < hi; i++) {
		double *ci = c + i * n;
		for (int j = 0; j < n; j++)
			ci[j] = 0;
		for (int k = 0; k < n; k++) {
			double aik = a[i * n + k];
			const double *bk = b + (long)k * n;
			for (int j = 0; j < n; j++)
				ci[j] += aik * bk[j];
		}
	}
}

int main(int argc, char **argv)
{
	wl_prog = "mm";
	int p = 1;
	n = 192;
	WL_OPTS(argc, argv) {
		if (WL_IS("--threads")) p = par_threads_arg(WL_VAL);
		else if (WL_IS("--n")) n = (int)wl_int("--n", WL_VAL, 1, 4096);
		else WL_BAD();
	}
	a = wl_alloc(sizeof(double) * n * n);
	b = wl_alloc(sizeof(double) * n * n);
	c = wl_alloc(sizeof(double) * n * n);
	wl_rng rng = wl_seed(192);
	for (long i = 0; i < (long)n * n; i++) {
		a[i] = (double)((int)wl_below(&rng, 19) - 9);
		b[i] = (double)((int)wl_below(&rng, 19) - 9);
	}
	double t0 = wl_now();
	par_run(&team, p, body, NULL);
	double dt = wl_now() - t0;
	for (int s = 0; s < 64; s++) {
		long i = wl_below(&rng, n), j = wl_below(&rng, n);
		double want = 0;
		for (int k = 0; k < n; k++)
			want += a[i * n + k] * b[(long)k * n + j];
		if (c[i * n + j] != want)
			wl_fail("C[%ld][%ld] = %g, expected %g", i, j, c[i * n + j], want);
	}
	double trace = 0;
	for (int i = 0; i < n; i++)
		trace += c[(long)i * n + i];
	printf("threads=%d\nn=%d\ntrace=%.0f\n", p, n, trace);
	wl_hex("checksum", wl_fnv(WL_FNV_INIT, c, sizeof(double) * n * n));
	printf("seconds=%.6f\n", dt);
	return 0;
}
