/*
 * m5: issue gem5 "m5 ops" (pseudo-instructions) from the guest on X86.
 *
 * The ops and their two forms (instruction, --addr) are in m5op.h. Only the runner calls
 * this, and only when the backend is gem5.
 *
 * Usage: m5 [--addr] OP [OP ...], each OP one of
 *        exit|resetstats|dumpstats|dumpresetstats|checkpoint|workbegin|workend
 *        writefile FILE HOSTNAME (copies FILE to HOSTNAME in gem5's output directory)
 *        unpack DIR              (unpacks the newc cpio archive given to gem5's readfile
 *                                 under DIR: the run's payload)
 *        unpackfile FILE DIR     (the same from the guest file FILE; no m5 op: QEMU)
 *
 * Several ops in one invocation run in order, so that the runner's end (the trace, the
 * artifacts and the report written out, then exit) takes one process instead of one per
 * op: a process costs about a million simulated instructions, a tenth of a second of guest
 * time on Hector's 16.67 MHz cores. The command line is checked whole before any op runs;
 * a writefile that fails is reported and the ops after it still run (the exit above all).
 *
 * The payload is unpacked here rather than by `m5 readfile | cpio`: one process instead of
 * two, and the archive copied once (into the files) instead of three times (into a pipe,
 * out of it, into the files), with no wake-ups between two CPUs for every pipe buffer. The
 * same unpacker serves both backends (unpackfile on QEMU), so the QEMU tests exercise it.
 * It takes what schedlab/guest/payload.py writes: directories, regular files and symbolic
 * links, owned by root; modification times are not kept (nothing in a run reads them).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "m5op.h"

/* Bytes per readfile/writefile op: each op is one exit to gem5, and the buffer is touched
 * once so that gem5 finds it mapped when it copies through the page table. */
#define CHUNK (256 * 1024)
static char buf[CHUNK];

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

/* --- unpack: the run's payload, a newc cpio archive --------------------------------------- */

/* Where the archive comes from: gem5's readfile (fd < 0) or a guest file. */
static struct {
	int fd;
	uint64_t offset;	/* readfile: the next byte to ask gem5 for */
	uint64_t taken;		/* bytes of the archive consumed */
	size_t have, used;	/* bytes in buf, bytes of them consumed */
} archive = { .fd = -1 };

static int refill(void)
{
	ssize_t got;

	if (archive.fd >= 0) {
		got = read(archive.fd, buf, sizeof(buf));
	} else {
		got = (ssize_t)m5_op(M5_READFILE, (uintptr_t)buf, sizeof(buf), archive.offset, 0);
		archive.offset += (uint64_t)(got > 0 ? got : 0);
	}
	if (got <= 0)
		return -1;
	archive.have = (size_t)got;
	archive.used = 0;
	return 0;
}

/* Take the next @n bytes of the archive: into @dst, else to @fd, else nowhere (padding). */
static int take(uint64_t n, char *dst, int fd)
{
	while (n > 0) {
		size_t k;

		if (archive.used == archive.have && refill() < 0) {
			fprintf(stderr, "m5: unpack: the archive ends in the middle of an entry\n");
			return -1;
		}
		k = archive.have - archive.used;
		if (k > n)
			k = (size_t)n;
		if (dst) {
			memcpy(dst, buf + archive.used, k);
			dst += k;
		} else if (fd >= 0) {
			for (size_t done = 0; done < k;) {
				ssize_t w = write(fd, buf + archive.used + done, k - done);

				if (w < 0) {
					perror("m5: unpack: write");
					return -1;
				}
				done += (size_t)w;
			}
		}
		archive.used += k;
		archive.taken += k;
		n -= k;
	}
	return 0;
}

/* Entries are aligned to 4 bytes: the padding after @length bytes. */
static uint64_t pad4(uint64_t length)
{
	return (4 - length % 4) % 4;
}

/* newc header: the magic "070701", then 13 fields of 8 hex digits. */
#define NEWC_HEADER 110
enum { F_INO, F_MODE, F_UID, F_GID, F_NLINK, F_MTIME, F_FILESIZE, F_DEVMAJOR, F_DEVMINOR,
	F_RDEVMAJOR, F_RDEVMINOR, F_NAMESIZE, F_CHECK, F_COUNT };

static int parse_header(const char *h, uint64_t *field)
{
	if (memcmp(h, "070701", 6) != 0)
		return -1;
	for (int f = 0; f < F_COUNT; f++) {
		uint64_t v = 0;

		for (int d = 0; d < 8; d++) {
			char c = h[6 + 8 * f + d];

			if (c >= '0' && c <= '9')
				v = v * 16 + (uint64_t)(c - '0');
			else if (c >= 'a' && c <= 'f')
				v = v * 16 + (uint64_t)(c - 'a' + 10);
			else if (c >= 'A' && c <= 'F')
				v = v * 16 + (uint64_t)(c - 'A' + 10);
			else
				return -1;
		}
		field[f] = v;
	}
	return 0;
}

