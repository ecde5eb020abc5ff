// SPDX-License-Identifier: MIT
/*
 * noise.c - `rtprobe noise`: what interrupts a busy loop (after oslat/hwlat).
 *
 * One thread per measuring CPU, pinned, spins reading the clock.  Two
 * consecutive readings normally differ by the cost of one read (tens of ns);
 * a gap of at least --gap-threshold means something else ran on the CPU
 * (an interrupt, a tick, a kernel thread, the hypervisor).  Each such gap is
 * a sample (t_ns: when it began; latency: its length); the time stolen is
 * the sum of those gaps.  Nothing but the clock read runs in the loop; the
 * end of the run is checked every NOISE_CHECK_EVERY iterations.
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clocksleep.h"
#include "common.h"
#include "fmt.h"
#include "opt.h"
#include "numtext.h"
#include "percpu.h"
#include "rtprobe.h"
#include "run.h"
#include "series.h"
#include "sim.h"
#include "testdesc.h"

#define NOISE_DEFAULT_THRESHOLD_NS NSEC_PER_USEC
#define NOISE_DEFAULT_DURATION_NS (3 * NSEC_PER_SEC)
#define NOISE_MAX_DURATION_NS (3600 * NSEC_PER_SEC)
#define NOISE_CHECK_EVERY 1024u
#define NOISE_CALIBRATE_READS 2000

enum {
	OPT_GAP_THRESHOLD = 1,
	OPT_FORCE,
};

struct noise_cfg {
	uint64_t threshold_ns;
	bool force;
	uint64_t warmup_ns;
	uint64_t end_ns;          /* warm-up + duration, relative to t0 */
	long rt_runtime_us;       /* -1: unlimited; -2: unknown */
	long rt_period_us;        /* -2: unknown */
	uint64_t read_cost_ns;    /* minimal gap measured before the run */
};

/* One measuring thread and what it found (measured part only). */
struct noise_thread {
	struct run *run;
	struct series *series;
	const struct noise_cfg *cfg;
	bool simulate;
	uint64_t loops;
	uint64_t busy_ns;        /* time spent looping */
	uint64_t gaps;
	uint64_t stolen_ns;
	uint64_t warmup_gaps;
	uint64_t min_gap_ns;     /* smallest reading-to-reading step */
};

struct noise {
	struct noise_cfg cfg;
	struct noise_thread *threads;
	int nthreads;
};

/*
 * Spin until the clock reaches end_abs (or a stop), recording gaps of at
 * least the threshold.  After recording, the loop restarts its reference
 * reading so the cost of recording is not counted as a gap; a --break-on
 * hold there is a gap of the series (series.h), not a sample.
 */
static void noise_spin(struct noise_thread *nt, clockid_t clock,
		       uint64_t t0, uint64_t end_abs, bool warm)
{
	uint64_t thr = nt->cfg->threshold_ns, min_gap = nt->min_gap_ns;
	uint64_t prev, now, gap, loops = 0, start, held;
	unsigned int check = NOISE_CHECK_EVERY;
	int rc;

	prev = start = clock_now_ns(clock);
	for (;;) {
		now = clock_now_ns(clock);
		gap = now - prev;
		if (gap >= thr) {
			/* begun after the measured end: the series drops it too */
			if (series_past_end(nt->series, prev - t0))
				break;
			/*
			 * Classed by when it began, as the series classes it:
			 * the warm-up loop checks its end only every
			 * NOISE_CHECK_EVERY readings, so it may run a little
			 * past warmup_ns.
			 */
			if (prev - t0 < nt->cfg->warmup_ns) {
				nt->warmup_gaps++;
			} else {
				nt->gaps++;
				nt->stolen_ns += gap;
			}
			rc = series_add(nt->series, prev - t0, (int64_t)gap);
			if (rc == SERIES_DONE)
				break;
			held = now;
			now = clock_now_ns(clock);
			/* --break-on held the loop: not measured, no sample */
			if (rc == SERIES_BUSY)
				series_gap(nt->series, held - t0, now - held);
		} else if (gap < min_gap) {
			min_gap = gap;
		}
		loops++;
		if (!--check) {
			check = NOISE_CHECK_EVERY;
			if (now >= end_abs || run_stopping(nt->run))
				break;
		}
		prev = now;
	}
	nt->min_gap_ns = min_gap;
	if (!warm) {
		nt->loops += loops;
		nt->busy_ns += now - start;
	}
}

