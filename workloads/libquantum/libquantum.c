/*
 * libquantum - stand-in for SPEC CPU2006 462.libquantum: simulation of a quantum computer,
 * here Grover's search on a register of --qubits qubits.
 *
 * 462.libquantum applies gates (Hadamard, controlled-NOT, Toffoli, phase) to a quantum
 * register stored as a large array and sweeps the whole array for every gate: a regular,
 * streaming, memory-bandwidth-bound program.  Ours keeps the full state vector of 2^n complex
 * amplitudes (single precision pairs, 8 B each) and applies every Grover iteration gate by
 * gate: the oracle as a multi-controlled phase flip, the diffusion as Hadamards on every qubit
 * (each a strided sweep pairing i with i ^ 2^k), a phase flip of |0>, and Hadamards again.
 * Check: after the optimal number of iterations the marked state holds more than 90% of the
 * probability, and the total probability is still 1.
 */
#include <math.h>
#include "wl.h"

static float *re, *im;
static long long gates;

static void hadamard(long n, int k)
{
	const float s = 0.70710678118654752f;
	long bit = 1L << k;
	for (long i = 0; i < n; i++)
		if (!(i & bit)) {
			float ar = re[i], ai = im[i], br = re[i | bit], bi = im[i | bit];
			re[i] = s * (ar + br);
			im[i] = s * (ai + bi);
			re[i | bit] = s * (ar - br);
			im[i | bit] = s * (ai - bi);
		}
	gates++;
}

/* Phase flip of every basis state whose bits under `mask` equal `value` (a controlled-Z). */
static void phase_flip(long n, long mask, long value)
{
	for (long i = 0; i < n; i++)
		if ((i & mask) == value) {
			re[i] = -re[i];
			im[i] = -im[i];
		}
	gates++;
}

int main(int argc, char **argv)
{
	wl_prog = "libquantum";
	int q = 12;
	long long marked = -1;
	WL_OPTS(argc, argv) {
		if (WL_IS("--qubits")) q = (int)wl_int("--qubits", WL_VAL, 2, 30);
		else if (WL_IS("--marked")) marked = wl_int("--marked", WL_VAL, 0, (1LL << 30) - 1);
		else WL_BAD();
	}
	long n = 1L << q;
	if (marked < 0)
		marked = (long long)(0x5A5A5A5AL & (n - 1));
	if (marked >= n)
		wl_die("--marked must be below 2^qubits = %ld", n);
	re = wl_alloc(sizeof(float) * n);
	im = wl_alloc(sizeof(float) * n);
	re[0] = 1;
	double t0 = wl_now();
	for (int k = 0; k < q; k++)
		hadamard(n, k);
	int iters = (int)floor(M_PI / 4 * sqrt((double)n));
	for (int it = 0; it < iters; it++) {
		phase_flip(n, n - 1, (long)marked);
		for (int k = 0; k < q; k++)
			hadamard(n, k);
		phase_flip(n, n - 1, 0);
		for (int k = 0; k < q; k++)
			hadamard(n, k);
	}
	double dt = wl_now() - t0;
	double total = 0, pm = (double)re[marked] * re[marked] + (double)im[marked] * im[marked];
	for (long i = 0; i < n; i++)
		total += (double)re[i] * re[i] + (double)im[i] * im[i];
	printf("qubits=%d\niterations=%d\ngates=%lld\nmarked=%lld\np_marked=%.6f\nnorm=%.6f\n", q, iters,
	       gates, marked, pm, total);
	uint64_t h = wl_fnv(WL_FNV_INIT, re, sizeof(float) * n);
	wl_hex("checksum", wl_fnv(h, im, sizeof(float) * n));
	printf("seconds=%.6f\n", dt);
	if (!(pm > 0.9) || fabs(total - 1) > 1e-3)
		wl_fail("marked state probability %.4f, total %.6f", pm, total);
	return 0;
}
