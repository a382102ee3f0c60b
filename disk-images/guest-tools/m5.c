/*
 * m5: issue gem5 "m5 ops" (pseudo-instructions) from the guest on X86.
 *
 * The ops and their two forms (instruction, --addr) are in m5op.h. Only the runner calls
 * this, and only when the backend is gem5.
 *
 * Usage: m5 [--addr] OP [OP ...], each OP one of
 *        exit|resetstats|dumpstats|dumpresetstats|checkpoint|workbegin|workend
 *        readfile                (copies the host file given to gem5's readfile to stdout)
 *        writefile FILE HOSTNAME (copies FILE to HOSTNAME in gem5's output directory)
 *
 * Several ops in one invocation run in order, so that the runner's end (the trace, the
 * artifacts and the report written out, then exit) takes one process instead of one per
 * op: a process costs about a million simulated instructions, a tenth of a second of guest
 * time on Hector's 16.67 MHz cores. The command line is checked whole before any op runs;
 * a writefile that fails is reported and the ops after it still run (the exit above all).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "m5op.h"

/* Bytes per readfile/writefile op: each op is one exit to gem5, and the buffer is touched
 * once so that gem5 finds it mapped when it copies through the page table. */
#define CHUNK (256 * 1024)
static char buf[CHUNK];

static int readfile(void)
{
	uint64_t offset = 0, got;

	memset(buf, 0, sizeof(buf));
	while ((got = m5_op(M5_READFILE, (uintptr_t)buf, sizeof(buf), offset, 0)) > 0) {
		if (fwrite(buf, 1, got, stdout) != got)
			return 1;
		offset += got;
	}
	return fflush(stdout) != 0;
}

/* Copy the guest file FILE to HOST in gem5's output directory (gem5 creates it). */
static int writefile(const char *file, const char *host)
{
	int fd = open(file, O_RDONLY);
	uint64_t offset = 0;
	ssize_t got;

	if (fd < 0) {
		perror(file);
		return 1;
	}
	/* gem5 creates (truncates) the file at offset 0: an empty file gets one empty write. */
	do {
		got = read(fd, buf, sizeof(buf));
		if (got < 0) {
			perror(file);
			close(fd);
			return 1;
		}
		if (got > 0 || offset == 0)
			m5_op(M5_WRITEFILE, (uintptr_t)buf, (uint64_t)got, offset, (uintptr_t)host);
		offset += (uint64_t)got;
	} while (got > 0);
	close(fd);
	return 0;
}

static const struct { const char *name; unsigned int func; } ops[] = {
	{ "exit", M5_EXIT }, { "resetstats", M5_RESETSTATS },
	{ "dumpstats", M5_DUMPSTATS }, { "dumpresetstats", M5_DUMPRESETSTATS },
	{ "checkpoint", M5_CHECKPOINT }, { "workbegin", M5_WORKBEGIN },
	{ "workend", M5_WORKEND },
};

/* The op named @name without arguments, or -1 */
static int find_op(const char *name)
{
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
		if (strcmp(name, ops[k].name) == 0)
			return (int)k;
	return -1;
}

/* How many arguments the op at argv[i] takes, or -1 if it is no op or lacks them */
static int op_arguments(int argc, char **argv, int i)
{
	if (strcmp(argv[i], "writefile") == 0)
		return i + 2 < argc ? 2 : -1;
	if (strcmp(argv[i], "readfile") == 0 || find_op(argv[i]) >= 0)
		return 0;
	return -1;
}

static int usage(const char *bad)
{
	if (bad)
		fprintf(stderr, "m5: unknown op or missing arguments at '%s'\n", bad);
	fprintf(stderr, "usage: m5 [--addr] OP [OP ...]; OP: exit|resetstats|dumpstats|"
		"dumpresetstats|checkpoint|workbegin|workend|readfile|writefile FILE HOSTNAME\n");
	return 2;
}

int main(int argc, char **argv)
{
	int first = 1, i, n, rc = 0;

	if (first < argc && strcmp(argv[first], "--addr") == 0)
		first++;
	if (first == argc)
		return usage(NULL);
	for (i = first; i < argc; i += n + 1) {
		n = op_arguments(argc, argv, i);
		if (n < 0)
			return usage(argv[i]);
	}
	if (first > 1 && m5_use_addr())
		return 2;
	for (i = first; i < argc; i += n + 1) {
		n = op_arguments(argc, argv, i);
		if (strcmp(argv[i], "writefile") == 0) {
			rc |= writefile(argv[i + 1], argv[i + 2]);
			continue;
		}
		if (strcmp(argv[i], "readfile") == 0) {
			rc |= readfile();
			continue;
		}
		unsigned int func = ops[find_op(argv[i])].func;
		/*
		 * gem5's 8250 UART has no FIFO: the tty sends one character per transmit
		 * interrupt. Whatever it still holds when gem5 exits is lost, and a
		 * checkpoint would replay it after every restore. Not a tty (output
		 * redirected): nothing to wait for.
		 */
		if (func == M5_EXIT || func == M5_CHECKPOINT)
			tcdrain(STDOUT_FILENO);
		m5_op(func, 0, 0, 0, 0);
	}
	return rc;
}
