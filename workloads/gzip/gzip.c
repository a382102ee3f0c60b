/*
 * gzip - stand-in for SPEC CPU2000 164.gzip: LZ77 compression with hash chains followed by
 * Huffman coding, and the matching decompression, in memory.
 *
 * The compressor is built like gzip's deflate: a 32 KB sliding window, a hash of the next
 * three bytes indexing chains of earlier positions (--chain bounds the search, as gzip's
 * levels do), lazy evaluation of matches, and per-block canonical Huffman codes for
 * literal/length and distance symbols with extra bits (our own container, not the deflate
 * bit format).  164.gzip compresses and decompresses generated and real data in memory; we do
 * the same with generated text (words drawn with a skewed distribution, so it compresses like
 * prose).  Check: decompression restores the input byte for byte (and its CRC-32).
 * --compress-to FILE / --decompress FILE use a file container with magic and CRC, so a
 * corrupted input is detected.
 */
#include "wl.h"

#define WSIZE 32768
#define HBITS 15
#define MINM 3
#define MAXM 258
#define NLIT 275 /* 256 literals, end of block, 18 length codes */
#define NDIST 30
#define MAXBITS 15

static uint32_t crc_table[256];
static uint32_t crc32(const uint8_t *p, size_t n)
{
	uint32_t c = ~0u;
	for (size_t i = 0; i < n; i++)
		c = crc_table[(c ^ p[i]) & 0xff] ^ (c >> 8);
	return ~c;
}

/* ---- bit I/O ---- */
struct bits { uint8_t *buf; size_t cap, pos; uint64_t acc; int n; };
static void put_bits(struct bits *b, uint32_t v, int n)
{
	b->acc |= (uint64_t)v << b->n;
	b->n += n;
	while (b->n >= 8) {
		if (b->pos == b->cap) {
			b->cap = b->cap * 2 + 65536;
			b->buf = realloc(b->buf, b->cap);
			if (!b->buf)
				wl_die("out of memory");
		}
		b->buf[b->pos++] = (uint8_t)b->acc;
		b->acc >>= 8;
		b->n -= 8;
	}
}
static const uint8_t *in_p, *in_end;
static uint64_t in_acc;
static int in_n;
static uint32_t get_bits(int n)
{
	while (in_n < n) {
		if (in_p == in_end)
			wl_die("compressed data is truncated or corrupt");
		in_acc |= (uint64_t)*in_p++ << in_n;
		in_n += 8;
	}
	uint32_t v = (uint32_t)(in_acc & ((1u << n) - 1));
	in_acc >>= n;
	in_n -= n;
	return v;
}

/* ---- symbol buckets: value v -> (code, extra bits) like deflate's ---- */
static int bucket(unsigned v, int direct, unsigned *extra, int *nextra)
{
	if (v < (unsigned)direct) { *nextra = 0; *extra = 0; return (int)v; }
	int b = 31 - __builtin_clz(v), lb = 31 - __builtin_clz((unsigned)direct);
	*nextra = b - 1;
	*extra = v & ((1u << (b - 1)) - 1);
	return direct + (b - lb) * 2 + (int)((v >> (b - 1)) & 1);
}
static unsigned unbucket(int code, int direct)
{
	if (code < direct)
		return (unsigned)code;
	int lb = 31 - __builtin_clz((unsigned)direct), b = (code - direct) / 2 + lb;
	unsigned base = (2u | (unsigned)((code - direct) & 1)) << (b - 1);
	return base + get_bits(b - 1);
}