/* The simulated loop: each draw is one reading-to-reading step. */
static void noise_simulate(struct noise_thread *nt)
{
	struct sim_stream *sim = series_sim(nt->series);
	uint64_t t = 0, gap;

	while (t < nt->cfg->end_ns && !run_stopping(nt->run)) {
		bool warm = t < nt->cfg->warmup_ns;

		gap = sim_next_ns(sim);
		if (!warm) {
			nt->loops++;
			nt->busy_ns += gap;
		}
		if (gap >= nt->cfg->threshold_ns) {
			if (warm) {
				nt->warmup_gaps++;
			} else {
				nt->gaps++;
				nt->stolen_ns += gap;
			}
			if (series_add(nt->series, t, (int64_t)gap) ==
			    SERIES_DONE)
				break;
		} else if (gap < nt->min_gap_ns) {
			nt->min_gap_ns = gap;
		}
		t += gap;
	}
}

/* Thread body: wait for t0, spin through warm-up, then the measured part. */
static void *noise_thread_fn(void *arg)
{
	struct noise_thread *nt = arg;
	struct run *r = nt->run;
	clockid_t clock = run_common(r)->clock;
	uint64_t t0 = run_t0_ns(r);
	char why[96];
	int err;

	nt->min_gap_ns = UINT64_MAX;
	if (SIMULATED(nt->simulate)) {
		noise_simulate(nt);
		series_finish(nt->series);
		return NULL;
	}
	err = clock_sleep_until(clock, t0);
	if (err) {
		fmt_snprintf(why, sizeof(why), "clock_nanosleep: %s",
			     strerror(err));
		series_fail(nt->series, why);
	} else {
		if (nt->cfg->warmup_ns)
			noise_spin(nt, clock, t0, t0 + nt->cfg->warmup_ns,
				   true);
		if (!run_stopping(r))
			noise_spin(nt, clock, t0, t0 + nt->cfg->end_ns, false);
	}
	series_finish(nt->series);
	return NULL;
}

/* Read a long from a /proc file; false when it cannot be read. */
static bool read_long(const char *path, long *out)
{
	FILE *f = fopen(path, "r");
	char line[64];
	long long v;
	bool ok;

	if (!f)
		return false;
	ok = fgets(line, sizeof(line), f) && numtext_leading_ll(line, &v);
	fclose(f);
	if (ok)
		*out = (long)v;
	return ok;
}

/* Look up RT throttling and warn when it will interrupt fifo/rr loops. */
static void noise_check_throttling(struct noise_cfg *cfg,
				   const struct rtp_common *c)
{
	cfg->rt_runtime_us = -2;
	cfg->rt_period_us = -2;
	read_long("/proc/sys/kernel/sched_rt_runtime_us", &cfg->rt_runtime_us);
	read_long("/proc/sys/kernel/sched_rt_period_us", &cfg->rt_period_us);
	if (SIMULATED(c->simulate) || c->policy == POLICY_OTHER ||
	    cfg->rt_runtime_us < 0 || cfg->rt_period_us <= 0)
		return;
	fmt_fprintf(stderr, "rtprobe: noise: warning: RT throttling is on "
		    "(sched_rt_runtime_us %ld of sched_rt_period_us %ld): the "
		    "busy loops may be stopped for %ld us each period and show "
		    "it as gaps; echo -1 > /proc/sys/kernel/sched_rt_runtime_us "
		    "to measure without it\n", cfg->rt_runtime_us,
		    cfg->rt_period_us, cfg->rt_period_us - cfg->rt_runtime_us);
}

/*
 * Refuse fifo/rr busy loops on every online CPU without --force: nothing
 * else would run (beyond what RT throttling leaves), not even our collector.
 * With one online CPU no --cpus can leave one out: not applicable (exit 3,
 * common_needs_cpus); with more, --cpus covering them all is bad usage.
 */
static void noise_check_cpus(const struct noise_cfg *cfg,
			     const struct rtp_common *c)
{
	cpu_set_t online, measured, both;
	char text[256], err[128], list[256];
	FILE *f;
	int i;

	if (cfg->force || SIMULATED(c->simulate) || c->policy == POLICY_OTHER)
		return;
	f = fopen("/sys/devices/system/cpu/online", "r");
	if (!f || !fgets(text, sizeof(text), f)) {
		/* no sysfs list: the CPUs we may run on stand for the online */
		if (f)
			fclose(f);
		if (sched_getaffinity(0, sizeof(online), &online))
			return;
	} else {
		fclose(f);
		text[strcspn(text, "\n")] = '\0';
		if (opt_cpulist_try(text, &online, err, sizeof(err)))
			return;
	}
	CPU_ZERO(&measured);
	for (i = 0; i < c->nthreads; i++)
		CPU_SET((size_t)c->cpu_list[i], &measured);
	CPU_AND(&both, &online, &measured);
	if (!CPU_EQUAL(&both, &online))
		return;
	if (CPU_COUNT(&online) < 2)
		exit(common_needs_cpus("noise", 2, CPU_COUNT(&online),
				       CPU_COUNT(&online), "its busy loops would "
				       "starve the only one",
				       "--policy other or --force runs it anyway"));
	opt_cpulist_format(&measured, list, sizeof(list));
	opt_fail("--cpus", list, "%s busy loops on every online CPU would "
		 "starve the machine; leave a CPU out, use --policy other, "
		 "or add --force", common_policy_name(c->policy));
}

