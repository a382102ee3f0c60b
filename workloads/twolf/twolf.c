/*
 * twolf - stand-in for SPEC CPU2000 300.twolf (TimberWolf): standard-cell placement by
 * simulated annealing.
 *
 * Cells sit in the slots of a rows x columns grid; nets join 2 to 6 cells; the cost is the
 * total half-perimeter wire length.  Each move picks a cell and a target slot within a range
 * window that shrinks as the temperature falls (TimberWolf's range limiter), swaps, and
 * re-evaluates only the nets of the two cells through cell->net and net->cell lists, then
 * accepts or undoes the move by the Metropolis rule.  300.twolf's time goes into exactly this
 * kind of irregular access to cell, net and pin structures of a few hundred KB to MB.
 * Check: the incrementally tracked cost equals a from-scratch recomputation, and annealing
 * cut the wire length substantially (final below 70% of the random start).
 */
#include <math.h>
#include "wl.h"

static int ncells, nnets, rows, cols;
static int *cell_x, *cell_y, *slot;         /* slot[y * cols + x] = cell or -1 */
static int *net_start, *net_cells;          /* CSR: cells of each net */
static int *cn_start, *cn_nets;             /* CSR: nets of each cell */
static int *net_cost, *stamp, cur_stamp;

static int hpwl(int n)
{
	int x0 = 1 << 30, x1 = -1, y0 = 1 << 30, y1 = -1;
	for (int k = net_start[n]; k < net_start[n + 1]; k++) {
		int c = net_cells[k];
		if (cell_x[c] < x0) x0 = cell_x[c];
		if (cell_x[c] > x1) x1 = cell_x[c];
		if (cell_y[c] < y0) y0 = cell_y[c];
		if (cell_y[c] > y1) y1 = cell_y[c];
	}
	return (x1 - x0) + 2 * (y1 - y0); /* rows are farther apart than columns */
}

static long long total_cost(void)
{
	long long t = 0;
	for (int n = 0; n < nnets; n++)
		t += hpwl(n);
	return t;
}

static void place(int c, int x, int y)
{
	if (c < 0)
		return;
	cell_x[c] = x;
	cell_y[c] = y;
	slot[y * cols + x] = c;
}

/* Change in cost if the nets of cells a and b (b may be -1) were re-measured now. */
static long long remeasure(int a, int b, int commit)
{
	long long d = 0;
	cur_stamp++;
	for (int pass = 0; pass < 2; pass++) {
		int c = pass ? b : a;
		if (c < 0)
			continue;
		for (int k = cn_start[c]; k < cn_start[c + 1]; k++) {
			int n = cn_nets[k];
			if (stamp[n] == cur_stamp)
				continue;
			stamp[n] = cur_stamp;
			int nc = hpwl(n);
			d += nc - net_cost[n];
			if (commit)
				net_cost[n] = nc;
		}
	}
	return d;
}

