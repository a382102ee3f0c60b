/*
 * gap - stand-in for SPEC CPU2000 254.gap: computational group theory, here the order of
 * permutation groups given by generators (the Schreier-Sims algorithm in Knuth's formulation,
 * "Efficient representation of perm groups", 1991).
 *
 * 254.gap spends its time multiplying and inverting permutations, sifting group elements
 * through stabiliser chains and allocating many small objects; so does this program.  For each
 * level k it keeps the Sims table T[k][j] (an element mapping point k to j) and the
 * generators S_k, and sifts every Schreier generator down the chain.  Groups: Rubik's cube
 * group on its 48 facets, the symmetric group S_n from a transposition and an n-cycle, and
 * PGL(2, p) on the p + 1 points of the projective line.  Check: each order equals its known
 * value (4.3e19 for the cube, n!, p(p^2 - 1)).
 */
#include "wl.h"

typedef unsigned __int128 u128;
typedef uint8_t pt;

static int n;
static pt ***T;          /* T[k][j]: element of G_k sending k to j, or NULL */
static pt ***S;          /* S[k]: generators added at level k */
static int *ns, *cap;
static long long mults;

static pt *perm_new(void)
{
	pt *p = malloc(n);
	if (!p)
		wl_die("out of memory");
	return p;
}

/* (a after b)[i] = a[b[i]] */
static pt *compose(const pt *a, const pt *b)
{
	pt *r = perm_new();
	for (int i = 0; i < n; i++)
		r[i] = a[b[i]];
	mults++;
	return r;
}

/* inverse(a) after b */
static pt *inv_compose(const pt *a, const pt *b)
{
	pt *inv = perm_new(), *r;
	for (int i = 0; i < n; i++)
		inv[a[i]] = (pt)i;
	r = compose(inv, b);
	free(inv);
	return r;
}

/* Is p (which fixes 0..k-1) in the group generated so far at level k? */
static int member(int k, const pt *p)
{
	while (k < n && p[k] == k)
		k++;
	if (k >= n)
		return 1;
	const pt *t = T[k][p[k]];
	if (!t)
		return 0;
	pt *q = inv_compose(t, p);
	int r = member(k + 1, q);
	free(q);
	return r;
}

static void add(int k, pt *p);

static void close_orbit(int k, pt *t)
{
	int j = t[k];
	if (!T[k][j]) {
		T[k][j] = t;
		for (int s = 0; s < ns[k]; s++)
			close_orbit(k, compose(S[k][s], t));
	} else {
		pt *q = inv_compose(T[k][j], t);
		free(t);
		add(k + 1, q);
	}
}

static void add(int k, pt *p)
{
	if (k >= n || member(k, p)) {
		free(p);
		return;
	}
	if (ns[k] == cap[k]) {
		cap[k] = cap[k] ? 2 * cap[k] : 4;
		S[k] = realloc(S[k], cap[k] * sizeof *S[k]);
		if (!S[k])
			wl_die("out of memory");
	}
	S[k][ns[k]++] = p;
	for (int j = 0; j < n; j++)
		if (T[k][j])
			close_orbit(k, compose(p, T[k][j]));
}

static u128 group_order(pt **gens, int ngens, int points, uint64_t *hash)
{
	n = points;
	T = calloc(n, sizeof *T);
	S = calloc(n, sizeof *S);
	ns = calloc(n, sizeof *ns);
	cap = calloc(n, sizeof *cap);
	if (!T || !S || !ns || !cap)
		wl_die("out of memory");
	for (int k = 0; k < n; k++) {
		T[k] = calloc(n, sizeof *T[k]);
		if (!T[k])
			wl_die("out of memory");
		T[k][k] = perm_new();
		for (int i = 0; i < n; i++)
			T[k][k][i] = (pt)i;
	}
	for (int g = 0; g < ngens; g++) {
		pt *c = perm_new();
		memcpy(c, gens[g], n);
		add(0, c);
	}
	u128 order = 1;
	for (int k = 0; k < n; k++) {
		int orbit = 0;
		for (int j = 0; j < n; j++)
			if (T[k][j]) {
				orbit++;
				*hash = wl_fnv(*hash, T[k][j], n);
				free(T[k][j]);
			}
		order *= (u128)orbit;
		for (int s = 0; s < ns[k]; s++)
			free(S[k][s]);
		free(S[k]);
		free(T[k]);
	}
	free(T); free(S); free(ns); free(cap);
	return order;
}

/* Permutation on `points` from 1-based cycles, 0-terminated cycle by cycle, -1 at the end. */
static pt *from_cycles(int points, const int *c)
{
	pt *p = malloc(points);
	for (int i = 0; i < points; i++)
		p[i] = (pt)i;
	while (*c != -1) {
		const int *start = c;
		while (c[1] != 0) {
			p[c[0] - 1] = (pt)(c[1] - 1);
			c++;
		}
		p[c[0] - 1] = (pt)(start[0] - 1);
		c += 2;
	}
	return p;
}

