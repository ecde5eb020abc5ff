// SPDX-License-Identifier: MIT
/*
 * periodic.c - `rtprobe periodic`: periodic drift (after LTP sched_latency).
 *
 * One thread (by default) is released at r_i = t0 + i * period, sleeping with
 * clock_nanosleep(TIMER_ABSTIME) and doing --busy worth of spinning after each
 * wake-up.  Its delay is delay_i = now - t0 - i * period (docs/definitions.md);
 * delay_0 is the start latency.  When the busy work ends after one or more
 * later releases, those releases are missed periods: counted as overruns and
 * skipped, the schedule continuing at the next release still in the future.
 * A delay at or above --criterion is a failed iteration; any failed measured
 * iteration fails the verdict (exit 1).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clocksleep.h"
#include "common.h"
#include "fmt.h"
#include "opt.h"
#include "percpu.h"
#include "rtprobe.h"
#include "run.h"
#include "series.h"
#include "sim.h"
#include "testdesc.h"

#define PERIODIC_DEFAULT_PERIOD_NS (5 * NSEC_PER_MSEC)
#define PERIODIC_DEFAULT_CRITERION_NS (100 * NSEC_PER_USEC)
#define PERIODIC_DEFAULT_DURATION_NS (3 * NSEC_PER_SEC)

enum {
	OPT_PERIOD = 1,
	OPT_BUSY,
	OPT_CRITERION,
};

struct periodic_cfg {
	uint64_t period_ns;
	uint64_t busy_ns;
	uint64_t criterion_ns; /* 0: no criterion */
	uint64_t warmup_ns;
};

/* One measuring thread: its inputs and what it found (read after join). */
struct periodic_thread {
	struct run *run;
	struct series *series;
	const struct periodic_cfg *cfg;
	bool simulate;
	bool started;
	int64_t start_latency_ns;
	uint64_t iterations;    /* measured (non-warm-up) iterations */
	uint64_t failed;        /* measured delays >= criterion */
	uint64_t warmup_failed; /* warm-up delays >= criterion */
	uint64_t missed;        /* missed periods, warm-up included */
	int64_t max_delay_ns;   /* largest measured delay */
	char error[128];
};

struct periodic {
	struct periodic_cfg cfg;
	struct periodic_thread *threads;
	int nthreads;
};

/* Format a duration in the largest unit that divides it ("100us", "5ms"). */
static const char *fmt_duration(uint64_t ns, char *buf, size_t len)
{
	if (ns && ns % NSEC_PER_SEC == 0)
		fmt_snprintf(buf, len, "%" PRIu64 "s", (uint64_t)(ns / NSEC_PER_SEC));
	else if (ns && ns % NSEC_PER_MSEC == 0)
		fmt_snprintf(buf, len, "%" PRIu64 "ms", (uint64_t)(ns / NSEC_PER_MSEC));
	else if (ns && ns % NSEC_PER_USEC == 0)
		fmt_snprintf(buf, len, "%" PRIu64 "us", (uint64_t)(ns / NSEC_PER_USEC));
	else
		fmt_snprintf(buf, len, "%" PRIu64 "ns", ns);
	return buf;
}

/* Spin until the run's clock reaches end_ns; returns the last reading. */
static uint64_t busy_until(const struct run *r, uint64_t end_ns)
{
	uint64_t now;

	do
		now = run_now_ns(r);
	while (now < end_ns);
	return now;
}

/*
 * Releases after release i that come before end_rel_ns (the end of the busy
 * work, relative to t0) were missed: count them as overruns (those in the
 * warm-up in the warm-up, none past the measured end).  Returns the
 * index of the next release to sleep for, the first at or after end_rel_ns.
 */
static uint64_t next_release(struct periodic_thread *pt, uint64_t i,
			     uint64_t end_rel_ns)
{
	uint64_t period = pt->cfg->period_ns, next;

	/* the usual case, no release missed: no division */
	if (end_rel_ns <= (i + 1) * period)
		return i + 1;
	next = (end_rel_ns + period - 1) / period;
	pt->missed += next - (i + 1);
	series_overrun_periods(pt->series, (i + 1) * period, period,
			       next - (i + 1));
	return next;
}