int main(int argc, char **argv)
{
	wl_prog = "twolf";
	int moves_per_cell = 20;
	ncells = 2000;
	WL_OPTS(argc, argv) {
		if (WL_IS("--cells")) ncells = (int)wl_int("--cells", WL_VAL, 16, 10000000);
		else if (WL_IS("--moves-per-cell")) moves_per_cell = (int)wl_int("--moves-per-cell", WL_VAL, 1, 100000);
		else WL_BAD();
	}
	wl_rng rng = wl_seed(300);
	rows = (int)sqrt(ncells / 4.0) + 1;
	cols = (ncells + rows - 1) / rows + rows / 2 + 1; /* some free slots, like real rows */
	nnets = ncells + ncells / 4;
	cell_x = wl_alloc(sizeof(int) * ncells);
	cell_y = wl_alloc(sizeof(int) * ncells);
	slot = wl_alloc(sizeof(int) * rows * cols);
	net_start = wl_alloc(sizeof(int) * (nnets + 1));
	net_cells = wl_alloc(sizeof(int) * nnets * 6);
	net_cost = wl_alloc(sizeof(int) * nnets);
	stamp = wl_alloc(sizeof(int) * nnets);
	cn_start = wl_alloc(sizeof(int) * (ncells + 1));
	/* Netlist with locality in cell numbering (a good placement exists), pins 2..6. */
	int pins = 0;
	for (int n = 0; n < nnets; n++) {
		net_start[n] = pins;
		int k = 2 + (int)(wl_below(&rng, 100) < 60 ? 0 : wl_below(&rng, 5));
		int base = (int)wl_below(&rng, ncells);
		for (int p = 0; p < k; p++)
			net_cells[pins++] = (int)((base + wl_below(&rng, 24)) % ncells);
	}
	net_start[nnets] = pins;
	for (int k = 0; k < pins; k++)
		cn_start[net_cells[k] + 1]++;
	for (int c = 0; c < ncells; c++)
		cn_start[c + 1] += cn_start[c];
	cn_nets = wl_alloc(sizeof(int) * pins);
	int *fill = wl_alloc(sizeof(int) * ncells);
	for (int n = 0; n < nnets; n++)
		for (int k = net_start[n]; k < net_start[n + 1]; k++) {
			int c = net_cells[k];
			cn_nets[cn_start[c] + fill[c]++] = n;
		}
	/* Random initial placement. */
	for (int i = 0; i < rows * cols; i++)
		slot[i] = -1;
	int *perm = wl_alloc(sizeof(int) * rows * cols);
	for (int i = 0; i < rows * cols; i++)
		perm[i] = i;
	for (int i = rows * cols - 1; i > 0; i--) {
		int j = (int)wl_below(&rng, i + 1), t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	for (int c = 0; c < ncells; c++)
		place(c, perm[c] % cols, perm[c] / cols);
	for (int n = 0; n < nnets; n++)
		net_cost[n] = hpwl(n);
	long long cost = total_cost(), initial = cost, accepted = 0, tried = 0;
	double temp = 0.5 * (double)cost / nnets, range = cols;
	double t0 = wl_now();
	for (int stage = 0; temp > 0.02; stage++) {
		for (long mv = 0; mv < (long)moves_per_cell * ncells / 10; mv++) {
			int a = (int)wl_below(&rng, ncells);
			int w = (int)range < 1 ? 1 : (int)range;
			int x = cell_x[a] + (int)wl_below(&rng, 2 * w + 1) - w;
			int y = cell_y[a] + (int)wl_below(&rng, 2 * (w / 4 + 1) + 1) - (w / 4 + 1);
			if (x < 0 || x >= cols || y < 0 || y >= rows || (x == cell_x[a] && y == cell_y[a]))
				continue;
			int b = slot[y * cols + x], ax = cell_x[a], ay = cell_y[a];
			tried++;
			slot[ay * cols + ax] = -1;
			place(a, x, y);
			place(b, ax, ay);
			long long d = remeasure(a, b, 0);
			if (d <= 0 || wl_unit(&rng) < wl_exp(-(double)d / temp)) {
				remeasure(a, b, 1);
				cost += d;
				accepted++;
			} else { /* undo */
				slot[y * cols + x] = -1;
				place(b, x, y);
				place(a, ax, ay);
			}
		}
		temp *= 0.85;
		range = range * 0.9 > 2 ? range * 0.9 : 2;
	}
	double dt = wl_now() - t0;
	long long check = total_cost();
	printf("cells=%d\nnets=%d\nrows=%d\ninitial_cost=%lld\nfinal_cost=%lld\n", ncells, nnets, rows,
	       initial, cost);
	printf("moves=%lld\naccepted=%lld\n", tried, accepted);
	uint64_t h = wl_fnv(WL_FNV_INIT, cell_x, sizeof(int) * ncells);
	wl_hex("checksum", wl_fnv(h, cell_y, sizeof(int) * ncells));
	printf("seconds=%.6f\n", dt);
	if (check != cost)
		wl_fail("tracked cost %lld differs from recomputed %lld", cost, check);
	if (!(cost < 0.7 * initial))
		wl_fail("annealing only reduced the cost from %lld to %lld", initial, cost);
	return 0;
}
