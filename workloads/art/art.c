/*
 * art - stand-in for SPEC CPU2000 179.art: an ART-2 (Adaptive Resonance Theory) neural
 * network that learns object templates and then scans an image for them.
 *
 * Like 179.art, each window of the scanned image is presented to the F1 layer, whose six
 * activation vectors per neuron (w, x, v, u, p, q, kept together in one struct per neuron as
 * in the original program's layout) are iterated to equilibrium and matched against every
 * F2 category's bottom-up weights.  The data that is swept for every window (F1 structs plus
 * two weight matrices plus the image) is several hundred KB to a few MB of doubles, read in
 * long strided passes: a floating-point, memory-streaming program whose L2 behaviour depends
 * on the window and category count.  Check: each planted object is recognised at the place
 * it was planted, and nowhere is a blank region recognised.
 */
#include <math.h>
#include <stddef.h>
#include "wl.h"

struct f1 { double w, x, v, u, p, q, i, r; };

static int win, nf1, nf2, img_n;
static struct f1 *f1;
static double *bu, *td; /* bottom-up [nf2][nf1], top-down [nf2][nf1] */
static float *img;

static const double A = 10, B = 10, C = 0.1, D = 0.9, E = 1e-7, RHO = 0.99;
static double theta; /* 0.5 / sqrt(nf1): F1 vectors are unit-norm, so noise-level components fall below it */

static double fsig(double x) { return x >= theta ? x : 0; }

static double norm_of(size_t off)
{
	double s = 0;
	for (int k = 0; k < nf1; k++)
		s += *(double *)((char *)&f1[k] + off) * *(double *)((char *)&f1[k] + off);
	return sqrt(s);
}

/*
 * Present the window at (y0, x0) to F1 and iterate; unless learning (when F1 must settle on
 * the input alone), F2 picks the category J after a few iterations and its top-down template
 * feeds back.  Returns the ART-2 match |r| of J at the moment it fires.
 */
static double present(int y0, int x0, int *winner, int learning)
{
	for (int a = 0, k = 0; a < win; a++)
		for (int b = 0; b < win; b++, k++) {
			f1[k].i = img[(long)(y0 + a) * img_n + x0 + b];
			f1[k].u = f1[k].p = f1[k].q = 0;
		}
	int J = -1;
	double match = 0;
	for (int it = 0; it < 8; it++) {
		for (int k = 0; k < nf1; k++)
			f1[k].w = f1[k].i + A * f1[k].u;
		double nw = norm_of(offsetof(struct f1, w));
		for (int k = 0; k < nf1; k++) {
			f1[k].x = f1[k].w / (E + nw);
			f1[k].v = fsig(f1[k].x) + B * fsig(f1[k].q);
		}
		double nv = norm_of(offsetof(struct f1, v));
		for (int k = 0; k < nf1; k++)
			f1[k].u = f1[k].v / (E + nv);
		if (it == 3 && !learning) { /* F2 competition once F1 has settled on the input */
			double best = -1;
			for (int j = 0; j < nf2; j++) {
				double s = 0;
				const double *bj = bu + (long)j * nf1;
				for (int k = 0; k < nf1; k++)
					s += bj[k] * f1[k].u;
				if (s > best) {
					best = s;
					J = j;
				}
			}
			/* Reset test as J first fires: does its template match the bottom-up u? */
			const double *tj = td + (long)J * nf1;
			double ur = 0, pp = 0, rr = 0;
			for (int k = 0; k < nf1; k++) {
				double pk = f1[k].u + D * tj[k];
				f1[k].r = f1[k].u + C * pk;
				ur += f1[k].u * f1[k].u;
				pp += pk * pk;
				rr += f1[k].r * f1[k].r;
			}
			match = sqrt(rr) / (E + sqrt(ur) + C * sqrt(pp));
		}
		for (int k = 0; k < nf1; k++)
			f1[k].p = f1[k].u + (J >= 0 ? D * td[(long)J * nf1 + k] : 0);
		double np = norm_of(offsetof(struct f1, p));
		for (int k = 0; k < nf1; k++)
			f1[k].q = f1[k].p / (E + np);
	}
	*winner = J;
	return match;
}

