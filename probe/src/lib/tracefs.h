/* SPDX-License-Identifier: MIT */
/*
 * tracefs.h - the kernel's tracefs as rtprobe uses it: found (or mounted),
 * its state saved to a private state file before anything changes and put
 * back at the end, or by the next rtprobe when this one died.
 *
 * State file: <dir>/rtprobe-trace.state, where <dir> is $RTPROBE_STATE_DIR,
 * else /run when writable, else $TMPDIR, else /tmp; mode 0600, written to a
 * temporary name and renamed.  Text, one "key value" a line:
 *   rtprobe-trace-state 1
 *   pid 1234
 *   dir /sys/kernel/tracing
 *   mounted 0                 (1: rtprobe mounted tracefs; unmounted again)
 *   tracing_on 1
 *   buffer_size_kb 1408
 *   trace_clock local
 *   current_tracer nop
 *   event sched/sched_switch  (one line per event rtprobe enabled)
 */
#ifndef RTP_TRACEFS_H
#define RTP_TRACEFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TRACEFS_MAX_EVENTS 96
#define TRACEFS_NAME 64

/* What rtprobe changes in tracefs and must put back. */
struct tracefs_state {
	int pid;
	char dir[48];
	bool mounted;
	char tracing_on[8];
	char buffer_kb[24];
	char clock[24];
	char tracer[32];
	int nevents;
	char events[TRACEFS_MAX_EVENTS][TRACEFS_NAME]; /* "sched/sched_switch" */
};

/*
 * Find tracefs (/sys/kernel/tracing, /sys/kernel/debug/tracing); when
 * absent and may_mount, mount it on /sys/kernel/tracing.  0 and dir set,
 * *mounted when this call mounted it; else -1 with why.
 */
int tracefs_find(char *dir, size_t len, bool may_mount, bool *mounted,
		 char *why, size_t wlen);

/* Read dir/rel into buf (terminated, trailing newline cut); 0 or -1 (errno). */
int tracefs_read(const char *dir, const char *rel, char *buf, size_t len);

/* Write value to dir/rel; 0 or -1 (errno). */
int tracefs_write(const char *dir, const char *rel, const char *value);

/*
 * The size in KiB a buffer_size_kb text stands for: "1408", or the
 * expanded size of "7 (expanded: 1408)"; 0 if unreadable.
 */
uint64_t tracefs_kb(const char *text);

/* The selected word ("[mono]") of a trace_clock text into out. */
void tracefs_clock_selected(const char *text, char *out, size_t len);

/* True when word is one of the words of a trace_clock text. */
bool tracefs_clock_offered(const char *text, const char *word);

/* The state file's path into buf. */
void tracefs_state_path(char *buf, size_t len);

/* Write st to the state file (0600, temp + rename); 0 or -1 with why. */
int tracefs_state_save(const struct tracefs_state *st, char *why,
		       size_t wlen);

/* Read the state file: 1 read, 0 none, -1 unreadable (why). */
int tracefs_state_load(struct tracefs_state *st, char *why, size_t wlen);

/* Parse a state file's text into st; 0 or -1. */
int tracefs_state_parse(const char *text, struct tracefs_state *st);

/*
 * Put st back (events off, clock, buffer size, tracer, tracing_on, unmount)
 * and remove the state file; 0, or -1 with the first failure in why.
 */
int tracefs_restore(const struct tracefs_state *st, char *why, size_t wlen);

/*
 * Read a whole file (a per-CPU trace) into a malloc'd buffer; *len its
 * size.  NULL on failure (errno set).
 */
char *tracefs_slurp(const char *dir, const char *rel, size_t *len);

#endif /* RTP_TRACEFS_H */
