/*
 * raytrace - a recursive ray tracer, pthreads over image rows.  Two registry entries use it:
 * `povray` (single-threaded, stand-in for SPEC CPU2006 453.povray) and `raytrace` (study 3's
 * parallel ray tracer consolidated with omnetpp, Fig. 25).
 *
 * Like 453.povray it spends its time in ray-object intersection, shading with shadow rays and
 * recursive reflection, on a scene small enough to stay in cache: floating-point, branchy,
 * with a modest footprint.  The scene: a checkered ground plane and a grid of --spheres
 * spheres (every third one a mirror) lit by two point lights, --samples^2 rays per pixel.
 * Threads take rows from a shared counter; every pixel is computed the same way whoever does
 * it, so the image is identical for every --threads.  Check: an analytic ray-sphere distance,
 * and the image is neither black nor saturated.  Besides its elapsed time it reports, over the
 * run's region of interest (wl_roi_start), the rows from the first one taken after the region
 * began, the seconds from that moment to the end and the process's CPU seconds in them.
 * SIGTERM (the launcher's stop at a run's duration) ends it early: the threads finish their
 * rows and take no more, and the region's rows are those finished.
 */
#include <math.h>
#include "par.h"

typedef struct { double x, y, z; } vec;
static vec add(vec a, vec b) { return (vec){ a.x + b.x, a.y + b.y, a.z + b.z }; }
static vec sub(vec a, vec b) { return (vec){ a.x - b.x, a.y - b.y, a.z - b.z }; }
static vec mul(vec a, double s) { return (vec){ a.x * s, a.y * s, a.z * s }; }
static double dot(vec a, vec b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static vec unit(vec a) { return mul(a, 1 / sqrt(dot(a, a))); }

struct sphere { vec c; double r; vec colour; int mirror; };
static struct sphere *sph;
static int nsph, W, H, samples;
static const vec LIGHTS[2] = { { -10, 12, -6 }, { 8, 9, -10 } };
static uint8_t *img;
static int next_row;
static double roi_start, roi_seen_at, roi_cpu_at;
static int first_roi_row = -1, roi_done;
static struct par_team team;

/* Nearest hit along o + t d (d unit): t > 1e-6, or -1.  Sets *id (-1 = the ground plane). */
static double hit(vec o, vec d, int *id)
{
	double best = -1;
	*id = -2;
	for (int i = 0; i < nsph; i++) {
		vec oc = sub(o, sph[i].c);
		double b = dot(oc, d), c = dot(oc, oc) - sph[i].r * sph[i].r, disc = b * b - c;
		if (disc < 0)
			continue;
		double s = sqrt(disc), t = -b - s;
		if (t < 1e-6)
			t = -b + s;
		if (t > 1e-6 && (best < 0 || t < best)) {
			best = t;
			*id = i;
		}
	}
	if (d.y < -1e-9) { /* ground plane y = 0 */
		double t = -o.y / d.y;
		if (t > 1e-6 && (best < 0 || t < best)) {
			best = t;
			*id = -1;
		}
	}
	return best;
}

static vec trace(vec o, vec d, int depth)
{
	int id;
	double t = hit(o, d, &id);
	if (t < 0)
		return (vec){ 0.25 + 0.2 * d.y, 0.35 + 0.2 * d.y, 0.6 + 0.3 * d.y }; /* sky */
	vec p = add(o, mul(d, t)), nrm, base;
	int mirror = 0;
	if (id >= 0) {
		nrm = unit(sub(p, sph[id].c));
		base = sph[id].colour;
		mirror = sph[id].mirror;
	} else {
		nrm = (vec){ 0, 1, 0 };
		int check = ((int)floor(p.x) + (int)floor(p.z)) & 1;
		base = check ? (vec){ 0.8, 0.8, 0.8 } : (vec){ 0.15, 0.15, 0.2 };
	}
	vec col = mul(base, 0.1);
	for (int l = 0; l < 2; l++) {
		vec tl = sub(LIGHTS[l], p);
		double dist = sqrt(dot(tl, tl));
		vec ldir = mul(tl, 1 / dist);
		int sid;
		double st = hit(add(p, mul(nrm, 1e-4)), ldir, &sid);
		if (st > 0 && st < dist)
			continue; /* in shadow */
		double diff = dot(nrm, ldir);
		if (diff > 0)
			col = add(col, mul(base, 0.45 * diff));
		vec refl = sub(ldir, mul(nrm, 2 * dot(ldir, nrm)));
		double spec = dot(refl, d);
		if (spec > 0) {
			for (int k = 0; k < 5; k++)
				spec *= spec; /* spec^32 */
			col = add(col, mul((vec){ 1, 1, 1 }, 0.4 * spec));
		}
	}
	if (mirror && depth < 4) {
		vec r = sub(d, mul(nrm, 2 * dot(d, nrm)));
		col = add(mul(col, 0.3), mul(trace(add(p, mul(nrm, 1e-4)), r, depth + 1), 0.7));
	}
	return col;
}

static void body(int id, void *arg)
{
	(void)id;
	(void)arg;
	vec eye = { 0, 3, -12 };
	while (!wl_stop) {
		int y = __atomic_fetch_add(&next_row, 1, __ATOMIC_RELAXED);
		if (y >= H)
			return;
		if (__atomic_load_n(&first_roi_row, __ATOMIC_RELAXED) < 0) {
			double now = wl_now();
			int unset = -1;

			if (now >= roi_start && __atomic_compare_exchange_n(&first_roi_row, &unset, y, 0,
									   __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
				roi_seen_at = now;
				roi_cpu_at = wl_cpu_now();
			}
		}
		for (int x = 0; x < W; x++) {
			vec sum = { 0, 0, 0 };
			for (int sy = 0; sy < samples; sy++)
				for (int sx = 0; sx < samples; sx++) {
					double u = (x + (sx + 0.5) / samples) / W * 2 - 1;
					double v = 1 - (y + (sy + 0.5) / samples) / H * 2;
					vec d = unit((vec){ u * W / H, v - 0.15, 1.6 });
					sum = add(sum, trace(eye, d, 0));
				}
			sum = mul(sum, 1.0 / (samples * samples));
			double c[3] = { sum.x, sum.y, sum.z };
			for (int k = 0; k < 3; k++)
				img[((long)y * W + x) * 3 + k] = (uint8_t)(c[k] >= 1 ? 255 : c[k] <= 0 ? 0 : c[k] * 255 + 0.5);
		}
		int first = __atomic_load_n(&first_roi_row, __ATOMIC_RELAXED);
		if (first >= 0 && y >= first)
			__atomic_add_fetch(&roi_done, 1, __ATOMIC_RELAXED);
	}
}

int main(int argc, char **argv)
{
	wl_prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	int p = 1, grid = 4;
	W = 160;
	H = 120;
	samples = 2;
	WL_OPTS(argc, argv) {
		if (WL_IS("--threads")) p = par_threads_arg(WL_VAL);
		else if (WL_IS("--width")) W = (int)wl_int("--width", WL_VAL, 8, 16384);
		else if (WL_IS("--height")) H = (int)wl_int("--height", WL_VAL, 8, 16384);
		else if (WL_IS("--samples")) samples = (int)wl_int("--samples", WL_VAL, 1, 16);
		else if (WL_IS("--spheres")) grid = (int)wl_int("--spheres", WL_VAL, 1, 64);
		else WL_BAD();
	}
	nsph = grid * grid;
	sph = wl_alloc(sizeof *sph * nsph);
	wl_rng rng = wl_seed(453);
	for (int i = 0; i < nsph; i++) {
		double r = 0.35 + 0.3 * wl_unit(&rng);
		sph[i].c = (vec){ (i % grid - (grid - 1) / 2.0) * 2.2, r, (i / grid) * 2.2 };
		sph[i].r = r;
		sph[i].colour = (vec){ 0.2 + 0.8 * wl_unit(&rng), 0.2 + 0.8 * wl_unit(&rng), 0.2 + 0.8 * wl_unit(&rng) };
		sph[i].mirror = i % 3 == 0;
	}
	/* Analytic check of the intersection code: a ray from (c.x, c.y, c.z - 10) along +z hits
	 * sphere 0 at distance 10 - r. */
	int id;
	double t = hit(sub(sph[0].c, (vec){ 0, 0, 10 }), (vec){ 0, 0, 1 }, &id);
	if (id != 0 || fabs(t - (10 - sph[0].r)) > 1e-9)
		wl_fail("ray-sphere distance %.12f, expected %.12f", t, 10 - sph[0].r);
	img = wl_alloc((size_t)W * H * 3);
	roi_start = wl_roi_start();
	wl_catch_stop();
	double t0 = wl_now();
	par_run(&team, p, body, NULL);
	double t_end = wl_now(), dt = t_end - t0, cpu_end = wl_cpu_now();
	int roi_rows = roi_done;
	double roi_dt = roi_rows ? t_end - roi_seen_at : 0;
	double roi_cpu = roi_rows ? cpu_end - roi_cpu_at : 0;
	double mean = 0;
	for (long i = 0; i < (long)W * H * 3; i++)
		mean += img[i];
	mean /= (double)W * H * 3 * 255;
	printf("threads=%d\nwidth=%d\nheight=%d\nspheres=%d\nmean_brightness=%.4f\n", p, W, H, nsph, mean);
	wl_hex("checksum", wl_fnv(WL_FNV_INIT, img, (size_t)W * H * 3));
	printf("seconds=%.6f\n", dt);
	printf("roi_rows=%d\nroi_seconds=%.6f\nroi_rows_per_sec=%.4f\n", roi_rows, roi_dt,
	       roi_dt > 0 ? roi_rows / roi_dt : 0.0);
	printf("roi_cpu_seconds=%.6f\n", roi_cpu);
	if (!wl_stop && !(mean > 0.05 && mean < 0.95))
		wl_fail("image mean brightness %.3f: black or saturated", mean);
	return 0;
}
