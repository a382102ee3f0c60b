/*
 * streamcluster - PARSEC streamcluster-like: online clustering of a stream of points, each
 * chunk clustered by threads and its centres kept as weighted points for the final pass.
 *
 * PARSEC's streamcluster solves online k-median with local search, its threads computing
 * point-to-centre distances over blocks of points (a memory-streaming, distance-dominated
 * kernel).  Ours reads the stream in --chunk points of --dim dimensions, runs weighted
 * k-means (Lloyd) on each chunk with the assignment step parallel over points and the update
 * step parallel over centres (each centre summed over all points in order, so any --threads
 * gives the same result), keeps the centres, and clusters all kept centres at the end.
 * Check: within each chunk the cost never increases between iterations, and the final
 * centres recover the generating clusters (final cost near the noise floor).
 */
#include "par.h"

static int dim, k, iters = 8;
static long npts;
static float *pts, *wts, *ctr;
static int *assign;
static double *cost_part;
static struct par_team team;

static double dist2(const float *a, const float *b)
{
	double s = 0;
	for (int d = 0; d < dim; d++) {
		double t = (double)a[d] - b[d];
		s += t * t;
	}
	return s;
}

static double history[64];

static void body(int id, void *arg)
{
	(void)arg;
	long lo, hi, clo, chi;
	par_block(id, team.p, npts, &lo, &hi);
	par_block(id, team.p, k, &clo, &chi);
	for (int it = 0; it < iters; it++) {
		for (long i = lo; i < hi; i++) {
			int best = 0;
			double bd = dist2(pts + i * dim, ctr);
			for (int c = 1; c < k; c++) {
				double d = dist2(pts + i * dim, ctr + (long)c * dim);
				if (d < bd) { bd = d; best = c; }
			}
			assign[i] = best;
			cost_part[i] = bd * wts[i];
		}
		par_sync(&team);
		if (id == 0) { /* serial in point order: p-independent */
			double c = 0;
			for (long i = 0; i < npts; i++)
				c += cost_part[i];
			history[it] = c;
		}
		for (long c = clo; c < chi; c++) {
			double sum[64] = { 0 }, w = 0;
			for (long i = 0; i < npts; i++)
				if (assign[i] == c) {
					for (int d = 0; d < dim; d++)
						sum[d] += (double)wts[i] * pts[i * dim + d];
					w += wts[i];
				}
			if (w > 0)
				for (int d = 0; d < dim; d++)
					ctr[c * dim + d] = (float)(sum[d] / w);
		}
		par_sync(&team);
	}
}

static double cluster(float *p, float *w, long n, float *centres, int p_threads)
{
	pts = p; wts = w; npts = n; ctr = centres;
	assign = wl_alloc(sizeof(int) * n);
	cost_part = wl_alloc(sizeof(double) * n);
	/* Farthest-point seeding (deterministic k-means++): one seed per well-separated group. */
	double *near = wl_alloc(sizeof(double) * n);
	memcpy(ctr, p, sizeof(float) * dim);
	for (long i = 0; i < n; i++)
		near[i] = dist2(p + i * dim, ctr);
	for (int c = 1; c < k; c++) {
		long far = 0;
		for (long i = 1; i < n; i++)
			if (near[i] * w[i] > near[far] * w[far])
				far = i;
		memcpy(ctr + (long)c * dim, p + far * dim, sizeof(float) * dim);
		for (long i = 0; i < n; i++) {
			double d = dist2(p + i * dim, ctr + (long)c * dim);
			if (d < near[i])
				near[i] = d;
		}
	}
	free(near);
	par_run(&team, p_threads, body, NULL);
	for (int it = 1; it < iters; it++)
		if (history[it] > history[it - 1] * (1 + 1e-12))
			wl_fail("clustering cost rose from %g to %g", history[it - 1], history[it]);
	free(assign);
	free(cost_part);
	return history[iters - 1];
}

int main(int argc, char **argv)
{
	wl_prog = "streamcluster";
	int p = 2, chunks = 4;
	long chunk = 4096;
	dim = 32;
	k = 10;
	WL_OPTS(argc, argv) {
		if (WL_IS("--threads")) p = par_threads_arg(WL_VAL);
		else if (WL_IS("--chunk")) chunk = (long)wl_int("--chunk", WL_VAL, 64, 10000000);
		else if (WL_IS("--chunks")) chunks = (int)wl_int("--chunks", WL_VAL, 1, 1000);
		else if (WL_IS("--dim")) dim = (int)wl_int("--dim", WL_VAL, 1, 64);
		else WL_BAD();
	}
	wl_rng rng = wl_seed(5);
	float *truth = wl_alloc(sizeof(float) * k * dim);
	for (int i = 0; i < k * dim; i++)
		truth[i] = (float)(10 * wl_unit(&rng));
	float *buf = wl_alloc(sizeof(float) * chunk * dim), *ones = wl_alloc(sizeof(float) * chunk);
	float *kept = wl_alloc(sizeof(float) * chunks * k * dim), *kw = wl_alloc(sizeof(float) * chunks * k);
	for (long i = 0; i < chunk; i++)
		ones[i] = 1;
	double t0 = wl_now();
	for (int c = 0; c < chunks; c++) {
		/* The next chunk of the stream: points around the true centres, noise 0.1 per axis. */
		for (long i = 0; i < chunk; i++) {
			int src = (int)wl_below(&rng, k);
			for (int d = 0; d < dim; d++)
				buf[i * dim + d] = truth[src * dim + d] + (float)(0.2 * (wl_unit(&rng) - 0.5));
		}
		cluster(buf, ones, chunk, kept + (long)c * k * dim, p);
		for (int j = 0; j < k; j++)
			kw[c * k + j] = (float)chunk / k;
	}
	float *final = wl_alloc(sizeof(float) * k * dim);
	cluster(kept, kw, (long)chunks * k, final, p);
	double dt = wl_now() - t0;
	/* Each true centre should have a final centre within a small distance. */
	double worst = 0;
	for (int t = 0; t < k; t++) {
		double best = 1e300;
		for (int c = 0; c < k; c++) {
			double d = dist2(truth + t * dim, final + c * dim);
			if (d < best) best = d;
		}
		if (best > worst) worst = best;
	}
	printf("threads=%d\npoints=%ld\ndim=%d\ncentres=%d\nworst_centre_error=%.4f\n", p,
	       chunk * chunks, dim, k, worst);
	wl_hex("checksum", wl_fnv(WL_FNV_INIT, final, sizeof(float) * k * dim));
	printf("seconds=%.6f\n", dt);
	if (!(worst < 1.0))
		wl_fail("a true cluster centre is %.3f (squared) from every found centre", worst);
	return 0;
}