/* Default CPU set: every allowed CPU but the first, when there are two or more. */
static void noise_default_cpus(struct rtp_common *c)
{
	cpu_set_t set;
	int cpu;

	if (c->cpus_given || sched_getaffinity(0, sizeof(set), &set) ||
	    CPU_COUNT(&set) < 2)
		return;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET((size_t)cpu, &set)) {
			CPU_CLR((size_t)cpu, &set);
			break;
		}
	c->cpus = set;
	c->cpus_given = true;
}

/* The cheapest reading-to-reading step of the clock, measured now. */
static uint64_t noise_read_cost(clockid_t clock)
{
	uint64_t prev = clock_now_ns(clock), now, best = UINT64_MAX;
	int i;

	for (i = 0; i < NOISE_CALIBRATE_READS; i++) {
		now = clock_now_ns(clock);
		if (now - prev < best)
			best = now - prev;
		prev = now;
	}
	return best;
}

/* Start record "params". */
static void noise_write_params(struct json *j, void *ctx)
{
	const struct noise *n = ctx;

	json_u64(j, "gap_threshold_ns", n->cfg.threshold_ns);
	json_bool(j, "force", n->cfg.force);
	if (n->cfg.rt_runtime_us > -2)
		json_i64(j, "rt_runtime_us", n->cfg.rt_runtime_us);
	else
		json_null(j, "rt_runtime_us");
	if (n->cfg.rt_period_us > -2)
		json_i64(j, "rt_period_us", n->cfg.rt_period_us);
	else
		json_null(j, "rt_period_us");
	json_u64(j, "read_cost_ns", n->cfg.read_cost_ns);
}

/* Result record "data": per CPU, gaps and time stolen. */
static void noise_write_data(struct json *j, void *ctx)
{
	const struct noise *n = ctx;
	int i;

	json_u64(j, "gap_threshold_ns", n->cfg.threshold_ns);
	json_begin_object(j, "rt_throttling");
	if (n->cfg.rt_runtime_us > -2)
		json_i64(j, "runtime_us", n->cfg.rt_runtime_us);
	else
		json_null(j, "runtime_us");
	if (n->cfg.rt_period_us > -2)
		json_i64(j, "period_us", n->cfg.rt_period_us);
	else
		json_null(j, "period_us");
	json_bool(j, "active", n->cfg.rt_runtime_us >= 0);
	json_end_object(j);
	json_begin_array(j, "cpus");
	for (i = 0; i < n->nthreads; i++) {
		const struct noise_thread *nt = &n->threads[i];

		json_begin_object(j, NULL);
		json_u64(j, "series", (uint64_t)series_index(nt->series));
		json_i64(j, "cpu", series_cpu(nt->series));
		json_u64(j, "loops", nt->loops);
		json_u64(j, "busy_ns", nt->busy_ns);
		json_u64(j, "gaps", nt->gaps);
		json_u64(j, "warmup_gaps", nt->warmup_gaps);
		json_u64(j, "stolen_ns", nt->stolen_ns);
		if (nt->busy_ns)
			json_double(j, "stolen_fraction",
				    (double)nt->stolen_ns /
				    (double)nt->busy_ns);
		else
			json_null(j, "stolen_fraction");
		if (nt->min_gap_ns != UINT64_MAX)
			json_u64(j, "min_step_ns", nt->min_gap_ns);
		else
			json_null(j, "min_step_ns");
		json_end_object(j);
	}
	json_end_array(j);
}

/* Entry point of `rtprobe noise`. */
static const struct opt_desc noise_opts[] = {
	{ .name = "gap-threshold", .id = OPT_GAP_THRESHOLD,
	  .type = OPT_DURATION, .def = "1us", .unit = "us",
	  .help = HELP_NOISE_GAP_THRESHOLD },
	{ .name = "force", .id = OPT_FORCE, .type = OPT_FLAG,
	  .help = HELP_NOISE_FORCE },
	{ .name = NULL },
};

