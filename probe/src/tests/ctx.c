// SPDX-License-Identifier: MIT
/*
 * ctx.c - context-switch time through a ring of pipes (lmbench lat_ctx
 * semantics, docs/definitions.md).
 *
 * N processes are connected in a ring of pipes.  A token goes round: each
 * process reads it, sums its own private working set of S KiB, and writes it
 * to the next.  The time per hop is therefore one context switch plus the
 * pipe read and write plus the working-set sum.  The same pipe I/O and sum
 * done by one process writing to and reading from its own pipe (no switch)
 * is measured separately as the overhead; per-switch time = median time per
 * hop - overhead.  Every (size, processes) cell is measured --repetitions
 * times; the cell's value is the median of the repetitions.
 *
 * All measuring happens in forked processes; the worker thread only forks,
 * collects the timings from a result pipe and reaps.  The ring and overhead
 * processes take the worker's policy and priority (fork copies them) and,
 * with --cpus, are confined to those CPUs (--cpus 0: everything on one CPU,
 * as lmbench measured on uniprocessor boards).
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clocksleep.h"
#include "common.h"
#include "fdio.h"
#include "fmt.h"
#include "json.h"
#include "opt.h"
#include "rtprobe.h"
#include "run.h"
#include "sim.h"
#include "sort.h"
#include "testdesc.h"

#define CTX_MAX_LIST 32
#define CTX_MAX_PROCESSES 512
#define CTX_MAX_SIZE_KIB (64u * 1024u)
#define CTX_MAX_REPETITIONS 1000
#define CTX_DEFAULT_HOPS 3000

/* Token values passed round the ring. */
#define CTX_TOKEN_RUN 1
#define CTX_TOKEN_STOP 2

/* Exit codes of the measuring children (reported by the worker). */
#define CTX_CHILD_IO 10
#define CTX_CHILD_MEM 11
#define CTX_CHILD_AFFINITY 12

struct ctx_config {
	unsigned int processes[CTX_MAX_LIST];
	int nprocesses;
	unsigned int sizes_kib[CTX_MAX_LIST];
	int nsizes;
	unsigned int repetitions;
	uint64_t hops;           /* hops per repetition (rounded up to N) */
	uint64_t max_switch_ns;  /* 0: no criterion */
};

struct ctx_cell {
	unsigned int size_kib;
	unsigned int processes;
	uint64_t hops;            /* hops timed per repetition */
	uint64_t overhead_ns;
	int64_t per_switch_ns;    /* median of rep_ns */
	int64_t *rep_ns;          /* per-switch time of each repetition */
	bool measured;
	bool flagged;             /* per-switch <= 0: not a usable number */
};

struct ctx_overhead {
	uint64_t overhead_ns;     /* median */
	uint64_t *rep_ns;
	bool measured;
};

struct ctx_test {
	struct ctx_config cfg;
	const struct rtp_common *common;
	struct run *run;
	struct ctx_cell *cells;        /* nsizes x nprocesses, size-major */
	struct ctx_overhead *overheads; /* one per size */
	char error[200];
};

/* Parse a comma list of integers in [min, max] into out; exits 2 on error. */
static int ctx_parse_list(const char *option, const char *text,
			  unsigned int min, unsigned int max,
			  unsigned int *out, int cap)
{
	char buf[256], err[128], *tok, *save = NULL;
	uint64_t v;
	int n = 0;

	if (strlen(text) >= sizeof(buf))
		opt_fail(option, text, "list too long");
	strcpy(buf, text);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (n == cap)
			opt_fail(option, text, "at most %d entries", cap);
		if (opt_u64_try(tok, min, max, &v, err, sizeof(err)))
			opt_fail(option, text, "'%s': %s", tok, err);
		out[n++] = (unsigned int)v;
	}
	if (!n)
		opt_fail(option, text, "empty list; give e.g. 2,4,8");
	return n;
}

/* Sort helper for uint64_t. */
static int ctx_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Median of n values (the lower middle one for even n); sorts a copy. */
static uint64_t ctx_median(const uint64_t *v, unsigned int n)
{
	uint64_t tmp[CTX_MAX_REPETITIONS];

	memcpy(tmp, v, n * sizeof(*v));
	sort_heap(tmp, n, sizeof(*tmp), ctx_cmp_u64);
	return tmp[(n - 1) / 2];
}

