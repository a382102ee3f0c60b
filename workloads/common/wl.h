/*
 * wl.h - the few things every schedlab workload shares: one-line errors, size and number
 * arguments, a seeded PRNG, a clock, and key=value output.
 *
 * Header-only (static functions) so a workload is still "its own .c files + this header";
 * the build adds -I workloads/common.  Output convention: results as key=value lines on
 * stdout; any error is ONE line on stderr and a non-zero exit, so the in-guest runner and the
 * native tests can rely on the exit status alone.
 */
#ifndef WL_H
#define WL_H

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *wl_prog __attribute__((unused)) = "workload";

__attribute__((format(printf, 1, 2), noreturn)) static inline void wl_die(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", wl_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* Check failures exit 3 so a wrong result is distinguishable from a usage error (2). */
__attribute__((format(printf, 1, 2), noreturn)) static inline void wl_fail(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: check failed: ", wl_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(3);
}

static inline void *wl_alloc(size_t n)
{
	void *p = NULL;
	/* Line-aligned so footprints in cache lines are exactly what the size says. */
	if (n == 0 || posix_memalign(&p, 4096, n) != 0)
		wl_die("out of memory allocating %zu bytes", n);
	memset(p, 0, n);
	return p;
}

/* Sizes: plain bytes or with K/M/G, KB/MB/GB or KiB/MiB/GiB, all binary (cache convention). */
static inline uint64_t wl_size(const char *opt, const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || s[0] == '-')
		wl_die("%s wants a size such as 32KiB or 4MiB, not '%s'", opt, s);
	uint64_t mul = 1;
	if (*end) {
		switch (*end) {
		case 'k': case 'K': mul = 1ULL << 10; break;
		case 'm': case 'M': mul = 1ULL << 20; break;
		case 'g': case 'G': mul = 1ULL << 30; break;
		default: wl_die("%s wants a size such as 32KiB or 4MiB, not '%s'", opt, s);
		}
		end++;
		if (strcmp(end, "") && strcmp(end, "B") && strcmp(end, "iB"))
			wl_die("%s wants a size such as 32KiB or 4MiB, not '%s'", opt, s);
	}
	if (v == 0 || v > (1ULL << 40) / mul)
		wl_die("%s must be between 1 byte and 1TiB, not '%s'", opt, s);
	return v * mul;
}

static inline long long wl_int(const char *opt, const char *s, long long lo, long long hi)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || *end)
		wl_die("%s wants an integer, not '%s'", opt, s);
	if (v < lo || v > hi)
		wl_die("%s must be between %lld and %lld, not %lld", opt, lo, hi, v);
	return v;
}

/* Option walker: every workload takes only "--name value" pairs (and --help-free). */
#define WL_OPTS(argc, argv) for (int wl_i = 1; wl_i < (argc); wl_i += 2)
#define WL_IS(name) (strcmp(argv[wl_i], (name)) == 0 && wl_need(argc, argv, wl_i))
#define WL_VAL (argv[wl_i + 1])
#define WL_BAD() wl_die("unknown option '%s' (options are listed in workloads/README.md)", argv[wl_i])

static inline int wl_need(int argc, char **argv, int i)
{
	if (i + 1 >= argc)
		wl_die("option %s needs a value", argv[i]);
	return 1;
}

/* xorshift64*: tiny, fast, and identical on every platform, so outputs are reproducible. */
typedef struct { uint64_t s; } wl_rng;
static inline uint64_t wl_next(wl_rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545F4914F6CDD1DULL;
}
static inline wl_rng wl_seed(uint64_t seed) { wl_rng r = { seed * 0x9E3779B97F4A7C15ULL + 1 }; return r; }
static inline double wl_unit(wl_rng *r) { return (wl_next(r) >> 11) * (1.0 / 9007199254740992.0); }
static inline uint64_t wl_below(wl_rng *r, uint64_t n) { return wl_next(r) % n; }

