/*
 * susan - MiBench automotive/susan-like: SUSAN edge detection on a grey-level image.
 *
 * For every pixel, the USAN ("univalue segment assimilating nucleus") is the part of a
 * 37-pixel circular mask whose brightness is similar to the centre's, weighted through a
 * 516-entry look-up table exp(-((dI)/t)^6); a small USAN means an edge.  MiBench's susan does
 * this (plus smoothing and corners) on a shipped image; ours generates an image of flat
 * rectangles and discs with noise.  Check: edge pixels lie only within 2 pixels of a drawn
 * boundary, and (nearly) every boundary pixel with a step of at least 2t has an edge nearby.
 */
#include "wl.h"

static int w, h;
static uint8_t *img, *edge, *region; /* region: which shape each pixel belongs to */
static const int8_t MASK[37][2] = {
	{-1,-3},{0,-3},{1,-3},{-2,-2},{-1,-2},{0,-2},{1,-2},{2,-2},{-3,-1},{-2,-1},{-1,-1},{0,-1},
	{1,-1},{2,-1},{3,-1},{-3,0},{-2,0},{-1,0},{0,0},{1,0},{2,0},{3,0},{-3,1},{-2,1},{-1,1},
	{0,1},{1,1},{2,1},{3,1},{-2,2},{-1,2},{0,2},{1,2},{2,2},{-1,3},{0,3},{1,3},
};

int main(int argc, char **argv)
{
	wl_prog = "susan";
	int repeat = 1, t = 20;
	w = 384;
	h = 288;
	WL_OPTS(argc, argv) {
		if (WL_IS("--width")) w = (int)wl_int("--width", WL_VAL, 32, 16384);
		else if (WL_IS("--height")) h = (int)wl_int("--height", WL_VAL, 32, 16384);
		else if (WL_IS("--repeat")) repeat = (int)wl_int("--repeat", WL_VAL, 1, 100000);
		else WL_BAD();
	}
	img = wl_alloc((size_t)w * h);
	edge = wl_alloc((size_t)w * h);
	region = wl_alloc((size_t)w * h);
	wl_rng rng = wl_seed(37);
	int shapes = 12;
	for (int s = 1; s <= shapes; s++) {
		int cx = (int)wl_below(&rng, w), cy = (int)wl_below(&rng, h);
		int rx = 10 + (int)wl_below(&rng, w / 6), ry = 10 + (int)wl_below(&rng, h / 6), disc = s % 2;
		for (int y = 0; y < h; y++)
			for (int x = 0; x < w; x++) {
				int dx = x - cx, dy = y - cy;
				int in = disc ? (double)dx * dx / ((double)rx * rx) + (double)dy * dy / ((double)ry * ry) <= 1
					      : abs(dx) <= rx && abs(dy) <= ry;
				if (in)
					region[y * w + x] = (uint8_t)s;
			}
	}
	uint8_t level[16];
	for (int s = 0; s <= shapes; s++)
		level[s] = (uint8_t)(30 + (s * 97) % 200);
	for (int i = 0; i < w * h; i++)
		img[i] = (uint8_t)(level[region[i]] + (int)wl_below(&rng, 5) - 2);
	uint8_t lut[516];
	for (int d = -258; d < 258; d++) {
		double r = (double)d / t;
		lut[d + 258] = (uint8_t)(100.0 * wl_exp(-r * r * r * r * r * r) + 0.5);
	}
	int gmax = 3 * 37 * 100 / 4; /* geometric threshold: three quarters of the full USAN */
	long edges = 0;
	double t0 = wl_now();
	for (int r = 0; r < repeat; r++) {
		edges = 0;
		memset(edge, 0, (size_t)w * h);
		for (int y = 3; y < h - 3; y++)
			for (int x = 3; x < w - 3; x++) {
				const uint8_t *c = img + y * w + x;
				int n = 0;
				for (int k = 0; k < 37; k++)
					n += lut[258 + c[MASK[k][1] * w + MASK[k][0]] - *c];
				if (n < gmax) {
					edge[y * w + x] = 1;
					edges++;
				}
			}
	}
	double dt = wl_now() - t0;
	long stray = 0, boundary = 0, missed = 0;
	for (int y = 5; y < h - 5; y++)
		for (int x = 5; x < w - 5; x++) {
			int near_b = 0, near_e = 0;
			for (int dy = -2; dy <= 2; dy++)
				for (int dx = -2; dx <= 2; dx++) {
					near_b |= region[(y + dy) * w + x + dx] != region[y * w + x];
					near_e |= edge[(y + dy) * w + x + dx];
				}
			if (edge[y * w + x] && !near_b)
				stray++;
			/* SUSAN cannot see a step below its brightness threshold t: check steps >= 2t */
			int a = region[y * w + x], b = region[y * w + x + 1];
			if (a != b && abs(level[a] - level[b]) >= 2 * t) {
				boundary++;
				missed += !near_e;
			}
		}
	printf("width=%d\nheight=%d\nedge_pixels=%ld\nstray=%ld\nboundary=%ld\nmissed=%ld\n", w, h,
	       edges, stray, boundary, missed);
	wl_hex("checksum", wl_fnv(WL_FNV_INIT, edge, (size_t)w * h));
	printf("seconds=%.6f\n", dt);
	if (stray > 0 || missed > boundary / 50)
		wl_fail("%ld edges away from boundaries, %ld of %ld boundary pixels missed", stray, missed, boundary);
	return 0;
}