/*
 * series_add answered SERIES_BUSY: the probe itself (--break-on) held the
 * thread after its work, before release next.  The releases that passed
 * meanwhile are a gap (series.h), not missed periods nor a late next release:
 * the thread was not waiting for them.  The gap spans their periods, so that
 * samples, overruns and gap_ns / period add up to the releases.  Returns the
 * next release to sleep for, the first at or after now.
 */
static __attribute__((noinline)) uint64_t
periodic_busy(struct periodic_thread *pt, uint64_t next)
{
	uint64_t period = pt->cfg->period_ns;
	uint64_t now = run_now_ns(pt->run) - run_t0_ns(pt->run);
	uint64_t after;

	if (now <= next * period)
		return next;
	after = (now + period - 1) / period;
	series_gap(pt->series, next * period, (after - next) * period);
	return after;
}

/*
 * Account for one delay; returns SERIES_DONE when the series is complete,
 * SERIES_BUSY when the probe held the thread (periodic_busy).
 */
static int periodic_record(struct periodic_thread *pt, uint64_t i,
			   uint64_t due_ns, int64_t delay_ns)
{
	bool warm = due_ns < pt->cfg->warmup_ns;
	uint64_t crit = pt->cfg->criterion_ns;

	if (i == 0) {
		pt->started = true;
		pt->start_latency_ns = delay_ns;
	}
	if (crit && delay_ns >= 0 && (uint64_t)delay_ns >= crit) {
		if (warm)
			pt->warmup_failed++;
		else
			pt->failed++;
	}
	if (!warm) {
		pt->iterations++;
		if (delay_ns > pt->max_delay_ns)
			pt->max_delay_ns = delay_ns;
	}
	return series_add(pt->series, due_ns, delay_ns);
}

/* The simulated schedule: delays come from the series' synthetic stream. */
static void periodic_simulate(struct periodic_thread *pt)
{
	struct sim_stream *sim = series_sim(pt->series);
	uint64_t period = pt->cfg->period_ns;
	uint64_t i = 0;

	for (;;) {
		uint64_t due = i * period;
		uint64_t delay;

		if (series_past_end(pt->series, due) || run_stopping(pt->run))
			break;
		delay = sim_next_ns(sim);
		if (periodic_record(pt, i, due, (int64_t)delay) == SERIES_DONE)
			break;
		i = next_release(pt, i, due + delay + pt->cfg->busy_ns);
	}
}

/* The real schedule: sleep, read the clock, busy work, account. */
static void periodic_measure(struct periodic_thread *pt)
{
	struct run *r = pt->run;
	uint64_t t0 = run_t0_ns(r);
	uint64_t period = pt->cfg->period_ns;
	uint64_t i = 0;

	for (;;) {
		uint64_t due = i * period;
		uint64_t woke, end;
		int err, rc;

		if (series_past_end(pt->series, due) || run_stopping(r))
			break;
		err = clock_sleep_until(run_common(r)->clock, t0 + due);
		if (err) {
			fmt_snprintf(pt->error, sizeof(pt->error),
				     "clock_nanosleep: %s", strerror(err));
			series_fail(pt->series, pt->error);
			break;
		}
		woke = run_now_ns(r);
		end = pt->cfg->busy_ns ? busy_until(r, woke + pt->cfg->busy_ns)
				       : woke;
		rc = periodic_record(pt, i, due, (int64_t)(woke - (t0 + due)));
		if (rc == SERIES_DONE)
			break;
		i = next_release(pt, i, end - t0);
		if (rc == SERIES_BUSY)
			i = periodic_busy(pt, i);
	}
}

/* Thread body. */
static void *periodic_thread_fn(void *arg)
{
	struct periodic_thread *pt = arg;

	if (SIMULATED(pt->simulate))
		periodic_simulate(pt);
	else
		periodic_measure(pt);
	series_finish(pt->series);
	return NULL;
}

