/* SPDX-License-Identifier: MIT */
/*
 * series.h - one thread's latency series: the hot path of every test.
 *
 * A series belongs to exactly one measuring thread (the producer) and is read
 * by the run's collector in the main thread (the consumer).  They share no
 * lock: the producer fills a window histogram (struct hist32) and counters;
 * at a window boundary it hands the window over through a small queue of
 * SERIES_SLOTS window slots (engine.h) and continues in the next slot's
 * buffer.  The measuring thread of a real run never waits for the collector:
 * when the queue is full (the collector is starved, or the host reads its
 * output late) it merges, i.e. the current window grows by the next one and
 * the record says so ("merged", start_ns/end_ns).  Warm-up and measured
 * windows are never merged: while in the warm-up the producer keeps a spare
 * slot, which the last warm-up window takes at the boundary.  On a simulated
 * run the producer waits for the collector instead (simulated time does not
 * pass while it waits), so simulated output is identical from run to run.
 *
 * Gaps: time the measuring thread did not measure because the probe itself
 * held it (series_gap, e.g. --break-on's tracefs writes) is counted as a gap
 * with its length, never as a sample or overruns.  A late wake-up is a
 * sample (and overruns), whatever delayed it.
 *
 * Time base: t_ns is the time the event was due, relative to the run's t0
 * (for cyclic: the deadline d_k - t0).  Windows are W = --window long (1 s
 * unless given):
 *   warm-up windows [0, W), [W, 2W) ... up to warmup_ns (last may be shorter),
 *   measured windows [warmup_ns + k W, warmup_ns + (k+1) W).
 * Warm-up samples go into warm-up windows (flagged "warmup": true) and into
 * the result's "warmup" summary, never into the statistics.
 *
 * A thread that was late to start (series_start) shifts both parts by its
 * first deadline: warm-up [start, start + warmup_ns), measured windows from
 * start + warmup_ns on; the windows before are the warm-up's (its set-up gap).
 *
 * The measured part ends when t_ns >= start + warmup_ns + duration_ns (that
 * sample is not recorded) or after `loops` measured samples (the last one is
 * recorded).
 *
 * Per sample the producer: clamps a negative latency to 0 (counted as
 * "early"), bumps the window histogram, count/min/max/sum, compares against
 * each threshold (exceedances per window and total), keeps the worst-N heap,
 * pushes a spike record when the lowest threshold is crossed (a ring of 64;
 * overflow counted), pushes a raw record when --raw is on, and on --break-on
 * writes "0" to tracefs tracing_on and a trace_marker line (descriptors
 * opened by run_begin) and requests a stop unless --break-action continue.
 * Spike records, --break-on and the worst-N heap consider measured samples
 * only; warm-up samples still count in their windows' exceedances.
 */
#ifndef RTP_SERIES_H
#define RTP_SERIES_H

#include <stdbool.h>
#include <stdint.h>

#include "sim.h"

struct series;

/*
 * series_add's answer: go on; stop (the measured part is complete or a stop
 * was requested); or go on, but the probe itself just spent time in this
 * thread (--break-on wrote to tracefs): a timed test reads its clock again
 * and counts the deadlines that passed meanwhile with series_gap().
 */
enum { SERIES_CONTINUE = 0, SERIES_DONE = 1, SERIES_BUSY = 2 };

/* Record one sample; SERIES_DONE, SERIES_BUSY or SERIES_CONTINUE (above). */
int series_add(struct series *s, uint64_t t_ns, int64_t latency_ns);

/*
 * The thread did not measure from t_ns for len_ns because the probe held it
 * (see "Gaps" above): counted in the window of t_ns as a gap, never as
 * samples or overruns.
 */
void series_gap(struct series *s, uint64_t t_ns, uint64_t len_ns);

/* Count n missed periods (overruns) in the window of t_ns. */
void series_overrun(struct series *s, uint64_t t_ns, uint64_t n);

/*
 * Count the n periodic deadlines first_ns + j * period_ns (j < n) that the
 * thread missed: those in the warm-up go to the warm-up, the others to the
 * window of the first of them, none past the measured end.  So in each part
 * samples plus overruns equal the deadlines it holds.
 */
void series_overrun_periods(struct series *s, uint64_t first_ns,
			    uint64_t period_ns, uint64_t n);

/* True when t_ns is past the measured end (duration mode). */
bool series_past_end(const struct series *s, uint64_t t_ns);

/* The measured end relative to t0 (UINT64_MAX with --loops): read it once. */
uint64_t series_end_ns(const struct series *s);

/* The producer is done: publish the last partial window (may wait: measuring is over). */
void series_finish(struct series *s);

/*
 * A measuring thread could not set itself up (e.g. create its timer): record
 * what failed (one line, kept in the result's "error") and stop the run, which
 * then ends with status "error" and exit 3.  Not for hot paths.
 */
void series_fail(struct series *s, const char *what);

/* This series' simulation stream (stream id = series index); NULL unless simulated. */
#ifdef RTPROBE_BOARD
/* Always NULL in a board build (no simulation): simulated paths drop out. */
static inline struct sim_stream *series_sim(struct series *s)
{
	(void)s;
	return NULL;
}
#else
struct sim_stream *series_sim(struct series *s);
#endif

/*
 * The series' time origin relative to t0 when its t_ns do not count from t0
 * (wakeup's later pairs): set by its producer before its first sample, read
 * by the collector (--trace places a spike's window with it).
 */
void series_set_origin(struct series *s, uint64_t origin_ns);
uint64_t series_origin(struct series *s);

/*
 * A series whose thread was not ready at t0 (cyclic; ipc, its peer started
 * late): its first deadline (ipc: first round trip) is first_ns after t0.
 * The warm-up, and the measured part after it, start there instead of at
 * t0, at most SERIES_START_MAX_NS later, so the series measures the
 * --warmup and --duration asked for however slow its thread was to start;
 * the time before first_ns is the set-up gap (series_gap), in the warm-up
 * up to the bound and in the measured part past it.  Call once, from the
 * producer, before its first sample; returns the shift applied
 * (min(first_ns, SERIES_START_MAX_NS)).
 */
#define SERIES_START_MAX_NS 5000000000ULL /* 5 s */
uint64_t series_start(struct series *s, uint64_t first_ns);

/* The shift series_start() applied (0: none); any thread may read it. */
uint64_t series_start_ns(struct series *s);

/* CPU the series measures on (-1: unpinned) and its index in the run. */
int series_cpu(const struct series *s);
int series_index(const struct series *s);

#endif /* RTP_SERIES_H */
