/*
 * dijkstra - MiBench network/dijkstra-like: shortest paths in a dense graph given as an
 * adjacency matrix, from every node, with the simple O(n^2) Dijkstra.
 *
 * MiBench's dijkstra reads a 100 x 100 adjacency matrix and runs Dijkstra from many sources;
 * ours generates the matrix (seeded; some arcs missing) and runs from every source.  Check:
 * the distances equal those of an independent Floyd-Warshall all-pairs computation.
 */
#include "wl.h"

#define NONE 0x3fffffff

int main(int argc, char **argv)
{
	wl_prog = "dijkstra";
	int n = 100, repeat = 1;
	WL_OPTS(argc, argv) {
		if (WL_IS("--nodes")) n = (int)wl_int("--nodes", WL_VAL, 2, 4000);
		else if (WL_IS("--repeat")) repeat = (int)wl_int("--repeat", WL_VAL, 1, 100000);
		else WL_BAD();
	}
	int *adj = wl_alloc(sizeof(int) * n * n), *dist = wl_alloc(sizeof(int) * n * n);
	int *fw = wl_alloc(sizeof(int) * n * n);
	char *done = wl_alloc(n);
	wl_rng rng = wl_seed(100);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			adj[i * n + j] = i == j ? 0 : wl_below(&rng, 4) == 0 ? NONE : 1 + (int)wl_below(&rng, 1000);
	double t0 = wl_now();
	for (int r = 0; r < repeat; r++)
		for (int s = 0; s < n; s++) {
			int *d = dist + s * n;
			for (int i = 0; i < n; i++) {
				d[i] = NONE;
				done[i] = 0;
			}
			d[s] = 0;
			for (int it = 0; it < n; it++) {
				int u = -1;
				for (int i = 0; i < n; i++)
					if (!done[i] && (u < 0 || d[i] < d[u]))
						u = i;
				if (d[u] == NONE)
					break;
				done[u] = 1;
				for (int v = 0; v < n; v++)
					if (adj[u * n + v] != NONE && d[u] + adj[u * n + v] < d[v])
						d[v] = d[u] + adj[u * n + v];
			}
		}
	double dt = wl_now() - t0;
	memcpy(fw, adj, sizeof(int) * n * n);
	for (int k = 0; k < n; k++)
		for (int i = 0; i < n; i++)
			for (int j = 0; j < n; j++)
				if (fw[i * n + k] + fw[k * n + j] < fw[i * n + j])
					fw[i * n + j] = fw[i * n + k] + fw[k * n + j];
	long long total = 0;
	for (int i = 0; i < n * n; i++) {
		if (dist[i] != fw[i])
			wl_fail("distance %d -> %d is %d, Floyd-Warshall says %d", i / n, i % n, dist[i], fw[i]);
		total += dist[i];
	}
	printf("nodes=%d\nrepeat=%d\ntotal_distance=%lld\n", n, repeat, total);
	wl_hex("checksum", wl_fnv(WL_FNV_INIT, dist, sizeof(int) * n * n));
	printf("seconds=%.6f\n", dt);
	return 0;
}