/* ---- Huffman code lengths (length-limited by flattening) and canonical codes ---- */
static void code_lengths(const uint32_t *freq, int n, uint8_t *len)
{
	uint32_t f[NLIT];
	for (int i = 0; i < n; i++)
		f[i] = freq[i];
	for (;;) {
		int parent[2 * NLIT], nodes = 0, live[2 * NLIT], nl = 0;
		uint64_t w[2 * NLIT];
		int leaf[NLIT];
		for (int i = 0; i < n; i++)
			if (f[i]) {
				leaf[i] = nodes;
				w[nodes] = f[i];
				live[nl++] = nodes++;
			} else
				leaf[i] = -1;
		if (nl == 1) { /* a lone symbol still needs one bit */
			w[nodes] = 1;
			live[nl++] = nodes++;
		}
		while (nl > 1) { /* pick the two lightest (lowest index on ties): O(n^2), n is small */
			int a = 0, b = 1;
			if (w[live[b]] < w[live[a]]) { a = 1; b = 0; }
			for (int k = 2; k < nl; k++) {
				if (w[live[k]] < w[live[a]]) { b = a; a = k; }
				else if (w[live[k]] < w[live[b]]) b = k;
			}
			int na = live[a], nb = live[b];
			w[nodes] = w[na] + w[nb];
			parent[na] = parent[nb] = nodes;
			live[a] = nodes++;
			live[b] = live[--nl];
		}
		int root = live[0], maxl = 0;
		for (int i = 0; i < n; i++) {
			int d = 0;
			if (leaf[i] >= 0)
				for (int x = leaf[i]; x != root; x = parent[x])
					d++;
			len[i] = (uint8_t)d;
			if (d > maxl)
				maxl = d;
		}
		if (maxl <= MAXBITS)
			return;
		for (int i = 0; i < n; i++)
			if (f[i])
				f[i] = (f[i] >> 1) | 1;
	}
}

static void canonical(const uint8_t *len, int n, uint16_t *code)
{
	int count[MAXBITS + 1] = { 0 }, next[MAXBITS + 2];
	for (int i = 0; i < n; i++)
		count[len[i]]++;
	count[0] = 0;
	next[1] = 0;
	for (int b = 1; b <= MAXBITS; b++)
		next[b + 1] = (next[b] + count[b]) << 1;
	for (int i = 0; i < n; i++)
		if (len[i]) {
			/* codes are sent LSB first, so store them bit-reversed */
			unsigned c = (unsigned)next[len[i]]++, r = 0;
			for (int k = 0; k < len[i]; k++)
				r |= ((c >> k) & 1) << (len[i] - 1 - k);
			code[i] = (uint16_t)r;
		}
}

struct dec { int count[MAXBITS + 1]; int sym[NLIT]; };
static void dec_init(struct dec *d, const uint8_t *len, int n)
{
	int offs[MAXBITS + 2];
	memset(d->count, 0, sizeof d->count);
	for (int i = 0; i < n; i++)
		d->count[len[i]]++;
	d->count[0] = 0;
	offs[1] = 0;
	for (int b = 1; b <= MAXBITS; b++)
		offs[b + 1] = offs[b] + d->count[b];
	for (int i = 0; i < n; i++)
		if (len[i])
			d->sym[offs[len[i]]++] = i;
}
static int decode(const struct dec *d)
{
	int code = 0, first = 0, index = 0;
	for (int b = 1; b <= MAXBITS; b++) {
		code |= (int)get_bits(1);
		int c = d->count[b];
		if (code - c < first)
			return d->sym[index + (code - first)];
		index += c;
		first = (first + c) << 1;
		code <<= 1;
	}
	wl_die("compressed data is corrupt (bad Huffman code)");
}

/* ---- compressor ---- */
struct tok { uint16_t len; uint16_t dist; uint8_t lit; };

static void flush_block(struct bits *out, struct tok *t, int nt, int last)
{
	uint32_t lf[NLIT] = { 0 }, df[NDIST] = { 0 };
	unsigned ex;
	int nex;
	for (int i = 0; i < nt; i++)
		if (t[i].len) {
			lf[257 + bucket(t[i].len - MINM, 8, &ex, &nex)]++;
			df[bucket(t[i].dist - 1, 4, &ex, &nex)]++;
		} else
			lf[t[i].lit]++;
	lf[256]++;
	uint8_t ll[NLIT], dl[NDIST];
	uint16_t lc[NLIT], dc[NDIST];
	code_lengths(lf, NLIT, ll);
	code_lengths(df, NDIST, dl);
	canonical(ll, NLIT, lc);
	canonical(dl, NDIST, dc);
	put_bits(out, (uint32_t)last, 1);
	for (int i = 0; i < NLIT; i++)
		put_bits(out, ll[i], 4);
	for (int i = 0; i < NDIST; i++)
		put_bits(out, dl[i], 4);
	for (int i = 0; i < nt; i++)
		if (t[i].len) {
			int c = bucket(t[i].len - MINM, 8, &ex, &nex);
			put_bits(out, lc[257 + c], ll[257 + c]);
			put_bits(out, ex, nex);
			c = bucket(t[i].dist - 1, 4, &ex, &nex);
			put_bits(out, dc[c], dl[c]);
			put_bits(out, ex, nex);
		} else
			put_bits(out, lc[t[i].lit], ll[t[i].lit]);
	put_bits(out, lc[256], ll[256]);
}

