// SPDX-License-Identifier: MIT
/*
 * run.c - the life cycle of one measurement run: RT set-up, output,
 * threads, collection, result (see run.h; run_impl.h for the files that
 * write its records, raw samples and spike hooks; engine.h for the
 * hand-over protocol with its series).
 */
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clocksleep.h"
#include "fmt.h"
#include "opt.h"
#include "rtprobe.h"
#include "run_impl.h"
#include "series.h"
#include "trace.h"

/* series_owner callbacks: the run behind a series' void pointer. */
static void run_owner_notify(void *ctx)
{
	run_notify(ctx);
}

static void run_owner_stop(void *ctx, const char *why)
{
	run_request_stop(ctx, why);
}

static bool run_owner_break(void *ctx, int series_index, uint64_t t_ns,
			    uint64_t latency_ns)
{
	return run_break_hit(ctx, series_index, t_ns, latency_ns);
}

struct run *run_create(const struct rtp_common *c, int argc, char **argv)
{
	struct run *r = calloc(1, sizeof(*r));

	if (!r) {
		fmt_fprintf(stderr, "rtprobe: out of memory creating the run\n");
		exit(RTP_EXIT_ENV);
	}
	r->c = c;
	r->owner = (struct series_owner){
		.ctx = r,
		.notify = run_owner_notify,
		.stop = run_owner_stop,
		.break_hit = run_owner_break,
	};
	r->argc = argc;
	r->argv = argv;
	r->trace_on_fd = -1;
	r->trace_marker_fd = -1;
	r->child = -1;
	r->rt.pmqos_fd = -1;
	atomic_init(&r->stop, 0);
	atomic_init(&r->live, 0);
	atomic_init(&r->stop_why, NULL);
	atomic_init(&r->break_taken, 0);
	atomic_init(&r->raw_stop, 0);
	json_init(&r->j);
	return r;
}

void run_set_params(struct run *r, run_json_fn fn, void *ctx)
{
	r->params_fn = fn;
	r->params_ctx = ctx;
}

void run_set_result_data(struct run *r, run_json_fn fn, void *ctx)
{
	r->data_fn = fn;
	r->data_ctx = ctx;
}

void run_set_verdicts(struct run *r, run_verdict_fn fn, void *ctx)
{
	r->verdict_fn = fn;
	r->verdict_ctx = ctx;
}

struct series *run_add_series(struct run *r, const char *label, int cpu)
{
	struct run_series *rs;

	if (r->nseries >= COMMON_MAX_THREADS) {
		fmt_fprintf(stderr, "rtprobe: too many series (at most %d)\n",
			    COMMON_MAX_THREADS);
		exit(RTP_EXIT_USAGE);
	}
	rs = calloc(1, sizeof(*rs));
	if (rs)
		rs->hist = calloc(1, sizeof(*rs->hist));
	if (rs && rs->hist)
		rs->s = series_create(&r->owner, r->c, &r->stop, r->nseries,
				      cpu);
	if (!rs || !rs->hist || !rs->s) {
		fmt_fprintf(stderr, "rtprobe: out of memory for series %d "
			    "(lower --raw-buffer or --threads)\n", r->nseries);
		exit(RTP_EXIT_ENV);
	}
	fmt_snprintf(rs->label, sizeof(rs->label), "%s", label);
	rs->cpu = cpu;
	rs->min_ns = UINT64_MAX;
	rs->w_min_ns = UINT64_MAX;
	r->series[r->nseries++] = rs;
	return rs->s;
}

/*
 * Open the records' output: --output FILE, else stdout; a terminal gets
 * no records unless --json (a summary at the end instead, said once).
 */
static int run_open_output(struct run *r)
{
	const struct rtp_common *c = r->c;
	int rc;

	if (output_is_terminal(c->output_path, c->json)) {
		r->out_discard = true;
		return 0;
	}
	rc = output_open(&r->out, "--output", c->output_path);
	if (!rc)
		r->out_open = true;
	return rc;
}

/* With --trace, queue spikes from the trace threshold on (if lower). */
static void run_set_spike_level(struct run *r)
{
	uint64_t level = trace_level(r);
	int i;

	if (level == UINT64_MAX)
		return;
	for (i = 0; i < r->nseries; i++)
		series_set_spike_level(r->series[i]->s, level);
}

/* Pin the calling (collector) thread to the allowed CPUs no series measures. */
static void run_pin_collector(struct run *r)
{
	cpu_set_t allowed;
	int i;

	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		return;
	for (i = 0; i < r->nseries; i++)
		if (r->series[i]->cpu >= 0)
			CPU_CLR((size_t)r->series[i]->cpu, &allowed);
	if (!CPU_COUNT(&allowed))
		return;
	if (pthread_setaffinity_np(pthread_self(), sizeof(allowed),
				   &allowed) == 0) {
		r->collector_cpus = allowed;
		r->collector_pinned = true;
	}
}

