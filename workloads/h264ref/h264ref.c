/*
 * h264ref - stand-in for SPEC CPU2006 464.h264ref: the core of a video encoder, block motion
 * estimation plus integer transform and quantisation of the residual.
 *
 * 464.h264ref spends most of its time in motion search (sums of absolute differences between
 * a 16x16 macroblock and candidate blocks of the reference frame) and in the 4x4 integer
 * transform of the residual.  Ours encodes --frames generated frames (a textured background
 * panning by a known motion plus noise): full search over +-R pixels per macroblock, then the
 * H.264-style 4x4 forward core transform with a flat quantiser.  The next reference is the
 * current source frame (no decoder loop, unlike a real encoder, to keep the program small).
 * Check: at least 95% of the macroblocks (away from the borders) find the true motion.
 */
#include "wl.h"

static int W, H, R;

static uint8_t pixel(const uint8_t *f, int x, int y)
{
	x = x < 0 ? 0 : x >= W ? W - 1 : x;
	y = y < 0 ? 0 : y >= H ? H - 1 : y;
	return f[y * W + x];
}

static void texture(uint8_t *f, int ox, int oy, wl_rng *noise)
{
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++) {
			int u = x + ox, v = y + oy; /* a deterministic, non-periodic-looking pattern */
			uint32_t hsh = (uint32_t)(u * 374761393 + v * 668265263);
			hsh = (hsh ^ (hsh >> 13)) * 1274126177u;
			int val = 60 + (int)((hsh >> 24) & 127) + ((u / 7 + v / 5) & 1) * 40;
			val += (int)wl_below(noise, 5) - 2;
			f[y * W + x] = (uint8_t)(val < 0 ? 0 : val > 255 ? 255 : val);
		}
}

/* 4x4 forward core transform (the integer DCT approximation of H.264). */
static void fwd4(const int in[16], int out[16])
{
	int t[16];
	for (int i = 0; i < 4; i++) {
		const int *r = in + 4 * i;
		int s0 = r[0] + r[3], s1 = r[1] + r[2], d0 = r[0] - r[3], d1 = r[1] - r[2];
		t[4 * i + 0] = s0 + s1;
		t[4 * i + 2] = s0 - s1;
		t[4 * i + 1] = 2 * d0 + d1;
		t[4 * i + 3] = d0 - 2 * d1;
	}
	for (int j = 0; j < 4; j++) {
		int s0 = t[j] + t[12 + j], s1 = t[4 + j] + t[8 + j], d0 = t[j] - t[12 + j], d1 = t[4 + j] - t[8 + j];
		out[j] = s0 + s1;
		out[8 + j] = s0 - s1;
		out[4 + j] = 2 * d0 + d1;
		out[12 + j] = d0 - 2 * d1;
	}
}

int main(int argc, char **argv)
{
	wl_prog = "h264ref";
	int frames = 4, qstep = 16;
	W = 176;
	H = 144;
	R = 8;
	WL_OPTS(argc, argv) {
		if (WL_IS("--frames")) frames = (int)wl_int("--frames", WL_VAL, 2, 100000);
		else if (WL_IS("--width")) W = (int)wl_int("--width", WL_VAL, 32, 8192);
		else if (WL_IS("--height")) H = (int)wl_int("--height", WL_VAL, 32, 8192);
		else if (WL_IS("--range")) R = (int)wl_int("--range", WL_VAL, 1, 64);
		else WL_BAD();
	}
	if (W % 16 || H % 16)
		wl_die("--width and --height must be multiples of 16 (macroblocks), not %dx%d", W, H);
	uint8_t *ref = wl_alloc((size_t)W * H), *cur = wl_alloc((size_t)W * H);
	wl_rng noise = wl_seed(264);
	int mvx = 3, mvy = -2; /* the camera pans by this much per frame (within the range) */
	if (abs(mvx) > R || abs(mvy) > R)
		mvx = mvy = 0;
	texture(ref, 0, 0, &noise);
	long long sads = 0, correct = 0, inner = 0, coeffs = 0;
	uint64_t h = WL_FNV_INIT;
	double t0 = wl_now();
	for (int f = 1; f < frames; f++) {
		texture(cur, f * mvx, f * mvy, &noise); /* content moved by (mvx, mvy) since ref */
		for (int by = 0; by < H; by += 16)
			for (int bx = 0; bx < W; bx += 16) {
				int best = 1 << 30, bdx = 0, bdy = 0;
				for (int dy = -R; dy <= R; dy++)
					for (int dx = -R; dx <= R; dx++) {
						int sad = 0;
						for (int y = 0; y < 16 && sad < best; y++)
							for (int x = 0; x < 16; x++) {
								int d = cur[(by + y) * W + bx + x] - pixel(ref, bx + x + dx, by + y + dy);
								sad += d < 0 ? -d : d;
							}
						sads++;
						if (sad < best) { best = sad; bdx = dx; bdy = dy; }
					}
				int border = bx < 16 || by < 16 || bx + 32 > W || by + 32 > H;
				if (!border) {
					inner++;
					correct += bdx == mvx && bdy == mvy;
				}
				/* Residual through the 4x4 transform and quantiser (coefficients feed the checksum). */
				for (int sy = 0; sy < 16; sy += 4)
					for (int sx = 0; sx < 16; sx += 4) {
						int res[16], c[16];
						for (int k = 0; k < 16; k++) {
							int x = bx + sx + k % 4, y = by + sy + k / 4;
							res[k] = cur[y * W + x] - pixel(ref, x + bdx, y + bdy);
						}
						fwd4(res, c);
						for (int k = 0; k < 16; k++) {
							c[k] = c[k] / qstep;
							coeffs += c[k] != 0;
						}
						h = wl_fnv(h, c, sizeof c);
					}
				h = wl_fnv(h, &bdx, sizeof bdx);
				h = wl_fnv(h, &bdy, sizeof bdy);
			}
		uint8_t *t = ref; ref = cur; cur = t;
	}
	double dt = wl_now() - t0;
	printf("frames=%d\nwidth=%d\nheight=%d\nsad_evaluations=%lld\nmv_correct=%lld\nmv_inner=%lld\n",
	       frames, W, H, sads, correct, inner);
	printf("nonzero_coefficients=%lld\n", coeffs);
	wl_hex("checksum", h);
	printf("seconds=%.6f\n", dt);
	if (inner && correct * 100 < inner * 95)
		wl_fail("only %lld of %lld macroblocks found the true motion", correct, inner);
	return 0;
}
