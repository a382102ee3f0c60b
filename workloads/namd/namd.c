/*
 * namd - stand-in for SPEC CPU2006 444.namd: classical molecular dynamics.
 *
 * 444.namd integrates Newton's equations for a biomolecular system, its time dominated by
 * short-range non-bonded force evaluation between atom pairs within a cut-off, found through
 * spatial cells.  Ours simulates a Lennard-Jones fluid (reduced units, density 0.8,
 * temperature about 1) of 4 x --cells^3 atoms from an fcc lattice in a periodic box, with a
 * cut-off of 2.5 sigma, cell lists rebuilt every step, and velocity-Verlet integration for
 * --steps steps: floating-point heavy, with irregular access to neighbouring cells' atoms.
 * Check: total energy is conserved (drift below 1% of the kinetic energy).
 */
#include <math.h>
#include "wl.h"

static int n, nc;
static double L, rc2 = 2.5 * 2.5, ecut;
static double *x, *v, *f;
static int *head, *next;

static double wrap(double d) { return d > L / 2 ? d - L : d < -L / 2 ? d + L : d; }

static double forces(void)
{
	double cell = L / nc, pot = 0;
	for (int c = 0; c < nc * nc * nc; c++)
		head[c] = -1;
	for (int i = 0; i < n; i++) {
		int cx = (int)(x[3 * i] / cell) % nc, cy = (int)(x[3 * i + 1] / cell) % nc,
		    cz = (int)(x[3 * i + 2] / cell) % nc;
		int c = (cx * nc + cy) * nc + cz;
		next[i] = head[c];
		head[c] = i;
	}
	memset(f, 0, sizeof(double) * 3 * n);
	for (int i = 0; i < n; i++) {
		int cx = (int)(x[3 * i] / cell) % nc, cy = (int)(x[3 * i + 1] / cell) % nc,
		    cz = (int)(x[3 * i + 2] / cell) % nc;
		for (int dx = -1; dx <= 1; dx++)
			for (int dy = -1; dy <= 1; dy++)
				for (int dz = -1; dz <= 1; dz++) {
					int c = (((cx + dx + nc) % nc) * nc + (cy + dy + nc) % nc) * nc + (cz + dz + nc) % nc;
					for (int j = head[c]; j >= 0; j = next[j]) {
						if (j <= i)
							continue; /* each pair once */
						double rx = wrap(x[3 * i] - x[3 * j]), ry = wrap(x[3 * i + 1] - x[3 * j + 1]),
						       rz = wrap(x[3 * i + 2] - x[3 * j + 2]);
						double r2 = rx * rx + ry * ry + rz * rz;
						if (r2 >= rc2)
							continue;
						double ir2 = 1 / r2, ir6 = ir2 * ir2 * ir2;
						double fr = 24 * ir2 * ir6 * (2 * ir6 - 1);
						pot += 4 * ir6 * (ir6 - 1) - ecut;
						f[3 * i] += fr * rx; f[3 * i + 1] += fr * ry; f[3 * i + 2] += fr * rz;
						f[3 * j] -= fr * rx; f[3 * j + 1] -= fr * ry; f[3 * j + 2] -= fr * rz;
					}
				}
	}
	return pot;
}

static double kinetic(void)
{
	double k = 0;
	for (int i = 0; i < 3 * n; i++)
		k += 0.5 * v[i] * v[i];
	return k;
}

int main(int argc, char **argv)
{
	wl_prog = "namd";
	int cells = 5, steps = 40;
	double dt = 0.002;
	WL_OPTS(argc, argv) {
		if (WL_IS("--cells")) cells = (int)wl_int("--cells", WL_VAL, 3, 60);
		else if (WL_IS("--steps")) steps = (int)wl_int("--steps", WL_VAL, 1, 1000000);
		else WL_BAD();
	}
	n = 4 * cells * cells * cells;
	double a = cbrt(4 / 0.8); /* fcc lattice constant for density 0.8 */
	L = a * cells;
	nc = (int)(L / 2.5);
	if (nc < 3)
		wl_die("--cells %d gives a box too small for the cut-off; use at least 4", cells);
	double irc6 = 1 / (rc2 * rc2 * rc2);
	ecut = 4 * irc6 * (irc6 - 1);
	x = wl_alloc(sizeof(double) * 3 * n);
	v = wl_alloc(sizeof(double) * 3 * n);
	f = wl_alloc(sizeof(double) * 3 * n);
	head = wl_alloc(sizeof(int) * nc * nc * nc);
	next = wl_alloc(sizeof(int) * n);
	static const double basis[4][3] = { { 0, 0, 0 }, { 0.5, 0.5, 0 }, { 0.5, 0, 0.5 }, { 0, 0.5, 0.5 } };
	int k = 0;
	for (int i = 0; i < cells; i++)
		for (int j = 0; j < cells; j++)
			for (int l = 0; l < cells; l++)
				for (int b = 0; b < 4; b++, k++) {
					x[3 * k] = (i + basis[b][0] + 0.25) * a;
					x[3 * k + 1] = (j + basis[b][1] + 0.25) * a;
					x[3 * k + 2] = (l + basis[b][2] + 0.25) * a;
				}
	wl_rng rng = wl_seed(444);
	double mom[3] = { 0, 0, 0 };
	for (int i = 0; i < 3 * n; i++) {
		v[i] = 2 * wl_unit(&rng) - 1;
		mom[i % 3] += v[i];
	}
	for (int i = 0; i < 3 * n; i++)
		v[i] -= mom[i % 3] / n;
	double scale = sqrt(1.0 * 1.5 * n / kinetic()); /* kinetic energy 3/2 N T with T = 1 */
	for (int i = 0; i < 3 * n; i++)
		v[i] *= scale;
	double pot = forces(), e0 = pot + kinetic(), worst = 0;
	double t0 = wl_now();
	for (int s = 0; s < steps; s++) {
		for (int i = 0; i < 3 * n; i++) {
			v[i] += 0.5 * dt * f[i];
			x[i] += dt * v[i];
			x[i] -= L * floor(x[i] / L);
		}
		pot = forces();
		for (int i = 0; i < 3 * n; i++)
			v[i] += 0.5 * dt * f[i];
		double e = pot + kinetic();
		if (fabs(e - e0) > worst)
			worst = fabs(e - e0);
	}
	double tsec = wl_now() - t0, ke = kinetic();
	printf("atoms=%d\nsteps=%d\nenergy_start=%.6f\nenergy_end=%.6f\nmax_drift=%.3e\ntemperature=%.4f\n",
	       n, steps, e0, pot + ke, worst, ke / (1.5 * n));
	wl_hex("checksum", wl_fnv(WL_FNV_INIT, x, sizeof(double) * 3 * n));
	printf("seconds=%.6f\n", tsec);
	if (!(worst < 0.01 * ke))
		wl_fail("energy drifted by %.3e (kinetic energy %.3e)", worst, ke);
	return 0;
}
