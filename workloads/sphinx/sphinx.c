/*
 * sphinx - stand-in for SPEC CPU2006 482.sphinx3: speech recognition, i.e. Gaussian-mixture
 * acoustic scoring of feature frames followed by Viterbi search over word HMMs.
 *
 * 482.sphinx3 spends its time evaluating, for every 10 ms frame of 39 cepstral features, the
 * log-likelihood of many senones (mixtures of diagonal Gaussians), then extending Viterbi
 * paths through left-to-right word models.  Ours does both: --words words of 3 to 6 states,
 * each state its own senone of --mixtures Gaussians in 39 dimensions (means, inverse
 * variances, weights: generated), utterances of 12 words sampled from the models themselves
 * (state durations 3 to 8 frames), exact log-add of the mixture terms, and a frame-synchronous
 * Viterbi decoder with a word loop and back-pointers.  Check: the decoded state sequence
 * agrees with the true one on more than 90% of the frames.
 */
#include <math.h>
#include "wl.h"

#define D 39
static int nwords, nmix, nstates;
static int *wfirst, *wlen, *word_of;
static float *mean, *ivar, *lw, *lconst; /* [state][mix][D], [state][mix][D], [state][mix], [state][mix] */

static double logadd(double a, double b)
{
	if (a < b) { double t = a; a = b; b = t; }
	return b < a - 30 ? a : a + wl_log(1 + wl_exp(b - a));
}

static double senone(int s, const float *x)
{
	double acc = -1e300;
	for (int m = 0; m < nmix; m++) {
		const float *mu = mean + ((long)s * nmix + m) * D, *iv = ivar + ((long)s * nmix + m) * D;
		double q = 0;
		for (int d = 0; d < D; d++) {
			double t = x[d] - mu[d];
			q += t * t * iv[d];
		}
		acc = logadd(acc, lw[s * nmix + m] + lconst[s * nmix + m] - 0.5 * q);
	}
	return acc;
}

static double gauss(wl_rng *r)
{
	double u1 = wl_unit(r), u2 = wl_unit(r);
	if (u1 < 1e-300) u1 = 1e-300;
	return sqrt(-2 * wl_log(u1)) * wl_cos(2 * M_PI * u2);
}