/*
 * Idle between repetitions for an eighth of the repetition (+1 ms): a ring
 * of RT processes is 100 % busy while it runs, and the kernel's RT
 * throttling (95 %) would otherwise stall it for 50 ms in a repetition.
 */
static void ctx_pause(clockid_t clock, uint64_t busy_ns)
{
	uint64_t ns = busy_ns / 8 + NSEC_PER_MSEC;
	struct timespec ts = {
		.tv_sec = (time_t)(ns / NSEC_PER_SEC),
		.tv_nsec = (long)(ns % NSEC_PER_SEC),
	};

	while (clock_nanosleep(clock, 0, &ts, &ts) == EINTR)
		;
}

/*
 * Sum the working set word by word.  The empty asm consumes the sum so the
 * compiler cannot drop the loads.
 */
static void ctx_touch(const unsigned long *ws, size_t words)
{
	unsigned long sum = 0;
	size_t i;

	for (i = 0; i < words; i++)
		sum += ws[i];
	__asm__ volatile("" : : "r"(sum));
}

/* Child set-up: die with the worker, confine to --cpus, map the working set. */
static unsigned long *ctx_child_setup(const struct ctx_test *t,
				      unsigned int size_kib)
{
	unsigned long *ws;
	size_t bytes = (size_t)size_kib * 1024;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (t->common->cpus_given &&
	    sched_setaffinity(0, sizeof(t->common->cpus), &t->common->cpus))
		_exit(CTX_CHILD_AFFINITY);
	if (!bytes)
		return NULL;
	ws = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ws == MAP_FAILED)
		_exit(CTX_CHILD_MEM);
	memset(ws, 1, bytes); /* private pages, really present */
	return ws;
}

/*
 * Overhead child: the work of one hop without the switch, timed over
 * `hops` iterations per repetition; each repetition's ns per hop goes to
 * result_fd.
 */
static __attribute__((noreturn)) void
ctx_overhead_child(const struct ctx_test *t, unsigned int size_kib,
		   int result_fd)
{
	unsigned long *ws = ctx_child_setup(t, size_kib);
	size_t words = (size_t)size_kib * 1024 / sizeof(long);
	clockid_t clock = t->common->clock;
	uint64_t i, t1, elapsed, per_hop;
	unsigned int rep;
	int p[2], tok = CTX_TOKEN_RUN;

	if (pipe(p))
		_exit(CTX_CHILD_IO);
	for (rep = 0; rep <= t->cfg.repetitions; rep++) {
		/* rep 0 is a warm-up pass, not reported */
		t1 = clock_now_ns(clock);
		for (i = 0; i < t->cfg.hops; i++) {
			if (fdio_write_full(p[1], &tok, sizeof(tok)) ||
			    fdio_read_full(p[0], &tok, sizeof(tok)) != sizeof(tok))
				_exit(CTX_CHILD_IO);
			ctx_touch(ws, words);
		}
		elapsed = clock_now_ns(clock) - t1;
		per_hop = elapsed / t->cfg.hops;
		if (rep && fdio_write_full(result_fd, &per_hop, sizeof(per_hop)))
			_exit(CTX_CHILD_IO);
		ctx_pause(clock, elapsed);
	}
	_exit(0);
}

/*
 * Ring member `index` of n: read the token from in, sum, pass it to out.
 * Member 0 starts the token and times `rounds` circuits per repetition,
 * writing ns per hop to result_fd; then sends the stop token round.
 */