static void draw(int cy, int cx, int kind)
{
	for (int a = 0; a < win; a++)
		for (int b = 0; b < win; b++) {
			double dy = a - win / 2.0, dx = b - win / 2.0, r = sqrt(dx * dx + dy * dy);
			float v = kind == 0 ? (r < win * 0.4 ? 1.0f : 0.05f)        /* disc */
				: kind == 1 ? (fabs(dx) < win * 0.12 || fabs(dy) < win * 0.12 ? 1.0f : 0.05f) /* cross */
				: (((a / 3) + (b / 3)) % 2 ? 0.9f : 0.1f);            /* checkers */
			img[(long)(cy + a) * img_n + cx + b] = v;
		}
}

int main(int argc, char **argv)
{
	wl_prog = "art";
	int scans = 1, step = 4;
	win = 24;
	nf2 = 32;
	img_n = 160;
	WL_OPTS(argc, argv) {
		if (WL_IS("--window")) win = (int)wl_int("--window", WL_VAL, 8, 128);
		else if (WL_IS("--categories")) nf2 = (int)wl_int("--categories", WL_VAL, 3, 4096);
		else if (WL_IS("--image")) img_n = (int)wl_int("--image", WL_VAL, 32, 8192);
		else if (WL_IS("--step")) step = (int)wl_int("--step", WL_VAL, 1, 64);
		else if (WL_IS("--scans")) scans = (int)wl_int("--scans", WL_VAL, 1, 100000);
		else WL_BAD();
	}
	if (img_n < 3 * win)
		wl_die("--image (%d) must be at least 3 x --window (%d)", img_n, win);
	nf1 = win * win;
	theta = 0.5 / sqrt(nf1);
	f1 = wl_alloc(sizeof *f1 * nf1);
	bu = wl_alloc(sizeof(double) * nf2 * nf1);
	td = wl_alloc(sizeof(double) * nf2 * nf1);
	img = wl_alloc(sizeof(float) * img_n * img_n);
	wl_rng rng = wl_seed(179);
	/* Untrained categories: small random bottom-up weights, zero top-down (ART-2 init). */
	for (long k = 0; k < (long)nf2 * nf1; k++)
		bu[k] = 0.5 * wl_unit(&rng) / ((1 - D) * sqrt(nf1));
	/* Learn objects 0 and 1 into categories 0 and 1 (fast learning: weights = u / (1 - d)). */
	for (int obj = 0; obj < 2; obj++) {
		draw(0, 0, obj);
		int J;
		present(0, 0, &J, 1);
		for (int k = 0; k < nf1; k++)
			bu[(long)obj * nf1 + k] = td[(long)obj * nf1 + k] = f1[k].u / (1 - D);
	}
	/* The scene: low noise everywhere, the two objects and a distractor at set places. */
	for (long k = 0; k < (long)img_n * img_n; k++)
		img[k] = (float)(0.1 * wl_unit(&rng));
	int py[3] = { win / 2 / step * step, img_n - win - (win / step) * step, img_n / 2 / step * step };
	int px[3] = { img_n - win - (win / step) * step, win / 2 / step * step, img_n / 2 / step * step };
	for (int o = 0; o < 3; o++)
		draw(py[o], px[o], o);
	int found[2] = { 0, 0 }, false_hits = 0;
	uint64_t h = WL_FNV_INIT;
	double t0 = wl_now();
	for (int s = 0; s < scans; s++)
		for (int y = 0; y + win <= img_n; y += step)
			for (int x = 0; x + win <= img_n; x += step) {
				int J;
				double match = present(y, x, &J, 0);
				int hit = match > RHO && J < 2;
				if (hit && y == py[J] && x == px[J])
					found[J] = 1;
				else if (hit && (abs(y - py[J]) >= win / 2 || abs(x - px[J]) >= win / 2))
					false_hits++;
				int32_t q = (int32_t)lround(match * 1e6);
				h = wl_fnv(h, &q, sizeof q);
			}
	double dt = wl_now() - t0;
	printf("window=%d\ncategories=%d\nimage=%d\nfound_disc=%d\nfound_cross=%d\nfalse_hits=%d\n",
	       win, nf2, img_n, found[0], found[1], false_hits);
	wl_hex("checksum", h);
	printf("seconds=%.6f\n", dt);
	if (!found[0] || !found[1] || false_hits)
		wl_fail("objects found: disc %d, cross %d; false hits %d", found[0], found[1], false_hits);
	return 0;
}