/* The threads are started: the main thread goes back to its own policy. */
static void run_start_done(struct run *r)
{
	char err[160];

	if (rt_start_drop(&r->rt, err, sizeof(err)))
		fmt_fprintf(stderr, "rtprobe: warning: %s\n", err);
}

int run_begin(struct run *r)
{
	const struct rtp_common *c = r->c;
	char err[256];
	uint64_t now, unix_now;
	int rc;

	r->pid = getpid();
	sigemptyset(&r->sigs);
	sigaddset(&r->sigs, SIGINT);
	sigaddset(&r->sigs, SIGTERM);
	sigaddset(&r->sigs, SIGHUP);
	sigaddset(&r->sigs, SIGCHLD);
	sigaddset(&r->sigs, SIGUSR1);
	rc = pthread_sigmask(SIG_BLOCK, &r->sigs, NULL);
	if (rc) {
		fmt_fprintf(stderr, "rtprobe: blocking signals: %s\n",
			    strerror(rc));
		return RTP_EXIT_ENV;
	}
	signal(SIGPIPE, SIG_IGN);
	r->live_line = c->verbose || isatty(STDERR_FILENO);
	if (c->break_on_ns && !SIMULATED(c->simulate)) {
		rc = run_open_tracefs(r);
		if (rc)
			return rc;
	}
	rc = trace_begin(r);
	if (rc)
		return rc;
	run_set_spike_level(r);
	rc = rt_prepare(c, &r->rt, err, sizeof(err));
	if (rc) {
		fmt_fprintf(stderr, "rtprobe: %s\n", err);
		return rc;
	}
	if (r->live_line && !SIMULATED(c->simulate)) {
		if (c->mlock && !r->rt.mlocked)
			fmt_fprintf(stderr, "rtprobe: warning: %s\n",
				    r->rt.mlock_error);
		if (c->pmqos && r->rt.pmqos_fd < 0)
			fmt_fprintf(stderr, "rtprobe: warning: PM-QoS not held: "
				    "%s\n", r->rt.pmqos_error);
	}
	rc = run_open_output(r);
	if (rc) {
		rt_release(&r->rt);
		return rc;
	}
	run_pin_collector(r);
	/* The start runs at the threads' policy, up to run_finish (rt.h). */
	if (rt_start_raise(c, &r->rt, err, sizeof(err)))
		fmt_fprintf(stderr, "rtprobe: warning: %s\n", err);
	now = clock_now_ns(c->clock);
	unix_now = clock_now_ns(CLOCK_REALTIME);
	r->t0_ns = now + (SIMULATED(c->simulate) ? 0 : RUN_T0_AHEAD_NS);
	r->t0_unix_ns = unix_now + (r->t0_ns - now);
	rc = run_raw_start(r);
	if (rc) {
		output_discard(&r->out);
		r->out_open = false;
		run_start_done(r);
		rt_release(&r->rt);
		return rc;
	}
	/* From here on records go through the queue (outq.h), if it starts. */
	if (r->out_open && !outq_start(&r->outq, &r->out, OUTQ_BYTES))
		r->outq_on = true;
	run_write_start(r);
	r->began = true;
	return 0;
}

/*
 * Thread wrapper: apply policy and pinning (already in effect when the
 * thread was started with them, rt_thread_start; pins it where the C library
 * could not; sets SCHED_DEADLINE), run the test's body.
 */
static void *run_thread_main(void *arg)
{
	struct run_thread *t = arg;
	struct run *r = t->run;
	int rc;

	/* read by the main thread only after pthread_join */
	if (t->rs)
		t->rs->tid = (int)syscall(SYS_gettid);
	if (SIMULATED(r->c->simulate)) {
		rt_apply_self(r->c, POLICY_OTHER, 0, t->cpu, t->error,
			      sizeof(t->error));
		t->error[0] = '\0';
		rc = 0;
	} else {
		rc = rt_apply_self(r->c, t->policy, t->priority, t->cpu,
				   t->error, sizeof(t->error));
	}
	if (rc) {
		if (t->rs)
			fmt_snprintf(t->rs->setup_error,
				     sizeof(t->rs->setup_error), "%s", t->error);
		run_request_stop(r, "error");
	} else {
		t->fn(t->arg);
	}
	atomic_fetch_sub(&r->live, 1);
	run_notify(r);
	return NULL;
}