static __attribute__((noreturn)) void
ctx_ring_child(const struct ctx_test *t, unsigned int size_kib,
	       unsigned int index, unsigned int n, int in, int out,
	       int result_fd, uint64_t rounds)
{
	unsigned long *ws = ctx_child_setup(t, size_kib);
	size_t words = (size_t)size_kib * 1024 / sizeof(long);
	clockid_t clock = t->common->clock;
	uint64_t r, t1, elapsed, per_hop;
	unsigned int rep;
	int tok = CTX_TOKEN_RUN;

	if (index) {
		for (;;) {
			if (fdio_read_full(in, &tok, sizeof(tok)) != sizeof(tok))
				_exit(CTX_CHILD_IO);
			ctx_touch(ws, words);
			if (fdio_write_full(out, &tok, sizeof(tok)))
				_exit(CTX_CHILD_IO);
			if (tok == CTX_TOKEN_STOP)
				_exit(0);
		}
	}
	for (rep = 0; rep <= t->cfg.repetitions; rep++) {
		/* rep 0 warms every member's cache and page tables */
		t1 = clock_now_ns(clock);
		for (r = 0; r < (rep ? rounds : 1); r++) {
			if (fdio_write_full(out, &tok, sizeof(tok)) ||
			    fdio_read_full(in, &tok, sizeof(tok)) != sizeof(tok))
				_exit(CTX_CHILD_IO);
			ctx_touch(ws, words);
		}
		elapsed = clock_now_ns(clock) - t1;
		per_hop = elapsed / (rounds * n);
		if (rep && fdio_write_full(result_fd, &per_hop, sizeof(per_hop)))
			_exit(CTX_CHILD_IO);
		ctx_pause(clock, elapsed);
	}
	tok = CTX_TOKEN_STOP;
	if (fdio_write_full(out, &tok, sizeof(tok)) ||
	    fdio_read_full(in, &tok, sizeof(tok)) != sizeof(tok))
		_exit(CTX_CHILD_IO);
	_exit(0);
}

/* Close every descriptor of npipes pipes except keep_a and keep_b. */
static void ctx_close_pipes(int (*pipes)[2], unsigned int npipes, int keep_a,
			    int keep_b)
{
	unsigned int i, k;

	for (i = 0; i < npipes; i++)
		for (k = 0; k < 2; k++)
			if (pipes[i][k] >= 0 && pipes[i][k] != keep_a &&
			    pipes[i][k] != keep_b)
				close(pipes[i][k]);
}

/* Describe a child's wait status in err; returns true if it failed. */
static bool ctx_child_failed(pid_t pid, int status, char *err, size_t errlen)
{
	static const char *const what[] = {
		[CTX_CHILD_IO] = "pipe read/write failed",
		[CTX_CHILD_MEM] = "cannot map its working set (mmap)",
		[CTX_CHILD_AFFINITY] = "cannot apply --cpus (sched_setaffinity)",
	};
	int code;

	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return false;
	if (WIFEXITED(status)) {
		code = WEXITSTATUS(status);
		fmt_snprintf(err, errlen, "ctx: measuring process %d: %s", (int)pid,
			     code >= CTX_CHILD_IO && code <= CTX_CHILD_AFFINITY ?
			     what[code] : "failed");
	} else {
		fmt_snprintf(err, errlen, "ctx: measuring process %d killed by signal %d",
			     (int)pid, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	}
	return true;
}

/*
 * Fork n ring members (n = 1: the overhead process), collect one ns-per-hop
 * value per repetition into out, reap.  Returns 0, 1 on stop request, -1 on
 * error (t->error set).
 */
static int ctx_measure(struct ctx_test *t, unsigned int size_kib,
		       unsigned int n, uint64_t *out)
{
	int (*pipes)[2];
	int result[2] = { -1, -1 };
	pid_t pids[CTX_MAX_PROCESSES];
	unsigned int i, started = 0, got = 0;
	uint64_t rounds = (t->cfg.hops + n - 1) / n;
	int rc = 0, status;
	bool killed = false;

	pipes = calloc(n, sizeof(*pipes));
	if (!pipes) {
		fmt_snprintf(t->error, sizeof(t->error), "ctx: out of memory");
		return -1;
	}
	for (i = 0; i < n; i++)
		pipes[i][0] = pipes[i][1] = -1;
	if (pipe(result)) {
		fmt_snprintf(t->error, sizeof(t->error), "ctx: pipe: %s",
			     strerror(errno));
		free(pipes);
		return -1;
	}
	for (i = 0; n > 1 && i < n; i++) {
		if (pipe(pipes[i])) {
			fmt_snprintf(t->error, sizeof(t->error),
				     "ctx: pipe for %u processes: %s (raise "
				     "ulimit -n or lower --processes)", n,
				     strerror(errno));
			rc = -1;
			goto out;
		}
	}
	for (i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			fmt_snprintf(t->error, sizeof(t->error),
				     "ctx: fork of ring process %u of %u: %s", i, n,
				     strerror(errno));
			rc = -1;
			goto out;
		}
		if (pids[i] == 0) {
			close(result[0]);
			if (n == 1)
				ctx_overhead_child(t, size_kib, result[1]);
			ctx_close_pipes(pipes, n, pipes[i][0],
					pipes[(i + 1) % n][1]);
			if (i)
				close(result[1]);
			ctx_ring_child(t, size_kib, i, n, pipes[i][0],
				       pipes[(i + 1) % n][1], result[1], rounds);
		}
		started++;
	}
	ctx_close_pipes(pipes, n, -1, -1);
	for (i = 0; i < n; i++)
		pipes[i][0] = pipes[i][1] = -1;
	close(result[1]);
	result[1] = -1;
	while (got < t->cfg.repetitions) {
		if (fdio_read_full(result[0], &out[got], sizeof(*out)) !=
		    sizeof(*out))
			break;
		got++;
		if (run_stopping(t->run)) {
			rc = 1;
			break;
		}
	}
out:
	if (rc || got < t->cfg.repetitions) {
		for (i = 0; i < started; i++)
			kill(pids[i], SIGKILL);
		killed = true;
	}
	for (i = 0; i < started; i++) {
		while (waitpid(pids[i], &status, 0) < 0 && errno == EINTR)
			;
		if (!killed && !rc &&
		    ctx_child_failed(pids[i], status, t->error,
				     sizeof(t->error)))
			rc = -1;
	}
	if (!rc && got < t->cfg.repetitions) {
		if (!t->error[0])
			fmt_snprintf(t->error, sizeof(t->error),
				     "ctx: ring of %u processes ended early", n);
		rc = -1;
	}
	ctx_close_pipes(pipes, n, -1, -1);
	if (result[0] >= 0)
		close(result[0]);
	if (result[1] >= 0)
		close(result[1]);
	free(pipes);
	return rc;
}

