// SPDX-License-Identifier: MIT
/*
 * clock.c - `rtprobe clock`: clock-read gaps (after LTP gtod_latency).
 *
 * Each measuring thread wakes every --interval and reads the chosen clock
 * --reads times back to back into a buffer; the gaps between consecutive
 * readings are the samples (a gap well above the read cost means the thread
 * lost the CPU, or the clock jumped).  The buffer is only turned into samples
 * after the batch, so nothing but the clock reads runs inside it.  The read
 * cost is the batch's span divided by its number of gaps.
 *
 * --clock-source counter reads the CPU's counter directly (rdtsc on x86,
 * cntvct_el0 on arm64).  Ticks are converted to ns with a frequency measured
 * against CLOCK_MONOTONIC_RAW before the run (CALIBRATE_NS long).
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

#define CLOCK_DEFAULT_READS 1000
#define CLOCK_MAX_READS 1000000
#define CLOCK_DEFAULT_INTERVAL_NS NSEC_PER_MSEC
#define CLOCK_DEFAULT_DURATION_NS (3 * NSEC_PER_SEC)
#define CALIBRATE_NS (50 * NSEC_PER_MSEC)

#if defined(__x86_64__) || defined(__i386__)
#define HAVE_COUNTER 1
#define COUNTER_NAME "tsc"
/* Read the time-stamp counter (not serialising: back-to-back reads). */
static inline uint64_t counter_read(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}
#elif defined(__aarch64__)
#define HAVE_COUNTER 1
#define COUNTER_NAME "cntvct_el0"
/* Read the virtual counter; the isb keeps it from being read early. */
static inline uint64_t counter_read(void)
{
	uint64_t v;

	__asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(v) : : "memory");
	return v;
}
#else
#define HAVE_COUNTER 0
#define COUNTER_NAME NULL
/* No user-readable counter on this architecture (refused before use). */
static inline uint64_t counter_read(void)
{
	return 0;
}
#endif

enum {
	OPT_SOURCE = 1,
	OPT_READS,
	OPT_INTERVAL,
};

enum clock_source { SRC_MONOTONIC, SRC_REALTIME, SRC_MONOTONIC_RAW,
		    SRC_BOOTTIME, SRC_COUNTER };

static const char *const source_names[] = {
	"monotonic", "realtime", "monotonic_raw", "boottime", "counter", NULL,
};

static const clockid_t source_ids[] = {
	CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_MONOTONIC_RAW, CLOCK_BOOTTIME,
	CLOCK_MONOTONIC_RAW, /* counter: only used for calibration */
};

struct clock_cfg {
	enum clock_source source;
	uint64_t reads;
	uint64_t interval_ns;
	uint64_t warmup_ns;
	double counter_hz;     /* calibrated; 0 unless counter */
	double ns_per_tick;
	uint64_t resolution_ns; /* clock_getres; 0 when unknown */
};

/* One measuring thread: inputs, buffer, and what it found. */
struct clock_thread {
	struct run *run;
	struct series *series;
	const struct clock_cfg *cfg;
	bool simulate;
	uint64_t *stamps;        /* cfg->reads readings */
	uint64_t batches;        /* measured batches */
	uint64_t gaps;           /* gaps in measured batches */
	uint64_t span_ns;        /* their summed spans */
	uint64_t backwards;      /* gaps where the clock went back */
	char error[128];
};

struct clock_test {
	struct clock_cfg cfg;
	struct clock_thread *threads;
	int nthreads;
};

/*
 * Frequency of the CPU counter in Hz: ticks elapsed over CALIBRATE_NS of
 * CLOCK_MONOTONIC_RAW (not slewed by NTP).  Each end pairs a counter read
 * with the clock read taken between two counter reads, halving the error.
 */
static int calibrate_counter(double *hz, char *err, size_t errlen)
{
	struct timespec pause = { 0, (long)CALIBRATE_NS };
	uint64_t c0, c1, c2, c3, n0, n1;

	c0 = counter_read();
	n0 = clock_now_ns(CLOCK_MONOTONIC_RAW);
	c1 = counter_read();
	if (nanosleep(&pause, NULL)) {
		fmt_snprintf(err, errlen, "nanosleep: %s", strerror(errno));
		return -1;
	}
	c2 = counter_read();
	n1 = clock_now_ns(CLOCK_MONOTONIC_RAW);
	c3 = counter_read();
	if (n1 <= n0 || c3 + c2 <= c1 + c0) {
		fmt_snprintf(err, errlen, "the counter did not advance");
		return -1;
	}
	*hz = ((double)(c2 - c0) + (double)(c3 - c1)) / 2.0 * 1e9 /
	      (double)(n1 - n0);
	return 0;
}

