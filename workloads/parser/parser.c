/*
 * parser - stand-in for SPEC CPU2000 197.parser (the Link Grammar parser): parse English-like
 * sentences against a dictionary and a grammar, counting every possible analysis.
 *
 * Like 197.parser, each sentence is tokenised, every word is looked up in a large hashed
 * dictionary (strings, chained buckets) giving its possible categories, and a dynamic program
 * over all spans of the sentence counts the analyses (link grammar counts linkages with a
 * memoised recursion; we count parse trees of a context-free grammar with the CYK chart).
 * Words are ambiguous (noun/verb), and attachment of prepositional phrases and conjunctions
 * makes the counts grow quickly with sentence length.  Sentences and the dictionary are
 * generated from the grammar itself.  Check: every generated sentence has at least one parse,
 * and each sentence made ungrammatical (two determiners in a row) has none.
 */
#include "wl.h"

enum { S, NP, VP, PP, N1, CS, CN, DET, N, ADJ, V, P, ADV, CONJ, NCAT };
static const int RULES[][3] = { /* A -> B C */
	{ S, NP, VP }, { S, S, CS }, { CS, CONJ, S }, { NP, DET, N1 }, { NP, NP, PP },
	{ NP, NP, CN }, { CN, CONJ, NP }, { N1, ADJ, N1 }, { VP, V, NP }, { VP, VP, PP },
	{ VP, VP, ADV }, { PP, P, NP },
};
#define NRULES (int)(sizeof RULES / sizeof RULES[0])

/* ---- dictionary: word -> category bits, chained hash ---- */
struct entry { char *word; unsigned cats; struct entry *next; };
static struct entry **buckets;
static unsigned nbuckets;
static long long lookups;

static unsigned hword(const char *w) { return (unsigned)wl_fnv(WL_FNV_INIT, w, strlen(w)); }

static void define(const char *w, unsigned cats)
{
	unsigned b = hword(w) % nbuckets;
	for (struct entry *e = buckets[b]; e; e = e->next)
		if (!strcmp(e->word, w)) {
			e->cats |= cats;
			return;
		}
	struct entry *e = malloc(sizeof *e);
	if (!e || !(e->word = strdup(w)))
		wl_die("out of memory");
	e->cats = cats;
	e->next = buckets[b];
	buckets[b] = e;
}

static unsigned lookup(const char *w)
{
	lookups++;
	for (struct entry *e = buckets[hword(w) % nbuckets]; e; e = e->next)
		if (!strcmp(e->word, w))
			return e->cats;
	return 0;
}

/* ---- vocabulary: made-up words per category ---- */
static char **words[NCAT];
static int nwords[NCAT];
static wl_rng rng;

static char *make_word(int cat, int i)
{
	static const char *on = "bdfgklmnprstvz", *nu = "aeiou";
	char buf[24];
	int k = 0, syll = 1 + i % 3 + (cat == N || cat == V);
	wl_rng r = wl_seed((uint64_t)cat * 100003 + i);
	for (int s = 0; s < syll; s++) {
		buf[k++] = on[wl_below(&r, 14)];
		buf[k++] = nu[wl_below(&r, 5)];
	}
	k += snprintf(buf + k, sizeof buf - k, "%c%d", "snajvpxc"[cat % 8], i);
	return strdup(buf);
}

static void vocabulary(int scale)
{
	int counts[NCAT] = { 0 };
	counts[DET] = 6; counts[P] = 12; counts[CONJ] = 3; counts[ADV] = 40 * scale;
	counts[N] = 400 * scale; counts[ADJ] = 150 * scale; counts[V] = 200 * scale;
	counts[VP] = 60 * scale; /* intransitive verbs */
	for (int c = 0; c < NCAT; c++) {
		nwords[c] = counts[c];
		words[c] = malloc(sizeof(char *) * (counts[c] + 1));
		for (int i = 0; i < counts[c]; i++) {
			words[c][i] = make_word(c, i);
			/* a noun is also an N1; every tenth noun is also a transitive verb */
			unsigned cats = 1u << c;
			if (c == N)
				cats |= 1u << N1;
			define(words[c][i], cats);
		}
	}
	for (int i = 0; i < nwords[N]; i += 10)
		define(words[N][i], 1u << V);
}

/* ---- sentence generation from the grammar ---- */
static char *sent[128];
static int slen;

