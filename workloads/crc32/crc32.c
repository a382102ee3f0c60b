/*
 * crc32 - MiBench telecomm/CRC32-like: the CRC-32 (IEEE 802.3, reflected 0xEDB88320) of a
 * large buffer with the byte-wise table method.
 *
 * MiBench computes CRC-32 of audio files with a 256-entry table; we do the same over
 * --size bytes of generated data, --repeat times.  A 1 KB table plus a streaming read.
 * Check: the standard check value CRC-32("123456789") = 0xCBF43926, and the table method
 * agrees with a bit-at-a-time computation on the first 64 KB of the data.
 */
#include "wl.h"

static uint32_t table[256];

static uint32_t crc_table(const uint8_t *p, size_t n, uint32_t c)
{
	c = ~c;
	for (size_t i = 0; i < n; i++)
		c = table[(c ^ p[i]) & 0xff] ^ (c >> 8);
	return ~c;
}

static uint32_t crc_bits(const uint8_t *p, size_t n)
{
	uint32_t c = ~0u;
	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1)));
	}
	return ~c;
}

int main(int argc, char **argv)
{
	wl_prog = "crc32";
	uint64_t size = 4 << 20;
	int repeat = 1;
	WL_OPTS(argc, argv) {
		if (WL_IS("--size")) size = wl_size("--size", WL_VAL);
		else if (WL_IS("--repeat")) repeat = (int)wl_int("--repeat", WL_VAL, 1, 100000);
		else WL_BAD();
	}
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
		table[i] = c;
	}
	if (crc_table((const uint8_t *)"123456789", 9, 0) != 0xCBF43926u)
		wl_fail("CRC-32 of \"123456789\" is not 0xCBF43926");
	uint8_t *buf = wl_alloc(size);
	wl_rng rng = wl_seed(32);
	for (uint64_t i = 0; i < size; i++)
		buf[i] = (uint8_t)(wl_next(&rng) >> 56);
	size_t probe = size < 65536 ? size : 65536;
	if (crc_table(buf, probe, 0) != crc_bits(buf, probe))
		wl_fail("table and bitwise CRC disagree");
	uint32_t c = 0;
	double t0 = wl_now();
	for (int r = 0; r < repeat; r++)
		c = crc_table(buf, size, c);
	double dt = wl_now() - t0;
	printf("bytes=%" PRIu64 "\nrepeat=%d\ncrc=0x%08x\n", size, repeat, c);
	printf("seconds=%.6f\n", dt);
	return 0;
}
