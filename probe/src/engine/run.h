/* SPDX-License-Identifier: MIT */
/*
 * run.h - one measurement run: output, RT set-up, threads, collection.
 *
 * Every test follows the same life cycle; its run() hook (testdesc.h) gets
 * the parsed options c:
 *
 *   struct run *r = run_create(c, argc, argv);
 *   run_set_params(r, write_my_params, &my_cfg);      -- "params" in start
 *   for each measuring thread:
 *           s[i] = run_add_series(r, "cpu0", cpu);    -- before run_begin
 *   if ((rc = run_begin(r)))  return rc;               -- 2 or 3, line printed
 *   for each thread: run_spawn(r, thread_fn, arg, cpu, c.policy, c.priority);
 *   return run_finish(r);                              -- exit code
 *
 * run_begin() blocks SIGINT/SIGTERM/SIGHUP in the process (threads inherit the
 * mask; only the main thread receives them, through sigtimedwait), ignores
 * SIGPIPE, performs rt_prepare() unless simulated, opens the output
 * (output.h: a temporary file renamed onto --output at the end; stdout by
 * default; nothing on a terminal, which gets a summary at the end),
 * fixes t0 (an absolute time on the run's clock a few ms ahead, so threads
 * are ready) and writes the start record.
 *
 * run_finish() is the collector loop of the main thread.  It sleeps until
 * the next window boundary (once a second on a real run; it pins itself to a
 * CPU that no series measures when one exists) and emits each published
 * window and spike into the record queue, whose writer thread alone writes to
 * the output (outq.h: a slow reader never holds up the collector, and the
 * measuring threads never wait for either), runs --on-spike commands (one at a time, the rest
 * counted as skipped), shows a live line per series on stderr when stderr is
 * a TTY or --verbose, and reacts to signals by requesting a stop.  When every
 * spawned thread has returned it joins them, drains the last windows, calls
 * the verdict hook, writes the result record, releases PM-QoS and returns the
 * exit code: 4 interrupted, 3 a thread could not be set up, 1 a threshold or
 * verdict failed or break-on stopped the run, else 0.
 *
 * Raw samples (--raw FILE): a writer thread (SCHED_OTHER, not pinned to a
 * measuring CPU) drains each series' ring every 10 ms into FILE.  Format,
 * little-endian regardless of the target:
 *   header (32 bytes): "RTPRAW01", u32 header_size=32, u32 record_size=24,
 *                      u64 t0_ns (absolute, run clock), u32 clock id, u32 0
 *   record (24 bytes): u64 t_ns (relative to t0), i64 latency_ns,
 *                      u32 series index, u32 flags (bit 0: warm-up)
 * A full ring drops the sample and counts it ("raw_dropped" per series).
 */
#ifndef RTP_RUN_H
#define RTP_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "common.h"
#include "json.h"

struct run;
struct series;

/* Writes test-specific members into an object the engine has opened. */
typedef void (*run_json_fn)(struct json *j, void *ctx);

/* Decides verdicts after all threads ended (may call run_add_verdict). */
typedef void (*run_verdict_fn)(struct run *r, void *ctx);

/* Allocate a run for parsed options; argv is recorded in the start record. */
struct run *run_create(const struct rtp_common *c, int argc, char **argv);

/* Test parameters: written inside the start record's "params" object. */
void run_set_params(struct run *r, run_json_fn fn, void *ctx);

/* Test data: written as the result record's "data" object. */
void run_set_result_data(struct run *r, run_json_fn fn, void *ctx);

/* Verdict hook, called in the main thread after every thread was joined. */
void run_set_verdicts(struct run *r, run_verdict_fn fn, void *ctx);

/* Add a latency series measured on cpu (-1: unpinned). Before run_begin. */
struct series *run_add_series(struct run *r, const char *label, int cpu);

/* Signals, RT set-up, output, t0, start record. 0 or an exit code (line printed). */
int run_begin(struct run *r);

/*
 * Start a thread pinned to cpu (< 0: not pinned) with the given policy and
 * priority (a simulated run uses SCHED_OTHER and still pins when it can).
 * A thread that cannot be set up records the error; the run then ends with
 * exit 3.  Returns 0 or the errno value.
 */
int run_spawn(struct run *r, void *(*fn)(void *), void *arg, int cpu,
	      enum rtp_policy policy, int priority);

/* Collector loop until all threads end; writes the result; returns the exit code. */
int run_finish(struct run *r);

/* Record a verdict (name like "every delay < 100us"); a failed one gives exit 1. */
void run_add_verdict(struct run *r, const char *name, bool pass,
		     const char *detail);

/* True once a stop was requested (signal, break-on, error). Cheap: one load. */
bool run_stopping(const struct run *r);

/* Ask every thread to stop; why goes into the result ("interrupted" etc.). */
void run_request_stop(struct run *r, const char *why);

/* Absolute t0 in ns on the run's clock; warm-up starts there. */
uint64_t run_t0_ns(const struct run *r);

/* Current time in ns on the run's clock (clock_gettime). */
uint64_t run_now_ns(const struct run *r);

/* The parsed options. */
const struct rtp_common *run_common(const struct run *r);

#endif /* RTP_RUN_H */
