/*
 * qsort - MiBench automotive/qsort-like: sort a large array of 3-D points by distance from
 * the origin and an array of words alphabetically, with the C library's qsort.
 *
 * MiBench's qsort sorts a file of words and a file of 3-D points with qsort(3); our inputs
 * are generated with fixed seeds instead of shipped.  Comparisons break ties by original
 * position, so the order is unique.  Check: both outputs are sorted and are permutations of
 * the inputs (sums preserved).
 */
#include "wl.h"

struct point { double x, y, z, d; int id; };
struct word { char s[16]; int id; };

static int by_dist(const void *a, const void *b)
{
	const struct point *p = a, *q = b;
	if (p->d != q->d)
		return p->d < q->d ? -1 : 1;
	return p->id - q->id;
}
static int by_word(const void *a, const void *b)
{
	const struct word *p = a, *q = b;
	int c = strcmp(p->s, q->s);
	return c ? c : p->id - q->id;
}

int main(int argc, char **argv)
{
	wl_prog = "qsort";
	int n = 50000, repeat = 1;
	WL_OPTS(argc, argv) {
		if (WL_IS("--n")) n = (int)wl_int("--n", WL_VAL, 2, 100000000);
		else if (WL_IS("--repeat")) repeat = (int)wl_int("--repeat", WL_VAL, 1, 100000);
		else WL_BAD();
	}
	struct point *pt = wl_alloc(sizeof *pt * n);
	struct word *w = wl_alloc(sizeof *w * n);
	uint64_t h = WL_FNV_INIT;
	double t0 = wl_now();
	for (int r = 0; r < repeat; r++) {
		wl_rng rng = wl_seed(1000 + r);
		long long idsum = 0;
		for (int i = 0; i < n; i++) {
			pt[i].x = wl_unit(&rng) - 0.5;
			pt[i].y = wl_unit(&rng) - 0.5;
			pt[i].z = wl_unit(&rng) - 0.5;
			pt[i].d = pt[i].x * pt[i].x + pt[i].y * pt[i].y + pt[i].z * pt[i].z;
			pt[i].id = w[i].id = i;
			int len = 3 + (int)wl_below(&rng, 12);
			for (int k = 0; k < len; k++)
				w[i].s[k] = (char)('a' + wl_below(&rng, 26));
			w[i].s[len] = 0;
			idsum += i;
		}
		qsort(pt, n, sizeof *pt, by_dist);
		qsort(w, n, sizeof *w, by_word);
		long long s1 = 0, s2 = 0;
		for (int i = 0; i < n; i++) {
			s1 += pt[i].id;
			s2 += w[i].id;
			if (i && (by_dist(&pt[i - 1], &pt[i]) >= 0 || by_word(&w[i - 1], &w[i]) >= 0))
				wl_fail("output not sorted at %d", i);
		}
		if (s1 != idsum || s2 != idsum)
			wl_fail("output is not a permutation of the input");
		for (int i = 0; i < n; i += 97) {
			h = wl_fnv(h, &pt[i].id, sizeof(int));
			h = wl_fnv(h, &w[i].id, sizeof(int));
		}
	}
	double dt = wl_now() - t0;
	printf("n=%d\nrepeat=%d\nnearest=%d\nfirst_word=%s\n", n, repeat, pt[0].id, w[0].s);
	wl_hex("checksum", h);
	printf("seconds=%.6f\n", dt);
	return 0;
}
