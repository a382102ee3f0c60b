/*
 * bv_l1i - base vector with an instruction footprint of exactly --size bytes and no data
 * (study 1): interleaved with a benchmark it wipes that benchmark's L1 I-cache state.
 *
 * The code is a straight-line "slide" of SLIDE_BYTES of register-only instructions, each
 * exactly 4 bytes, assembled at build time (.rept) so no compiler can delete or shorten it.
 * To execute a footprint of S bytes we jump to (end - S) and fall through to the final ret:
 * any size up to SLIDE_BYTES (a multiple of 64 B) is chosen at run time, so one binary
 * serves a 16 KB, 32 KB or 64 KB I-cache.  Four independent register chains leave room for
 * a superscalar core to overlap them; the slide touches no memory.
 */
#include "wl.h"

#if !defined(__x86_64__)
#error "bv_l1i's slide is x86-64 assembly; the guests of this project are x86-64"
#endif

#define SLIDE_BYTES (256 * 1024)
#define STR2(x) #x
#define STR(x) STR2(x)

/* bv_run(seed, entry): start the chains from seed, jump into the slide, return a digest. */
uint64_t bv_run(uint64_t seed, const void *entry);
__asm__(
	".text\n"
	".p2align 6\n"
	".globl bv_run\n"
	"bv_run:\n"
	"	mov %rdi, %rax\n"
	"	mov %rdi, %rcx\n"
	"	mov %rdi, %rdx\n"
	"	mov %rdi, %r8\n"
	"	jmp *%rsi\n"
	".p2align 6\n"
	".globl bv_slide_start\n"
	"bv_slide_start:\n"
	".rept " STR(SLIDE_BYTES / 16) "\n"
	"	add $3, %rax\n"
	"	xor $0x55, %rcx\n"
	"	sub $7, %rdx\n"
	"	add $11, %r8\n"
	".endr\n"
	".globl bv_slide_end\n"
	"bv_slide_end:\n"
	"	add %rcx, %rax\n"
	"	add %rdx, %rax\n"
	"	add %r8, %rax\n"
	"	ret\n");
extern const unsigned char bv_slide_start[], bv_slide_end[];

int main(int argc, char **argv)
{
	wl_prog = "bv_l1i";
	uint64_t size = 0;
	long long passes = 0;
	WL_OPTS(argc, argv) {
		if (WL_IS("--size")) size = wl_size("--size", WL_VAL);
		else if (WL_IS("--passes")) passes = wl_int("--passes", WL_VAL, 0, 1LL << 40);
		else WL_BAD();
	}
	if (size == 0)
		wl_die("--size is required, e.g. --size 32KiB");
	if (size % 64 || size > SLIDE_BYTES)
		wl_die("--size must be a multiple of 64 B and at most %dKiB, not %" PRIu64 " B",
		       SLIDE_BYTES / 1024, size);
	if ((size_t)(bv_slide_end - bv_slide_start) != SLIDE_BYTES)
		wl_fail("slide is %zu bytes, expected %d (assembler changed encodings)",
			(size_t)(bv_slide_end - bv_slide_start), SLIDE_BYTES);
	const void *entry = bv_slide_end - size;
	wl_catch_stop();
	uint64_t x = 0;
	long long done = 0;
	double t0 = wl_now();
	while (!wl_stop && (passes == 0 || done < passes)) {
		x = bv_run(x, entry);
		done++;
	}
	double dt = wl_now() - t0;
	printf("passes=%lld\nfootprint_bytes=%" PRIu64 "\n", done, size);
	wl_hex("checksum", x);
	printf("seconds=%.6f\n", dt);
	return 0;
}
