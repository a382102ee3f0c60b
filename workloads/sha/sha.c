/*
 * sha - MiBench security/sha-like: a cryptographic hash over a large buffer.
 *
 * MiBench hashes a text file with SHA-1; we implement SHA-256 (FIPS 180-4) from the standard
 * and hash --size bytes of generated data --repeat times, chaining each digest into the next
 * buffer.  Integer rotate/add/xor on a 256 B message schedule with a streaming read of the
 * buffer.  Check: the known-answer digests of "abc" and of the empty string.
 */
#include "wl.h"

static const uint32_t K[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void block(uint32_t st[8], const uint8_t *p)
{
	uint32_t w[64], a = st[0], b = st[1], c = st[2], d = st[3], e = st[4], f = st[5], g = st[6], h = st[7];
	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (int i = 16; i < 64; i++) {
		uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	for (int i = 0; i < 64; i++) {
		uint32_t t1 = h + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
		uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
		h = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
	}
	st[0] += a; st[1] += b; st[2] += c; st[3] += d; st[4] += e; st[5] += f; st[6] += g; st[7] += h;
}

static void sha256(const uint8_t *msg, size_t n, uint8_t out[32])
{
	uint32_t st[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
	size_t i = 0;
	for (; i + 64 <= n; i += 64)
		block(st, msg + i);
	uint8_t tail[128] = { 0 };
	size_t r = n - i;
	memcpy(tail, msg + i, r);
	tail[r] = 0x80;
	size_t tl = r + 9 <= 64 ? 64 : 128;
	uint64_t bits = (uint64_t)n * 8;
	for (int k = 0; k < 8; k++)
		tail[tl - 1 - k] = (uint8_t)(bits >> (8 * k));
	for (size_t k = 0; k < tl; k += 64)
		block(st, tail + k);
	for (int k = 0; k < 8; k++)
		for (int b = 0; b < 4; b++)
			out[4 * k + b] = (uint8_t)(st[k] >> (24 - 8 * b));
}

static void hex(const uint8_t d[32], char *s)
{
	for (int i = 0; i < 32; i++)
		sprintf(s + 2 * i, "%02x", d[i]);
}

int main(int argc, char **argv)
{
	wl_prog = "sha";
	uint64_t size = 1 << 20;
	int repeat = 1;
	WL_OPTS(argc, argv) {
		if (WL_IS("--size")) size = wl_size("--size", WL_VAL);
		else if (WL_IS("--repeat")) repeat = (int)wl_int("--repeat", WL_VAL, 1, 100000);
		else WL_BAD();
	}
	uint8_t d[32];
	char s[65];
	sha256((const uint8_t *)"abc", 3, d);
	hex(d, s);
	if (strcmp(s, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"))
		wl_fail("SHA-256(\"abc\") = %s", s);
	sha256((const uint8_t *)"", 0, d);
	hex(d, s);
	if (strcmp(s, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"))
		wl_fail("SHA-256(\"\") = %s", s);
	uint8_t *buf = wl_alloc(size);
	wl_rng rng = wl_seed(2);
	for (uint64_t i = 0; i < size; i++)
		buf[i] = (uint8_t)wl_next(&rng);
	double t0 = wl_now();
	for (int r = 0; r < repeat; r++) {
		sha256(buf, size, d);
		memcpy(buf, d, size < 32 ? size : 32);
	}
	double dt = wl_now() - t0;
	hex(d, s);
	printf("bytes=%" PRIu64 "\nrepeat=%d\ndigest=%s\n", size, repeat, s);
	printf("seconds=%.6f\nmb_per_sec=%.2f\n", dt, dt > 0 ? size * (double)repeat / dt / 1e6 : 0);
	return 0;
}
