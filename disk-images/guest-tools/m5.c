/*
 * m5: issue gem5 "m5 ops" (pseudo-instructions) from the guest on X86.
 *
 * The ops and their two forms (instruction, --addr) are in m5op.h. Only the runner calls
 * this, and only when the backend is gem5.
 *
 * Usage: m5 [--addr] exit|resetstats|dumpstats|dumpresetstats|checkpoint|workbegin|workend
 *        m5 [--addr] readfile   (copies the host file given to gem5's readfile to stdout)
 *        m5 [--addr] writefile FILE HOSTNAME   (copies FILE to HOSTNAME in gem5's output
 *                                               directory)
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

int main(int argc, char **argv)
{
	static const struct { const char *name; unsigned int func; } ops[] = {
		{ "exit", M5_EXIT }, { "resetstats", M5_RESETSTATS },
		{ "dumpstats", M5_DUMPSTATS }, { "dumpresetstats", M5_DUMPRESETSTATS },
		{ "checkpoint", M5_CHECKPOINT }, { "workbegin", M5_WORKBEGIN },
		{ "workend", M5_WORKEND },
	};
	int i = 1;

	if (i < argc && strcmp(argv[i], "--addr") == 0) {
		if (m5_use_addr())
			return 2;
		i++;
	}
	if (i + 3 == argc && strcmp(argv[i], "writefile") == 0)
		return writefile(argv[i + 1], argv[i + 2]);
	if (i + 1 != argc) {
		fprintf(stderr, "usage: m5 [--addr] exit|resetstats|dumpstats|dumpresetstats|"
			"checkpoint|workbegin|workend|readfile\n"
			"       m5 [--addr] writefile FILE HOSTNAME\n");
		return 2;
	}
	if (strcmp(argv[i], "readfile") == 0)
		return readfile();
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		if (strcmp(argv[i], ops[k].name) == 0) {
			/*
			 * gem5's 8250 UART has no FIFO: the tty sends one character per
			 * transmit interrupt. Whatever it still holds when gem5 exits is lost,
			 * and a checkpoint would replay it after every restore. Not a tty
			 * (output redirected): nothing to wait for.
			 */
			if (ops[k].func == M5_EXIT || ops[k].func == M5_CHECKPOINT)
				tcdrain(STDOUT_FILENO);
			m5_op(ops[k].func, 0, 0, 0, 0);
			return 0;
		}
	}
	fprintf(stderr, "m5: unknown op '%s'\n", argv[i]);
	return 2;
}