/* Print one cell's line of the lmbench table. */
static void ctx_print_cell(const struct ctx_cell *cell)
{
	fmt_fprintf(stderr, "%u %.2f%s\n", cell->processes,
		    (double)cell->per_switch_ns / 1000.0,
		    cell->flagged ? "  (flagged: <= 0, noise exceeds a switch; "
				"raise --hops)" : "");
}

/* Fill a cell from its repetitions' ns-per-hop values. */
static void ctx_fill_cell(struct ctx_cell *cell, const uint64_t *hop_ns,
			  unsigned int reps, uint64_t overhead_ns)
{
	uint64_t med = ctx_median(hop_ns, reps);
	unsigned int k;

	cell->overhead_ns = overhead_ns;
	for (k = 0; k < reps; k++)
		cell->rep_ns[k] = (int64_t)hop_ns[k] - (int64_t)overhead_ns;
	cell->per_switch_ns = (int64_t)med - (int64_t)overhead_ns;
	cell->flagged = cell->per_switch_ns <= 0;
	cell->measured = true;
}

/* Worker thread: measure every size's overhead and cells, print the table. */
static void *ctx_worker(void *arg)
{
	struct ctx_test *t = arg;
	const struct ctx_config *cfg = &t->cfg;
	uint64_t hop_ns[CTX_MAX_REPETITIONS];
	struct sim_stream sim;
	unsigned int k;
	int s, p, rc;

	if (SIMULATED(t->common->simulate))
		sim_stream_init(&sim, &t->common->sim, 0);
	for (s = 0; s < cfg->nsizes; s++) {
		struct ctx_overhead *ov = &t->overheads[s];

		if (run_stopping(t->run))
			return NULL;
		if (SIMULATED(t->common->simulate)) {
			ov->rep_ns[0] = sim_next_ns(&sim);
			for (k = 1; k < cfg->repetitions; k++)
				ov->rep_ns[k] = ov->rep_ns[0];
		} else {
			rc = ctx_measure(t, cfg->sizes_kib[s], 1, ov->rep_ns);
			if (rc)
				goto stop;
		}
		ov->overhead_ns = ctx_median(ov->rep_ns, cfg->repetitions);
		ov->measured = true;
		fmt_fprintf(stderr, "\n\"size=%uk ovr=%.2f\n", cfg->sizes_kib[s],
			    (double)ov->overhead_ns / 1000.0);
		for (p = 0; p < cfg->nprocesses; p++) {
			struct ctx_cell *cell =
				&t->cells[s * cfg->nprocesses + p];

			if (run_stopping(t->run))
				return NULL;
			if (SIMULATED(t->common->simulate)) {
				for (k = 0; k < cfg->repetitions; k++)
					hop_ns[k] = ov->overhead_ns +
						    sim_next_ns(&sim);
			} else {
				rc = ctx_measure(t, cell->size_kib,
						 cell->processes, hop_ns);
				if (rc)
					goto stop;
			}
			ctx_fill_cell(cell, hop_ns, cfg->repetitions,
				      ov->overhead_ns);
			ctx_print_cell(cell);
		}
	}
	return NULL;
stop:
	if (rc < 0) {
		fmt_fprintf(stderr, "rtprobe: %s\n", t->error);
		run_request_stop(t->run, "error"); /* status error, exit 3 */
	}
	return NULL;
}

