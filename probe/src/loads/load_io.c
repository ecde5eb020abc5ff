// SPDX-License-Identifier: MIT
/*
 * load_io.c - `rtprobe load io`: file write + fsync and directory walks.
 *
 * Everything happens inside a new directory DIR/rtprobe-io-XXXXXX that the
 * load creates and removes again on every exit path it controls (end of
 * --duration, SIGINT/SIGTERM, errors); only SIGKILL can leave it behind.
 * A writer thread writes --file-size files in 64 KiB chunks, fsyncs and
 * closes each, and keeps at most IO_KEEP_FILES of them, paced to --rate MB/s
 * (10^6 bytes).  With --walk R a walker thread lists and stats a tree of
 * IO_WALK_DIRS x IO_WALK_FILES empty files at R entries a second.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fmt.h"
#include "load.h"
#include "opt.h"
#include "rtprobe.h"

#define IO_CHUNK (64 * 1024)
#define IO_KEEP_FILES 4
#define IO_WALK_DIRS 8
#define IO_WALK_FILES 64

enum { IO_BYTES, IO_FSYNCS, IO_FILES, IO_WALK_ENTRIES, IO_WALKS };

static const char *const io_counters[] = {
	"bytes_written", "fsyncs", "files", "walk_entries", "walks", NULL,
};

static const struct opt_desc io_options[] = {
	{ .name = "dir", .id = LOPT_DIR, .type = OPT_TEXT, .metavar = "DIR",
	  .help = HELP_LOAD_IO_DIR },
	{ .name = "walk", .id = LOPT_WALK, .type = OPT_NUMBER, .def = "0",
	  .metavar = "R",
	  .help = HELP_LOAD_IO_WALK },
	{ .name = "file-size", .id = LOPT_FILE_SIZE, .type = OPT_SIZE,
	  .def = "1M", .help = HELP_LOAD_IO_FILE_SIZE },
	{ .name = NULL },
};

/* The io kind's state. */
struct io_state {
	char path[PATH_MAX];       /* the unique directory, "" until made */
	int dirfd;
	char *chunk;
};

/* Print the io kind's example. */
static void io_usage(FILE *f)
{
	fmt_fprintf(f,
		    "Example: rtprobe load io --rate 20 --walk 5000 --dir /tmp "
		    "--duration 10s\n");
}

/* Parse the io kind's options. */
static void io_handle(struct load_cfg *cfg, int id, const char *arg)
{
	switch (id) {
	case LOPT_DIR:
		cfg->dir = arg;
		break;
	case LOPT_WALK:
		cfg->walk_rate = opt_double("--walk", arg, 1, 1e8);
		break;
	case LOPT_FILE_SIZE:
		cfg->file_size = opt_size("--file-size", arg);
		if (cfg->file_size < 4096 || cfg->file_size > (1ULL << 30))
			opt_fail("--file-size", arg, "must be 4K..1G");
		break;
	}
}

/* Check --dir and set defaults. */
static void io_finish(struct load_cfg *cfg)
{
	load_require_dir("io", cfg->dir);
	if (!cfg->file_size)
		cfg->file_size = 1024 * 1024;
}

/* Remove the directory entry name under dirfd, recursing into directories. */
static int io_remove(int dirfd, const char *name)
{
	struct dirent *e;
	int fd, rc = 0;
	DIR *d;

	if (!unlinkat(dirfd, name, 0))
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return errno == ENOENT ? 0 : -1;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -1;
	}
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		    io_remove(fd, e->d_name))
			rc = -1;
	closedir(d);
	if (unlinkat(dirfd, name, AT_REMOVEDIR))
		rc = -1;
	return rc;
}