/* noise's parse state: the test and the text of --gap-threshold. */
struct noise_parse {
	struct noise n;
	const char *thr_text;
};

/* Defaults: 1 us gap threshold. */
static void noise_defaults(void *ctx, struct rtp_common *c)
{
	struct noise_parse *np = ctx;

	(void)c;
	np->n.cfg.threshold_ns = NOISE_DEFAULT_THRESHOLD_NS;
	np->thr_text = "1us";
}

/* Parse one of noise's own options. */
static void noise_option(void *ctx, struct rtp_common *c, int id,
			 const char *arg)
{
	struct noise_parse *np = ctx;

	(void)c;
	if (id == OPT_FORCE) {
		np->n.cfg.force = true;
		return;
	}
	np->thr_text = arg;
	np->n.cfg.threshold_ns = opt_duration("--gap-threshold", arg, "us");
	if (!np->n.cfg.threshold_ns)
		opt_fail("--gap-threshold", arg, "must be greater than zero");
}

/* Default CPUs: every allowed one but the first. */
static void noise_check(void *ctx, struct rtp_common *c)
{
	(void)ctx;
	noise_default_cpus(c);
}

/* Measure: busy loops reading the clock on each CPU. */
static int noise_run(void *ctx, struct rtp_common *c, int argc, char **argv)
{
	struct noise_parse *np = ctx;
	struct noise *n = &np->n;
	char dur[32];
	struct run *r;
	int i, rc;

	if (c->duration_ns > NOISE_MAX_DURATION_NS && !n->cfg.force) {
		fmt_snprintf(dur, sizeof(dur), "%" PRIu64 "s",
			     (uint64_t)(c->duration_ns / NSEC_PER_SEC));
		opt_fail("--duration", dur, "noise is capped at 1h (its busy "
			 "loops hold their CPUs); add --force to run longer");
	}
	noise_check_cpus(&n->cfg, c);
	n->cfg.warmup_ns = c->warmup_ns;
	n->cfg.end_ns = c->warmup_ns + c->duration_ns;
	if (!SIMULATED(c->simulate)) {
		n->cfg.read_cost_ns = noise_read_cost(c->clock);
		if (n->cfg.read_cost_ns * 2 > n->cfg.threshold_ns)
			opt_fail("--gap-threshold", np->thr_text, "a clock read "
				 "alone takes %" PRIu64 " ns here; use at "
				 "least %" PRIu64 " ns", n->cfg.read_cost_ns,
				 n->cfg.read_cost_ns * 2);
	}
	noise_check_throttling(&n->cfg, c);

	n->nthreads = c->nthreads;
	n->threads = calloc((size_t)c->nthreads, sizeof(*n->threads));
	if (!n->threads) {
		fmt_fprintf(stderr, "rtprobe: noise: out of memory\n");
		return RTP_EXIT_ENV;
	}
	r = run_create(c, argc, argv);
	run_set_params(r, noise_write_params, n);
	run_set_result_data(r, noise_write_data, n);
	for (i = 0; i < c->nthreads; i++)
		n->threads[i] = (struct noise_thread){
			.run = r,
			.series = percpu_add_series(r, c, i),
			.cfg = &n->cfg,
			.simulate = SIMULATED(c->simulate),
			.min_gap_ns = UINT64_MAX,
		};
	rc = percpu_run(r, c, noise_thread_fn, n->threads,
			sizeof(*n->threads));
	/* the run is finished and written: the threads are done */
	free(n->threads);
	n->threads = NULL;
	return rc;
}

const struct test_desc test_noise = {
	.name = "noise",
	.summary = "busy-loop interruptions per CPU (oslat-style)",
	.intro = INTRO_NOISE,
	.examples = EXAMPLES_NOISE,
	.traits = TEST_TIMED | TEST_SERIES | TEST_WARMUP | TEST_SIMULATE |
		  TEST_NO_DEADLINE | TEST_TRACE | TEST_OWN_CPUS,
	.host = {
		.busy_loop = "always",
		.figures = TEST_LIST("cpus"),
	},
	.default_duration_ns = NOISE_DEFAULT_DURATION_NS,
	.cpu_option = "cpus",
	.options = noise_opts,
	.refused = COMMON_BIT(C_LOOPS),
	.refused_why = "noise runs for a time, not a number of samples: "
		       "give --duration",
	.ctx_size = sizeof(struct noise_parse),
	.defaults = noise_defaults,
	.option = noise_option,
	.check = noise_check,
	.run = noise_run,
};
