/* SPDX-License-Identifier: MIT */
/*
 * run_impl.h - the inside of a run, shared by the files that make it:
 *   run.c     life cycle: create, begin, spawn, collect, finish
 *   record.c  the records it writes (start, window, spike, result)
 *   raw.c     the raw-sample writer thread (--raw)
 *   hooks.c   --break-on (tracefs) and --on-spike (child commands)
 *   trace.c   --trace: trace events of each spike (trace.h)
 *   summary.c the human summary on a terminal
 *   state.c   stop requests, status and measured time: what they all read
 * Their calls form a tree, no circle (tests/probe/test_engine_calls.py):
 * run.c calls the others; record.c, hooks.c and summary.c call state.c;
 * trace.c writes its records through record.c; state.c and raw.c call none.
 * Tests use run.h only.
 */
#ifndef RTP_RUN_IMPL_H
#define RTP_RUN_IMPL_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "engine.h"
#include "hist.h"
#include "json.h"
#include "outq.h"
#include "output.h"
#include "rt.h"
#include "run.h"

#define RUN_MAX_VERDICTS 32
#define RUN_THREAD_STACK (128 * 1024)
#define RUN_RAW_CHUNK 4096
#define RUN_COLLECT_OFFSET_NS (20 * NSEC_PER_MSEC)
#define RUN_T0_AHEAD_NS (20 * NSEC_PER_MSEC)
#define RUN_CHILD_GRACE_NS (5 * NSEC_PER_SEC)
/* With --trace the collector looks for spikes this often (trace.h). */
#define RUN_TRACE_POLL_NS (100 * NSEC_PER_MSEC)

/* Collector-side totals of one series. */
struct run_series {
	struct series *s;
	char label[32];
	int cpu;
	int tid;                   /* kernel thread id of its thread, 0 until it starts */
	bool claimed;              /* a thread was spawned for it */
	char setup_error[160];     /* its thread could not be set up */
	struct hist *hist;         /* measured samples */
	uint64_t count, min_ns, max_ns, sum_ns, overruns, early;
	uint64_t exceed[COMMON_MAX_THRESHOLDS];
	uint64_t w_count, w_min_ns, w_max_ns, w_sum_ns, w_overruns;
	uint64_t gaps, gap_ns, w_gaps, w_gap_ns; /* measured, warm-up */
	uint64_t last_t_ns;        /* due time of the last measured sample */
	bool fresh;                /* a window arrived since the live line */
};

/* A spawned thread and what it runs. */
struct run_thread {
	struct run *run;
	struct run_series *rs;     /* series on the same CPU, if any */
	void *(*fn)(void *);
	void *arg;
	int cpu;
	enum rtp_policy policy;
	int priority;
	pthread_t tid;
	char error[160];
};

struct trace_run;

struct run_verdict {
	char name[96];
	bool pass;
	char detail[160];
};

struct run {
	const struct rtp_common *c;
	struct series_owner owner;      /* how its series call back */
	int argc;
	char **argv;
	run_json_fn params_fn, data_fn;
	void *params_ctx, *data_ctx;
	run_verdict_fn verdict_fn;
	void *verdict_ctx;

	struct run_series *series[COMMON_MAX_THREADS];
	int nseries;
	struct run_thread *threads[COMMON_MAX_THREADS + 8];
	int nthreads;

	atomic_int stop;
	atomic_int live;                 /* spawned threads still running */
	_Atomic(const char *) stop_why;  /* first stop reason */
	atomic_int break_taken;
	int break_series;                /* written by the break-on winner */
	uint64_t break_t_ns, break_latency_ns;
	int trace_on_fd, trace_marker_fd;
	char tracefs[48];
	struct trace_run *trace;         /* --trace (trace.c); NULL: off */

	pid_t pid;
	sigset_t sigs;
	int signo;                       /* signal that interrupted the run */
	bool began;
	struct rt_state rt;
	cpu_set_t collector_cpus;
	bool collector_pinned;

	struct output out;               /* NDJSON records */
	struct outq outq;                /* their queue and writer thread */
	bool outq_on;                    /* else written directly (fallback) */
	bool threads_done;               /* joined: no record is dropped now */
	bool out_open;
	bool out_discard;                /* a terminal: summary instead */
	bool out_failed;
	char out_error[160];

	struct output raw;               /* --raw FILE */
	bool raw_open;
	pthread_t raw_tid;
	bool raw_started;
	atomic_int raw_stop;
	uint64_t raw_records;
	char raw_error[160];

	uint64_t t0_ns, t0_unix_ns;
	bool live_line;

	pid_t child;
	uint64_t spike_runs, spike_skipped;

	struct run_verdict verdicts[RUN_MAX_VERDICTS];
	int nverdicts;
	struct json j;
};

/* record.c */
void run_fmt_us(char *buf, size_t len, uint64_t ns);
/* Queue the record in r->j; dropped (and counted) when the queue is full. */
void run_emit(struct run *r);
/* The same for a window record (counted as a dropped window). */
void run_emit_window(struct run *r);
/* The same, waiting for room: start and result records (no thread measures). */
void run_emit_must(struct run *r);
/* The writer failed: record it and stop the run (collector loop). */
void run_check_output(struct run *r);
void run_write_start(struct run *r);
void run_take_window(struct run *r, struct run_series *rs, int idx,
		     const struct series_window *w, struct hist32 *h);
void run_take_spike(struct run *r, int idx, const struct series_spike *sp);
int run_write_result(struct run *r, uint64_t elapsed_ns);

/* state.c: wake the collector (SIGUSR1; not for hot paths). */
void run_notify(struct run *r);

/* state.c: how the run ended, for record.c and summary.c */
int run_status(struct run *r, const char **status, char *reason, size_t len);
uint64_t run_measured_ns(const struct run *r, const char *status);

/* raw.c: open --raw and start its writer; 0 or an exit code (line printed). */
int run_raw_start(struct run *r);
/* raw.c: stop the writer (after every producer ended). */
void run_raw_stop(struct run *r);

/* hooks.c */
int run_open_tracefs(struct run *r);
void run_on_spike(struct run *r, int idx, const struct series_spike *sp);
void run_reap(struct run *r);
void run_wait_child(struct run *r);
/* true when it did its work (the first hit): time spent in the producer */
bool run_break_hit(struct run *r, int series_index, uint64_t t_ns,
		   uint64_t latency_ns);

/* summary.c: the human summary of a finished run on stderr. */
void run_summary(struct run *r, int rc);

#endif /* RTP_RUN_IMPL_H */
