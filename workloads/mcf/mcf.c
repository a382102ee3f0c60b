/*
 * mcf - stand-in for SPEC CPU2000 181.mcf: minimum-cost network flow by the primal network
 * simplex method.
 *
 * 181.mcf solves a vehicle-scheduling problem as a min-cost flow with a network simplex whose
 * spanning tree is kept as parent/predecessor-arc/depth pointers, and spends its time chasing
 * those pointers and scanning a large arc array for pricing: it is the SPEC program most bound
 * by memory latency.  Ours has the same structure: a generated transshipment network (--nodes,
 * --degree arcs per node, capacities, supplies), an artificial root, block partial pricing over
 * the arc array, cycles found through the tree by depth, subtrees re-hung with child lists and
 * their potentials updated.  Check: the final flow is feasible (conservation, bounds, no flow on
 * artificial arcs) and optimal (reduced costs satisfy complementary slackness).
 */
#include "wl.h"

struct arc { int tail, head; int64_t cost, cap, flow; };
static struct arc *arcs;
static int n, m, real_m, root;
static int *parent, *pred, *depth, *child, *sib_next, *sib_prev;
static int64_t *pi;
static long long pivots, degenerate;

static void unlink_child(int v)
{
	int p = parent[v];
	if (sib_prev[v] >= 0)
		sib_next[sib_prev[v]] = sib_next[v];
	else
		child[p] = sib_next[v];
	if (sib_next[v] >= 0)
		sib_prev[sib_next[v]] = sib_prev[v];
}

static void link_child(int v, int p, int a)
{
	parent[v] = p;
	pred[v] = a;
	sib_prev[v] = -1;
	sib_next[v] = child[p];
	if (child[p] >= 0)
		sib_prev[child[p]] = v;
	child[p] = v;
}

/* Depth and potential of a subtree from its root's parent, iteratively (trees are deep). */
static int *stack;
static void refresh(int top)
{
	int sp = 0;
	stack[sp++] = top;
	while (sp) {
		int v = stack[--sp], p = parent[v];
		struct arc *a = &arcs[pred[v]];
		depth[v] = depth[p] + 1;
		pi[v] = a->tail == p ? pi[p] + a->cost : pi[p] - a->cost;
		for (int c = child[v]; c >= 0; c = sib_next[c])
			stack[sp++] = c;
	}
}

static int64_t rc(const struct arc *a) { return a->cost + pi[a->tail] - pi[a->head]; }

/* Residual capacity of tree arc pred[v] when flow moves from v up to its parent (up=1). */
static int64_t resid(int v, int up)
{
	struct arc *a = &arcs[pred[v]];
	return (a->tail == v) == up ? a->cap - a->flow : a->flow;
}
static void push(int v, int up, int64_t d)
{
	struct arc *a = &arcs[pred[v]];
	a->flow += (a->tail == v) == up ? d : -d;
}

static void pivot(int e)
{
	struct arc *a = &arcs[e];
	int lower = a->flow == 0;
	int first = lower ? a->tail : a->head, second = lower ? a->head : a->tail;
	int64_t delta = lower ? a->cap : a->flow;
	int leave = -1, leave_up = 0; /* node whose pred arc leaves */
	/* flow goes first -> second on e, then second up to the apex, then down to first */
	int x = second, y = first;
	while (x != y) {
		if (depth[x] >= depth[y]) {
			int64_t r = resid(x, 1);
			if (r < delta) { delta = r; leave = x; leave_up = 1; }
			x = parent[x];
		} else {
			int64_t r = resid(y, 0);
			if (r <= delta) { delta = r; leave = y; leave_up = 0; }
			y = parent[y];
		}
	}
	if (delta == 0)
		degenerate++;
	a->flow += lower ? delta : -delta;
	for (x = second; x != y; x = parent[x]) push(x, 1, delta);
	for (x = first; x != y; x = parent[x]) push(x, 0, delta);
	pivots++;
	if (leave < 0)
		return; /* the entering arc itself hit its other bound */
	(void)leave_up;
	/* Re-hang the subtree below `leave`: the endpoint of e inside it becomes its root. */
	int in = a->tail, out = a->head, v;
	for (v = in; v != root && v != leave; v = parent[v])
		;
	if (v != leave) { int t = in; in = out; out = t; }
	unlink_child(leave);
	int prev_node = out, prev_arc = e;
	for (v = in;;) {
		int up = parent[v], up_arc = pred[v];
		if (v != leave)
			unlink_child(v);
		link_child(v, prev_node, prev_arc);
		if (v == leave)
			break;
		prev_node = v;
		prev_arc = up_arc;
		v = up;
	}
	refresh(in);
}

