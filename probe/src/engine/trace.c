// SPDX-License-Identifier: MIT
/*
 * trace.c - --trace: capture the kernel's trace events of each spike's
 * window and write them as "trace" records (see trace.h, docs/schema.md).
 */
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <time.h>
#include <unistd.h>

#include "clocksleep.h"
#include "fmt.h"
#include "json.h"
#include "numtext.h"
#include "output.h"
#include "rtprobe.h"
#include "run_impl.h"
#include "series.h"
#include "tracefs.h"
#include "tracetext.h"

#define TRACE_MAX_NAMES TRACEFS_MAX_EVENTS
#define TRACE_MAX_WINDOW_EVENTS 8192
#define TRACE_RECORD_OVERHEAD 512
#define TRACE_DEFAULT_BUFFER_KB 1024
#define TRACE_MAX_TEXT (16u << 20) /* text kept per CPU at most */

/*
 * The events of the contract: exactly those the host's attribution reads
 * (rtbench/analysis/trace_*.py); "system:*" would take all of a system.
 * The timer interrupt's own event differs by arch: an irq_handler_entry
 * (arch_timer on ARM, timer on MIPS), x86's local_timer_entry, PowerPC's
 * timer_interrupt_entry (the decrementer has no IRQ number).
 */
static const char *const trace_wanted[] = {
	"sched:sched_waking", "sched:sched_wakeup", "sched:sched_switch",
	"irq:irq_handler_entry", "irq:irq_handler_exit", "irq:softirq_entry",
	"irq:softirq_exit", "irq:softirq_raise",
	"timer:hrtimer_expire_entry",
#if defined(__x86_64__) || defined(__i386__)
	"irq_vectors:local_timer_entry", "irq_vectors:local_timer_exit",
#endif
#if defined(__powerpc__) || defined(__powerpc64__)
	"powerpc:timer_interrupt_entry", "powerpc:timer_interrupt_exit",
#endif
	"preemptirq:irq_disable", "preemptirq:irq_enable",
	"osnoise:irq_noise", "osnoise:softirq_noise", "osnoise:nmi_noise",
	"osnoise:thread_noise",
};

/* A traced spike kept in the per-run budget (the N worst seen). */
struct trace_kept {
	int series;
	uint64_t t_ns;
	uint64_t latency_ns;
};

/* The events read from one CPU's trace_pipe and not yet too old. */
struct trace_cpu {
	int cpu;
	int fd;                   /* per_cpu/cpuN/trace_pipe, non-blocking */
	char *text;
	size_t len, cap;
	uint64_t read_mono_ns;    /* when it was last read */
};

/* The tracing of one run (owned by struct run). */
struct trace_run {
	bool active;
	char note[200];
	char dir[48];
	char clock[24];           /* "mono" or "local+offset" */
	int64_t run_to_mono_ns;   /* run clock + this = CLOCK_MONOTONIC */
	int64_t trace_to_mono_ns; /* trace clock + this = CLOCK_MONOTONIC */
	uint64_t buffer_kb;
	int nenabled, nmissing;
	char enabled[TRACE_MAX_NAMES][TRACEFS_NAME];
	const char *names[TRACE_MAX_NAMES];
	char missing[TRACE_MAX_NAMES][TRACEFS_NAME];
	struct tracefs_state st;
	bool state_saved;
	bool restored;
	char restore_error[200];
	uint64_t spikes_over, replaced, lost;
	/* The spikes whose trace records stand: at most --trace-max-spikes. */
	struct trace_kept *kept;
	int nkept;
	/* What was read of each measured CPU's trace_pipe. */
	struct trace_cpu *cpus;
	int ncpus;
	uint64_t keep_ns;         /* text kept back from the newest read */
	struct trace_line *lines;
	int *line_names;
};

/* Monotonic time in ns. */
static uint64_t mono_ns(void)
{
	return clock_now_ns(CLOCK_MONOTONIC);
}

/* True when a process of that pid exists. */
static bool pid_alive(int pid)
{
	return kill(pid, 0) == 0 || errno == EPERM;
}