/* Write the start record's params. */
static void ctx_write_params(struct json *j, void *arg)
{
	const struct ctx_test *t = arg;
	int i;

	json_begin_array(j, "processes");
	for (i = 0; i < t->cfg.nprocesses; i++)
		json_u64(j, NULL, t->cfg.processes[i]);
	json_end_array(j);
	json_begin_array(j, "sizes_kib");
	for (i = 0; i < t->cfg.nsizes; i++)
		json_u64(j, NULL, t->cfg.sizes_kib[i]);
	json_end_array(j);
	json_u64(j, "repetitions", t->cfg.repetitions);
	json_u64(j, "hops", t->cfg.hops);
	if (t->cfg.max_switch_ns)
		json_u64(j, "max_switch_ns", t->cfg.max_switch_ns);
	else
		json_null(j, "max_switch_ns");
	json_bool(j, "pinned", t->common->cpus_given);
}

/* Write the result record's data: every overhead and every cell. */
static void ctx_write_data(struct json *j, void *arg)
{
	const struct ctx_test *t = arg;
	const struct ctx_config *cfg = &t->cfg;
	unsigned int k;
	int s, i;

	json_str(j, "unit", "ns");
	json_begin_array(j, "overheads");
	for (s = 0; s < cfg->nsizes; s++) {
		const struct ctx_overhead *ov = &t->overheads[s];

		if (!ov->measured)
			continue;
		json_begin_object(j, NULL);
		json_u64(j, "size_kib", cfg->sizes_kib[s]);
		json_u64(j, "overhead_ns", ov->overhead_ns);
		json_begin_array(j, "repetitions");
		for (k = 0; k < cfg->repetitions; k++)
			json_u64(j, NULL, ov->rep_ns[k]);
		json_end_array(j);
		json_end_object(j);
	}
	json_end_array(j);
	json_begin_array(j, "cells");
	for (i = 0; i < cfg->nsizes * cfg->nprocesses; i++) {
		const struct ctx_cell *cell = &t->cells[i];

		if (!cell->measured)
			continue;
		json_begin_object(j, NULL);
		json_u64(j, "size_kib", cell->size_kib);
		json_u64(j, "processes", cell->processes);
		json_i64(j, "per_switch_ns", cell->per_switch_ns);
		json_u64(j, "overhead_ns", cell->overhead_ns);
		json_u64(j, "hops", cell->hops);
		json_bool(j, "flagged", cell->flagged);
		json_begin_array(j, "repetitions");
		for (k = 0; k < cfg->repetitions; k++)
			json_i64(j, NULL, cell->rep_ns[k]);
		json_end_array(j);
		json_end_object(j);
	}
	json_end_array(j);
}

