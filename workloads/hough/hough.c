/*
 * hough - Hough transform for straight lines, double precision (study 4, Brecht: HOUGH
 * 192 x 192, density 90%).
 *
 * A binary image of n x n pixels, --density percent of them set (seeded), with three true
 * lines drawn in; every set pixel votes for each of --angles line directions, in the
 * accumulator cell of rho = x cos(theta) + y sin(theta).  The accumulator is split by angle,
 * so each thread owns its cells and scans the whole image: no locks, identical votes for
 * every p.  Check: the total number of votes equals set pixels x angles, and every vote fell
 * in range.
 */
#include <math.h>
#include "par.h"

static int n, angles, nrho;
static unsigned char *img;
static double *acc; /* angles x nrho, double as in the original kernel */
static double *cs, *sn;
static struct par_team team;

static void body(int id, void *arg)
{
	(void)arg;
	long lo, hi;
	par_block(id, team.p, angles, &lo, &hi);
	for (long t = lo; t < hi; t++) {
		double *row = acc + t * nrho;
		for (int y = 0; y < n; y++)
			for (int x = 0; x < n; x++)
				if (img[y * n + x]) {
					double rho = x * cs[t] + y * sn[t];
					row[(int)lround(rho) + nrho / 2] += 1.0;
				}
	}
}

int main(int argc, char **argv)
{
	wl_prog = "hough";
	int p = 1, density = 90;
	n = 192;
	angles = 180;
	WL_OPTS(argc, argv) {
		if (WL_IS("--threads")) p = par_threads_arg(WL_VAL);
		else if (WL_IS("--n")) n = (int)wl_int("--n", WL_VAL, 8, 4096);
		else if (WL_IS("--density")) density = (int)wl_int("--density", WL_VAL, 0, 100);
		else if (WL_IS("--angles")) angles = (int)wl_int("--angles", WL_VAL, 1, 3600);
		else WL_BAD();
	}
	nrho = 2 * (int)ceil(n * sqrt(2.0)) + 3;
	img = wl_alloc((size_t)n * n);
	acc = wl_alloc(sizeof(double) * angles * nrho);
	cs = wl_alloc(sizeof(double) * angles);
	sn = wl_alloc(sizeof(double) * angles);
	for (int t = 0; t < angles; t++) {
		cs[t] = wl_cos(M_PI * t / angles);
		sn[t] = wl_sin(M_PI * t / angles);
	}
	wl_rng rng = wl_seed(90);
	long set = 0;
	for (long i = 0; i < (long)n * n; i++)
		img[i] = wl_below(&rng, 100) < (uint64_t)density;
	for (int i = 0; i < n; i++) { /* a diagonal, a row and a column */
		img[i * n + i] = 1;
		img[(n / 3) * n + i] = 1;
		img[i * n + n / 5] = 1;
	}
	for (long i = 0; i < (long)n * n; i++)
		set += img[i];
	double t0 = wl_now();
	par_run(&team, p, body, NULL);
	double dt = wl_now() - t0;
	double votes = 0, peak = 0;
	int peak_t = 0, peak_r = 0;
	for (int t = 0; t < angles; t++)
		for (int r = 0; r < nrho; r++) {
			double v = acc[(long)t * nrho + r];
			votes += v;
			if (v > peak) {
				peak = v;
				peak_t = t;
				peak_r = r - nrho / 2;
			}
		}
	printf("threads=%d\nn=%d\nset_pixels=%ld\nvotes=%.0f\n", p, n, set, votes);
	printf("peak_votes=%.0f\npeak_angle_index=%d\npeak_rho=%d\n", peak, peak_t, peak_r);
	wl_hex("checksum", wl_fnv(WL_FNV_INIT, acc, sizeof(double) * angles * nrho));
	printf("seconds=%.6f\n", dt);
	if (votes != (double)set * angles)
		wl_fail("%.0f votes, expected %ld pixels x %d angles", votes, set, angles);
	return 0;
}
