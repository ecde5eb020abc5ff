// SPDX-License-Identifier: MIT
/*
 * load_mem.c - `rtprobe load mem`: streaming copy at a rate in MB/s.
 *
 * The buffer (default 4x the last-level cache of cpu0, so that the copy goes
 * to memory and not to the cache; 32 MiB when sysfs does not say) is split
 * between the workers; each copies 64 KiB chunks from the first half of its
 * share to the second half, round and round, paced to its part of the rate.  MB is 10^6 bytes; the rate
 * counts bytes copied (each byte is read once and written once).
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fmt.h"
#include "load.h"
#include "numtext.h"
#include "opt.h"
#include "rtprobe.h"

#define MEM_CHUNK (64 * 1024)
#define MEM_FALLBACK_BUFFER (32ULL * 1024 * 1024)
#define MEM_TOUCH_SLICE ((size_t)64 * 1024 * 1024)
#define MEM_CACHE_DIR "/sys/devices/system/cpu/cpu0/cache"

enum { MEM_BYTES, MEM_CHUNKS };

static const char *const mem_counters[] = { "bytes", "chunks", NULL };

static const struct opt_desc mem_options[] = {
	{ .name = "workers", .id = LOPT_WORKERS, .type = OPT_INTEGER,
	  .help = HELP_LOAD_MEM_WORKERS },
	{ .name = "buffer", .id = LOPT_BUFFER, .type = OPT_SIZE,
	  .help = HELP_LOAD_MEM_BUFFER },
	{ .name = NULL },
};

/* One copying worker and its share of the buffer. */
struct mem_worker {
	struct load_run *run;
	int cpu;
	unsigned char *src;
	unsigned char *dst;
	size_t half;                /* bytes in each half, multiple of MEM_CHUNK */
};

/* The mem kind's state. */
struct mem_state {
	unsigned char *buffer;
	size_t buffer_bytes;
	uint64_t llc_bytes;
	bool llc_found;
	struct mem_worker *worker;
};

/* Print the mem kind's example. */
static void mem_usage(FILE *f)
{
	fmt_fprintf(f,
		    "Example: rtprobe load mem --rate 200 --cpus 1 --duration 10s\n");
}

/* Parse the mem kind's options. */
static void mem_handle(struct load_cfg *cfg, int id, const char *arg)
{
	if (id == LOPT_BUFFER) {
		cfg->buffer_bytes = opt_size("--buffer", arg);
		if (cfg->buffer_bytes < 2 * MEM_CHUNK ||
		    cfg->buffer_bytes > (1ULL << 40))
			opt_fail("--buffer", arg, "must be 128K..1T");
		cfg->buffer_given = true;
	}
}

/* Read the size of the largest data/unified cache level of cpu0 from sysfs. */
static bool mem_read_llc(uint64_t *bytes)
{
	char path[512], text[64], err[128];
	struct dirent *e;
	int level, best_level = 0;
	long long value;
	uint64_t size;
	FILE *f;
	DIR *d = opendir(MEM_CACHE_DIR);

	if (!d)
		return false;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "index", 5))
			continue;
		fmt_snprintf(path, sizeof(path), MEM_CACHE_DIR "/%s/type",
			     e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(text, sizeof(text), f))
			text[0] = 0;
		fclose(f);
		if (!strncmp(text, "Instruction", 11))
			continue;
		fmt_snprintf(path, sizeof(path), MEM_CACHE_DIR "/%s/level",
			     e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(text, sizeof(text), f) ||
		    !numtext_leading_ll(text, &value))
			value = 0;
		level = (int)value;
		fclose(f);
		fmt_snprintf(path, sizeof(path), MEM_CACHE_DIR "/%s/size",
			     e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		/* sysfs writes sizes like "32768K" */
		if (!fgets(text, sizeof(text), f) ||
		    opt_size_try(strtok(text, "\n"), &size, err,
				 sizeof(err))) {
			fclose(f);
			continue;
		}
		fclose(f);
		if (level > best_level) {
			best_level = level;
			*bytes = size;
		}
	}
	closedir(d);
	return best_level > 0;
}

/* Defaults: one worker per CPU. */
static void mem_finish(struct load_cfg *cfg)
{
	if (!cfg->workers)
		cfg->workers = cfg->ncpus;
	if (cfg->buffer_given &&
	    cfg->buffer_bytes / (uint64_t)cfg->workers < 2 * MEM_CHUNK) {
		fmt_fprintf(stderr, "rtprobe: --buffer: %d workers need at least "
				"%d KiB\n", cfg->workers,
			    cfg->workers * 2 * MEM_CHUNK / 1024);
		exit(RTP_EXIT_USAGE);
	}
}

/* Copy chunks at the worker's share of the rate until stop is raised. */
static void *mem_worker_main(void *arg)
{
	struct mem_worker *w = arg;
	struct load_run *r = w->run;
	struct load_pacer pacer;
	double rate = r->cfg.rate_max ? 0 :
		r->cfg.rate * 1e6 / MEM_CHUNK / r->cfg.workers;
	size_t offset = 0;
	uint64_t n, i;

	load_pacer_init(&pacer, rate, 16);
	while ((n = load_pacer_next(&pacer, r->shared))) {
		for (i = 0; i < n; i++) {
			memcpy(w->dst + offset, w->src + offset, MEM_CHUNK);
			offset += MEM_CHUNK;
			if (offset >= w->half)
				offset = 0;
		}
		load_pacer_done(&pacer, n);
		load_count(r->shared, MEM_BYTES, n * MEM_CHUNK);
		load_count(r->shared, MEM_CHUNKS, n);
	}
	return NULL;
}