static inline double wl_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* CPU seconds of the whole process so far: every thread, user and system */
static inline double wl_cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/*
 * When the run's region of interest begins, on wl_now()'s clock: the launcher announces it in
 * SCHEDLAB_ROI_START_NS (its start plus the warm-up).  Outside the launcher (native tests, a
 * shell) there is no warm-up and the region is the whole life: 0, before any wl_now().
 * Workloads that report rates or latencies over their life also report them over the region
 * (roi_* keys), since on gem5 the warm-up runs on other cores than the region.
 */
static inline double wl_roi_start(void)
{
	const char *s = getenv("SCHEDLAB_ROI_START_NS");
	char *end;

	if (!s)
		return 0;
	errno = 0;
	unsigned long long ns = strtoull(s, &end, 10);
	if (errno || end == s || *end)
		wl_die("SCHEDLAB_ROI_START_NS wants nanoseconds of CLOCK_MONOTONIC, not '%s'", s);
	return ns * 1e-9;
}

/* FNV-1a over bytes: the checksum every workload prints, as checksum=0x%016llx. */
static inline uint64_t wl_fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001B3ULL;
	}
	return h;
}
#define WL_FNV_INIT 0xCBF29CE484222325ULL

static inline void wl_hex(const char *key, uint64_t v) { printf("%s=0x%016" PRIx64 "\n", key, v); }

/*
 * exp, sin and cos from + - * / only.  glibc's libm picks FMA/AVX variants at run time, so a
 * static binary can round differently on the host and on a simulated CPU without those
 * extensions; results that feed a checksum must not depend on that.  Accurate to a few ulp
 * over the moderate arguments the workloads use.
 */
static inline double wl_exp(double x)
{
	if (x < -700)
		return 0;
	if (x > 700)
		x = 700;
	double k = (double)(long long)(x * 1.4426950408889634 + (x >= 0 ? 0.5 : -0.5));
	double r = (x - k * 6.93147180369123816490e-01) - k * 1.90821492927058770002e-10;
	double term = 1, sum = 1;
	for (int i = 1; i <= 14; i++) {
		term *= r / i;
		sum += term;
	}
	long long e = (long long)k;
	while (e > 0) { sum *= 2; e--; }
	while (e < 0) { sum *= 0.5; e++; }
	return sum;
}

static inline double wl_sin_poly(double r)
{
	double r2 = r * r, term = r, sum = r;
	for (int i = 1; i <= 9; i++) {
		term *= -r2 / ((2 * i) * (2 * i + 1));
		sum += term;
	}
	return sum;
}
static inline double wl_cos_poly(double r)
{
	double r2 = r * r, term = 1, sum = 1;
	for (int i = 1; i <= 9; i++) {
		term *= -r2 / ((2 * i - 1) * (2 * i));
		sum += term;
	}
	return sum;
}
static inline double wl_sin(double x)
{
	double k = (double)(long long)(x * 0.63661977236758134 + (x >= 0 ? 0.5 : -0.5));
	double r = (x - k * 1.57079632673412561417e+00) - k * 6.07710050650619224932e-11;
	switch ((long long)k & 3) {
	case 0: return wl_sin_poly(r);
	case 1: return wl_cos_poly(r);
	case 2: return -wl_sin_poly(r);
	default: return -wl_cos_poly(r);
	}
}
static inline double wl_cos(double x) { return wl_sin(x + 1.57079632679489661923); }

/* Natural log for x > 0: x = m 2^e with m in [sqrt(1/2), sqrt(2)), then 2 atanh((m-1)/(m+1)). */
static inline double wl_log(double x)
{
	if (!(x > 0))
		return -1e308;
	int e = 0;
	while (x >= 1.4142135623730951) { x *= 0.5; e++; }
	while (x < 0.7071067811865476) { x *= 2; e--; }
	double t = (x - 1) / (x + 1), t2 = t * t, term = t, sum = t;
	for (int i = 3; i <= 41; i += 2) {
		term *= t2;
		sum += term / i;
	}
	return 2 * sum + e * 0.69314718055994530942;
}

/* Stop flag for the programs that run until SIGTERM/SIGINT. */
static volatile sig_atomic_t wl_stop __attribute__((unused));
static inline void wl_on_signal(int sig) { (void)sig; wl_stop = 1; }
static inline void wl_catch_stop(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = wl_on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}

#endif
