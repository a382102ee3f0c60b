/*
 * neural - back-propagation training of a 3-layer perceptron, single precision (study 4,
 * Brecht: NEURAL, 3 layers of 511 units, 4 iterations).
 *
 * 511 input, 511 hidden and 511 output units (sigmoid, plus a bias weight each); one
 * iteration presents each of --patterns seeded training patterns once with an on-line weight
 * update.  Each phase (hidden activations, outputs and their deltas, hidden deltas, weight
 * updates) splits units into blocks over the threads, separated by barriers; every sum runs
 * over one unit's inputs in a fixed order, so results are bit-identical for every p.  Check:
 * the training error falls from the first iteration to the last.
 */
#include <math.h>
#include "par.h"

static int units, patterns, iterations;
static float *w1, *w2;           /* [units][units + 1]: row = receiving unit, last = bias */
static float *in, *target;       /* [patterns][units] */
static float *hid, *out, *dout, *dhid;
static float *err_per_iter;
static const float rate = 0.05f;
static struct par_team team;

static float sigmoid(float x) { return 1.0f / (1.0f + (float)wl_exp(-x)); /* not expf: see wl_exp */ }

static void layer(const float *w, const float *x, float *y, long lo, long hi)
{
	for (long j = lo; j < hi; j++) {
		const float *wj = w + j * (units + 1);
		float s = wj[units];
		for (int i = 0; i < units; i++)
			s += wj[i] * x[i];
		y[j] = sigmoid(s);
	}
}

static void update(float *w, const float *delta, const float *x, long lo, long hi)
{
	for (long j = lo; j < hi; j++) {
		float *wj = w + j * (units + 1), g = rate * delta[j];
		for (int i = 0; i < units; i++)
			wj[i] += g * x[i];
		wj[units] += g;
	}
}

static void body(int id, void *arg)
{
	(void)arg;
	long lo, hi;
	par_block(id, team.p, units, &lo, &hi);
	for (int it = 0; it < iterations; it++) {
		float e = 0;
		for (int pt = 0; pt < patterns; pt++) {
			const float *x = in + (long)pt * units, *t = target + (long)pt * units;
			layer(w1, x, hid, lo, hi);
			par_sync(&team);
			layer(w2, hid, out, lo, hi);
			for (long k = lo; k < hi; k++)
				dout[k] = (t[k] - out[k]) * out[k] * (1 - out[k]);
			par_sync(&team);
			for (long j = lo; j < hi; j++) {
				float s = 0;
				for (int k = 0; k < units; k++)
					s += w2[(long)k * (units + 1) + j] * dout[k];
				dhid[j] = s * hid[j] * (1 - hid[j]);
			}
			if (id == 0) /* serial sum: a per-thread partial sum would depend on p */
				for (int k = 0; k < units; k++)
					e += 0.5f * (t[k] - out[k]) * (t[k] - out[k]);
			par_sync(&team);
			update(w2, dout, hid, lo, hi);
			update(w1, dhid, x, lo, hi);
			par_sync(&team);
		}
		if (id == 0)
			err_per_iter[it] = e;
	}
}

int main(int argc, char **argv)
{
	wl_prog = "neural";
	int p = 1;
	units = 511;
	patterns = 8;
	iterations = 4;
	WL_OPTS(argc, argv) {
		if (WL_IS("--threads")) p = par_threads_arg(WL_VAL);
		else if (WL_IS("--units")) units = (int)wl_int("--units", WL_VAL, 2, 8192);
		else if (WL_IS("--patterns")) patterns = (int)wl_int("--patterns", WL_VAL, 1, 1024);
		else if (WL_IS("--iterations")) iterations = (int)wl_int("--iterations", WL_VAL, 2, 10000);
		else WL_BAD();
	}
	long wsize = (long)units * (units + 1);
	w1 = wl_alloc(sizeof(float) * wsize);
	w2 = wl_alloc(sizeof(float) * wsize);
	in = wl_alloc(sizeof(float) * patterns * units);
	target = wl_alloc(sizeof(float) * patterns * units);
	hid = wl_alloc(sizeof(float) * units);
	out = wl_alloc(sizeof(float) * units);
	dout = wl_alloc(sizeof(float) * units);
	dhid = wl_alloc(sizeof(float) * units);
	err_per_iter = wl_alloc(sizeof(float) * iterations);
	wl_rng rng = wl_seed(511);
	float scale = 1.0f / sqrtf((float)units);
	for (long i = 0; i < wsize; i++) {
		w1[i] = scale * (float)(2 * wl_unit(&rng) - 1);
		w2[i] = scale * (float)(2 * wl_unit(&rng) - 1);
	}
	/* Targets are a fixed function of the inputs (a shifted, thresholded copy) to be learnt. */
	for (long i = 0; i < (long)patterns * units; i++)
		in[i] = (float)wl_unit(&rng);
	for (int pt = 0; pt < patterns; pt++)
		for (int k = 0; k < units; k++)
			target[(long)pt * units + k] = in[(long)pt * units + (k + 1) % units] > 0.5f ? 0.9f : 0.1f;
	double t0 = wl_now();
	par_run(&team, p, body, NULL);
	double dt = wl_now() - t0;
	printf("threads=%d\nunits=%d\niterations=%d\n", p, units, iterations);
	printf("error_first=%.6e\nerror_last=%.6e\n", err_per_iter[0], err_per_iter[iterations - 1]);
	uint64_t h = wl_fnv(WL_FNV_INIT, w1, sizeof(float) * wsize);
	wl_hex("checksum", wl_fnv(h, w2, sizeof(float) * wsize));
	printf("seconds=%.6f\n", dt);
	if (!(err_per_iter[iterations - 1] < err_per_iter[0]))
		wl_fail("training error did not fall (%g -> %g)", err_per_iter[0],
			err_per_iter[iterations - 1]);
	return 0;
}