/* Start record "params". */
static void periodic_write_params(struct json *j, void *ctx)
{
	const struct periodic *p = ctx;

	json_u64(j, "period_ns", p->cfg.period_ns);
	json_u64(j, "busy_ns", p->cfg.busy_ns);
	if (p->cfg.criterion_ns)
		json_u64(j, "criterion_ns", p->cfg.criterion_ns);
	else
		json_null(j, "criterion_ns");
}

/* Result record "data": start latency, failures and missed periods per thread. */
static void periodic_write_data(struct json *j, void *ctx)
{
	const struct periodic *p = ctx;
	uint64_t failed = 0, missed = 0;
	int i;

	json_begin_array(j, "threads");
	for (i = 0; i < p->nthreads; i++) {
		const struct periodic_thread *pt = &p->threads[i];

		failed += pt->failed;
		missed += pt->missed;
		json_begin_object(j, NULL);
		json_u64(j, "series", (uint64_t)series_index(pt->series));
		if (pt->started)
			json_i64(j, "start_latency_ns", pt->start_latency_ns);
		else
			json_null(j, "start_latency_ns");
		json_u64(j, "iterations", pt->iterations);
		json_u64(j, "failed_iterations", pt->failed);
		json_u64(j, "warmup_failed_iterations", pt->warmup_failed);
		json_u64(j, "missed_periods", pt->missed);
		json_str(j, "error", pt->error[0] ? pt->error : NULL);
		json_end_object(j);
	}
	json_end_array(j);
	json_u64(j, "failed_iterations", failed);
	json_u64(j, "missed_periods", missed);
}

/* Verdict: every measured delay below the criterion. */
static void periodic_verdicts(struct run *r, void *ctx)
{
	const struct periodic *p = ctx;
	uint64_t failed = 0, iterations = 0;
	int64_t max_delay = 0, worst_start = INT64_MIN;
	int started = 0;
	char name[64], crit[32], detail[160];
	int i;

	if (!p->cfg.criterion_ns)
		return;
	for (i = 0; i < p->nthreads; i++) {
		failed += p->threads[i].failed;
		iterations += p->threads[i].iterations;
		if (p->threads[i].max_delay_ns > max_delay)
			max_delay = p->threads[i].max_delay_ns;
	}
	fmt_duration(p->cfg.criterion_ns, crit, sizeof(crit));
	fmt_snprintf(name, sizeof(name), "every delay < %s", crit);
	fmt_snprintf(detail, sizeof(detail),
		     "%" PRIu64 " of %" PRIu64 " iterations >= %s (max delay %"
		     PRId64 " ns)", failed, iterations, crit, max_delay);
	run_add_verdict(r, name, failed == 0, detail);
	/* LTP judges the first release separately: it is always warm-up. */
	for (i = 0; i < p->nthreads; i++) {
		if (!p->threads[i].started)
			continue;
		started++;
		if (p->threads[i].start_latency_ns > worst_start)
			worst_start = p->threads[i].start_latency_ns;
	}
	if (!started)
		return;
	fmt_snprintf(name, sizeof(name), "start latency < %s", crit);
	fmt_snprintf(detail, sizeof(detail), "largest start latency %" PRId64
		     " ns", worst_start);
	run_add_verdict(r, name, worst_start < (int64_t)p->cfg.criterion_ns,
			detail);
}

/* Parse --criterion: a duration or "off". */
static uint64_t parse_criterion(const char *text)
{
	uint64_t ns;

	if (!strcmp(text, "off"))
		return 0;
	ns = opt_duration("--criterion", text, "us");
	if (!ns)
		opt_fail("--criterion", text, "must be above 0 (or 'off')");
	return ns;
}

/* Entry point of `rtprobe periodic`. */
static const struct opt_desc periodic_opts[] = {
	{ .name = "period", .id = OPT_PERIOD, .type = OPT_DURATION,
	  .def = "5ms", .unit = "us",
	  .help = HELP_PERIODIC_PERIOD },
	{ .name = "busy", .id = OPT_BUSY, .type = OPT_DURATION, .def = "0",
	  .unit = "us",
	  .help = HELP_PERIODIC_BUSY },
	{ .name = "criterion", .id = OPT_CRITERION, .type = OPT_DURATION,
	  .def = "100us", .unit = "us",
	  .help = HELP_PERIODIC_CRITERION },
	{ .name = NULL },
};