int main(int argc, char **argv)
{
	wl_prog = "sphinx";
	int utterances = 2;
	nwords = 20;
	nmix = 8;
	WL_OPTS(argc, argv) {
		if (WL_IS("--words")) nwords = (int)wl_int("--words", WL_VAL, 2, 100000);
		else if (WL_IS("--mixtures")) nmix = (int)wl_int("--mixtures", WL_VAL, 1, 256);
		else if (WL_IS("--utterances")) utterances = (int)wl_int("--utterances", WL_VAL, 1, 100000);
		else WL_BAD();
	}
	wl_rng rng = wl_seed(482);
	wfirst = wl_alloc(sizeof(int) * nwords);
	wlen = wl_alloc(sizeof(int) * nwords);
	for (int w = 0; w < nwords; w++) {
		wfirst[w] = nstates;
		wlen[w] = 3 + (int)wl_below(&rng, 4);
		nstates += wlen[w];
	}
	word_of = wl_alloc(sizeof(int) * nstates);
	for (int w = 0; w < nwords; w++)
		for (int k = 0; k < wlen[w]; k++)
			word_of[wfirst[w] + k] = w;
	long g = (long)nstates * nmix;
	mean = wl_alloc(sizeof(float) * g * D);
	ivar = wl_alloc(sizeof(float) * g * D);
	lw = wl_alloc(sizeof(float) * g);
	lconst = wl_alloc(sizeof(float) * g);
	for (long k = 0; k < g; k++) {
		double det = 0;
		for (int d = 0; d < D; d++) {
			mean[k * D + d] = (float)(4 * gauss(&rng));
			double var = 0.5 + wl_unit(&rng);
			ivar[k * D + d] = (float)(1 / var);
			det += wl_log(var);
		}
		lw[k] = (float)-wl_log(nmix);
		lconst[k] = (float)(-0.5 * (D * wl_log(2 * M_PI) + det));
	}
	const double SELF = wl_log(0.7), NEXT = wl_log(0.3), WORD = wl_log(1.0 / nwords);
	long long frames_total = 0, agree = 0, evaluations = 0;
	uint64_t h = WL_FNV_INIT;
	double t0 = wl_now();
	for (int u = 0; u < utterances; u++) {
		/* Sample an utterance: 12 words, each state lasting 3..8 frames. */
		int cap = 12 * 6 * 8, T = 0;
		int *truth = wl_alloc(sizeof(int) * cap);
		float *x = wl_alloc(sizeof(float) * cap * D);
		for (int wi = 0; wi < 12; wi++) {
			int w = (int)wl_below(&rng, nwords);
			for (int k = 0; k < wlen[w]; k++)
				for (int dur = 3 + (int)wl_below(&rng, 6); dur > 0; dur--, T++) {
					int s = wfirst[w] + k, m = (int)wl_below(&rng, nmix);
					truth[T] = s;
					for (int d = 0; d < D; d++)
						x[(long)T * D + d] = mean[((long)s * nmix + m) * D + d] +
							(float)(gauss(&rng) / sqrt(ivar[((long)s * nmix + m) * D + d]));
				}
		}
		/* Viterbi with back-pointers. */
		double *score = wl_alloc(sizeof(double) * nstates), *nscore = wl_alloc(sizeof(double) * nstates);
		int *bp = wl_alloc(sizeof(int) * (long)T * nstates);
		for (int s = 0; s < nstates; s++)
			score[s] = -1e300;
		for (int w = 0; w < nwords; w++)
			score[wfirst[w]] = WORD + senone(wfirst[w], x);
		evaluations += nstates;
		for (int t = 1; t < T; t++) {
			double best_end = -1e300;
			int best_end_state = 0;
			for (int w = 0; w < nwords; w++) {
				int last = wfirst[w] + wlen[w] - 1;
				if (score[last] > best_end) { best_end = score[last]; best_end_state = last; }
			}
			for (int s = 0; s < nstates; s++) {
				double stay = score[s] + SELF, from = stay;
				int arg = s;
				if (s != wfirst[word_of[s]]) {
					double adv = score[s - 1] + NEXT;
					if (adv > from) { from = adv; arg = s - 1; }
				} else {
					double entry = best_end + NEXT + WORD;
					if (entry > from) { from = entry; arg = best_end_state; }
				}
				nscore[s] = from + senone(s, x + (long)t * D);
				bp[(long)t * nstates + s] = arg;
			}
			evaluations += nstates;
			double *tmp = score; score = nscore; nscore = tmp;
		}
		int s = wlen[0] - 1; /* the best word-final state at the last frame */
		for (int w = 1; w < nwords; w++)
			if (score[wfirst[w] + wlen[w] - 1] > score[s])
				s = wfirst[w] + wlen[w] - 1;
		for (int t = T - 1; t >= 0; t--) {
			agree += s == truth[t];
			h = wl_fnv(h, &s, sizeof s);
			if (t)
				s = bp[(long)t * nstates + s];
		}
		frames_total += T;
		free(truth); free(x); free(score); free(nscore); free(bp);
	}
	double dt = wl_now() - t0;
	printf("words=%d\nstates=%d\nmixtures=%d\nframes=%lld\nsenone_evaluations=%lld\naccuracy=%.4f\n",
	       nwords, nstates, nmix, frames_total, evaluations, (double)agree / frames_total);
	wl_hex("checksum", h);
	printf("seconds=%.6f\n", dt);
	if (agree * 10 <= frames_total * 9)
		wl_fail("decoded states agree with the truth on only %lld of %lld frames", agree, frames_total);
	return 0;
}