/* The state a dead rtprobe left: restore it (said on stderr). */
static int trace_stale(struct trace_run *t, char *why, size_t wlen)
{
	struct tracefs_state old;
	int rc = tracefs_state_load(&old, why, wlen);

	if (rc <= 0)
		return rc;
	if (old.pid != getpid() && pid_alive(old.pid)) {
		fmt_snprintf(why, wlen, "tracefs is in use by rtprobe pid %d: "
			     "wait for it", old.pid);
		return -1;
	}
	if (tracefs_restore(&old, why, wlen))
		return -1;
	fmt_fprintf(stderr, "rtprobe: restored the tracefs state left by "
		    "rtprobe pid %d (it died)\n", old.pid);
	(void)t;
	return 0;
}

/*
 * Enable "system:event" for the run (the state notes it when it was off);
 * false when the kernel has no such event.
 */
static bool trace_enable_one(struct trace_run *t, const char *sys,
			     size_t sys_len, const char *ev, size_t ev_len)
{
	char rel[TRACEFS_NAME + 16], val[8];

	fmt_snprintf(rel, sizeof(rel), "events/%.*s/%.*s/enable", (int)sys_len,
		     sys, (int)ev_len, ev);
	if (t->nenabled >= TRACE_MAX_NAMES ||
	    tracefs_read(t->dir, rel, val, sizeof(val)))
		return false;
	if (strcmp(val, "1") && t->st.nevents < TRACEFS_MAX_EVENTS)
		fmt_snprintf(t->st.events[t->st.nevents++], TRACEFS_NAME,
			     "%.*s/%.*s", (int)sys_len, sys, (int)ev_len, ev);
	fmt_snprintf(t->enabled[t->nenabled], TRACEFS_NAME, "%.*s:%.*s",
		     (int)sys_len, sys, (int)ev_len, ev);
	t->names[t->nenabled] = t->enabled[t->nenabled];
	t->nenabled++;
	return true;
}

/*
 * Every event of system sys ("osnoise:*") that available_events lists;
 * false when there is none.
 */
static bool trace_enable_system(struct trace_run *t, const char *avail,
				const char *sys, size_t sys_len)
{
	const char *p = avail, *nl;
	bool any = false;

	while (p && *p) {
		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p);
		if ((size_t)(nl - p) > sys_len + 1 && !memcmp(p, sys, sys_len) &&
		    p[sys_len] == ':')
			any |= trace_enable_one(t, sys, sys_len, p + sys_len + 1,
						(size_t)(nl - p) - sys_len - 1);
		p = *nl ? nl + 1 : nl;
	}
	return any;
}

/* Enable the wanted events the kernel has; note the others as missing. */
static void trace_pick_events(struct trace_run *t)
{
	const char *name, *colon;
	char *avail;
	size_t i, len;
	bool found;

	avail = tracefs_slurp(t->dir, "available_events", &len);
	for (i = 0; i < sizeof(trace_wanted) / sizeof(trace_wanted[0]); i++) {
		name = trace_wanted[i];
		colon = strchr(name, ':');
		if (!strcmp(colon + 1, "*"))
			found = trace_enable_system(t, avail, name,
						    (size_t)(colon - name));
		else
			found = trace_enable_one(t, name, (size_t)(colon - name),
						 colon + 1, strlen(colon + 1));
		if (!found && t->nmissing < TRACE_MAX_NAMES)
			fmt_snprintf(t->missing[t->nmissing++], TRACEFS_NAME,
				     "%s", name);
	}
	free(avail);
}