/* Fill the buffer with back-to-back readings (ns, or ticks for counter). */
static void read_batch(const struct clock_cfg *cfg, uint64_t *stamps)
{
	uint64_t n = cfg->reads, k;

	if (cfg->source == SRC_COUNTER) {
		for (k = 0; k < n; k++)
			stamps[k] = counter_read();
	} else {
		clockid_t id = source_ids[cfg->source];

		for (k = 0; k < n; k++)
			stamps[k] = clock_now_ns(id);
	}
}

/* Convert a difference of readings to ns. */
static inline int64_t reading_delta_ns(const struct clock_cfg *cfg,
				       uint64_t a, uint64_t b)
{
	int64_t d = (int64_t)(b - a);

	if (cfg->source == SRC_COUNTER)
		return (int64_t)((double)d * cfg->ns_per_tick + 0.5);
	return d;
}

/*
 * Turn one batch into samples at due_ns; SERIES_DONE when complete, else
 * SERIES_BUSY when --break-on held the thread on one of them.
 */
static int record_batch(struct clock_thread *ct, uint64_t due_ns)
{
	const struct clock_cfg *cfg = ct->cfg;
	bool warm = due_ns < cfg->warmup_ns;
	uint64_t k;
	int rc = SERIES_CONTINUE;
	bool busy = false;

	for (k = 1; k < cfg->reads && rc != SERIES_DONE; k++) {
		int64_t gap;

		if (SIMULATED(ct->simulate))
			gap = (int64_t)sim_next_ns(series_sim(ct->series));
		else
			gap = reading_delta_ns(cfg, ct->stamps[k - 1],
					       ct->stamps[k]);
		if (!warm) {
			ct->gaps++;
			if (gap < 0)
				ct->backwards++;
			else
				ct->span_ns += (uint64_t)gap;
		}
		rc = series_add(ct->series, due_ns, gap);
		busy = busy || rc == SERIES_BUSY;
	}
	if (!warm)
		ct->batches++;
	return rc != SERIES_DONE && busy ? SERIES_BUSY : rc;
}

/*
 * record_batch met SERIES_BUSY: the probe itself (--break-on) held the thread
 * while it turned the batch into samples, before batch start next.  The batch
 * starts that passed meanwhile are a gap (series.h), not overruns; the samples
 * are not touched (each is a gap inside a batch read before).  Returns the
 * next batch index, the first at or after now.
 */
static __attribute__((noinline)) uint64_t clock_busy(struct clock_thread *ct,
						     uint64_t next)
{
	uint64_t interval = ct->cfg->interval_ns;
	uint64_t now = run_now_ns(ct->run) - run_t0_ns(ct->run), after;

	if (now <= next * interval)
		return next;
	after = (now + interval - 1) / interval;
	series_gap(ct->series, next * interval, (after - next) * interval);
	return after;
}

/* Thread body: batches on the --interval schedule until the series ends. */
static void *clock_thread_fn(void *arg)
{
	struct clock_thread *ct = arg;
	struct run *r = ct->run;
	clockid_t sched_clock = run_common(r)->clock;
	uint64_t interval = ct->cfg->interval_ns;
	uint64_t t0 = run_t0_ns(r);
	uint64_t k = 0;

	for (;;) {
		uint64_t due = k * interval, read_end, end, next;
		int rc;

		if (series_past_end(ct->series, due) || run_stopping(r))
			break;
		if (!SIMULATED(ct->simulate)) {
			int err = clock_sleep_until(sched_clock, t0 + due);

			if (err) {
				fmt_snprintf(ct->error, sizeof(ct->error),
					     "clock_nanosleep: %s",
					     strerror(err));
				series_fail(ct->series, ct->error);
				break;
			}
			read_batch(ct->cfg, ct->stamps);
		}
		read_end = SIMULATED(ct->simulate) ? due : run_now_ns(r) - t0;
		rc = record_batch(ct, due);
		if (rc == SERIES_DONE)
			break;
		/*
		 * A batch that ran into later batch starts skips them; after a
		 * --break-on hold, those past the reading are a gap (clock_busy).
		 */
		end = SIMULATED(ct->simulate) || rc == SERIES_BUSY ? read_end :
			run_now_ns(r) - t0;
		next = k + 1;
		if (end > next * interval) {
			next = (end + interval - 1) / interval;
			series_overrun(ct->series, due, next - (k + 1));
		}
		k = rc == SERIES_BUSY && !SIMULATED(ct->simulate) ?
			clock_busy(ct, next) : next;
	}
	series_finish(ct->series);
	return NULL;
}

