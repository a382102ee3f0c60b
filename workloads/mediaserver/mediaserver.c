/*
 * mediaserver - a soft real-time media server (study 3, Fig. 24: its response-time
 * distribution alone and consolidated with SPEC work).
 *
 * A client thread issues --requests requests at a fixed --rate (absolute-time sleeps, so
 * the arrival times do not drift); --workers server threads take them from a queue and
 * "transcode" one frame each: an 8x8 floating-point DCT of every block of a --frame-kb frame,
 * quantisation and run-length coding, the core of a JPEG/MPEG intra coder.  The response time
 * of a request is completion minus arrival; a request misses its deadline if that exceeds the
 * period.  Timing depends on the machine; the coded output does not: its checksum is fixed.
 * The distribution is reported over every request and (roi_*) over the requests that
 * arrived in the run's region of interest (wl_roi_start); with $SCHEDLAB_OUT set (the
 * launcher's --out) every request's arrival and response time also go to responses.csv
 * there, for the figure's distribution.  SIGTERM (the launcher's stop at a
 * run's duration) ends the requests early: those already issued are served and reported.
 * Check: every request was served, and decoding the first frame (dequantise, inverse DCT)
 * gives it back at a PSNR above 30 dB.
 */
#include <math.h>
#include <pthread.h>
#include "wl.h"

static int nreq, frame_bytes, side;
static double period;
static double *arrival, *response;
static uint64_t *out_hash;
static int queued, taken, closed;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static double C[8][8]; /* DCT basis */
static const int Q = 12;

static void make_frame(uint8_t *f, int id)
{
	for (int y = 0; y < side; y++)
		for (int x = 0; x < side; x++) /* smooth gradients plus a moving bar: compressible */
			f[y * side + x] = (uint8_t)((x * 3 + y * 2 + id * 5) % 200 + (((x + id * 4) / 16) % 4 == 0 ? 50 : 0));
}

/* Code a frame; returns the coded size and fills *hash; if recon, writes the decoded frame. */
static long code_frame(const uint8_t *f, uint64_t *hash, uint8_t *recon)
{
	long bytes = 0;
	uint64_t h = WL_FNV_INIT;
	for (int by = 0; by < side; by += 8)
		for (int bx = 0; bx < side; bx += 8) {
			double blk[8][8], co[8][8];
			int q[64];
			for (int y = 0; y < 8; y++)
				for (int x = 0; x < 8; x++)
					blk[y][x] = f[(by + y) * side + bx + x] - 128.0;
			for (int u = 0; u < 8; u++)
				for (int v = 0; v < 8; v++) {
					double s = 0;
					for (int y = 0; y < 8; y++)
						for (int x = 0; x < 8; x++)
							s += C[u][y] * C[v][x] * blk[y][x];
					co[u][v] = s;
				}
			for (int k = 0; k < 64; k++) {
				double c = co[k / 8][k % 8] / Q;
				q[k] = (int)(c < 0 ? c - 0.5 : c + 0.5);
			}
			for (int k = 0, run = 0; k < 64; k++) { /* run-length: (zeros, value) pairs */
				if (q[k] == 0) { run++; continue; }
				int pair[2] = { run, q[k] };
				h = wl_fnv(h, pair, sizeof pair);
				bytes += 2;
				run = 0;
			}
			if (recon)
				for (int y = 0; y < 8; y++)
					for (int x = 0; x < 8; x++) {
						double s = 0;
						for (int u = 0; u < 8; u++)
							for (int v = 0; v < 8; v++)
								s += C[u][y] * C[v][x] * q[u * 8 + v] * Q;
						s += 128;
						recon[(by + y) * side + bx + x] = (uint8_t)(s < 0 ? 0 : s > 255 ? 255 : s + 0.5);
					}
		}
	*hash = h;
	return bytes;
}

static double mono(void) { return wl_now(); }

static void *client(void *arg)
{
	(void)arg;
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (int i = 0; i < nreq; i++) {
		double due = start.tv_sec + start.tv_nsec * 1e-9 + i * period;
		struct timespec ts = { (time_t)due, (long)((due - (time_t)due) * 1e9) };
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR && !wl_stop)
			;
		if (wl_stop)
			break;
		pthread_mutex_lock(&mu);
		arrival[i] = mono();
		queued = i + 1;
		pthread_cond_signal(&cv);
		pthread_mutex_unlock(&mu);
	}
	pthread_mutex_lock(&mu);
	closed = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	return NULL;
}