int main(int argc, char **argv)
{
	wl_prog = "mcf";
	int degree = 8;
	n = 2000;
	WL_OPTS(argc, argv) {
		if (WL_IS("--nodes")) n = (int)wl_int("--nodes", WL_VAL, 4, 10000000);
		else if (WL_IS("--degree")) degree = (int)wl_int("--degree", WL_VAL, 1, 100);
		else WL_BAD();
	}
	wl_rng rng = wl_seed(181);
	real_m = n * degree + n;
	m = real_m + n;
	root = n;
	arcs = wl_alloc(sizeof *arcs * m);
	int64_t *supply = wl_alloc(sizeof(int64_t) * (n + 1)), sum = 0;
	int k = 0;
	for (int i = 0; i < n; i++) {
		/* Trips: arcs mostly to nearby nodes in time order, like a timetable, ... */
		for (int d = 0; d < degree; d++) {
			int j = (int)((i + 1 + wl_below(&rng, n / 4 + 1)) % n);
			arcs[k++] = (struct arc){ i, j, 1 + (int64_t)wl_below(&rng, 100), 5 + (int64_t)wl_below(&rng, 46), 0 };
		}
		/* ... and an expensive, roomy ring so that every supply can reach every demand. */
		arcs[k++] = (struct arc){ i, (i + 1) % n, 1000, 1000000, 0 };
		supply[i] = (int64_t)wl_below(&rng, 41) - 20;
		sum += supply[i];
	}
	supply[n - 1] -= sum;
	/* Initial tree: artificial arcs between every node and the root, cost above any path. */
	int64_t big = 1000LL * n + 1;
	parent = wl_alloc(sizeof(int) * (n + 1));
	pred = wl_alloc(sizeof(int) * (n + 1));
	depth = wl_alloc(sizeof(int) * (n + 1));
	child = wl_alloc(sizeof(int) * (n + 1));
	sib_next = wl_alloc(sizeof(int) * (n + 1));
	sib_prev = wl_alloc(sizeof(int) * (n + 1));
	stack = wl_alloc(sizeof(int) * (n + 1));
	pi = wl_alloc(sizeof(int64_t) * (n + 1));
	for (int i = 0; i <= n; i++)
		child[i] = -1;
	parent[root] = -1;
	for (int i = 0; i < n; i++) {
		int a = real_m + i;
		if (supply[i] >= 0)
			arcs[a] = (struct arc){ i, root, big, INT64_MAX / 4, supply[i] };
		else
			arcs[a] = (struct arc){ root, i, big, INT64_MAX / 4, -supply[i] };
		link_child(i, root, a);
	}
	for (int c = child[root]; c >= 0; c = sib_next[c])
		refresh(c);
	/* Block partial pricing: most violating arc in a block, next block on each call. */
	int block = 1;
	while ((long)block * block < m)
		block++;
	int pos = 0;
	double t0 = wl_now();
	for (;;) {
		int best = -1, scanned = 0;
		int64_t bestv = 0;
		while (scanned < m) {
			for (int b = 0; b < block && scanned < m; b++, scanned++) {
				struct arc *a = &arcs[pos];
				int64_t r = rc(a), v = a->flow == 0 ? -r : a->flow == a->cap ? r : (r < 0 ? -r : r);
				if (v > bestv) { bestv = v; best = pos; }
				if (++pos == m) pos = 0;
			}
			if (best >= 0)
				break;
		}
		if (best < 0)
			break;
		pivot(best);
		if (pivots > 100LL * m)
			wl_fail("no optimum after %lld pivots (cycling?)", pivots);
	}
	double dt = wl_now() - t0;
	/* Independent optimality check. */
	int64_t *bal = wl_alloc(sizeof(int64_t) * (n + 1)), cost = 0;
	for (int i = 0; i < m; i++) {
		struct arc *a = &arcs[i];
		if (a->flow < 0 || a->flow > a->cap)
			wl_fail("arc %d flow %lld outside [0, %lld]", i, (long long)a->flow, (long long)a->cap);
		if (i >= real_m && a->flow)
			wl_fail("artificial arc %d still carries flow: infeasible", i);
		int64_t r = rc(a);
		if ((a->flow < a->cap && r < 0) || (a->flow > 0 && r > 0))
			wl_fail("arc %d violates complementary slackness (reduced cost %lld)", i, (long long)r);
		bal[a->tail] -= a->flow;
		bal[a->head] += a->flow;
		cost += a->cost * a->flow;
	}
	for (int i = 0; i < n; i++)
		if (bal[i] + supply[i] != 0)
			wl_fail("flow not conserved at node %d", i);
	uint64_t h = WL_FNV_INIT;
	for (int i = 0; i < real_m; i++)
		h = wl_fnv(h, &arcs[i].flow, sizeof arcs[i].flow);
	printf("nodes=%d\narcs=%d\npivots=%lld\ndegenerate=%lld\ncost=%lld\n", n, real_m, pivots,
	       degenerate, (long long)cost);
	wl_hex("checksum", h);
	printf("seconds=%.6f\n", dt);
	return 0;
}