/* Verdicts: every cell positive; optionally every cell <= --max-switch. */
static void ctx_verdicts(struct run *r, void *arg)
{
	const struct ctx_test *t = arg;
	const struct ctx_config *cfg = &t->cfg;
	int i, flagged = 0, over = 0, measured = 0;
	int64_t worst = 0;
	char name[64], detail[160];

	for (i = 0; i < cfg->nsizes * cfg->nprocesses; i++) {
		const struct ctx_cell *cell = &t->cells[i];

		if (!cell->measured)
			continue;
		measured++;
		flagged += cell->flagged;
		if (cell->per_switch_ns > worst)
			worst = cell->per_switch_ns;
		if (cfg->max_switch_ns &&
		    cell->per_switch_ns > (int64_t)cfg->max_switch_ns)
			over++;
	}
	if (t->error[0]) {
		run_add_verdict(r, "all cells measured", false, t->error);
		return;
	}
	fmt_snprintf(detail, sizeof(detail),
		     "%d of %d cells with per-switch <= 0 (raise --hops if any)",
		     flagged, measured);
	run_add_verdict(r, "per-switch time positive", flagged == 0, detail);
	if (!cfg->max_switch_ns)
		return;
	fmt_snprintf(name, sizeof(name), "per-switch <= %.3fus",
		     (double)cfg->max_switch_ns / 1000.0);
	fmt_snprintf(detail, sizeof(detail),
		     "%d of %d cells above; worst %.3fus", over, measured,
		     (double)worst / 1000.0);
	run_add_verdict(r, name, over == 0, detail);
}

enum {
	CTX_OPT_PROCESSES = 1,
	CTX_OPT_SIZES,
	CTX_OPT_REPETITIONS,
	CTX_OPT_HOPS,
	CTX_OPT_MAX_SWITCH,
};

static const struct opt_desc ctx_opts[] = {
	{ .name = "processes", .id = CTX_OPT_PROCESSES, .type = OPT_LIST,
	  .def = "2,4,8,16",
	  .help = HELP_CTX_PROCESSES },
	{ .name = "sizes", .id = CTX_OPT_SIZES, .type = OPT_LIST,
	  .def = "0,1,16",
	  .help = HELP_CTX_SIZES },
	{ .name = "repetitions", .id = CTX_OPT_REPETITIONS,
	  .type = OPT_INTEGER, .def = "5",
	  .help = HELP_CTX_REPETITIONS },
	{ .name = "hops", .id = CTX_OPT_HOPS, .type = OPT_INTEGER,
	  .def = "3000",
	  .help = HELP_CTX_HOPS },
	{ .name = "max-switch", .id = CTX_OPT_MAX_SWITCH, .type = OPT_DURATION,
	  .unit = "us",
	  .help = HELP_CTX_MAX_SWITCH },
	{ .name = NULL },
};

/* Defaults: rings of 2..16 processes, 0/1/16 KiB, 5 x 3000 hops. */
static void ctx_defaults(void *ctxp, struct rtp_common *c)
{
	struct ctx_test *t = ctxp;

	/* a nominal duration satisfies common_finish; cleared after it */
	c->warmup_ns = 0;
	t->cfg.processes[0] = 2;
	t->cfg.processes[1] = 4;
	t->cfg.processes[2] = 8;
	t->cfg.processes[3] = 16;
	t->cfg.nprocesses = 4;
	t->cfg.sizes_kib[0] = 0;
	t->cfg.sizes_kib[1] = 1;
	t->cfg.sizes_kib[2] = 16;
	t->cfg.nsizes = 3;
	t->cfg.repetitions = 5;
	t->cfg.hops = CTX_DEFAULT_HOPS;
}

/* Parse one of ctx's own options. */
static void ctx_option(void *ctxp, struct rtp_common *c, int id,
		       const char *arg)
{
	struct ctx_test *t = ctxp;

	(void)c;
	switch (id) {
	case CTX_OPT_PROCESSES:
		t->cfg.nprocesses = ctx_parse_list("--processes", arg, 2,
			CTX_MAX_PROCESSES, t->cfg.processes, CTX_MAX_LIST);
		break;
	case CTX_OPT_SIZES:
		t->cfg.nsizes = ctx_parse_list("--sizes", arg, 0,
			CTX_MAX_SIZE_KIB, t->cfg.sizes_kib, CTX_MAX_LIST);
		break;
	case CTX_OPT_REPETITIONS:
		t->cfg.repetitions = (unsigned int)opt_u64("--repetitions", arg,
			1, CTX_MAX_REPETITIONS);
		break;
	case CTX_OPT_HOPS:
		t->cfg.hops = opt_u64("--hops", arg, 1, 100000000);
		break;
	default:
		t->cfg.max_switch_ns = opt_duration("--max-switch", arg, "us");
		if (!t->cfg.max_switch_ns)
			opt_fail("--max-switch", arg, "must be > 0");
	}
}

