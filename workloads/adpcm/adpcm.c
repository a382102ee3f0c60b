/*
 * adpcm - MiBench telecomm/adpcm-like: 4-bit adaptive differential PCM coding of 16-bit
 * audio, encode then decode.
 *
 * The coder is IMA-ADPCM style: each sample is predicted from the previous one and the
 * difference quantised to 4 bits with a step size that adapts through a step table and an
 * index-adjust table.  Our step table is generated (steps growing by 10% from 7, as in the
 * IMA design) rather than copied, so the bit stream is ours, not IMA's.  MiBench codes a
 * shipped speech file; we generate a signal (a sum of tones with a slow envelope and a
 * little noise).  Check: the decoded signal's SNR against the original is above 20 dB.
 */
#include <math.h>
#include "wl.h"

static int steps[89];
static const int ADJ[8] = { -1, -1, -1, -1, 2, 4, 6, 8 };

struct state { int pred, index; };

static int clamp(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

static int decode1(struct state *s, int code)
{
	int step = steps[s->index], diff = step >> 3;
	if (code & 4) diff += step;
	if (code & 2) diff += step >> 1;
	if (code & 1) diff += step >> 2;
	s->pred = clamp(code & 8 ? s->pred - diff : s->pred + diff, -32768, 32767);
	s->index = clamp(s->index + ADJ[code & 7], 0, 88);
	return s->pred;
}

static int encode1(struct state *s, int sample)
{
	int step = steps[s->index], diff = sample - s->pred, code = 0;
	if (diff < 0) { code = 8; diff = -diff; }
	if (diff >= step) { code |= 4; diff -= step; }
	if (diff >= step >> 1) { code |= 2; diff -= step >> 1; }
	if (diff >= step >> 2) code |= 1;
	decode1(s, code); /* the encoder tracks exactly what the decoder will reconstruct */
	return code;
}

int main(int argc, char **argv)
{
	wl_prog = "adpcm";
	int n = 1 << 20, repeat = 1;
	WL_OPTS(argc, argv) {
		if (WL_IS("--samples")) n = (int)wl_int("--samples", WL_VAL, 16, 1 << 30);
		else if (WL_IS("--repeat")) repeat = (int)wl_int("--repeat", WL_VAL, 1, 100000);
		else WL_BAD();
	}
	double s = 7;
	for (int i = 0; i < 89; i++, s *= 1.1)
		steps[i] = (int)s > 32767 ? 32767 : (int)s;
	int16_t *pcm = wl_alloc(sizeof(int16_t) * n), *out = wl_alloc(sizeof(int16_t) * n);
	uint8_t *code = wl_alloc((size_t)n / 2 + 1);
	wl_rng rng = wl_seed(8000);
	for (int i = 0; i < n; i++) {
		double t = i / 8000.0, env = 0.6 + 0.4 * wl_sin(2 * M_PI * 0.5 * t);
		double v = env * (9000 * wl_sin(2 * M_PI * 440 * t) + 5000 * wl_sin(2 * M_PI * 1250 * t)
				  + 2500 * wl_sin(2 * M_PI * 97 * t)) + 200 * (wl_unit(&rng) - 0.5);
		pcm[i] = (int16_t)v;
	}
	double t0 = wl_now();
	for (int r = 0; r < repeat; r++) {
		struct state enc = { 0, 0 }, dec = { 0, 0 };
		for (int i = 0; i < n; i++) {
			int c = encode1(&enc, pcm[i]);
			code[i / 2] = (uint8_t)(i & 1 ? code[i / 2] | c << 4 : c);
		}
		for (int i = 0; i < n; i++)
			out[i] = (int16_t)decode1(&dec, (code[i / 2] >> (i & 1 ? 4 : 0)) & 15);
	}
	double dt = wl_now() - t0;
	double sig = 0, noise = 0;
	for (int i = 0; i < n; i++) {
		sig += (double)pcm[i] * pcm[i];
		noise += (double)(pcm[i] - out[i]) * (pcm[i] - out[i]);
	}
	double snr = 10 * log10(sig / (noise + 1));
	printf("samples=%d\nrepeat=%d\nsnr_db=%.2f\n", n, repeat, snr);
	wl_hex("checksum", wl_fnv(WL_FNV_INIT, code, (size_t)n / 2));
	printf("seconds=%.6f\n", dt);
	if (!(snr > 20))
		wl_fail("SNR %.2f dB is below 20 dB", snr);
	return 0;
}