int run_spawn(struct run *r, void *(*fn)(void *), void *arg, int cpu,
	      enum rtp_policy policy, int priority)
{
	struct run_thread *t;
	bool at_policy;
	int i, rc;

	if (r->nthreads >= (int)(sizeof(r->threads) / sizeof(r->threads[0])))
		return EAGAIN;
	t = calloc(1, sizeof(*t));
	if (!t)
		return ENOMEM;
	t->run = r;
	t->fn = fn;
	t->arg = arg;
	t->cpu = cpu;
	t->policy = policy;
	t->priority = priority;
	for (i = 0; i < r->nseries; i++) {
		if (!r->series[i]->claimed && r->series[i]->cpu == cpu) {
			t->rs = r->series[i];
			t->rs->claimed = true;
			break;
		}
	}
	/*
	 * The thread starts at its policy and priority (and, with glibc,
	 * pinned): on a CPU crowded with ordinary tasks it must not wait for
	 * a turn among them before it can raise itself (rt.h).
	 */
	atomic_fetch_add(&r->live, 1);
	rc = rt_thread_start(&t->tid, RUN_THREAD_STACK,
			     SIMULATED(r->c->simulate) ? POLICY_OTHER : policy,
			     priority, cpu, run_thread_main, t, &at_policy,
			     t->error, sizeof(t->error));
	if (rc) {
		atomic_fetch_sub(&r->live, 1);
		if (t->rs)
			fmt_snprintf(t->rs->setup_error,
				     sizeof(t->rs->setup_error), "%s", t->error);
		free(t);
		run_request_stop(r, "error");
		return rc;
	}
	r->threads[r->nthreads++] = t;
	return 0;
}

void run_add_verdict(struct run *r, const char *name, bool pass,
		     const char *detail)
{
	struct run_verdict *v;

	if (r->nverdicts >= RUN_MAX_VERDICTS)
		return;
	v = &r->verdicts[r->nverdicts++];
	fmt_snprintf(v->name, sizeof(v->name), "%s", name);
	v->pass = pass;
	fmt_snprintf(v->detail, sizeof(v->detail), "%s", detail ? detail : "");
}

/* Print one live line per series that got a window since the last one. */
static void run_live(struct run *r)
{
	struct run_series *rs;
	bool warm;
	uint64_t n, sum, mn, mx, ov;
	int i;

	for (i = 0; i < r->nseries; i++) {
		rs = r->series[i];
		if (!rs->fresh)
			continue;
		rs->fresh = false;
		warm = rs->count == 0;
		n = warm ? rs->w_count : rs->count;
		sum = warm ? rs->w_sum_ns : rs->sum_ns;
		mn = warm ? rs->w_min_ns : rs->min_ns;
		mx = warm ? rs->w_max_ns : rs->max_ns;
		ov = warm ? rs->w_overruns : rs->overruns;
		if (!n)
			continue;
		fmt_fprintf(stderr, "rtprobe: %-6s %s n=%llu min %.3f avg %.3f "
			    "max %.3f us overruns %llu\n", rs->label,
			    warm ? "warm-up " : "measured",
			    (unsigned long long)n, mn / 1e3,
			    (double)sum / (double)n / 1e3, mx / 1e3,
			    (unsigned long long)ov);
	}
}

/*
 * One spike of series idx: its record, then its trace events (--trace) and
 * --on-spike when it crossed the lowest threshold.
 */
static void run_spike(struct run *r, int idx, const struct series_spike *sp)
{
	run_take_spike(r, idx, sp);
	trace_spike(r, idx, r->series[idx]->cpu, sp);
	if (r->c->on_spike_cmd && r->c->nthresholds &&
	    sp->latency_ns >= r->c->thresholds_ns[0])
		run_on_spike(r, idx, sp);
}

/* Emit every published window and pending spike of every series. */
static void run_drain(struct run *r)
{
	struct series_window w;
	struct series_spike sp;
	struct hist32 *h;
	int i;

	run_check_output(r);
	trace_poll(r);
	for (i = 0; i < r->nseries; i++) {
		struct run_series *rs = r->series[i];

		while (series_pop_spike(rs->s, &sp))
			run_spike(r, i, &sp);
		while (series_take_window(rs->s, &w, &h)) {
			/* Format, give the slot back, then write. */
			run_take_window(r, rs, i, &w, h);
			series_window_done(rs->s);
			run_emit_window(r);
		}
		/* Spikes pushed while the window was written. */
		while (series_pop_spike(rs->s, &sp))
			run_spike(r, i, &sp);
	}
	if (r->live_line)
		run_live(r);
}