/* periodic's parse state: the test and the text of --busy. */
struct periodic_parse {
	struct periodic p;
	const char *busy_text;
};

/* Defaults: 5 ms period, 100 us criterion, one thread. */
static void periodic_defaults(void *ctx, struct rtp_common *c)
{
	struct periodic_parse *pp = ctx;

	pp->p.cfg.period_ns = PERIODIC_DEFAULT_PERIOD_NS;
	pp->p.cfg.criterion_ns = PERIODIC_DEFAULT_CRITERION_NS;
	c->threads_requested = 1;
}

/* Parse one of periodic's own options. */
static void periodic_option(void *ctx, struct rtp_common *c, int id,
			    const char *arg)
{
	struct periodic_parse *pp = ctx;

	(void)c;
	switch (id) {
	case OPT_PERIOD:
		pp->p.cfg.period_ns = opt_duration("--period", arg, "us");
		if (!pp->p.cfg.period_ns)
			opt_fail("--period", arg, "must be above 0");
		break;
	case OPT_BUSY:
		pp->busy_text = arg;
		pp->p.cfg.busy_ns = opt_duration("--busy", arg, "us");
		break;
	default:
		pp->p.cfg.criterion_ns = parse_criterion(arg);
	}
}

/* --busy must leave time in each period. */
static void periodic_check(void *ctx, struct rtp_common *c)
{
	struct periodic_parse *pp = ctx;

	(void)c;
	if (pp->p.cfg.busy_ns >= pp->p.cfg.period_ns)
		opt_fail("--busy", pp->busy_text,
			 "must be shorter than --period (%" PRIu64 " ns)",
			 pp->p.cfg.period_ns);
}

/* Measure: released every period, busy work after each wake-up. */
static int periodic_run(void *ctx, struct rtp_common *c, int argc,
			char **argv)
{
	struct periodic *p = &((struct periodic_parse *)ctx)->p;
	struct run *r;
	int i, rc;

	p->cfg.warmup_ns = c->warmup_ns;

	p->nthreads = c->nthreads;
	p->threads = calloc((size_t)c->nthreads, sizeof(*p->threads));
	if (!p->threads) {
		fmt_fprintf(stderr, "rtprobe: periodic: out of memory\n");
		return RTP_EXIT_ENV;
	}
	r = run_create(c, argc, argv);
	run_set_params(r, periodic_write_params, p);
	run_set_result_data(r, periodic_write_data, p);
	run_set_verdicts(r, periodic_verdicts, p);
	for (i = 0; i < c->nthreads; i++)
		p->threads[i] = (struct periodic_thread){
			.run = r,
			.series = percpu_add_series(r, c, i),
			.cfg = &p->cfg,
			.simulate = SIMULATED(c->simulate),
		};
	rc = percpu_run(r, c, periodic_thread_fn, p->threads,
			sizeof(*p->threads));
	/* the run is finished and written: the threads are done */
	free(p->threads);
	p->threads = NULL;
	return rc;
}

const struct test_desc test_periodic = {
	.name = "periodic",
	.summary = "periodic drift (LTP sched_latency)",
	.intro = INTRO_PERIODIC,
	.examples = EXAMPLES_PERIODIC,
	.traits = TEST_TIMED | TEST_SERIES | TEST_WARMUP | TEST_SIMULATE |
		  TEST_NO_DEADLINE | TEST_OWN_CPUS,
	.host = {
		.busy_loop = "busy",
		.figures = TEST_LIST("failed_iterations", "missed_periods",
				     "threads"),
		.layouts = TEST_LIST("celleb"),
	},
	.default_duration_ns = PERIODIC_DEFAULT_DURATION_NS,
	.cpu_option = "cpus",
	.options = periodic_opts,
	.ctx_size = sizeof(struct periodic_parse),
	.defaults = periodic_defaults,
	.option = periodic_option,
	.check = periodic_check,
	.run = periodic_run,
};
