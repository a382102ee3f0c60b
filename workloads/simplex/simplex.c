/*
 * simplex - dense tableau simplex method for a linear program, double precision (study 4,
 * Brecht: SIMPLEX, 256 constraints x 512 variables).
 *
 * maximise c.x subject to A x <= b, x >= 0, with seeded positive A, b, c (so the slack basis
 * is feasible and the optimum bounded).  Each pivot: the entering column (most negative
 * reduced cost, lowest index on ties) and the leaving row (minimum ratio, lowest index on
 * ties) are found by per-thread searches over blocks combined in thread order, then every
 * thread eliminates the entering column from its block of rows.  The selections are exact
 * comparisons and each row is updated by the same operations whoever owns it, so the pivot
 * sequence and the result are identical for every p.  Check: the solution is primal and dual
 * feasible and c.x = b.y (strong duality), i.e. really optimal.
 */
#include <math.h>
#include "par.h"

static int m, nv, cols, pivots, max_pivots, status;
static double *T; /* (m + 1) x cols; row m is the objective row; last column is b */
static int *basis;
static struct { double v; long i; } cbest[PAR_MAX], rbest[PAR_MAX];
static struct par_team team;

#define E(i, j) T[(long)(i) * cols + (j)]
#define EPS 1e-9

static void body(int id, void *arg)
{
	(void)arg;
	long clo, chi, rlo, rhi;
	par_block(id, team.p, cols - 1, &clo, &chi);
	par_block(id, team.p, m + 1, &rlo, &rhi);
	for (int piv = 0; piv < max_pivots; piv++) {
		cbest[id].v = -EPS;
		cbest[id].i = -1;
		for (long j = clo; j < chi; j++)
			if (E(m, j) < cbest[id].v) {
				cbest[id].v = E(m, j);
				cbest[id].i = j;
			}
		par_sync(&team);
		long e = -1;
		double ev = -EPS;
		for (int k = 0; k < team.p; k++)
			if (cbest[k].i >= 0 && cbest[k].v < ev) {
				ev = cbest[k].v;
				e = cbest[k].i;
			}
		if (e < 0) {
			if (id == 0)
				pivots = piv;
			return;
		}
		rbest[id].v = INFINITY;
		rbest[id].i = -1;
		for (long i = rlo; i < rhi && i < m; i++)
			if (E(i, e) > EPS) {
				double ratio = E(i, cols - 1) / E(i, e);
				if (ratio < rbest[id].v) {
					rbest[id].v = ratio;
					rbest[id].i = i;
				}
			}
		par_sync(&team);
		long r = -1;
		double rv = INFINITY;
		for (int k = 0; k < team.p; k++)
			if (rbest[k].i >= 0 && rbest[k].v < rv) {
				rv = rbest[k].v;
				r = rbest[k].i;
			}
		if (r < 0) {
			if (id == 0)
				status = 2;
			return;
		}
		double pv = E(r, e);
		for (long i = rlo; i < rhi; i++) {
			if (i == r)
				continue;
			double f = E(i, e) / pv;
			if (f == 0)
				continue;
			for (int j = 0; j < cols; j++)
				E(i, j) -= f * E(r, j);
		}
		par_sync(&team);
		if (r >= rlo && r < rhi) {
			for (int j = 0; j < cols; j++)
				E(r, j) /= pv;
			basis[r] = (int)e;
		}
		par_sync(&team);
	}
	if (id == 0)
		status = 1;
}

int main(int argc, char **argv)
{
	wl_prog = "simplex";
	int p = 1;
	m = 256;
	nv = 512;
	max_pivots = 100000;
	WL_OPTS(argc, argv) {
		if (WL_IS("--threads")) p = par_threads_arg(WL_VAL);
		else if (WL_IS("--constraints")) m = (int)wl_int("--constraints", WL_VAL, 1, 4096);
		else if (WL_IS("--variables")) nv = (int)wl_int("--variables", WL_VAL, 1, 8192);
		else WL_BAD();
	}
	cols = nv + m + 1;
	T = wl_alloc(sizeof(double) * (m + 1) * cols);
	basis = wl_alloc(sizeof(int) * m);
	double *A = wl_alloc(sizeof(double) * m * nv), *b = wl_alloc(sizeof(double) * m);
	double *c = wl_alloc(sizeof(double) * nv);
	wl_rng rng = wl_seed(256512);
	for (long k = 0; k < (long)m * nv; k++)
		A[k] = wl_unit(&rng);
	for (int i = 0; i < m; i++)
		b[i] = nv * (0.1 + 0.4 * wl_unit(&rng));
	for (int j = 0; j < nv; j++)
		c[j] = 0.5 + wl_unit(&rng);
	for (int i = 0; i < m; i++) {
		for (int j = 0; j < nv; j++)
			E(i, j) = A[(long)i * nv + j];
		E(i, nv + i) = 1;
		E(i, cols - 1) = b[i];
		basis[i] = nv + i;
	}
	for (int j = 0; j < nv; j++)
		E(m, j) = -c[j];
	double t0 = wl_now();
	par_run(&team, p, body, NULL);
	double dt = wl_now() - t0;
	if (status == 1)
		wl_fail("no optimum after %d pivots", max_pivots);
	if (status == 2)
		wl_fail("problem reported unbounded, which a positive A cannot be");
	/* Primal solution from the basis, duals from the slack columns of the objective row. */
	double *x = wl_alloc(sizeof(double) * nv), cx = 0, by = 0, worst = 0;
	for (int i = 0; i < m; i++)
		if (basis[i] < nv)
			x[basis[i]] = E(i, cols - 1);
	for (int j = 0; j < nv; j++) {
		cx += c[j] * x[j];
		worst = fmax(worst, -x[j]);
	}
	for (int i = 0; i < m; i++) {
		double ax = 0, y = E(m, nv + i);
		for (int j = 0; j < nv; j++)
			ax += A[(long)i * nv + j] * x[j];
		worst = fmax(worst, (ax - b[i]) / b[i]);
		worst = fmax(worst, -y);
		by += b[i] * y;
	}
	for (int j = 0; j < nv; j++) {
		double aty = 0;
		for (int i = 0; i < m; i++)
			aty += A[(long)i * nv + j] * E(m, nv + i);
		worst = fmax(worst, (c[j] - aty) / c[j]);
	}
	double gap = fabs(cx - by) / fmax(1.0, fabs(cx));
	printf("threads=%d\nconstraints=%d\nvariables=%d\npivots=%d\n", p, m, nv, pivots);
	printf("objective=%.9e\nduality_gap=%.3e\ninfeasibility=%.3e\n", cx, gap, worst);
	wl_hex("checksum", wl_fnv(WL_FNV_INIT, T, sizeof(double) * (m + 1) * cols));
	printf("seconds=%.6f\n", dt);
	if (!(worst < 1e-7) || !(gap < 1e-9))
		wl_fail("solution not optimal: infeasibility %.3e, duality gap %.3e", worst, gap);
	return 0;
}
