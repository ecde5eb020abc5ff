/* SPDX-License-Identifier: MIT */
/*
 * engine.h - private interface between the run (collector side, run.c) and
 * its series (producer side, series.c).  Tests use run.h and series.h only.
 *
 * Hand-over protocol of one series (single producer, single consumer, no
 * lock):
 *   window queue    SERIES_SLOTS slots, slot i with its hist32 buffer i;
 *                   32-bit free-running q_head (producer) and q_tail
 *                   (collector).  The producer fills buffer q_head % SLOTS;
 *                   to publish it stores the window in slot q_head and
 *                   increments q_head (release).  The collector reads slot
 *                   q_tail (acquire on q_head), copies the window out and
 *                   clears the histogram, then increments q_tail (release)
 *                   before it writes anything to its output.  At most
 *                   SLOTS - 1 windows are queued, SLOTS - 2 in the warm-up
 *                   (the spare slot for the warm-up/measured boundary); when
 *                   the queue is full a real run merges windows (series.h).
 *   spike ring      64 entries; head written by the producer, tail by the
 *                   collector; 32-bit free-running counters (lock-free on
 *                   every 32-bit target), full when head - tail == 64.
 *   raw ring        the same scheme with --raw-buffer entries, drained by
 *                   the raw writer thread.
 */
#ifndef RTP_ENGINE_H
#define RTP_ENGINE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "common.h"
#include "hist.h"
#include "series.h"

#define SERIES_SPIKE_RING 64u
/* Window slots of a series: 2 queued + the spare of the warm-up boundary. */
#define SERIES_SLOTS 3u

/*
 * What a series reports to the run that owns it.  The run (run.c) fills
 * one in; the series calls back through it, so series.c needs nothing of
 * run.h and the two do not include each other.
 */
struct series_owner {
	void *ctx;
	/* Wake the collector (not for hot paths: one syscall). */
	void (*notify)(void *ctx);
	/* Ask every thread to stop; why as run_request_stop(). */
	void (*stop)(void *ctx, const char *why);
	/*
	 * A sample crossed --break-on (called from the producer); true when
	 * it did work in the producer's thread (tracefs writes, a wake-up).
	 */
	bool (*break_hit)(void *ctx, int series_index, uint64_t t_ns,
			  uint64_t latency_ns);
};

/* One window's counters (the histogram travels separately). */
struct series_window {
	uint64_t index;
	uint64_t start_ns, end_ns; /* relative to t0, end exclusive */
	uint64_t last_t_ns;        /* due time of the last sample */
	bool warmup;
	uint64_t count, min_ns, max_ns, sum_ns, overruns, early;
	uint64_t exceed[COMMON_MAX_THRESHOLDS];
	uint64_t merged;           /* windows merged into this one (queue full) */
	uint64_t gaps, gap_ns;     /* time not measured (series_gap) */
};

/* A threshold crossing waiting for the collector. */
struct series_spike {
	uint64_t t_ns;
	uint64_t latency_ns;
};

/* One raw sample waiting for the writer thread. */
struct series_raw {
	uint64_t t_ns;
	int64_t latency_ns;
};

/* One of the worst samples. */
struct series_worst {
	uint64_t t_ns;
	uint64_t latency_ns;
};

/* Allocate a series; raw ring of raw_cap entries when raw_cap > 0.  NULL on ENOMEM. */
struct series *series_create(const struct series_owner *owner,
			     const struct rtp_common *c, atomic_int *stop,
			     int index, int cpu);

/*
 * Queue spike records from level_ns on when that is below the lowest
 * threshold (--trace); before the producer starts.
 */
void series_set_spike_level(struct series *s, uint64_t level_ns);

/* Free a series (after its producer ended). */
void series_destroy(struct series *s);

/* Collector: take the published window, if any (hist stays owned by the series). */
bool series_take_window(struct series *s, struct series_window *w,
			struct hist32 **hist);

/* Collector: the taken window's histogram is read and cleared; give its slot back. */
void series_window_done(struct series *s);

/* Collector: pop one spike; false when none is pending. */
bool series_pop_spike(struct series *s, struct series_spike *out);

/* Writer: copy up to max raw samples out of the ring; returns how many. */
unsigned int series_raw_drain(struct series *s, struct series_raw *out,
			      unsigned int max);

/* After the producer ended: worst samples sorted largest first; returns n. */
int series_worst_sorted(struct series *s, struct series_worst *out, int max);

/* Counters read after the producer ended. */
uint64_t series_spikes_dropped(const struct series *s);
uint64_t series_raw_dropped(const struct series *s);
/* Windows merged because the queue was full (warm-up and measured). */
uint64_t series_merged(const struct series *s);

/* The error a measuring thread reported with series_fail(), or NULL. */
const char *series_error(const struct series *s);

#endif /* RTP_ENGINE_H */
