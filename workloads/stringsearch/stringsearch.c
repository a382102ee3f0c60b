/*
 * stringsearch - MiBench office/stringsearch-like: find many patterns in a text with the
 * Boyer-Moore-Horspool algorithm.
 *
 * MiBench searches a list of words in a list of phrases with Pratt-Boyer-Moore; we search
 * --patterns generated words (half taken from the text, half made up) in --size bytes of
 * generated text, counting all occurrences.  Check: every count equals that of a naive scan.
 */
#include "wl.h"

static long horspool(const char *t, long n, const char *p, int m)
{
	int skip[256];
	for (int i = 0; i < 256; i++)
		skip[i] = m;
	for (int i = 0; i < m - 1; i++)
		skip[(unsigned char)p[i]] = m - 1 - i;
	long count = 0;
	for (long i = 0; i + m <= n; i += skip[(unsigned char)t[i + m - 1]]) {
		int k = m - 1;
		while (k >= 0 && t[i + k] == p[k])
			k--;
		count += k < 0;
	}
	return count;
}

static long naive(const char *t, long n, const char *p, int m)
{
	long count = 0;
	for (long i = 0; i + m <= n; i++)
		count += memcmp(t + i, p, m) == 0;
	return count;
}

int main(int argc, char **argv)
{
	wl_prog = "stringsearch";
	uint64_t size = 1 << 18;
	int npat = 200;
	WL_OPTS(argc, argv) {
		if (WL_IS("--size")) size = wl_size("--size", WL_VAL);
		else if (WL_IS("--patterns")) npat = (int)wl_int("--patterns", WL_VAL, 1, 1000000);
		else WL_BAD();
	}
	char *text = wl_alloc(size + 1);
	wl_rng rng = wl_seed(7);
	for (uint64_t i = 0; i < size; i++) /* a small alphabet skewed like letters in prose */
		text[i] = wl_below(&rng, 6) == 0 ? ' ' : (char)('a' + (int)(26 * wl_unit(&rng) * wl_unit(&rng)));
	char pat[32];
	long total = 0;
	uint64_t h = WL_FNV_INIT;
	double t0 = wl_now(), tcheck = 0;
	for (int k = 0; k < npat; k++) {
		int m = 3 + (int)wl_below(&rng, 12);
		if (k % 2 && size > 64) {
			memcpy(pat, text + wl_below(&rng, size - m), m);
		} else {
			for (int i = 0; i < m; i++)
				pat[i] = (char)('a' + wl_below(&rng, 26));
		}
		long c = horspool(text, (long)size, pat, m);
		total += c;
		h = wl_fnv(h, &c, sizeof c);
		if (k % 10 == 0) { /* checking every pattern naively would dominate the run */
			double tc = wl_now();
			if (naive(text, (long)size, pat, m) != c)
				wl_fail("pattern %d: Horspool and naive counts differ", k);
			tcheck += wl_now() - tc;
		}
	}
	double dt = wl_now() - t0 - tcheck;
	printf("bytes=%" PRIu64 "\npatterns=%d\nmatches=%ld\n", size, npat, total);
	wl_hex("checksum", h);
	printf("seconds=%.6f\n", dt);
	return 0;
}
