/*
 * pde - Laplace equation on an n x n grid by red-black successive over-relaxation, double
 * precision (study 4, Brecht: PDE 96 x 96).
 *
 * Red-black ordering makes each half-sweep fully parallel and its result independent of how
 * rows are split, so every p computes the same iterates.  Threads own blocks of rows; after
 * each sweep they publish their largest update and all stop at the same iteration (a max is
 * exact, so the stopping decision is p-independent too).  The boundary holds x^2 - y^2, a
 * harmonic function the 5-point stencil reproduces exactly, so the check compares the
 * converged grid with it.
 */
#include <math.h>
#include "par.h"

static int n, iters, max_iters;
static double *u, omega, tol;
static double slot[2][PAR_MAX];
static struct par_team team;

#define U(i, j) u[(long)(i) * (n + 2) + (j)]

static double exact(int i, int j)
{
	double x = (double)j / (n + 1), y = (double)i / (n + 1);
	return x * x - y * y;
}

static double half_sweep(long lo, long hi, int colour)
{
	double diff = 0;
	for (long i = lo + 1; i <= hi; i++)
		for (int j = 1 + (int)((i + 1 + colour) & 1); j <= n; j += 2) {
			double gs = 0.25 * (U(i - 1, j) + U(i + 1, j) + U(i, j - 1) + U(i, j + 1));
			double d = omega * (gs - U(i, j));
			U(i, j) += d;
			diff = fmax(diff, fabs(d));
		}
	return diff;
}

static void body(int id, void *arg)
{
	(void)arg;
	long lo, hi;
	par_block(id, team.p, n, &lo, &hi);
	for (int it = 0; it < max_iters; it++) {
		double d = half_sweep(lo, hi, 0);
		par_sync(&team);
		d = fmax(d, half_sweep(lo, hi, 1));
		slot[it & 1][id] = d;
		par_sync(&team);
		double all = 0;
		for (int k = 0; k < team.p; k++)
			all = fmax(all, slot[it & 1][k]);
		if (all < tol) {
			if (id == 0)
				iters = it + 1;
			return;
		}
	}
	if (id == 0)
		iters = max_iters;
}

int main(int argc, char **argv)
{
	wl_prog = "pde";
	int p = 1;
	n = 96;
	max_iters = 10000;
	tol = 1e-12;
	WL_OPTS(argc, argv) {
		if (WL_IS("--threads")) p = par_threads_arg(WL_VAL);
		else if (WL_IS("--n")) n = (int)wl_int("--n", WL_VAL, 4, 4096);
		else if (WL_IS("--max-iters")) max_iters = (int)wl_int("--max-iters", WL_VAL, 1, 1 << 24);
		else WL_BAD();
	}
	omega = 2.0 / (1.0 + wl_sin(M_PI / (n + 1)));
	u = wl_alloc(sizeof(double) * (n + 2) * (n + 2));
	for (int i = 0; i < n + 2; i++)
		for (int j = 0; j < n + 2; j++)
			if (i == 0 || j == 0 || i == n + 1 || j == n + 1)
				U(i, j) = exact(i, j);
	double t0 = wl_now();
	par_run(&team, p, body, NULL);
	double dt = wl_now() - t0;
	double err = 0;
	for (int i = 1; i <= n; i++)
		for (int j = 1; j <= n; j++)
			err = fmax(err, fabs(U(i, j) - exact(i, j)));
	printf("threads=%d\nn=%d\niterations=%d\nmax_error=%.3e\n", p, n, iters, err);
	wl_hex("checksum", wl_fnv(WL_FNV_INIT, u, sizeof(double) * (n + 2) * (n + 2)));
	printf("seconds=%.6f\n", dt);
	if (iters >= max_iters)
		wl_fail("no convergence in %d iterations", max_iters);
	if (!(err < 1e-9))
		wl_fail("solution differs from x^2 - y^2 by %.3e", err);
	return 0;
}