/* One entry at @path: what its header's mode says, its data taken from the archive. */
static int unpack_entry(const char *path, uint64_t mode, uint64_t size)
{
	mode_t perm = (mode_t)(mode & 07777);
	char target[PATH_MAX];
	int fd, rc;

	switch (mode & S_IFMT) {
	case S_IFDIR:
		if (mkdir(path, perm) < 0 && errno != EEXIST)
			break;
		return chmod(path, perm) < 0 ? -1 : take(size, NULL, -1);
	case S_IFREG:
		/* Replace what is there (cpio -u), with the archive's mode whatever the umask. */
		unlink(path);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
		if (fd < 0)
			break;
		rc = take(size, NULL, fd);
		if (rc == 0 && fchmod(fd, perm) < 0)
			rc = -1;
		return close(fd) < 0 ? -1 : rc;
	case S_IFLNK:
		if (size >= sizeof(target) || take(size, target, -1) < 0)
			break;
		target[size] = '\0';
		unlink(path);
		if (symlink(target, path) == 0)
			return 0;
		break;
	default:
		fprintf(stderr, "m5: unpack: %s: entries of mode %llo are not supported\n", path,
			(unsigned long long)mode);
		return -1;
	}
	perror(path);
	return -1;
}

/* Unpack the archive (archive.fd, or gem5's readfile) under @dir. */
static int unpack(const char *dir)
{
	char header[NEWC_HEADER], name[PATH_MAX], path[PATH_MAX];
	uint64_t field[F_COUNT];

	if (archive.fd < 0)
		memset(buf, 0, sizeof(buf));	/* mapped before gem5 copies into it */
	for (;;) {
		if (take(NEWC_HEADER, header, -1) < 0)
			return 1;
		if (parse_header(header, field) < 0) {
			fprintf(stderr, "m5: unpack: not a newc cpio header at archive byte %llu\n",
				(unsigned long long)(archive.taken - NEWC_HEADER));
			return 1;
		}
		if (field[F_NAMESIZE] == 0 || field[F_NAMESIZE] > sizeof(name)) {
			fprintf(stderr, "m5: unpack: an entry's name size is %llu\n",
				(unsigned long long)field[F_NAMESIZE]);
			return 1;
		}
		if (take(field[F_NAMESIZE], name, -1) < 0 ||
		    take(pad4(NEWC_HEADER + field[F_NAMESIZE]), NULL, -1) < 0)
			return 1;
		name[field[F_NAMESIZE] - 1] = '\0';
		if (strcmp(name, "TRAILER!!!") == 0)
			return 0;
		if (snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") ? dir : "", name) >=
		    (int)sizeof(path)) {
			fprintf(stderr, "m5: unpack: %s: name too long\n", name);
			return 1;
		}
		if (unpack_entry(path, field[F_MODE], field[F_FILESIZE]) < 0 ||
		    take(pad4(field[F_FILESIZE]), NULL, -1) < 0)
			return 1;
	}
}

static int unpack_file(const char *file, const char *dir)
{
	int rc;

	archive.fd = open(file, O_RDONLY);
	if (archive.fd < 0) {
		perror(file);
		return 1;
	}
	rc = unpack(dir);
	close(archive.fd);
	return rc;
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
	if (strcmp(argv[i], "writefile") == 0 || strcmp(argv[i], "unpackfile") == 0)
		return i + 2 < argc ? 2 : -1;
	if (strcmp(argv[i], "unpack") == 0)
		return i + 1 < argc ? 1 : -1;
	if (find_op(argv[i]) >= 0)
		return 0;
	return -1;
}

static int usage(const char *bad)
{
	if (bad)
		fprintf(stderr, "m5: unknown op or missing arguments at '%s'\n", bad);
	fprintf(stderr, "usage: m5 [--addr] OP [OP ...]; OP: exit|resetstats|dumpstats|"
		"dumpresetstats|checkpoint|workbegin|workend|writefile FILE HOSTNAME|"
		"unpack DIR|unpackfile FILE DIR\n");
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
		if (strcmp(argv[i], "unpack") == 0) {
			rc |= unpack(argv[i + 1]);
			continue;
		}
		if (strcmp(argv[i], "unpackfile") == 0) {
			rc |= unpack_file(argv[i + 1], argv[i + 2]);
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