/* Save tracefs' state and refuse a busy one; 0 or -1 with why. */
static int trace_save(struct trace_run *t, const struct rtp_common *c,
		      bool mounted, char *why, size_t wlen)
{
	struct tracefs_state *st = &t->st;
	char clk[160], events_on[8];
	const char *force;

	memset(st, 0, sizeof(*st));
	st->pid = getpid();
	st->mounted = mounted;
	fmt_snprintf(st->dir, sizeof(st->dir), "%s", t->dir);
	if (tracefs_read(t->dir, "tracing_on", st->tracing_on,
			 sizeof(st->tracing_on)) ||
	    tracefs_read(t->dir, "buffer_size_kb", st->buffer_kb,
			 sizeof(st->buffer_kb)) ||
	    tracefs_read(t->dir, "trace_clock", clk, sizeof(clk)) ||
	    tracefs_read(t->dir, "current_tracer", st->tracer,
			 sizeof(st->tracer))) {
		fmt_snprintf(why, wlen, "cannot read tracefs state in %s: %s",
			     t->dir, strerror(errno));
		return -1;
	}
	tracefs_clock_selected(clk, st->clock, sizeof(st->clock));
	if (tracefs_read(t->dir, "events/enable", events_on,
			 sizeof(events_on)))
		events_on[0] = '\0';
	if (!c->trace_force && strcmp(st->tracer, "nop")) {
		fmt_snprintf(why, wlen, "tracefs is busy (current_tracer %s): "
			     "stop it or pass --trace-force", st->tracer);
		return -1;
	}
	if (!c->trace_force && !strcmp(st->tracing_on, "1") &&
	    events_on[0] && strcmp(events_on, "0")) {
		fmt_snprintf(why, wlen, "tracefs is busy (events enabled): "
			     "disable them or pass --trace-force");
		return -1;
	}
	if (!tracefs_clock_offered(clk, "mono") &&
	    !tracefs_clock_offered(clk, "local")) {
		fmt_snprintf(why, wlen, "no trace clock mono or local in "
			     "trace_clock: %s", clk);
		return -1;
	}
	/* RTPROBE_TRACE_CLOCK=local: the local clock plus an offset even where
	 * mono exists (a kernel whose mono trace clock misbehaves; the tests) */
	force = getenv("RTPROBE_TRACE_CLOCK");
	fmt_snprintf(t->clock, sizeof(t->clock), "%s",
		     tracefs_clock_offered(clk, "mono") &&
		     !(force && !strcmp(force, "local") &&
		       tracefs_clock_offered(clk, "local")) ? "mono" : "local");
	trace_pick_events(t);
	if (!t->nenabled) {
		fmt_snprintf(why, wlen, "no trace event rtprobe uses is in "
			     "%s/events", t->dir);
		return -1;
	}
	if (tracefs_state_save(st, why, wlen))
		return -1;
	t->state_saved = true;
	return 0;
}

/* Clear every CPU's buffer. */
static int trace_clear_all(const struct trace_run *t)
{
	return tracefs_write(t->dir, "trace", "");
}

/*
 * With trace clock local: its offset to CLOCK_MONOTONIC from a trace_marker
 * line written between two clock reads.
 */
static int trace_local_offset(struct trace_run *t, char *why, size_t wlen)
{
	char mark[64], *text, *p, *nl;
	struct trace_line ev;
	uint64_t before, after, lost;
	size_t len;
	int found = 0;

	fmt_snprintf(mark, sizeof(mark), "rtprobe-clock-sync %d",
		     (int)getpid());
	before = mono_ns();
	if (tracefs_write(t->dir, "trace_marker", mark)) {
		fmt_snprintf(why, wlen, "cannot write %s/trace_marker: %s",
			     t->dir, strerror(errno));
		return -1;
	}
	after = mono_ns();
	text = tracefs_slurp(t->dir, "trace", &len);
	for (p = text; p && *p; p = nl + 1) {
		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p);
		if (strstr(p, mark) && strstr(p, mark) < nl &&
		    tracetext_parse_line(p, (size_t)(nl - p), &ev, &lost) ==
		    TRACETEXT_EVENT) {
			t->trace_to_mono_ns = (int64_t)(before / 2 + after / 2) -
					      (int64_t)ev.ts_ns;
			found = 1;
		}
		if (!*nl)
			break;
	}
	free(text);
	if (!found) {
		fmt_snprintf(why, wlen, "trace clock local not aligned: the "
			     "trace_marker line did not come back");
		return -1;
	}
	fmt_snprintf(t->clock, sizeof(t->clock), "local+offset");
	return 0;
}

