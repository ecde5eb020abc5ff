/* SPDX-License-Identifier: MIT */
/*
 * tracetext.h - read the kernel's text trace (tracefs per_cpu/cpuN/trace)
 * and cut the events of one time window out of it.  Pure: no I/O.
 *
 * A line of the text trace is
 *
 *   <comm>-<pid> [(<tgid>)] [<cpu>] [<flags>] <sec>.<frac>: <event>: <text>
 *
 * with the comm right-aligned in a 16-column field.  Kernels differ in the
 * middle: the flags column (irq-info) has 4 characters on older kernels,
 * 5 on newer ones, or is missing; record-tgid adds "(<tgid>)" or
 * "(-------)".  The fraction has 6 digits (microseconds) with the ns trace
 * clocks.  Lines starting with '#' are headers; "CPU:<n> [LOST <m> EVENTS]"
 * reports events the ring buffer lost.  Anything else that does not parse
 * is counted as garbage, never trusted.
 */
#ifndef RTP_TRACETEXT_H
#define RTP_TRACETEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One parsed event; the strings point into the trace text (not terminated). */
struct trace_line {
	uint64_t ts_ns;
	uint64_t resolution_ns;  /* 1000 for a 6-digit fraction */
	int cpu;
	int pid;
	const char *comm;
	size_t comm_len;
	const char *event;
	size_t event_len;
	const char *text;
	size_t text_len;
};

enum tracetext_kind {
	TRACETEXT_SKIP = 0,   /* blank or header line */
	TRACETEXT_EVENT = 1,  /* *out filled */
	TRACETEXT_LOST = 2,   /* *lost set */
	TRACETEXT_GARBAGE = -1,
};

/* Parse one line (without its newline) of len bytes. */
enum tracetext_kind tracetext_parse_line(const char *line, size_t len,
					 struct trace_line *out,
					 uint64_t *lost);

/* What cutting a window found. */
struct trace_cut {
	uint64_t in_window;   /* events of the window with a known name */
	uint64_t lost;        /* sum of LOST lines in the text */
	uint64_t garbage;     /* lines that did not parse */
	uint64_t oldest_ns;   /* first event's time in the text; 0: none */
};

/*
 * Cut the events with start_ns <= ts <= end_ns (within the text's
 * resolution) whose event name is one of names[] ("system:event"; the
 * index of the match goes to out_name[]).  Keeps the last cap of them in
 * out[] in time order and returns how many it kept; st gets the counts.
 */
size_t tracetext_cut(const char *text, size_t len, uint64_t start_ns,
		     uint64_t end_ns, const char *const *names, int nnames,
		     struct trace_line *out, int *out_name, size_t cap,
		     struct trace_cut *st);

/*
 * The offset of the first whole line of text whose event is at or after
 * cutoff_ns (len when none is): what to drop to keep the newer events.
 */
size_t tracetext_trim(const char *text, size_t len, uint64_t cutoff_ns);

/*
 * Whether the last whole line of text is an event at or after ts_ns: a
 * reader of trace_pipe that got there has read what the buffer held when it
 * began, and stops (events keep coming while it reads; on a slow board they
 * come as fast as it reads).
 */
bool tracetext_reached(const char *text, size_t len, uint64_t ts_ns);

/* The sum of the LOST lines in text. */
uint64_t tracetext_lost(const char *text, size_t len);

/* The index in names[] ("system:event") of event name ev, or -1. */
int tracetext_name_index(const char *const *names, int nnames,
			 const char *ev, size_t ev_len);

#endif /* RTP_TRACETEXT_H */