/* Write, fsync and rotate files at the rate until stop. */
static void *io_writer(void *arg)
{
	struct load_run *r = arg;
	struct io_state *st = r->state;
	struct load_shared *sh = r->shared;
	struct load_pacer pacer;
	uint64_t file_no = 0, in_file = 0, n, i;
	char name[32];
	ssize_t w;
	size_t len;
	int fd = -1;

	load_pacer_init(&pacer, r->cfg.rate_max ? 0 :
			r->cfg.rate * 1e6 / IO_CHUNK, 16);
	while ((n = load_pacer_next(&pacer, sh))) {
		for (i = 0; i < n; i++) {
			if (fd < 0) {
				fmt_snprintf(name, sizeof(name), "w%08llu",
					     (unsigned long long)file_no);
				fd = openat(st->dirfd, name,
					    O_WRONLY | O_CREAT | O_TRUNC |
					    O_CLOEXEC, 0600);
				if (fd < 0) {
					load_fail(sh, "create %s/%s: %s",
						  st->path, name,
						  strerror(errno));
					return (void *)1;
				}
				in_file = 0;
			}
			len = r->cfg.file_size - in_file < IO_CHUNK ?
			      (size_t)(r->cfg.file_size - in_file) : IO_CHUNK;
			w = write(fd, st->chunk, len);
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				load_fail(sh, "write %s/w%08llu: %s", st->path,
					  (unsigned long long)file_no,
					  strerror(errno));
				close(fd);
				return (void *)1;
			}
			in_file += (uint64_t)w;
			load_count(sh, IO_BYTES, (uint64_t)w);
			if (in_file < r->cfg.file_size)
				continue;
			if (fsync(fd)) {
				load_fail(sh, "fsync %s/w%08llu: %s", st->path,
					  (unsigned long long)file_no,
					  strerror(errno));
				close(fd);
				return (void *)1;
			}
			close(fd);
			fd = -1;
			load_count(sh, IO_FSYNCS, 1);
			load_count(sh, IO_FILES, 1);
			if (file_no >= IO_KEEP_FILES) {
				fmt_snprintf(name, sizeof(name), "w%08llu",
					     (unsigned long long)(file_no -
							      IO_KEEP_FILES));
				unlinkat(st->dirfd, name, 0);
			}
			file_no++;
		}
		load_pacer_done(&pacer, n);
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* Walk the tree, listing and stat'ing entries at the --walk rate. */
static void *io_walker(void *arg)
{
	struct load_run *r = arg;
	struct io_state *st = r->state;
	struct load_shared *sh = r->shared;
	struct load_pacer pacer;
	struct dirent *e;
	struct stat sb;
	char name[32];
	DIR *d = NULL;
	uint64_t n, batch;
	int dir_no = 0, fd;

	load_pacer_init(&pacer, r->cfg.walk_rate, 64);
	while ((batch = n = load_pacer_next(&pacer, sh))) {
		load_pacer_done(&pacer, batch);
		while (n) {
			if (!d) {
				fmt_snprintf(name, sizeof(name), "t%02d", dir_no);
				fd = openat(st->dirfd, name,
					    O_RDONLY | O_DIRECTORY | O_CLOEXEC);
				d = fd < 0 ? NULL : fdopendir(fd);
				if (!d) {
					load_fail(sh, "walk %s/%s: %s",
						  st->path, name,
						  strerror(errno));
					if (fd >= 0)
						close(fd);
					load_count(sh, IO_WALK_ENTRIES,
						   batch - n);
					return (void *)1;
				}
				n--;
				continue;
			}
			e = readdir(d);
			if (!e) {
				closedir(d);
				d = NULL;
				if (++dir_no == IO_WALK_DIRS) {
					dir_no = 0;
					load_count(sh, IO_WALKS, 1);
				}
				continue;
			}
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW);
			n--;
		}
		load_count(sh, IO_WALK_ENTRIES, batch);
	}
	if (d)
		closedir(d);
	return NULL;
}