/* Change tracefs for the run (the state is saved); 0 or -1 with why. */
static int trace_apply(struct trace_run *t, const struct rtp_common *c,
		       char *why, size_t wlen)
{
	char rel[TRACEFS_NAME + 16], kb[48];
	long long v;
	int i;

	if (tracefs_write(t->dir, "tracing_on", "0") ||
	    tracefs_write(t->dir, "trace_clock", t->clock))
		goto fail;
	if (tracefs_read(t->dir, "buffer_size_kb", kb, sizeof(kb)))
		goto fail;
	v = (long long)tracefs_kb(kb);
	if (c->trace_buffer_kb ? (uint64_t)v != c->trace_buffer_kb :
	    v < TRACE_DEFAULT_BUFFER_KB) {
		v = c->trace_buffer_kb ? (long long)c->trace_buffer_kb :
					 TRACE_DEFAULT_BUFFER_KB;
		fmt_snprintf(kb, sizeof(kb), "%lld", v);
		if (tracefs_write(t->dir, "buffer_size_kb", kb)) {
			fmt_snprintf(why, wlen, "cannot set %s/buffer_size_kb "
				     "to %lld (--trace-buffer-kb): %s", t->dir,
				     v, strerror(errno));
			return -1;
		}
	}
	if (!tracefs_read(t->dir, "buffer_size_kb", kb, sizeof(kb)))
		v = (long long)tracefs_kb(kb);
	t->buffer_kb = (uint64_t)v;
	for (i = 0; i < t->st.nevents; i++) {
		fmt_snprintf(rel, sizeof(rel), "events/%s/enable",
			     t->st.events[i]);
		if (tracefs_write(t->dir, rel, "1"))
			goto fail;
	}
	if (trace_clear_all(t) || tracefs_write(t->dir, "tracing_on", "1"))
		goto fail;
	if (!strcmp(t->clock, "local"))
		return trace_local_offset(t, why, wlen);
	return 0;
fail:
	fmt_snprintf(why, wlen, "cannot set up tracefs in %s: %s", t->dir,
		     strerror(errno));
	return -1;
}

/* Offset of the run's clock to CLOCK_MONOTONIC (0 when it is that clock). */
static int64_t trace_run_offset(clockid_t clock)
{
	uint64_t a, b, m;

	if (clock == CLOCK_MONOTONIC)
		return 0;
	a = clock_now_ns(clock);
	m = mono_ns();
	b = clock_now_ns(clock);
	return (int64_t)m - (int64_t)(a / 2 + b / 2);
}

/* Open the trace_pipe of every CPU a series measures on; 0 or -1 with why. */
static int trace_open_pipes(struct trace_run *t, struct run *r, char *why,
			    size_t wlen)
{
	char path[96];
	int i, k;

	t->cpus = calloc((size_t)r->nseries, sizeof(*t->cpus));
	if (!t->cpus) {
		fmt_snprintf(why, wlen, "out of memory for the trace buffers");
		return -1;
	}
	for (i = 0; i < r->nseries; i++) {
		int cpu = r->series[i]->cpu;

		for (k = 0; k < t->ncpus && t->cpus[k].cpu != cpu; k++)
			;
		if (cpu < 0 || k < t->ncpus)
			continue;
		fmt_snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/trace_pipe",
			     t->dir, cpu);
		t->cpus[k].cpu = cpu;
		t->cpus[k].fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (t->cpus[k].fd < 0) {
			fmt_snprintf(why, wlen, "cannot open %s: %s", path,
				     strerror(errno));
			return -1;
		}
		t->ncpus++;
	}
	return 0;
}

/* Try to set tracing up; 0, or -1 with why (tracefs as before). */
static int trace_setup(struct trace_run *t, struct run *r, char *why,
		       size_t wlen)
{
	const struct rtp_common *c = r->c;
	bool mounted;

	if (SIMULATED(c->simulate)) {
		fmt_snprintf(why, wlen, "a simulated run has no kernel events "
			     "to trace");
		return -1;
	}
	if (tracefs_find(t->dir, sizeof(t->dir), true, &mounted, why, wlen))
		return -1;
	if (trace_stale(t, why, wlen))
		return -1;
	if (trace_save(t, c, mounted, why, wlen)) {
		if (mounted && !t->state_saved)
			umount(t->dir);
		return -1;
	}
	t->kept = calloc((size_t)c->trace_max_spikes, sizeof(*t->kept));
	t->lines = calloc(TRACE_MAX_WINDOW_EVENTS, sizeof(*t->lines));
	t->line_names = calloc(TRACE_MAX_WINDOW_EVENTS,
			       sizeof(*t->line_names));
	if (!t->kept || !t->lines || !t->line_names) {
		fmt_snprintf(why, wlen, "out of memory for the trace window");
		return -1;
	}
	if (trace_apply(t, c, why, wlen))
		return -1;
	t->run_to_mono_ns = trace_run_offset(c->clock);
	/* a spike is taken at most a few polls after it happened */
	t->keep_ns = c->trace_margin_ns + 2 * NSEC_PER_SEC;
	return trace_open_pipes(t, r, why, wlen);
}

