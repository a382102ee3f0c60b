/*
 * swaptions - PARSEC swaptions-like: Monte Carlo pricing of a portfolio of options, one
 * option per work item, data-parallel over options with pthreads.
 *
 * PARSEC's swaptions prices swaptions by simulating Heath-Jarrow-Morton forward-rate paths;
 * ours keeps the structure (each thread takes whole instruments; every instrument simulates
 * --paths paths of --steps time steps with its own seeded normal generator, Box-Muller) but
 * prices European calls under geometric Brownian motion, whose exact Black-Scholes price
 * gives a real check.  Per-instrument seeds make the result independent of --threads.
 * Check: every Monte Carlo price lies within 4 standard errors of the analytic price.
 */
#include <math.h>
#include "par.h"

static int n, paths, steps;
static double *S, *K, *V, *T, *mc, *se;
static const double RATE = 0.03;
static struct par_team team;

static double normal(wl_rng *r, double *spare, int *have)
{
	if (*have) { *have = 0; return *spare; }
	double u1 = wl_unit(r), u2 = wl_unit(r);
	if (u1 < 1e-300) u1 = 1e-300;
	double rad = sqrt(-2 * wl_log(u1));
	*spare = rad * wl_sin(2 * M_PI * u2);
	*have = 1;
	return rad * wl_cos(2 * M_PI * u2);
}

static void body(int id, void *arg)
{
	(void)arg;
	long lo, hi;
	par_block(id, team.p, n, &lo, &hi);
	for (long i = lo; i < hi; i++) {
		wl_rng r = wl_seed(1000003 * (uint64_t)i + 7);
		double spare = 0, dt = T[i] / steps, sum = 0, sum2 = 0;
		double drift = (RATE - 0.5 * V[i] * V[i]) * dt, vol = V[i] * sqrt(dt);
		int have = 0;
		for (int p = 0; p < paths; p++) {
			double logs = 0;
			for (int s = 0; s < steps; s++)
				logs += drift + vol * normal(&r, &spare, &have);
			double payoff = S[i] * wl_exp(logs) - K[i];
			payoff = payoff > 0 ? payoff : 0;
			sum += payoff;
			sum2 += payoff * payoff;
		}
		double disc = wl_exp(-RATE * T[i]), mean = sum / paths;
		mc[i] = disc * mean;
		se[i] = disc * sqrt((sum2 / paths - mean * mean) / paths);
	}
}

static double cndf(double x) { return 0.5 * erfc(-x / sqrt(2.0)); }

int main(int argc, char **argv)
{
	wl_prog = "swaptions";
	int p = 2;
	n = 16;
	paths = 2000;
	steps = 20;
	WL_OPTS(argc, argv) {
		if (WL_IS("--threads")) p = par_threads_arg(WL_VAL);
		else if (WL_IS("--swaptions")) n = (int)wl_int("--swaptions", WL_VAL, 1, 1000000);
		else if (WL_IS("--paths")) paths = (int)wl_int("--paths", WL_VAL, 100, 100000000);
		else if (WL_IS("--steps")) steps = (int)wl_int("--steps", WL_VAL, 1, 10000);
		else WL_BAD();
	}
	double **arrays[] = { &S, &K, &V, &T, &mc, &se };
	for (int a = 0; a < 6; a++)
		*arrays[a] = wl_alloc(sizeof(double) * n);
	wl_rng rng = wl_seed(11);
	for (int i = 0; i < n; i++) {
		S[i] = 100;
		K[i] = 80 + 40 * wl_unit(&rng);
		V[i] = 0.1 + 0.3 * wl_unit(&rng);
		T[i] = 0.5 + 2 * wl_unit(&rng);
	}
	double t0 = wl_now();
	par_run(&team, p, body, NULL);
	double dt = wl_now() - t0;
	double worst = 0;
	/* The analytic reference uses libm (erfc, exp, log): it is only compared, not hashed. */
	for (int i = 0; i < n; i++) {
		double sq = V[i] * sqrt(T[i]);
		double d1 = (log(S[i] / K[i]) + (RATE + 0.5 * V[i] * V[i]) * T[i]) / sq, d2 = d1 - sq;
		double bs = S[i] * cndf(d1) - K[i] * exp(-RATE * T[i]) * cndf(d2);
		double z = fabs(mc[i] - bs) / (se[i] > 0 ? se[i] : 1e-12);
		if (z > worst)
			worst = z;
	}
	printf("threads=%d\nswaptions=%d\npaths=%d\nsteps=%d\nprice0=%.6f\nworst_z=%.3f\n", p, n,
	       paths, steps, mc[0], worst);
	wl_hex("checksum", wl_fnv(WL_FNV_INIT, mc, sizeof(double) * n));
	printf("seconds=%.6f\n", dt);
	if (!(worst < 4))
		wl_fail("a Monte Carlo price is %.2f standard errors from the analytic price", worst);
	return 0;
}