static void word_of(int cat)
{
	if (slen < 120)
		sent[slen++] = words[cat][wl_below(&rng, nwords[cat])];
}

static void expand(int cat, int depth)
{
	int r = (int)wl_below(&rng, 100);
	switch (cat) {
	case S:
		if (depth < 2 && r < 20) { expand(S, depth + 1); word_of(CONJ); expand(S, depth + 1); }
		else { expand(NP, depth + 1); expand(VP, depth + 1); }
		break;
	case NP:
		word_of(DET);
		for (int a = (int)wl_below(&rng, 3); a > 0; a--)
			word_of(ADJ);
		word_of(N);
		if (depth < 4 && r < 30) { word_of(P); expand(NP, depth + 2); }
		else if (depth < 4 && r < 38) { word_of(CONJ); expand(NP, depth + 2); }
		break;
	default: /* VP */
		if (r < 30) word_of(VP);
		else { word_of(V); expand(NP, depth + 1); }
		if (depth < 4 && r % 3 == 0) { word_of(P); expand(NP, depth + 2); }
		if (r % 5 == 0) word_of(ADV);
	}
}

/* ---- CYK chart: count[i][j][A] = analyses of words i..j-1 as A (mod 2^64) ---- */
static uint64_t *chart;
#define CELL(i, j, a) chart[(((size_t)(i) * 129 + (j)) * NCAT) + (a)]

static uint64_t parse(char **w, int len)
{
	for (int i = 0; i < len; i++) {
		unsigned cats = lookup(w[i]);
		if (!cats)
			wl_die("word '%s' is not in the dictionary", w[i]);
		for (int a = 0; a < NCAT; a++)
			CELL(i, i + 1, a) = (cats >> a) & 1;
	}
	for (int span = 2; span <= len; span++)
		for (int i = 0; i + span <= len; i++) {
			int j = i + span;
			uint64_t *c = &CELL(i, j, 0);
			memset(c, 0, sizeof(uint64_t) * NCAT);
			for (int k = i + 1; k < j; k++)
				for (int r = 0; r < NRULES; r++) {
					uint64_t l = CELL(i, k, RULES[r][1]);
					if (l)
						c[RULES[r][0]] += l * CELL(k, j, RULES[r][2]);
				}
		}
	return CELL(0, len, S);
}

int main(int argc, char **argv)
{
	wl_prog = "parser";
	int sentences = 300, scale = 4;
	WL_OPTS(argc, argv) {
		if (WL_IS("--sentences")) sentences = (int)wl_int("--sentences", WL_VAL, 1, 10000000);
		else if (WL_IS("--dictionary-scale")) scale = (int)wl_int("--dictionary-scale", WL_VAL, 1, 1000);
		else WL_BAD();
	}
	nbuckets = 1024u * (unsigned)scale + 1;
	buckets = calloc(nbuckets, sizeof *buckets);
	chart = malloc(sizeof(uint64_t) * 129 * 129 * NCAT);
	if (!buckets || !chart)
		wl_die("out of memory");
	vocabulary(scale);
	rng = wl_seed(197);
	uint64_t h = WL_FNV_INIT, total_words = 0, ambiguous = 0, max_count = 0;
	int rejected = 0;
	double t0 = wl_now();
	for (int s = 0; s < sentences; s++) {
		slen = 0;
		expand(S, 0);
		uint64_t count = parse(sent, slen);
		if (count == 0)
			wl_fail("sentence %d (%d words) has no parse", s, slen);
		ambiguous += count > 1;
		if (count > max_count)
			max_count = count;
		total_words += slen;
		h = wl_fnv(h, &count, sizeof count);
		/* Ungrammatical twin: a determiner doubled in front of the first noun phrase. */
		if (slen < 120) {
			memmove(sent + 1, sent, sizeof(char *) * slen);
			sent[0] = words[DET][0];
			if (parse(sent, slen + 1) != 0)
				wl_fail("sentence %d with a doubled determiner parses", s);
			rejected++;
		}
	}
	double dt = wl_now() - t0;
	printf("sentences=%d\nwords=%" PRIu64 "\nambiguous=%" PRIu64 "\nmax_parses=%" PRIu64 "\n",
	       sentences, total_words, ambiguous, max_count);
	printf("rejected=%d\nlookups=%lld\n", rejected, lookups);
	wl_hex("checksum", h);
	printf("seconds=%.6f\n", dt);
	return 0;
}