int trace_begin(struct run *r)
{
	const struct rtp_common *c = r->c;
	struct trace_run *t;
	char why[200], restore[200];

	if (c->trace_mode == TRACE_OFF)
		return 0;
	t = calloc(1, sizeof(*t));
	if (!t) {
		fmt_fprintf(stderr, "rtprobe: out of memory for --trace\n");
		return RTP_EXIT_ENV;
	}
	r->trace = t;
	if (!trace_setup(t, r, why, sizeof(why))) {
		t->active = true;
		return 0;
	}
	if (t->state_saved && tracefs_restore(&t->st, restore,
					      sizeof(restore)))
		fmt_fprintf(stderr, "rtprobe: --trace: %s\n", restore);
	t->state_saved = false;
	if (c->trace_mode == TRACE_ON) {
		/* root needs no "run as root" (a busy or simulated run is why) */
		fmt_fprintf(stderr, "rtprobe: --trace=on: %s (%suse --trace=auto to "
			    "run untraced)\n", why,
			    geteuid() ? "run as root, or " : "");
		return RTP_EXIT_USAGE;
	}
	fmt_fprintf(stderr, "rtprobe: --trace=auto: %s; the run continues "
		    "untraced\n", why);
	fmt_snprintf(t->note, sizeof(t->note), "%s", why);
	return 0;
}

int trace_restore_failed(const struct run *r)
{
	return r->trace && r->trace->active && !r->trace->restored;
}

uint64_t trace_level(const struct run *r)
{
	if (!r->trace || !r->trace->active)
		return UINT64_MAX;
	return r->c->trace_threshold_ns;
}

int trace_active(const struct run *r)
{
	return r->trace && r->trace->active;
}

/*
 * Read what trace_pipe holds for one CPU, up to the events of this moment;
 * drop text older than keep_ns.  Reading stops at the first event newer than
 * the call: on a slow (emulated) board the events come as fast as they are
 * read (each record the probe prints on a serial console raises the UART's
 * interrupts), and reading on until the pipe is empty held the probe for
 * minutes.
 */