/* Start record "params". */
static void clock_write_params(struct json *j, void *ctx)
{
	const struct clock_test *t = ctx;

	json_str(j, "clock_source", source_names[t->cfg.source]);
	if (t->cfg.source == SRC_COUNTER)
		json_str(j, "counter", COUNTER_NAME);
	json_u64(j, "reads", t->cfg.reads);
	json_u64(j, "interval_ns", t->cfg.interval_ns);
}

/* Result record "data": read cost and calibration. */
static void clock_write_data(struct json *j, void *ctx)
{
	const struct clock_test *t = ctx;
	uint64_t gaps = 0, span = 0;
	int i;

	json_str(j, "clock_source", source_names[t->cfg.source]);
	if (t->cfg.source == SRC_COUNTER && t->cfg.counter_hz > 0)
		json_double(j, "counter_hz", t->cfg.counter_hz);
	else
		json_null(j, "counter_hz");
	if (t->cfg.resolution_ns)
		json_u64(j, "resolution_ns", t->cfg.resolution_ns);
	else
		json_null(j, "resolution_ns");
	json_begin_array(j, "threads");
	for (i = 0; i < t->nthreads; i++) {
		const struct clock_thread *ct = &t->threads[i];

		gaps += ct->gaps;
		span += ct->span_ns;
		json_begin_object(j, NULL);
		json_u64(j, "series", (uint64_t)series_index(ct->series));
		json_u64(j, "batches", ct->batches);
		json_u64(j, "gaps", ct->gaps);
		json_u64(j, "backwards", ct->backwards);
		if (ct->gaps)
			json_double(j, "read_cost_ns",
				    (double)ct->span_ns / (double)ct->gaps);
		else
			json_null(j, "read_cost_ns");
		json_str(j, "error", ct->error[0] ? ct->error : NULL);
		json_end_object(j);
	}
	json_end_array(j);
	if (gaps)
		json_double(j, "read_cost_ns", (double)span / (double)gaps);
	else
		json_null(j, "read_cost_ns");
}

/* Entry point of `rtprobe clock`. */
static const struct opt_desc clock_opts[] = {
	{ .name = "clock-source", .id = OPT_SOURCE, .type = OPT_CHOICE,
	  .def = "monotonic", .metavar = "S", .choices = source_names,
	  .help = HELP_CLOCK_CLOCK_SOURCE },
	{ .name = "reads", .id = OPT_READS, .type = OPT_INTEGER, .def = "1000",
	  .help = HELP_CLOCK_READS },
	{ .name = "interval", .id = OPT_INTERVAL, .type = OPT_DURATION,
	  .def = "1ms", .unit = "us",
	  .help = HELP_CLOCK_INTERVAL },
	{ .name = NULL },
};

/* Defaults: monotonic, 1000 reads every 1 ms. */
static void clock_defaults(void *ctx, struct rtp_common *c)
{
	struct clock_test *t = ctx;

	(void)c;
	t->cfg.source = SRC_MONOTONIC;
	t->cfg.reads = CLOCK_DEFAULT_READS;
	t->cfg.interval_ns = CLOCK_DEFAULT_INTERVAL_NS;
}