static int chain_limit = 128;
static long long matches;

static size_t compress(const uint8_t *in, size_t n, struct bits *out)
{
	int32_t *head = malloc(sizeof(int32_t) << HBITS), *prev = malloc(sizeof(int32_t) * WSIZE);
	struct tok *t = malloc(sizeof *t * 65536);
	if (!head || !prev || !t)
		wl_die("out of memory");
	for (int i = 0; i < (1 << HBITS); i++)
		head[i] = -1;
	int nt = 0;
	size_t i = 0;
#define HASH(p) ((((uint32_t)(p)[0] << 10) ^ ((uint32_t)(p)[1] << 5) ^ (p)[2]) & ((1u << HBITS) - 1))
#define INSERT(pos) do { if ((pos) + MINM <= n) { uint32_t hh = HASH(in + (pos)); \
	prev[(pos) % WSIZE] = head[hh]; head[hh] = (int32_t)(pos); } } while (0)
	while (i < n) {
		int best = 0, bdist = 0;
		for (int lazy = 0; lazy < 2; lazy++) {
			size_t at = i + lazy;
			int len = 0, dist = 0, chain = chain_limit;
			if (at + MINM <= n)
				for (int32_t c = head[HASH(in + at)]; c >= 0 && at - c <= WSIZE - 1 && chain--; c = prev[c % WSIZE]) {
					size_t max = n - at < MAXM ? n - at : MAXM, k = 0;
					while (k < max && in[c + k] == in[at + k])
						k++;
					if ((int)k > len) {
						len = (int)k;
						dist = (int)(at - c);
					}
				}
			if (lazy == 0) {
				best = len;
				bdist = dist;
				INSERT(i);
				if (best < MINM || best >= 32)
					break;
			} else if (len > best) { /* a better match one byte on: emit a literal */
				best = 0;
			}
		}
		if (best >= MINM) {
			t[nt].len = (uint16_t)best;
			t[nt].dist = (uint16_t)bdist;
			for (int k = 1; k < best; k++)
				INSERT(i + k);
			i += best;
			matches++;
		} else {
			t[nt].len = 0;
			t[nt].lit = in[i++];
		}
		if (++nt == 65536 || i >= n) {
			flush_block(out, t, nt, i >= n);
			nt = 0;
		}
	}
	if (n == 0)
		flush_block(out, t, 0, 1);
	put_bits(out, 0, 7);
	free(head); free(prev); free(t);
	return out->pos;
}

static size_t decompress(const uint8_t *in, size_t inlen, uint8_t *out, size_t cap)
{
	in_p = in;
	in_end = in + inlen;
	in_acc = 0;
	in_n = 0;
	size_t o = 0;
	int last;
	do {
		uint8_t ll[NLIT], dl[NDIST];
		struct dec dlit, ddist;
		last = (int)get_bits(1);
		for (int i = 0; i < NLIT; i++)
			ll[i] = (uint8_t)get_bits(4);
		for (int i = 0; i < NDIST; i++)
			dl[i] = (uint8_t)get_bits(4);
		dec_init(&dlit, ll, NLIT);
		dec_init(&ddist, dl, NDIST);
		for (;;) {
			int s = decode(&dlit);
			if (s < 256) {
				if (o == cap)
					wl_die("compressed data is corrupt (too long)");
				out[o++] = (uint8_t)s;
			} else if (s == 256) {
				break;
			} else {
				unsigned len = unbucket(s - 257, 8) + MINM, dist = unbucket(decode(&ddist), 4) + 1;
				if (dist > o || o + len > cap)
					wl_die("compressed data is corrupt (bad match)");
				for (unsigned k = 0; k < len; k++, o++)
					out[o] = out[o - dist];
			}
		}
	} while (!last);
	return o;
}