size_t load_mem_buffer_bytes(bool given, uint64_t given_bytes, bool llc_found,
			     uint64_t llc_bytes, int workers)
{
	uint64_t bytes, least = (uint64_t)workers * 2 * MEM_CHUNK;

	if (given)
		return (size_t)given_bytes;
	bytes = llc_found ? 4 * llc_bytes : MEM_FALLBACK_BUFFER;
	/* a tiny last-level cache (2 KiB on an emulated 4Kc): still 2 chunks each */
	return (size_t)(bytes < least ? least : bytes);
}

/* Map and touch the buffer, split it between the workers. */
static int mem_prepare(struct load_run *r, char *err, size_t errlen)
{
	struct mem_state *st = calloc(1, sizeof(*st));
	size_t share, half, off;
	int i;

	if (!st) {
		fmt_snprintf(err, errlen, "out of memory");
		return RTP_EXIT_ENV;
	}
	r->state = st;
	load_workers_init(&r->workers, false);
	st->llc_found = mem_read_llc(&st->llc_bytes);
	st->buffer_bytes = load_mem_buffer_bytes(r->cfg.buffer_given,
						 r->cfg.buffer_bytes,
						 st->llc_found, st->llc_bytes,
						 r->cfg.workers);
	if (st->buffer_bytes / (size_t)r->cfg.workers < 2 * MEM_CHUNK) {
		fmt_snprintf(err, errlen, "--buffer of %zu bytes is too small for "
			     "%d workers", st->buffer_bytes, r->cfg.workers);
		return RTP_EXIT_USAGE;
	}
	share = st->buffer_bytes / (size_t)r->cfg.workers;
	half = share / 2 / MEM_CHUNK * MEM_CHUNK;
	st->buffer = mmap(NULL, st->buffer_bytes, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (st->buffer == MAP_FAILED) {
		st->buffer = NULL;
		fmt_snprintf(err, errlen, "--buffer: cannot map %zu bytes: %s "
			     "(choose a smaller --buffer)", st->buffer_bytes,
			     strerror(errno));
		return RTP_EXIT_ENV;
	}
	/*
	 * Fault every page in now, so the run copies instead of faulting; in slices,
	 * so that a load stopped while it touches (4 x a large LLC is GiBs) ends at
	 * once: load_wait then finds the signal before any copying starts.
	 */
	for (off = 0; off < st->buffer_bytes; off += MEM_TOUCH_SLICE) {
		if (load_signal_pending())
			break;
		memset(st->buffer + off, 0x5a,
		       st->buffer_bytes - off < MEM_TOUCH_SLICE ?
			       st->buffer_bytes - off : MEM_TOUCH_SLICE);
	}
	st->worker = calloc((size_t)r->cfg.workers, sizeof(*st->worker));
	if (!st->worker) {
		fmt_snprintf(err, errlen, "out of memory");
		return RTP_EXIT_ENV;
	}
	for (i = 0; i < r->cfg.workers; i++) {
		st->worker[i].run = r;
		st->worker[i].cpu = r->cfg.cpu_list[i % r->cfg.ncpus];
		st->worker[i].src = st->buffer + (size_t)i * share;
		st->worker[i].dst = st->worker[i].src + half;
		st->worker[i].half = half;
	}
	return 0;
}

/* Write the mem kind's parameters. */
static void mem_params(struct json *j, const struct load_run *r)
{
	const struct mem_state *st = r->state;

	json_i64(j, "workers", r->cfg.workers);
	json_u64(j, "buffer_bytes", st->buffer_bytes);
	if (st->llc_found)
		json_u64(j, "llc_bytes", st->llc_bytes);
	else
		json_null(j, "llc_bytes");
	json_u64(j, "chunk_bytes", MEM_CHUNK);
}

/* Start one pinned thread per worker. */
static int mem_start(struct load_run *r, char *err, size_t errlen)
{
	struct mem_state *st = r->state;
	int i;

	for (i = 0; i < r->cfg.workers; i++)
		if (load_workers_spawn(&r->workers, mem_worker_main,
				       &st->worker[i], st->worker[i].cpu, err,
				       errlen))
			return RTP_EXIT_ENV;
	return 0;
}

/* Bytes copied per second, in MB/s. */
static double mem_achieved(const struct load_run *r, const uint64_t *delta,
			   double seconds)
{
	(void)r;
	return (double)delta[MEM_BYTES] / 1e6 / seconds;
}

/* Unmap the buffer. */
static void mem_cleanup(struct load_run *r)
{
	struct mem_state *st = r->state;

	if (!st)
		return;
	if (st->buffer)
		munmap(st->buffer, st->buffer_bytes);
	free(st->worker);
	free(st);
	r->state = NULL;
}

const struct load_kind load_kind_mem = {
	.name = "mem",
	.unit = "MB/s",
	.summary = "streaming copy over a buffer of 4x the last-level cache",
	.rate_lo = 1,
	.rate_hi = 1e6,
	.counter_names = mem_counters,
	.options = mem_options,
	.usage = mem_usage,
	.handle = mem_handle,
	.finish = mem_finish,
	.prepare = mem_prepare,
	.params = mem_params,
	.start = mem_start,
	.achieved = mem_achieved,
	.cleanup = mem_cleanup,
};
