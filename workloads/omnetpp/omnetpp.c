/*
 * omnetpp - stand-in for SPEC CPU2006 471.omnetpp: discrete-event simulation of a packet
 * network.
 *
 * 471.omnetpp simulates a large Ethernet network with the OMNeT++ kernel: a future-event set
 * (a binary heap) ordered by time, message objects allocated and freed by the million, and
 * per-node state touched in an irregular order.  Ours: --nodes routers on a ring with random
 * chords, each with an output queue per link; hosts inject packets to random destinations
 * (exponential inter-arrival times), packets are forwarded hop by hop along shortest paths
 * (precomputed next-hop table), links serialise them by size.  Events: arrival at a node,
 * end of transmission on a link.  Check: every packet created was delivered or is still in
 * flight, event times never decrease, and each delivered packet took a shortest path.
 */
#include "wl.h"

struct pkt { int src, dst, size, hops; double born; struct pkt *next; };
struct event { double t; int kind, node, link; struct pkt *p; };
enum { ARRIVE, TX_DONE, INJECT };

static struct event *heap;
static long nheap, capheap;
static long long events;

static void push(struct event e)
{
	if (nheap == capheap) {
		capheap = capheap ? 2 * capheap : 1024;
		heap = realloc(heap, sizeof *heap * capheap);
		if (!heap)
			wl_die("out of memory");
	}
	long i = nheap++;
	while (i > 0 && heap[(i - 1) / 2].t > e.t) {
		heap[i] = heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	heap[i] = e;
}

static struct event pop(void)
{
	struct event top = heap[0], last = heap[--nheap];
	long i = 0;
	for (;;) {
		long c = 2 * i + 1;
		if (c >= nheap)
			break;
		if (c + 1 < nheap && heap[c + 1].t < heap[c].t)
			c++;
		if (heap[c].t >= last.t)
			break;
		heap[i] = heap[c];
		i = c;
	}
	heap[i] = last;
	return top;
}

static int n, deg;
static int *nbr;          /* [n][deg]: neighbour on link l */
static int *next_hop;     /* [n][n]: link index towards dst */
static int *dist;         /* [n][n]: hops */
static struct pkt **qhead, **qtail; /* per (node, link) output queue */
static char *busy;
static double rate_bps = 1e8;

static double expo(wl_rng *r, double mean) { return -mean * wl_log(1 - wl_unit(r)); }

static void start_tx(int node, int link, double now)
{
	long q = (long)node * deg + link;
	struct pkt *p = qhead[q];
	if (!p || busy[q])
		return;
	qhead[q] = p->next;
	if (!qhead[q])
		qtail[q] = NULL;
	busy[q] = 1;
	push((struct event){ now + p->size * 8 / rate_bps, TX_DONE, node, link, p });
}

static void enqueue(int node, struct pkt *p, double now)
{
	int link = next_hop[(long)node * n + p->dst];
	long q = (long)node * deg + link;
	p->next = NULL;
	if (qtail[q]) qtail[q]->next = p; else qhead[q] = p;
	qtail[q] = p;
	start_tx(node, link, now);
}

int main(int argc, char **argv)
{
	wl_prog = "omnetpp";
	double sim_time = 0.05;
	n = 64;
	deg = 4;
	WL_OPTS(argc, argv) {
		if (WL_IS("--nodes")) n = (int)wl_int("--nodes", WL_VAL, 4, 4096);
		else if (WL_IS("--sim-ms")) sim_time = wl_int("--sim-ms", WL_VAL, 1, 1000000) / 1000.0;
		else WL_BAD();
	}
	wl_rng rng = wl_seed(471);
	nbr = wl_alloc(sizeof(int) * n * deg);
	for (int i = 0; i < n; i++) { /* a ring plus two chords per node (symmetric enough) */
		nbr[i * deg + 0] = (i + 1) % n;
		nbr[i * deg + 1] = (i + n - 1) % n;
		nbr[i * deg + 2] = (i + n / 2) % n;
		nbr[i * deg + 3] = (int)((i + 2 + wl_below(&rng, n - 3)) % n);
	}
	next_hop = wl_alloc(sizeof(int) * n * n);
	dist = wl_alloc(sizeof(int) * n * n);
	int *queue = wl_alloc(sizeof(int) * n);
	int *rev = wl_alloc(sizeof(int) * n * deg), *rstart = wl_alloc(sizeof(int) * (n + 1));
	for (int i = 0; i < n * deg; i++) /* reversed links, grouped by their far end */
		rstart[nbr[i] + 1]++;
	for (int v = 0; v < n; v++)
		rstart[v + 1] += rstart[v];
	int *fill = wl_alloc(sizeof(int) * n);
	for (int i = 0; i < n * deg; i++)
		rev[rstart[nbr[i]] + fill[nbr[i]]++] = i; /* i = u * deg + l */
	for (int d = 0; d < n; d++) { /* BFS towards d over reversed links */
		for (int i = 0; i < n; i++)
			dist[(long)i * n + d] = -1;
		dist[(long)d * n + d] = 0;
		int h = 0, t = 0;
		queue[t++] = d;
		while (h < t) {
			int v = queue[h++];
			for (int r = rstart[v]; r < rstart[v + 1]; r++) {
				int u = rev[r] / deg, l = rev[r] % deg;
				if (dist[(long)u * n + d] < 0) {
					dist[(long)u * n + d] = dist[(long)v * n + d] + 1;
					next_hop[(long)u * n + d] = l;
					queue[t++] = u;
				}
			}
		}
	}
	qhead = wl_alloc(sizeof(struct pkt *) * n * deg);
	qtail = wl_alloc(sizeof(struct pkt *) * n * deg);
	busy = wl_alloc((size_t)n * deg);
	double mean_gap = 250e-6; /* offered load about half of what the links carry */
	for (int i = 0; i < n; i++)
		push((struct event){ expo(&rng, mean_gap), INJECT, i, 0, NULL });
	long long created = 0, delivered = 0, total_hops = 0, detours = 0;
	double last_t = 0, total_delay = 0;
	uint64_t h = WL_FNV_INIT;
	double t0 = wl_now();
	while (nheap && heap[0].t <= sim_time) {
		struct event e = pop();
		events++;
		if (e.t < last_t)
			wl_fail("event time went backwards (%g < %g)", e.t, last_t);
		last_t = e.t;
		if (e.kind == INJECT) {
			struct pkt *p = malloc(sizeof *p);
			if (!p)
				wl_die("out of memory");
			p->src = e.node;
			do p->dst = (int)wl_below(&rng, n); while (p->dst == e.node);
			p->size = 64 + (int)wl_below(&rng, 1437);
			p->hops = 0;
			p->born = e.t;
			created++;
			enqueue(e.node, p, e.t);
			push((struct event){ e.t + expo(&rng, mean_gap), INJECT, e.node, 0, NULL });
		} else if (e.kind == TX_DONE) {
			busy[(long)e.node * deg + e.link] = 0;
			int to = nbr[e.node * deg + e.link];
			push((struct event){ e.t + 1e-6, ARRIVE, to, 0, e.p }); /* propagation delay */
			start_tx(e.node, e.link, e.t);
		} else {
			struct pkt *p = e.p;
			p->hops++;
			if (p->dst == e.node) {
				delivered++;
				total_hops += p->hops;
				detours += p->hops != dist[(long)p->src * n + p->dst];
				total_delay += e.t - p->born;
				h = wl_fnv(h, &p->hops, sizeof p->hops);
				free(p);
			} else {
				enqueue(e.node, p, e.t);
			}
		}
	}
	double dt = wl_now() - t0;
	long long in_flight = 0;
	for (long q = 0; q < (long)n * deg; q++)
		for (struct pkt *p = qhead[q]; p; p = p->next)
			in_flight++;
	for (long i = 0; i < nheap; i++)
		in_flight += heap[i].p != NULL;
	printf("nodes=%d\nevents=%lld\ncreated=%lld\ndelivered=%lld\nin_flight=%lld\n", n, events,
	       created, delivered, in_flight);
	printf("mean_hops=%.4f\nmean_delay_us=%.3f\n", delivered ? (double)total_hops / delivered : 0,
	       delivered ? 1e6 * total_delay / delivered : 0);
	wl_hex("checksum", h);
	printf("seconds=%.6f\n", dt);
	if (created != delivered + in_flight)
		wl_fail("%lld packets created, %lld delivered + %lld in flight", created, delivered, in_flight);
	if (detours)
		wl_fail("%lld packets did not take a shortest path", detours);
	return 0;
}