/* Text from a vocabulary of pronounceable words with a skewed (Zipf-like) choice. */
static void make_text(uint8_t *buf, size_t n)
{
	static const char *syl[] = { "ka", "lo", "mi", "ne", "ru", "sha", "to", "vi", "que", "der",
				     "an", "el", "is", "or", "un", "ber", "gen", "ta", "po", "li" };
	char vocab[512][16];
	wl_rng r = wl_seed(164);
	for (int w = 0; w < 512; w++) {
		vocab[w][0] = 0;
		int k = 1 + (int)wl_below(&r, 3);
		for (int s = 0; s < k; s++)
			strcat(vocab[w], syl[wl_below(&r, 20)]);
	}
	size_t i = 0;
	int col = 0;
	while (i < n) {
		double u = wl_unit(&r);
		int w = (int)(512 * u * u * u);
		for (const char *p = vocab[w]; *p && i < n; p++)
			buf[i++] = (uint8_t)*p;
		col += (int)strlen(vocab[w]) + 1;
		if (i < n)
			buf[i++] = col > 70 ? (col = 0, '\n') : wl_below(&r, 12) ? ' ' : ',';
	}
}

static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		wl_die("cannot open %s: %s", path, strerror(errno));
	size_t cap = 1 << 16, n = 0;
	uint8_t *b = malloc(cap);
	for (size_t k; b && (k = fread(b + n, 1, cap - n, f)) > 0;) {
		n += k;
		if (n == cap)
			b = realloc(b, cap *= 2);
	}
	if (!b)
		wl_die("out of memory reading %s", path);
	fclose(f);
	*len = n;
	return b;
}

int main(int argc, char **argv)
{
	wl_prog = "gzip";
	uint64_t size = 256 * 1024;
	int repeat = 1;
	const char *to = NULL, *from = NULL;
	WL_OPTS(argc, argv) {
		if (WL_IS("--size")) size = wl_size("--size", WL_VAL);
		else if (WL_IS("--chain")) chain_limit = (int)wl_int("--chain", WL_VAL, 1, 4096);
		else if (WL_IS("--repeat")) repeat = (int)wl_int("--repeat", WL_VAL, 1, 10000);
		else if (WL_IS("--compress-to")) to = WL_VAL;
		else if (WL_IS("--decompress")) from = WL_VAL;
		else WL_BAD();
	}
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
	if (from) { /* container: "SLZ1", original length (8 B), CRC-32 (4 B), stream */
		size_t len;
		uint8_t *f = read_file(from, &len);
		if (len < 16 || memcmp(f, "SLZ1", 4))
			wl_die("%s is not a schedlab gzip file (bad magic)", from);
		uint64_t olen;
		uint32_t crc;
		memcpy(&olen, f + 4, 8);
		memcpy(&crc, f + 12, 4);
		if (olen > (1ULL << 32))
			wl_die("%s is corrupt (implausible length)", from);
		uint8_t *out = malloc(olen + 1);
		if (!out)
			wl_die("%s claims %" PRIu64 " bytes: out of memory", from, olen);
		size_t got = decompress(f + 16, len - 16, out, olen);
		if (got != olen || crc32(out, got) != crc)
			wl_die("%s is corrupt (length or CRC mismatch)", from);
		printf("bytes=%zu\n", got);
		printf("crc32=0x%08x\n", crc);
		return 0;
	}
	uint8_t *text = malloc(size), *back = malloc(size);
	if (!text || !back)
		wl_die("out of memory");
	make_text(text, size);
	uint32_t crc = crc32(text, size);
	size_t clen = 0;
	uint64_t h = WL_FNV_INIT;
	double t0 = wl_now();
	struct bits out = { 0 };
	for (int r = 0; r < repeat; r++) {
		out.pos = 0; out.acc = 0; out.n = 0;
		clen = compress(text, size, &out);
		size_t n = decompress(out.buf, clen, back, size);
		if (n != size || memcmp(back, text, size) || crc32(back, n) != crc)
			wl_fail("decompressed data differs from the input");
		h = wl_fnv(h, out.buf, clen);
	}
	double dt = wl_now() - t0;
	if (to) {
		FILE *f = fopen(to, "wb");
		uint64_t olen = size;
		if (!f || fwrite("SLZ1", 1, 4, f) != 4 || fwrite(&olen, 8, 1, f) != 1 ||
		    fwrite(&crc, 4, 1, f) != 1 || fwrite(out.buf, 1, clen, f) != clen || fclose(f))
			wl_die("cannot write %s", to);
	}
	printf("bytes=%" PRIu64 "\ncompressed=%zu\nratio=%.4f\nmatches=%lld\n", size, clen,
	       (double)clen / size, matches);
	printf("crc32=0x%08x\n", crc);
	wl_hex("checksum", h);
	printf("seconds=%.6f\n", dt);
	return 0;
}