static void print_order(const char *name, u128 v)
{
	char buf[48], *s = buf + sizeof buf - 1;
	*s = 0;
	do {
		*--s = (char)('0' + (int)(v % 10));
		v /= 10;
	} while (v);
	printf("order_%s=%s\n", name, s);
}

/* The cube's six face turns on facets 1..48, numbered face by face (U, L, F, R, B, D). */
static const int CUBE[6][32] = {
	{ 1, 3, 8, 6, 0, 2, 5, 7, 4, 0, 9, 33, 25, 17, 0, 10, 34, 26, 18, 0, 11, 35, 27, 19, 0, -1 },
	{ 9, 11, 16, 14, 0, 10, 13, 15, 12, 0, 1, 17, 41, 40, 0, 4, 20, 44, 37, 0, 6, 22, 46, 35, 0, -1 },
	{ 17, 19, 24, 22, 0, 18, 21, 23, 20, 0, 6, 25, 43, 16, 0, 7, 28, 42, 13, 0, 8, 30, 41, 11, 0, -1 },
	{ 25, 27, 32, 30, 0, 26, 29, 31, 28, 0, 3, 38, 43, 19, 0, 5, 36, 45, 21, 0, 8, 33, 48, 24, 0, -1 },
	{ 33, 35, 40, 38, 0, 34, 37, 39, 36, 0, 3, 9, 46, 32, 0, 2, 12, 47, 29, 0, 1, 14, 48, 27, 0, -1 },
	{ 41, 43, 48, 46, 0, 42, 45, 47, 44, 0, 14, 22, 30, 38, 0, 15, 23, 31, 39, 0, 16, 24, 32, 40, 0, -1 },
};

static int is_prime(int p)
{
	for (int d = 2; d * d <= p; d++)
		if (p % d == 0)
			return 0;
	return p >= 3;
}

int main(int argc, char **argv)
{
	wl_prog = "gap";
	int sym = 16, prime = 23, repeat = 1;
	WL_OPTS(argc, argv) {
		if (WL_IS("--symmetric")) sym = (int)wl_int("--symmetric", WL_VAL, 2, 33);
		else if (WL_IS("--prime")) prime = (int)wl_int("--prime", WL_VAL, 3, 251);
		else if (WL_IS("--repeat")) repeat = (int)wl_int("--repeat", WL_VAL, 1, 100000);
		else WL_BAD();
	}
	if (!is_prime(prime))
		wl_die("--prime must be an odd prime below 252, not %d", prime);
	uint64_t h = WL_FNV_INIT;
	u128 cube = 0, symo = 0, pgl = 0;
	double t0 = wl_now();
	for (int r = 0; r < repeat; r++) {
		pt *g[6];
		for (int i = 0; i < 6; i++)
			g[i] = from_cycles(48, CUBE[i]);
		cube = group_order(g, 6, 48, &h);
		for (int i = 0; i < 6; i++)
			free(g[i]);
		/* S_n = <(1 2), (1 2 ... n)> */
		g[0] = malloc(sym);
		g[1] = malloc(sym);
		for (int i = 0; i < sym; i++) {
			g[0][i] = (pt)(i < 2 ? 1 - i : i);
			g[1][i] = (pt)((i + 1) % sym);
		}
		symo = group_order(g, 2, sym, &h);
		free(g[0]);
		free(g[1]);
		/* PGL(2,p) on {0..p-1, inf=p}: x+1, a x (a a primitive root), -1/x */
		int p = prime, a = 2;
		for (;; a++) {
			int ok = 1, x = 1;
			for (int e = 1; e < p - 1; e++) {
				x = x * a % p;
				if (x == 1)
					ok = 0;
			}
			if (ok)
				break;
		}
		for (int i = 0; i < 3; i++)
			g[i] = malloc(p + 1);
		for (int x = 0; x <= p; x++) {
			int inv = 1;
			for (int e = 0; e < p - 2; e++)
				inv = inv * x % p; /* x^(p-2) = 1/x */
			g[0][x] = (pt)(x == p ? p : (x + 1) % p);
			g[1][x] = (pt)(x == p ? p : a * x % p);
			g[2][x] = (pt)(x == p ? 0 : x == 0 ? p : (p - inv) % p);
		}
		pgl = group_order(g, 3, p + 1, &h);
		for (int i = 0; i < 3; i++)
			free(g[i]);
	}
	double dt = wl_now() - t0;
	print_order("cube", cube);
	print_order("symmetric", symo);
	print_order("pgl2", pgl);
	printf("multiplications=%lld\n", mults);
	wl_hex("checksum", h);
	printf("seconds=%.6f\n", dt);
	u128 fact = 1, want_cube = (u128)43252003274ULL * 1000000000ULL + 489856000ULL;
	for (int i = 2; i <= sym; i++)
		fact *= (u128)i;
	if (cube != want_cube)
		wl_fail("cube group order wrong");
	if (symo != fact)
		wl_fail("order of S_%d is not %d!", sym, sym);
	if (pgl != (u128)prime * ((u128)prime * prime - 1))
		wl_fail("order of PGL(2,%d) is not p(p^2-1)", prime);
	return 0;
}
