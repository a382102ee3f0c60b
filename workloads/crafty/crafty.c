/*
 * crafty - stand-in for SPEC CPU2000 186.crafty: a game-tree search engine on 64-bit
 * bitboards, here for Othello instead of chess.
 *
 * The computation is crafty's: move generation by shifts and masks of 64-bit boards,
 * iterative-deepening negamax alpha-beta, a Zobrist-hashed transposition table (--hash-kb,
 * 16 B entries, probed at random addresses) supplying cut-offs and the best move to try
 * first, and an evaluation from popcounts of masked boards.  Integer-only, branchy, with a
 * small hot code and data set plus the randomly-probed table.  The engine plays --plies
 * moves against itself from the opening, searching --depth plies per move.
 * Check: from several positions of the game, the alpha-beta + table score at a reduced depth
 * equals a plain minimax search (no pruning, no table) of the same depth.
 */
#include "wl.h"

typedef uint64_t bb;

static const bb NOT_A = 0xfefefefefefefefeULL, NOT_H = 0x7f7f7f7f7f7f7f7fULL;
static long long nodes;

static bb shift(bb b, int dir)
{
	switch (dir) {
	case 0: return (b << 1) & NOT_A;
	case 1: return (b >> 1) & NOT_H;
	case 2: return b << 8;
	case 3: return b >> 8;
	case 4: return (b << 9) & NOT_A;
	case 5: return (b << 7) & NOT_H;
	case 6: return (b >> 7) & NOT_A;
	default: return (b >> 9) & NOT_H;
	}
}

static bb moves(bb me, bb opp)
{
	bb empty = ~(me | opp), m = 0;
	for (int d = 0; d < 8; d++) {
		bb t = shift(me, d) & opp;
		for (int k = 0; k < 5; k++)
			t |= shift(t, d) & opp;
		m |= shift(t, d) & empty;
	}
	return m;
}

static bb flips(bb me, bb opp, bb sq)
{
	bb f = 0;
	for (int d = 0; d < 8; d++) {
		bb line = 0, t = shift(sq, d);
		while (t & opp) {
			line |= t;
			t = shift(t, d);
		}
		if (t & me)
			f |= line;
	}
	return f;
}

/* Corners good, squares next to them bad, edges fair: a classic weight map. */
static const bb CORNERS = 0x8100000000000081ULL, XSQ = 0x0042000000004200ULL,
		EDGES = 0x3c0081818181003cULL;

static int eval(bb me, bb opp)
{
	int mob = __builtin_popcountll(moves(me, opp)) - __builtin_popcountll(moves(opp, me));
	int pos = 25 * (__builtin_popcountll(me & CORNERS) - __builtin_popcountll(opp & CORNERS))
		- 12 * (__builtin_popcountll(me & XSQ) - __builtin_popcountll(opp & XSQ))
		+ 3 * (__builtin_popcountll(me & EDGES) - __builtin_popcountll(opp & EDGES));
	return 4 * mob + pos + (__builtin_popcountll(me) - __builtin_popcountll(opp));
}

static int final_score(bb me, bb opp)
{
	return 1000 * (__builtin_popcountll(me) - __builtin_popcountll(opp));
}

struct tt { uint64_t key; int16_t score; int8_t depth, flag, best, pad[3]; };
static struct tt *table;
static uint64_t tmask, zob[2][64], zside;

static uint64_t hash(bb me, bb opp)
{
	uint64_t h = 0;
	for (bb b = me; b; b &= b - 1)
		h ^= zob[0][__builtin_ctzll(b)];
	for (bb b = opp; b; b &= b - 1)
		h ^= zob[1][__builtin_ctzll(b)];
	return h;
}

enum { EXACT, LOWER, UPPER };