static void trace_read_cpu(struct trace_run *t, struct trace_cpu *tc)
{
	uint64_t now = mono_ns(), cutoff;
	uint64_t until = (uint64_t)((int64_t)now - t->trace_to_mono_ns);
	size_t old = tc->len, drop;
	char *nb;
	ssize_t n;

	for (;;) {
		if (tc->cap - tc->len < 65536) {
			nb = realloc(tc->text, tc->cap * 2 + 131072);
			if (!nb)
				break;
			tc->text = nb;
			tc->cap = tc->cap * 2 + 131072;
		}
		n = read(tc->fd, tc->text + tc->len, tc->cap - tc->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		tc->len += (size_t)n;
		if (tracetext_reached(tc->text + old, tc->len - old, until))
			break;
	}
	tc->read_mono_ns = now;
	t->lost += tracetext_lost(tc->text + old, tc->len - old);
	cutoff = (uint64_t)((int64_t)(now > t->keep_ns ? now - t->keep_ns : 0) -
			    t->trace_to_mono_ns);
	drop = tracetext_trim(tc->text, tc->len, cutoff);
	/* a flood of events: keep the newest half of the bound */
	if (tc->len - drop > TRACE_MAX_TEXT) {
		const char *nl = memchr(tc->text + tc->len - TRACE_MAX_TEXT / 2,
					'\n', TRACE_MAX_TEXT / 2);

		drop = nl ? (size_t)(nl + 1 - tc->text) : tc->len;
	}
	if (drop) {
		memmove(tc->text, tc->text + drop, tc->len - drop);
		tc->len -= drop;
	}
}

void trace_poll(struct run *r)
{
	struct trace_run *t = r->trace;
	int k;

	if (!t || !t->active)
		return;
	for (k = 0; k < t->ncpus; k++)
		trace_read_cpu(t, &t->cpus[k]);
}

/* Bytes a JSON string of n bytes takes: its escaped body and the quotes. */
static size_t json_len(const char *s, size_t n)
{
	return json_escape(s, n, NULL, 0) + 2;
}

/* Bytes one event takes in a trace record. */
static size_t event_len(const struct trace_run *t, const struct trace_line *e,
			int name)
{
	return 48 + json_len(e->comm, e->comm_len) +
	       strlen(t->names[name]) + json_len(e->text, e->text_len);
}

/* Write the trace record of one spike from what was read of its CPU. */
static void trace_write(struct run *r, int idx, const struct trace_cpu *tc,
			const struct series_spike *sp, uint64_t expected,
			uint64_t woke, uint64_t start,
			const struct trace_kept *replaces)
{
	struct trace_run *t = r->trace;
	const uint64_t budget = r->c->trace_budget;
	struct json *j = &r->j;
	struct trace_cut cut;
	size_t kept, first, used = TRACE_RECORD_OVERHEAD, i;
	int64_t off = t->trace_to_mono_ns;
	uint64_t tstart, tend, lost;

	/* The window on the trace clock. */
	tstart = (uint64_t)((int64_t)start - off);
	tend = (uint64_t)((int64_t)woke - off);
	kept = tracetext_cut(tc->text, tc->len, tstart, tend, t->names,
			     t->nenabled, t->lines, t->line_names,
			     TRACE_MAX_WINDOW_EVENTS, &cut);
	first = kept;
	while (first > 0) {
		size_t n = event_len(t, &t->lines[first - 1],
				     t->line_names[first - 1]);

		if (used + n > budget)
			break;
		used += n;
		first--;
	}
	lost = cut.lost;
	record_begin(j, "trace");
	json_u64(j, "series", (uint64_t)idx);
	json_i64(j, "cpu", tc->cpu);
	json_u64(j, "t_ns", sp->t_ns);
	json_u64(j, "latency_ns", sp->latency_ns);
	json_u64(j, "expected_ns", expected);
	json_u64(j, "woke_ns", woke);
	json_u64(j, "window_start_ns", start);
	json_u64(j, "window_end_ns", woke);
	json_str(j, "clock", t->clock);
	json_begin_array(j, "events");
	for (i = first; i < kept; i++) {
		const struct trace_line *e = &t->lines[i];

		json_begin_array(j, NULL);
		json_u64(j, NULL, (uint64_t)((int64_t)e->ts_ns + off));
		json_i64(j, NULL, e->cpu);
		json_i64(j, NULL, e->pid);
		json_strn(j, NULL, e->comm, e->comm_len);
		json_str(j, NULL, t->names[t->line_names[i]]);
		json_strn(j, NULL, e->text, e->text_len);
		json_end_array(j);
	}
	json_end_array(j);
	json_u64(j, "events_in_window", cut.in_window);
	json_u64(j, "events_dropped", cut.in_window - (kept - first));
	json_u64(j, "lost", lost);
	if (replaces) {
		json_begin_object(j, "replaces");
		json_u64(j, "series", (uint64_t)replaces->series);
		json_u64(j, "t_ns", replaces->t_ns);
		json_end_object(j);
	} else {
		json_null(j, "replaces");
	}
	json_end_object(j);
	run_emit(r);
}

/*
 * The slot a spike of latency_ns takes in the budget: a free one, else the
 * smallest kept spike when this one is larger (*replaced set); -1: keep none.
 */
static int trace_slot(const struct trace_run *t, int max, uint64_t latency_ns,
		      bool *replaced)
{
	int i, low = 0;

	*replaced = false;
	if (t->nkept < max)
		return t->nkept;
	for (i = 1; i < t->nkept; i++)
		if (t->kept[i].latency_ns < t->kept[low].latency_ns)
			low = i;
	if (t->nkept == 0 || latency_ns <= t->kept[low].latency_ns)
		return -1;
	*replaced = true;
	return low;
}

void trace_spike(struct run *r, int idx, int cpu,
		 const struct series_spike *sp)
{
	struct trace_run *t = r->trace;
	uint64_t expected, woke, start, margin = r->c->trace_margin_ns;
	struct trace_cpu *tc = NULL;
	struct trace_kept old;
	bool replaced;
	int k, slot;

	if (!t || !t->active || sp->latency_ns < r->c->trace_threshold_ns)
		return;
	t->spikes_over++;
	for (k = 0; k < t->ncpus; k++)
		if (t->cpus[k].cpu == cpu)
			tc = &t->cpus[k];
	if (!tc)
		return;
	slot = trace_slot(t, r->c->trace_max_spikes, sp->latency_ns, &replaced);
	if (slot < 0)
		return;
	old = t->kept[slot];
	expected = (uint64_t)((int64_t)(r->t0_ns +
					series_origin(r->series[idx]->s) +
					sp->t_ns) + t->run_to_mono_ns);
	woke = expected + sp->latency_ns;
	start = expected > margin ? expected - margin : 0;
	if (woke >= tc->read_mono_ns)
		trace_read_cpu(t, tc);
	trace_write(r, idx, tc, sp, expected, woke, start,
		    replaced ? &old : NULL);
	t->kept[slot] = (struct trace_kept){ idx, sp->t_ns, sp->latency_ns };
	if (replaced)
		t->replaced++;
	else
		t->nkept++;
}

/*
 * Close the per-CPU trace pipes (once): an open trace_pipe keeps tracefs busy, and a
 * tracefs the probe mounted could not be unmounted again while one was open.
 */
static void trace_close_pipes(struct trace_run *t)
{
	int k;

	for (k = 0; k < t->ncpus; k++) {
		if (t->cpus[k].fd >= 0 && close(t->cpus[k].fd))
			fmt_fprintf(stderr, "rtprobe: --trace: closing the trace "
				    "pipe of CPU %d: %s\n", t->cpus[k].cpu,
				    strerror(errno));
		t->cpus[k].fd = -1;
	}
}

void trace_summary(struct run *r)
{
	struct trace_run *t = r->trace;
	struct json *j = &r->j;
	char why[200];
	int i;

	if (!t)
		return;
	if (t->state_saved) {
		trace_close_pipes(t);
		t->restored = !tracefs_restore(&t->st, why, sizeof(why));
		if (!t->restored) {
			fmt_snprintf(t->restore_error, sizeof(t->restore_error),
				     "%s", why);
			fmt_fprintf(stderr, "rtprobe: --trace: tracefs not put "
				    "back: %s; check %s (exit 3)\n", why,
				    t->dir);
		}
		t->state_saved = false;
	}
	record_begin(j, "trace_summary");
	json_str(j, "tracefs", t->dir[0] ? t->dir : NULL);
	json_str(j, "clock", t->active ? t->clock : NULL);
	json_u64(j, "threshold_ns", r->c->trace_threshold_ns);
	if (t->active)
		json_u64(j, "buffer_kb", t->buffer_kb);
	else
		json_null(j, "buffer_kb");
	json_u64(j, "max_spikes", (uint64_t)r->c->trace_max_spikes);
	json_u64(j, "budget_bytes", r->c->trace_budget);
	json_begin_array(j, "events_enabled");
	for (i = 0; i < t->nenabled; i++)
		json_str(j, NULL, t->enabled[i]);
	json_end_array(j);
	json_begin_array(j, "events_missing");
	for (i = 0; i < t->nmissing; i++)
		json_str(j, NULL, t->missing[i]);
	json_end_array(j);
	json_u64(j, "spikes_over", t->spikes_over);
	json_u64(j, "spikes_traced", (uint64_t)t->nkept);
	json_u64(j, "spikes_untraced", t->spikes_over - (uint64_t)t->nkept);
	json_u64(j, "spikes_replaced", t->replaced);
	json_u64(j, "lost", t->lost);
	json_bool(j, "restored", t->active ? t->restored : true);
	json_str(j, "note", t->restore_error[0] ? t->restore_error :
			    t->note[0] ? t->note : NULL);
	json_end_object(j);
	run_emit(r);
}

void trace_end(struct run *r)
{
	struct trace_run *t = r->trace;
	char why[200];
	int k;

	if (!t)
		return;
	trace_close_pipes(t);
	if (t->state_saved && tracefs_restore(&t->st, why, sizeof(why)))
		fmt_fprintf(stderr, "rtprobe: --trace: %s\n", why);
	for (k = 0; k < t->ncpus; k++)
		free(t->cpus[k].text);
	free(t->cpus);
	free(t->kept);
	free(t->lines);
	free(t->line_names);
	free(t);
	r->trace = NULL;
}
