/*
 * fft - 2-D complex FFT, single precision (study 4, Brecht: FFT 256 x 256).
 *
 * Row-column method: every thread transforms its block of rows, barrier, then its block of
 * columns (each column gathered into a private buffer, as the NUMA-era codes did to keep the
 * butterflies in local memory/cache).  The check runs the inverse transform the same way and
 * requires the input back within single-precision rounding; the checksum of the forward
 * spectrum is bit-identical for every thread count because each row/column is transformed by
 * exactly the same instruction sequence whichever thread does it.
 */
#include <complex.h>
#include <math.h>
#include "par.h"

typedef float complex cf;

static int n, logn;
static cf *data, *orig, *tw; /* tw[k] = exp(-2 pi i k / n), k < n/2 */
static struct par_team team;

static void fft1(cf *x, int inverse)
{
	for (int i = 1, j = 0; i < n; i++) {
		int bit = n >> 1;
		for (; j & bit; bit >>= 1)
			j ^= bit;
		j |= bit;
		if (i < j) {
			cf t = x[i];
			x[i] = x[j];
			x[j] = t;
		}
	}
	for (int len = 2; len <= n; len <<= 1) {
		int step = n / len;
		for (int i = 0; i < n; i += len)
			for (int k = 0; k < len / 2; k++) {
				cf w = inverse ? conjf(tw[k * step]) : tw[k * step];
				cf u = x[i + k], v = x[i + k + len / 2] * w;
				x[i + k] = u + v;
				x[i + k + len / 2] = u - v;
			}
	}
	if (inverse)
		for (int i = 0; i < n; i++)
			x[i] /= (float)n;
}

static void fft2(int id, int inverse)
{
	long lo, hi;
	cf col[4096];
	par_block(id, team.p, n, &lo, &hi);
	for (long r = lo; r < hi; r++)
		fft1(data + r * n, inverse);
	par_sync(&team);
	for (long c = lo; c < hi; c++) {
		for (int r = 0; r < n; r++)
			col[r] = data[(long)r * n + c];
		fft1(col, inverse);
		for (int r = 0; r < n; r++)
			data[(long)r * n + c] = col[r];
	}
	par_sync(&team);
}

static uint64_t spectrum_sum;

static void body(int id, void *arg)
{
	(void)arg;
	fft2(id, 0);
	if (id == 0)
		spectrum_sum = wl_fnv(WL_FNV_INIT, data, sizeof(cf) * n * n);
	par_sync(&team);
	fft2(id, 1);
}

int main(int argc, char **argv)
{
	wl_prog = "fft";
	int p = 1;
	n = 256;
	WL_OPTS(argc, argv) {
		if (WL_IS("--threads")) p = par_threads_arg(WL_VAL);
		else if (WL_IS("--n")) n = (int)wl_int("--n", WL_VAL, 2, 4096);
		else WL_BAD();
	}
	if (n & (n - 1))
		wl_die("--n must be a power of two (radix-2 FFT), not %d", n);
	for (logn = 0; (1 << logn) < n; logn++)
		;
	data = wl_alloc(sizeof(cf) * n * n);
	orig = wl_alloc(sizeof(cf) * n * n);
	tw = wl_alloc(sizeof(cf) * n);
	for (int k = 0; k < n / 2; k++)
		tw[k] = (float)wl_cos(2 * M_PI * k / n) - I * (float)wl_sin(2 * M_PI * k / n);
	wl_rng rng = wl_seed(256);
	for (long i = 0; i < (long)n * n; i++)
		orig[i] = data[i] = (float)(wl_unit(&rng) - 0.5) + I * (float)(wl_unit(&rng) - 0.5);
	double t0 = wl_now();
	par_run(&team, p, body, NULL);
	double dt = wl_now() - t0;
	double err = 0;
	for (long i = 0; i < (long)n * n; i++)
		err = fmax(err, cabsf(data[i] - orig[i]));
	printf("threads=%d\nn=%d\n", p, n);
	wl_hex("checksum", spectrum_sum);
	printf("roundtrip_max_error=%.3e\nseconds=%.6f\n", err, dt);
	if (!(err < 1e-4 * logn))
		wl_fail("inverse FFT differs from the input by %.3e", err);
	return 0;
}