/* Create the unique directory and the tree to walk. */
static int io_prepare(struct load_run *r, char *err, size_t errlen)
{
	struct io_state *st = calloc(1, sizeof(*st));
	char name[32];
	int i, k, fd, rc;

	if (!st) {
		fmt_snprintf(err, errlen, "out of memory");
		return RTP_EXIT_ENV;
	}
	st->dirfd = -1;
	r->state = st;
	load_workers_init(&r->workers, false);
	st->chunk = malloc(IO_CHUNK);
	if (!st->chunk) {
		fmt_snprintf(err, errlen, "out of memory");
		return RTP_EXIT_ENV;
	}
	memset(st->chunk, 0xa5, IO_CHUNK);
	rc = load_make_workdir("io", r->cfg.dir, st->path, sizeof(st->path),
			       &st->dirfd, err, errlen);
	if (rc)
		return rc;
	if (!r->cfg.walk_rate)
		return 0;
	for (i = 0; i < IO_WALK_DIRS; i++) {
		fmt_snprintf(name, sizeof(name), "t%02d", i);
		if (mkdirat(st->dirfd, name, 0700)) {
			fmt_snprintf(err, errlen, "mkdir %s/%s: %s", st->path,
				     name, strerror(errno));
			return RTP_EXIT_ENV;
		}
		for (k = 0; k < IO_WALK_FILES; k++) {
			fmt_snprintf(name, sizeof(name), "t%02d/e%03d", i, k);
			fd = openat(st->dirfd, name,
				    O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
				    0600);
			if (fd < 0) {
				fmt_snprintf(err, errlen, "create %s/%s: %s",
					     st->path, name, strerror(errno));
				return RTP_EXIT_ENV;
			}
			close(fd);
		}
	}
	return 0;
}

/* Write the io kind's parameters. */
static void io_params(struct json *j, const struct load_run *r)
{
	const struct io_state *st = r->state;

	json_str(j, "dir", r->cfg.dir);
	json_str(j, "work_dir", st->path);
	json_u64(j, "file_size", r->cfg.file_size);
	json_u64(j, "chunk_bytes", IO_CHUNK);
	json_i64(j, "keep_files", IO_KEEP_FILES);
	if (r->cfg.walk_rate)
		json_double(j, "walk_rate", r->cfg.walk_rate);
	else
		json_null(j, "walk_rate");
	json_i64(j, "walk_entries", r->cfg.walk_rate ?
		 IO_WALK_DIRS * (IO_WALK_FILES + 1) : 0);
}

/* Start the writer and, with --walk, the walker. */
static int io_start(struct load_run *r, char *err, size_t errlen)
{
	if (load_workers_spawn(&r->workers, io_writer, r, -1, err, errlen))
		return RTP_EXIT_ENV;
	if (r->cfg.walk_rate &&
	    load_workers_spawn(&r->workers, io_walker, r, -1, err, errlen))
		return RTP_EXIT_ENV;
	return 0;
}

/* Bytes written (and fsync'ed per file) per second, in MB/s. */
static double io_achieved(const struct load_run *r, const uint64_t *delta,
			  double seconds)
{
	(void)r;
	return (double)delta[IO_BYTES] / 1e6 / seconds;
}

/* The walk rate next to the write rate. */
static void io_result_data(struct json *j, const struct load_run *r,
			   double seconds)
{
	json_begin_object(j, "walk");
	if (r->cfg.walk_rate)
		json_double(j, "target", r->cfg.walk_rate);
	else
		json_null(j, "target");
	json_double(j, "achieved",
		    (double)atomic_load(&r->shared->counter[IO_WALK_ENTRIES]) /
		    seconds);
	json_str(j, "unit", "entries/s");
	json_end_object(j);
}

/* Remove the unique directory and everything in it. */
static void io_cleanup(struct load_run *r)
{
	struct io_state *st = r->state;

	if (!st)
		return;
	if (st->dirfd >= 0)
		close(st->dirfd);
	if (st->path[0] && io_remove(AT_FDCWD, st->path))
		fmt_fprintf(stderr, "rtprobe: load io: could not remove all of "
				"%s: %s (remove it by hand)\n", st->path,
			    strerror(errno));
	free(st->chunk);
	free(st);
	r->state = NULL;
}

const struct load_kind load_kind_io = {
	.name = "io",
	.unit = "MB/s",
	.summary = "file write+fsync and directory walks in --dir",
	.rate_lo = 0.01,
	.rate_hi = 1e5,
	.counter_names = io_counters,
	.options = io_options,
	.usage = io_usage,
	.handle = io_handle,
	.finish = io_finish,
	.prepare = io_prepare,
	.params = io_params,
	.start = io_start,
	.achieved = io_achieved,
	.result_data = io_result_data,
	.cleanup = io_cleanup,
};
