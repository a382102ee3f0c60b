/*
 * blackscholes - PARSEC blackscholes-like: price a portfolio of European options with the
 * Black-Scholes formula, data-parallel over options with pthreads.
 *
 * Like PARSEC's kernel, each thread prices its block of options (spot, strike, rate,
 * volatility, time; structure of arrays) --runs times; the cumulative normal is the same
 * polynomial approximation (Abramowitz & Stegun 26.2.17) and exp/log/sqrt are evaluated per
 * option.  Inputs are generated instead of read from PARSEC's file.  Results do not depend
 * on --threads.  Check: put-call parity C - P = S - K exp(-rT) for every option.
 */
#include <math.h>
#include "par.h"

static int n, runs;
static double *S, *K, *R, *V, *T, *call, *put;
static struct par_team team;

static double cndf(double x)
{
	int neg = x < 0;
	if (neg)
		x = -x;
	double k = 1 / (1 + 0.2316419 * x);
	double poly = k * (0.319381530 + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + k * 1.330274429))));
	double v = 1 - 0.3989422804014327 * wl_exp(-0.5 * x * x) * poly;
	return neg ? 1 - v : v;
}

static void body(int id, void *arg)
{
	(void)arg;
	long lo, hi;
	par_block(id, team.p, n, &lo, &hi);
	for (int r = 0; r < runs; r++)
		for (long i = lo; i < hi; i++) {
			double sq = sqrt(T[i]);
			double d1 = (wl_log(S[i] / K[i]) + (R[i] + 0.5 * V[i] * V[i]) * T[i]) / (V[i] * sq);
			double d2 = d1 - V[i] * sq, disc = K[i] * wl_exp(-R[i] * T[i]);
			call[i] = S[i] * cndf(d1) - disc * cndf(d2);
			put[i] = disc * (1 - cndf(d2)) - S[i] * (1 - cndf(d1));
		}
}

int main(int argc, char **argv)
{
	wl_prog = "blackscholes";
	int p = 2;
	n = 65536;
	runs = 4;
	WL_OPTS(argc, argv) {
		if (WL_IS("--threads")) p = par_threads_arg(WL_VAL);
		else if (WL_IS("--options")) n = (int)wl_int("--options", WL_VAL, 1, 100000000);
		else if (WL_IS("--runs")) runs = (int)wl_int("--runs", WL_VAL, 1, 100000);
		else WL_BAD();
	}
	double **arrays[] = { &S, &K, &R, &V, &T, &call, &put };
	for (int a = 0; a < 7; a++)
		*arrays[a] = wl_alloc(sizeof(double) * n);
	wl_rng rng = wl_seed(42);
	for (int i = 0; i < n; i++) {
		S[i] = 20 + 80 * wl_unit(&rng);
		K[i] = S[i] * (0.7 + 0.6 * wl_unit(&rng));
		R[i] = 0.01 + 0.09 * wl_unit(&rng);
		V[i] = 0.05 + 0.6 * wl_unit(&rng);
		T[i] = 0.1 + 2 * wl_unit(&rng);
	}
	double t0 = wl_now();
	par_run(&team, p, body, NULL);
	double dt = wl_now() - t0;
	double worst = 0, sum = 0;
	for (int i = 0; i < n; i++) {
		double parity = call[i] - put[i] - (S[i] - K[i] * wl_exp(-R[i] * T[i]));
		worst = fmax(worst, fabs(parity));
		sum += call[i];
	}
	printf("threads=%d\noptions=%d\nruns=%d\nmean_call=%.6f\nparity_error=%.3e\n", p, n, runs, sum / n, worst);
	uint64_t h = wl_fnv(WL_FNV_INIT, call, sizeof(double) * n);
	wl_hex("checksum", wl_fnv(h, put, sizeof(double) * n));
	printf("seconds=%.6f\n", dt);
	if (!(worst < 1e-9))
		wl_fail("put-call parity violated by %.3e", worst);
	return 0;
}