static int search(bb me, bb opp, int depth, int alpha, int beta, int passed, int *best_out)
{
	nodes++;
	bb m = moves(me, opp);
	if (!m) {
		if (passed || !moves(opp, me))
			return final_score(me, opp);
		return -search(opp, me, depth, -beta, -alpha, 1, NULL);
	}
	if (depth == 0)
		return eval(me, opp);
	uint64_t key = hash(me, opp) ^ zside;
	struct tt *e = &table[key & tmask];
	int first = -1, a0 = alpha;
	if (e->key == key) {
		first = e->best;
		if (e->depth >= depth) {
			if (e->flag == EXACT) { if (best_out) *best_out = e->best; return e->score; }
			if (e->flag == LOWER && e->score >= beta) return e->score;
			if (e->flag == UPPER && e->score <= alpha) return e->score;
		}
	}
	int best = -100000, bestsq = -1;
	for (int pass = 0; pass < 2; pass++)
		for (bb b = m; b; b &= b - 1) {
			int sq = __builtin_ctzll(b);
			if ((pass == 0) != (sq == first))
				continue;
			bb s = 1ULL << sq, f = flips(me, opp, s);
			int v = -search(opp ^ f, me | s | f, depth - 1, -beta, -(alpha > best ? alpha : best), 0, NULL);
			if (v > best) {
				best = v;
				bestsq = sq;
			}
			if (best >= beta)
				goto done;
		}
done:
	e->key = key;
	e->score = (int16_t)best;
	e->depth = (int8_t)depth;
	e->best = (int8_t)bestsq;
	e->flag = best <= a0 ? UPPER : best >= beta ? LOWER : EXACT;
	if (best_out)
		*best_out = bestsq;
	return best;
}

static int minimax(bb me, bb opp, int depth, int passed)
{
	bb m = moves(me, opp);
	if (!m) {
		if (passed || !moves(opp, me))
			return final_score(me, opp);
		return -minimax(opp, me, depth, 1);
	}
	if (depth == 0)
		return eval(me, opp);
	int best = -100000;
	for (bb b = m; b; b &= b - 1) {
		bb s = b & -b, f = flips(me, opp, s);
		int v = -minimax(opp ^ f, me | s | f, depth - 1, 0);
		if (v > best)
			best = v;
	}
	return best;
}

int main(int argc, char **argv)
{
	wl_prog = "crafty";
	int depth = 6, plies = 20, check_depth = 4;
	long hash_kb = 1024;
	WL_OPTS(argc, argv) {
		if (WL_IS("--depth")) depth = (int)wl_int("--depth", WL_VAL, 1, 20);
		else if (WL_IS("--plies")) plies = (int)wl_int("--plies", WL_VAL, 1, 60);
		else if (WL_IS("--hash-kb")) hash_kb = (long)wl_int("--hash-kb", WL_VAL, 1, 1 << 22);
		else if (WL_IS("--check-depth")) check_depth = (int)wl_int("--check-depth", WL_VAL, 1, 8);
		else WL_BAD();
	}
	size_t entries = 1;
	while (entries * 2 * sizeof(struct tt) <= (size_t)hash_kb * 1024)
		entries *= 2;
	table = wl_alloc(entries * sizeof *table);
	tmask = entries - 1;
	wl_rng rng = wl_seed(186);
	for (int c = 0; c < 2; c++)
		for (int i = 0; i < 64; i++)
			zob[c][i] = wl_next(&rng);
	zside = wl_next(&rng);
	bb me = 0x0000000810000000ULL, opp = 0x0000001008000000ULL; /* black to move */
	uint64_t h = WL_FNV_INIT;
	int played = 0, checked = 0;
	double t0 = wl_now();
	for (int ply = 0; ply < plies; ply++) {
		if (!moves(me, opp)) {
			if (!moves(opp, me))
				break;
			bb t = me; me = opp; opp = t;
			continue;
		}
		int best = -1, score = 0;
		for (int d = 1; d <= depth; d++) /* iterative deepening fills the table */
			score = search(me, opp, d, -100000, 100000, 0, &best);
		if (ply % 5 == 0) { /* the check: a fresh table, then compare with minimax */
			memset(table, 0, entries * sizeof *table);
			int ab = search(me, opp, check_depth, -100000, 100000, 0, NULL);
			int mm = minimax(me, opp, check_depth, 0);
			if (ab != mm)
				wl_fail("ply %d: alpha-beta says %d, minimax says %d", ply, ab, mm);
			checked++;
		}
		bb s = 1ULL << best, f = flips(me, opp, s);
		bb nme = opp ^ f, nopp = me | s | f;
		me = nme;
		opp = nopp;
		played++;
		h = wl_fnv(h, &best, sizeof best);
		h = wl_fnv(h, &score, sizeof score);
	}
	double dt = wl_now() - t0;
	printf("plies=%d\ndepth=%d\nnodes=%lld\npositions_checked=%d\n", played, depth, nodes, checked);
	printf("discs=%d\n", __builtin_popcountll(me | opp));
	wl_hex("checksum", h);
	printf("seconds=%.6f\n", dt);
	return 0;
}