/* Parse one of clock's own options. */
static void clock_option(void *ctx, struct rtp_common *c, int id,
			 const char *arg)
{
	struct clock_test *t = ctx;

	(void)c;
	switch (id) {
	case OPT_SOURCE:
		t->cfg.source = (enum clock_source)opt_choice(
			"--clock-source", arg, source_names);
		break;
	case OPT_READS:
		t->cfg.reads = opt_u64("--reads", arg, 2, CLOCK_MAX_READS);
		break;
	default:
		t->cfg.interval_ns = opt_duration("--interval", arg, "us");
		if (!t->cfg.interval_ns)
			opt_fail("--interval", arg, "must be above 0");
	}
}

/* Measure: batches of back-to-back clock reads. */
static int clock_run(void *ctx, struct rtp_common *c, int argc, char **argv)
{
	struct clock_test *t = ctx;
	struct run *r;
	int i, rc;

	t->cfg.warmup_ns = c->warmup_ns;

	if (t->cfg.source == SRC_COUNTER && !HAVE_COUNTER) {
		fmt_fprintf(stderr, "rtprobe: --clock-source counter: this "
			    "architecture has no user-readable CPU counter; use "
			    "--clock-source monotonic_raw\n");
		return RTP_EXIT_ENV;
	}
	if (t->cfg.source == SRC_COUNTER && !SIMULATED(c->simulate)) {
		char err[96];

		if (calibrate_counter(&t->cfg.counter_hz, err, sizeof(err))) {
			fmt_fprintf(stderr, "rtprobe: --clock-source counter: "
				    "cannot calibrate the %s: %s; use "
				    "--clock-source monotonic_raw\n",
				    COUNTER_NAME ? COUNTER_NAME : "counter", err);
			return RTP_EXIT_ENV;
		}
		t->cfg.ns_per_tick = 1e9 / t->cfg.counter_hz;
		t->cfg.resolution_ns = 0;
	} else if (t->cfg.source != SRC_COUNTER) {
		struct timespec res;

		if (!clock_getres(source_ids[t->cfg.source], &res))
			t->cfg.resolution_ns = (uint64_t)res.tv_sec *
					      NSEC_PER_SEC +
					      (uint64_t)res.tv_nsec;
	}

	t->nthreads = c->nthreads;
	t->threads = calloc((size_t)c->nthreads, sizeof(*t->threads));
	if (!t->threads) {
		fmt_fprintf(stderr, "rtprobe: clock: out of memory\n");
		return RTP_EXIT_ENV;
	}
	r = run_create(c, argc, argv);
	run_set_params(r, clock_write_params, t);
	run_set_result_data(r, clock_write_data, t);
	for (i = 0; i < c->nthreads; i++) {
		uint64_t *stamps = NULL;

		if (!SIMULATED(c->simulate)) {
			stamps = calloc(t->cfg.reads, sizeof(*stamps));
			if (!stamps) {
				fmt_fprintf(stderr, "rtprobe: --reads %" PRIu64
					    ": out of memory for the read buffer; "
					    "use fewer reads\n", t->cfg.reads);
				return RTP_EXIT_ENV;
			}
		}
		t->threads[i] = (struct clock_thread){
			.run = r,
			.series = percpu_add_series(r, c, i),
			.cfg = &t->cfg,
			.simulate = SIMULATED(c->simulate),
			.stamps = stamps,
		};
	}
	rc = percpu_run(r, c, clock_thread_fn, t->threads,
			sizeof(*t->threads));
	/* the run is finished and written: the threads' buffers are done */
	for (i = 0; i < c->nthreads; i++)
		free(t->threads[i].stamps);
	free(t->threads);
	t->threads = NULL;
	return rc;
}

const struct test_desc test_clock = {
	.name = "clock",
	.summary = "clock-read gaps and read cost (LTP gtod_latency)",
	.intro = INTRO_CLOCK,
	.examples = EXAMPLES_CLOCK,
	.traits = TEST_TIMED | TEST_SERIES | TEST_WARMUP | TEST_SIMULATE |
		  TEST_NO_DEADLINE | TEST_OWN_CPUS,
	.host = {
		.figures = TEST_LIST("read_cost_ns", "clock_source"),
		.layouts = TEST_LIST("celleb"),
	},
	.default_duration_ns = CLOCK_DEFAULT_DURATION_NS,
	.cpu_option = "cpus",
	.options = clock_opts,
	.ctx_size = sizeof(struct clock_test),
	.defaults = clock_defaults,
	.option = clock_option,
	.run = clock_run,
};