/* Measure the table of rings x working sets. */
static int ctx_run(void *ctxp, struct rtp_common *c, int argc, char **argv)
{
	struct ctx_test *t = ctxp;
	struct run *r;
	uint64_t *buf;
	int s, p, ncells, rc;

	c->duration_ns = 0;
	t->common = c;

	ncells = t->cfg.nsizes * t->cfg.nprocesses;
	t->cells = calloc((size_t)ncells, sizeof(*t->cells));
	t->overheads = calloc((size_t)t->cfg.nsizes, sizeof(*t->overheads));
	buf = calloc((size_t)(ncells + t->cfg.nsizes) * t->cfg.repetitions,
		     sizeof(uint64_t));
	if (!t->cells || !t->overheads || !buf) {
		fmt_fprintf(stderr, "rtprobe: ctx: out of memory\n");
		return RTP_EXIT_ENV;
	}
	for (s = 0; s < t->cfg.nsizes; s++) {
		t->overheads[s].rep_ns = buf + (size_t)s * t->cfg.repetitions;
		for (p = 0; p < t->cfg.nprocesses; p++) {
			struct ctx_cell *cell = &t->cells[s * t->cfg.nprocesses + p];
			unsigned int n = t->cfg.processes[p];

			cell->size_kib = t->cfg.sizes_kib[s];
			cell->processes = n;
			cell->hops = (t->cfg.hops + n - 1) / n * n;
			cell->rep_ns = (int64_t *)(buf + (size_t)(t->cfg.nsizes +
				s * t->cfg.nprocesses + p) * t->cfg.repetitions);
		}
	}

	r = run_create(c, argc, argv);
	t->run = r;
	run_set_params(r, ctx_write_params, t);
	run_set_result_data(r, ctx_write_data, t);
	run_set_verdicts(r, ctx_verdicts, t);
	rc = run_begin(r);
	if (rc)
		return rc;
	fmt_fprintf(stderr, "rtprobe ctx: per-switch time in microseconds "
		    "(overhead subtracted), median of %u repetitions\n",
		    t->cfg.repetitions);
	run_spawn(r, ctx_worker, t, -1, c->policy, c->priority);
	rc = run_finish(r);
	fmt_fprintf(stderr, "\n");
	free(buf);
	free(t->cells);
	free(t->overheads);
	return rc;
}

const struct test_desc test_ctx = {
	.name = "ctx",
	.summary = "context-switch time through a pipe ring (lat_ctx)",
	.intro = INTRO_CTX,
	.examples = EXAMPLES_CTX,
	.traits = TEST_SIMULATE | TEST_NO_DEADLINE,
	.host = {
		.figures = TEST_LIST("cells", "overheads"),
		.table_keys = TEST_LIST("cells", "overheads"),
		.layouts = TEST_LIST("s3c24a0"),
	},
	.default_duration_ns = 2 * NSEC_PER_SEC,
	.cpu_option = "cpus",
	.options = ctx_opts,
	.refused = COMMON_BIT(C_DURATION) | COMMON_BIT(C_LOOPS) |
		   COMMON_BIT(C_WARMUP) | COMMON_BIT(C_THREADS) |
		   COMMON_BIT(C_THRESHOLD) | COMMON_BIT(C_WORST) |
		   COMMON_BIT(C_RAW) | COMMON_BIT(C_RAW_BUFFER) |
		   COMMON_BIT(C_BREAK_ON) | COMMON_BIT(C_BREAK_ACTION) |
		   COMMON_BIT(C_ON_SPIKE) | COMMON_BIT(C_WINDOW),
	.refused_why = "ctx has no latency series; use --repetitions, --hops "
		       "and --max-switch",
	.ctx_size = sizeof(struct ctx_test),
	.defaults = ctx_defaults,
	.option = ctx_option,
	.run = ctx_run,
};
