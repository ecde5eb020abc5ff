/* SPDX-License-Identifier: MIT */
/*
 * trace.h - --trace: kernel trace events around each spike (docs/rtprobe.md).
 *
 * run_begin() calls trace_begin(), which finds tracefs, restores the state a
 * dead rtprobe left, refuses a tracefs busy with another tracer (unless
 * --trace-force), saves what it will change to the state file (tracefs.h),
 * enables the events of the contract that the kernel has, sets the trace
 * clock and the per-CPU buffer size and clears the buffers.  The collector
 * reads each measured CPU's per_cpu/cpuN/trace_pipe (non-blocking, while
 * tracing goes on) every pass (trace_poll, at least every 100 ms), keeping
 * the last margin + 2 s of text, and calls trace_spike() for each spike
 * record: for a sample at or above the trace threshold it writes a "trace"
 * record with the CPU's events from the expected wake-up minus the margin to
 * the wake-up.  The run keeps the --trace-max-spikes worst spikes: once that
 * many are traced, a larger spike's record replaces the smallest one's (its
 * "replaces" member names it; the host drops it), a smaller one is counted
 * untraced.  trace_summary() writes the "trace_summary" record before
 * the result; trace_end() restores tracefs (also on an early exit).
 */
#ifndef RTP_TRACE_H
#define RTP_TRACE_H

#include <stdint.h>

struct run;
struct series_spike;

enum { TRACE_OFF = 0, TRACE_AUTO = 1, TRACE_ON = 2 };

/* Set up tracing for the run; 0, or an exit code with one line printed. */
int trace_begin(struct run *r);

/* The latency from which a sample is traced (UINT64_MAX: not tracing). */
uint64_t trace_level(const struct run *r);

/* True while the run traces (the collector then polls more often). */
int trace_active(const struct run *r);

/* Read the measured CPUs' trace_pipe (each collector pass). */
void trace_poll(struct run *r);

/* Trace one spike of series idx on cpu (after its spike record). */
void trace_spike(struct run *r, int idx, int cpu,
		 const struct series_spike *sp);

/* True when the run traced and tracefs could not be put back (exit 3). */
int trace_restore_failed(const struct run *r);

/* Write the trace_summary record (when --trace was given). */
void trace_summary(struct run *r);

/* Restore tracefs and free what tracing holds. */
void trace_end(struct run *r);

#endif /* RTP_TRACE_H */