/*
 * How long the collector may sleep before the next window boundary.  It wakes
 * once a second; with windows shorter than a second, twice a window, so each
 * window is collected before the next one closes (else the producer, finding
 * the queue full, merges windows: see series.h).
 */
static void run_timeout(const struct run *r, struct timespec *ts)
{
	uint64_t now, next, k, period;

	if (SIMULATED(r->c->simulate)) {
		ts->tv_sec = 0;
		ts->tv_nsec = 100 * (long)NSEC_PER_MSEC;
		return;
	}
	period = r->c->window_ns < NSEC_PER_SEC ? r->c->window_ns / 2 :
						   NSEC_PER_SEC;
	if (trace_active(r) && period > RUN_TRACE_POLL_NS)
		period = RUN_TRACE_POLL_NS;
	now = clock_now_ns(r->c->clock);
	next = r->t0_ns + RUN_COLLECT_OFFSET_NS;
	if (now >= next) {
		k = (now - next) / period + 1;
		next += k * period;
	}
	ts->tv_sec = (time_t)((next - now) / NSEC_PER_SEC);
	ts->tv_nsec = (long)((next - now) % NSEC_PER_SEC);
}

/* Wait for a signal or the next window boundary and act on it. */
static void run_wait(struct run *r)
{
	struct timespec ts;
	siginfo_t info;
	int sig;

	run_timeout(r, &ts);
	sig = sigtimedwait(&r->sigs, &info, &ts);
	if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
		if (!r->signo)
			r->signo = sig;
		run_request_stop(r, "interrupted");
	} else if (sig == SIGCHLD) {
		run_reap(r);
	}
}

/* Add the verdict of each --threshold. */
static void run_threshold_verdicts(struct run *r)
{
	char name[96], detail[160], us[32];
	uint64_t n;
	int i, k;

	for (i = 0; i < r->c->nthresholds; i++) {
		n = 0;
		for (k = 0; k < r->nseries; k++)
			n += r->series[k]->exceed[i];
		run_fmt_us(us, sizeof(us), r->c->thresholds_ns[i]);
		fmt_snprintf(name, sizeof(name), "threshold %s", us);
		fmt_snprintf(detail, sizeof(detail), "%llu sample%s >= %s",
			     (unsigned long long)n, n == 1 ? "" : "s", us);
		run_add_verdict(r, name, n == 0, detail);
	}
}

/* Close the raw file and the output (renaming their temporary files). */
static int run_close_outputs(struct run *r, int rc)
{
	int orc;

	if (r->raw_open) {
		orc = output_close(&r->raw);
		if (orc)
			rc = orc;
	}
	if (r->out_open) {
		orc = output_close(&r->out);
		if (orc)
			rc = orc;
	}
	return rc;
}

/* Free everything the run owns. */
static void run_free(struct run *r)
{
	int i;

	for (i = 0; i < r->nseries; i++) {
		series_destroy(r->series[i]->s);
		free(r->series[i]->hist);
		free(r->series[i]);
	}
	for (i = 0; i < r->nthreads; i++)
		free(r->threads[i]);
	if (r->trace_on_fd >= 0)
		close(r->trace_on_fd);
	if (r->trace_marker_fd >= 0)
		close(r->trace_marker_fd);
	trace_end(r);
	json_free(&r->j);
	free(r);
}

int run_finish(struct run *r)
{
	uint64_t elapsed;
	int i, rc;

	run_start_done(r);
	if (!r->began) {
		run_free(r);
		return RTP_EXIT_ENV;
	}
	while (atomic_load(&r->live) > 0) {
		run_wait(r);
		run_drain(r);
	}
	for (i = 0; i < r->nthreads; i++)
		pthread_join(r->threads[i]->tid, NULL);
	r->threads_done = true;
	run_drain(r);
	elapsed = clock_now_ns(r->c->clock);
	elapsed = elapsed > r->t0_ns ? elapsed - r->t0_ns : 0;
	run_raw_stop(r);
	run_wait_child(r);
	run_threshold_verdicts(r);
	if (r->verdict_fn)
		r->verdict_fn(r, r->verdict_ctx);
	trace_summary(r);
	rc = run_write_result(r, elapsed);
	if (r->outq_on) {
		/* Every record written: this waits for a slow reader. */
		outq_stop(&r->outq);
		r->outq_on = false;
	}
	if (!rc && trace_restore_failed(r))
		rc = RTP_EXIT_ENV; /* the kernel is left tracing: said on stderr */
	rt_release(&r->rt);
	rc = run_close_outputs(r, rc);
	if (r->out_discard)
		run_summary(r, rc);
	run_free(r);
	return rc;
}