static void *worker(void *arg)
{
	(void)arg;
	uint8_t *f = malloc((size_t)side * side);
	if (!f)
		wl_die("out of memory");
	for (;;) {
		pthread_mutex_lock(&mu);
		while (taken == queued && !closed)
			pthread_cond_wait(&cv, &mu);
		if (taken == queued) {	/* closed, and every issued request taken */
			pthread_mutex_unlock(&mu);
			free(f);
			return NULL;
		}
		int id = taken++;
		pthread_mutex_unlock(&mu);
		make_frame(f, id);
		code_frame(f, &out_hash[id], NULL);
		response[id] = mono() - arrival[id];
	}
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Each served request: arrival (ms after the region's start), response time (ms), in it. */
static void write_responses(const char *dir, double roi, int served)
{
	char path[4096];
	FILE *f;

	if (snprintf(path, sizeof(path), "%s/responses.csv", dir) >= (int)sizeof(path))
		wl_die("SCHEDLAB_OUT is too long: %s", dir);
	f = fopen(path, "w");
	if (!f)
		wl_die("cannot write %s", path);
	fprintf(f, "arrival_ms,response_ms,in_roi\n");
	for (int i = 0; i < served; i++)
		fprintf(f, "%.4f,%.4f,%d\n", 1e3 * (arrival[i] - roi), 1e3 * response[i],
			arrival[i] >= roi);
	if (ferror(f) | fclose(f))	/* both: fclose must run */
		wl_die("cannot write %s", path);
}

/* The distribution of n response times (sorted here), as <prefix>mean_ms= ... lines. */
static void report(const char *prefix, double *resp, int n)
{
	int misses = 0;
	double sum = 0;

	for (int i = 0; i < n; i++) {
		misses += resp[i] > period;
		sum += resp[i];
	}
	qsort(resp, n, sizeof(double), cmp);
	printf("%srequests=%d\n%sdeadline_misses=%d\n", prefix, n, prefix, misses);
	if (!n)
		return;
	printf("%smean_ms=%.4f\n%sp50_ms=%.4f\n%sp90_ms=%.4f\n%sp99_ms=%.4f\n%smax_ms=%.4f\n",
	       prefix, 1e3 * sum / n, prefix, 1e3 * resp[n / 2], prefix, 1e3 * resp[n * 9 / 10],
	       prefix, 1e3 * resp[n * 99 / 100], prefix, 1e3 * resp[n - 1]);
}

int main(int argc, char **argv)
{
	wl_prog = "mediaserver";
	int rate = 200, workers = 1;
	nreq = 100;
	frame_bytes = 64 * 1024;
	WL_OPTS(argc, argv) {
		if (WL_IS("--rate")) rate = (int)wl_int("--rate", WL_VAL, 1, 100000);
		else if (WL_IS("--requests")) nreq = (int)wl_int("--requests", WL_VAL, 1, 10000000);
		else if (WL_IS("--frame-kb")) frame_bytes = (int)wl_int("--frame-kb", WL_VAL, 1, 65536) * 1024;
		else if (WL_IS("--workers")) workers = (int)wl_int("--workers", WL_VAL, 1, 64);
		else WL_BAD();
	}
	side = (int)sqrt((double)frame_bytes) / 8 * 8;
	if (side < 8)
		side = 8;
	period = 1.0 / rate;
	for (int u = 0; u < 8; u++)
		for (int x = 0; x < 8; x++)
			C[u][x] = (u ? 0.5 : 0.35355339059327376) * wl_cos((2 * x + 1) * u * M_PI / 16);
	uint8_t *f = wl_alloc((size_t)side * side), *r = wl_alloc((size_t)side * side);
	make_frame(f, 0);
	uint64_t h0;
	code_frame(f, &h0, r);
	double se = 0;
	for (long i = 0; i < (long)side * side; i++)
		se += (double)(f[i] - r[i]) * (f[i] - r[i]);
	double psnr = 10 * log10(255.0 * 255.0 / (se / ((double)side * side) + 1e-12));
	if (!(psnr > 30))
		wl_fail("decoded frame PSNR %.1f dB is below 30 dB", psnr);
	arrival = wl_alloc(sizeof(double) * nreq);
	response = wl_alloc(sizeof(double) * nreq);
	out_hash = wl_alloc(sizeof(uint64_t) * nreq);
	pthread_t ct, wt[64];
	wl_catch_stop();
	double t0 = wl_now();
	if (pthread_create(&ct, NULL, client, NULL))
		wl_die("cannot start the client thread");
	for (int w = 0; w < workers; w++)
		if (pthread_create(&wt[w], NULL, worker, NULL))
			wl_die("cannot start worker %d", w);
	pthread_join(ct, NULL);
	for (int w = 0; w < workers; w++)
		pthread_join(wt[w], NULL);
	double dt = wl_now() - t0;
	uint64_t h = WL_FNV_INIT;
	int served = queued;	/* nreq unless stopped */
	double roi = wl_roi_start(), *in_roi = wl_alloc(sizeof(double) * nreq);
	int roi_n = 0;
	for (int i = 0; i < served; i++) {
		h = wl_fnv(h, &out_hash[i], sizeof out_hash[i]);
		if (arrival[i] >= roi)
			in_roi[roi_n++] = response[i];
	}
	const char *out = getenv("SCHEDLAB_OUT");
	if (out)	/* before report() sorts the responses */
		write_responses(out, roi, served);
	printf("rate=%d\nframe_side=%d\npsnr_db=%.2f\n", rate, side, psnr);
	report("", response, served);
	report("roi_", in_roi, roi_n);
	wl_hex("checksum", h);
	printf("seconds=%.6f\n", dt);
	return 0;
}
