// SPDX-License-Identifier: MIT
/*
 * load_cpu.c - `rtprobe load cpu`: busy workers at a duty cycle.
 *
 * Each worker is a thread pinned to one CPU of --cpus (round robin).  In
 * every period it spins until it has used duty x period of CPU time (its
 * own CLOCK_THREAD_CPUTIME_ID, so time stolen by other tasks is not counted
 * as busy) or the period ends, then sleeps until the next period.  The
 * achieved rate is the CPU time used over the wall time, per worker, in %.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clocksleep.h"
#include "fmt.h"
#include "load.h"
#include "opt.h"
#include "rtprobe.h"

enum { CPU_BUSY_NS, CPU_PERIODS, CPU_MISSED };

static const char *const cpu_counters[] = {
	"busy_ns", "periods", "missed_periods", NULL,
};

static const struct opt_desc cpu_options[] = {
	{ .name = "workers", .id = LOPT_WORKERS, .type = OPT_INTEGER,
	  .help = HELP_LOAD_CPU_WORKERS },
	{ .name = "period", .id = LOPT_PERIOD, .type = OPT_DURATION,
	  .def = "10ms", .unit = "us",
	  .help = HELP_LOAD_CPU_PERIOD },
	{ .name = NULL },
};

/* One busy worker. */
struct cpu_worker {
	struct load_run *run;
	int cpu;
};

/* Print the cpu kind's example. */
static void cpu_usage(FILE *f)
{
	fmt_fprintf(f,
		    "Example: rtprobe load cpu --rate 30 --cpus 1 --duration 10s\n");
}

/* Parse the cpu kind's options. */
static void cpu_handle(struct load_cfg *cfg, int id, const char *arg)
{
	if (id == LOPT_PERIOD) {
		cfg->period_ns = opt_duration("--period", arg, "us");
		if (cfg->period_ns < 100 * NSEC_PER_USEC ||
		    cfg->period_ns > 10 * NSEC_PER_SEC)
			opt_fail("--period", arg, "must be 100us..10s");
	}
}

/* Defaults: 10 ms period, one worker per CPU. */
static void cpu_finish(struct load_cfg *cfg)
{
	if (!cfg->period_ns)
		cfg->period_ns = 10 * NSEC_PER_MSEC;
	if (!cfg->workers)
		cfg->workers = cfg->ncpus;
}

/* Spin at the duty cycle until stop is raised. */
static void *cpu_worker_main(void *arg)
{
	struct cpu_worker *w = arg;
	struct load_run *r = w->run;
	uint64_t period = r->cfg.period_ns;
	uint64_t busy_target, start, used0, used, now, next;
	double duty = r->cfg.rate_max ? 1.0 : r->cfg.rate / 100.0;

	busy_target = (uint64_t)(duty * (double)period);
	next = load_now_ns();
	while (!load_stopping(r->shared)) {
		start = next;
		next = start + period;
		used0 = clock_now_ns(CLOCK_THREAD_CPUTIME_ID);
		do {
			used = clock_now_ns(CLOCK_THREAD_CPUTIME_ID) - used0;
			now = load_now_ns();
		} while (used < busy_target && now < next);
		load_count(r->shared, CPU_BUSY_NS, used);
		load_count(r->shared, CPU_PERIODS, 1);
		if (now >= next && busy_target < period) {
			/* preempted past the period's end: skip to the next */
			uint64_t missed = (now - next) / period + 1;

			load_count(r->shared, CPU_MISSED, missed);
			next += missed * period;
		} else if (now >= next) {
			next = now;     /* flat out: periods back to back */
		}
		if (busy_target < period)
			load_sleep_until(next);
	}
	return NULL;
}

/* Allocate the workers' arguments. */
static int cpu_prepare(struct load_run *r, char *err, size_t errlen)
{
	struct cpu_worker *w = calloc((size_t)r->cfg.workers, sizeof(*w));
	int i;

	if (!w) {
		fmt_snprintf(err, errlen, "out of memory for %d workers",
			     r->cfg.workers);
		return RTP_EXIT_ENV;
	}
	for (i = 0; i < r->cfg.workers; i++) {
		w[i].run = r;
		w[i].cpu = r->cfg.cpu_list[i % r->cfg.ncpus];
	}
	r->state = w;
	load_workers_init(&r->workers, false);
	return 0;
}

/* Write the cpu kind's parameters. */
static void cpu_params(struct json *j, const struct load_run *r)
{
	json_i64(j, "workers", r->cfg.workers);
	json_u64(j, "period_ns", r->cfg.period_ns);
}

/* Start one pinned thread per worker. */
static int cpu_start(struct load_run *r, char *err, size_t errlen)
{
	struct cpu_worker *w = r->state;
	int i;

	for (i = 0; i < r->cfg.workers; i++)
		if (load_workers_spawn(&r->workers, cpu_worker_main, &w[i],
				       w[i].cpu, err, errlen))
			return RTP_EXIT_ENV;
	return 0;
}

/* Busy time over wall time per worker, in %. */
static double cpu_achieved(const struct load_run *r, const uint64_t *delta,
			   double seconds)
{
	return (double)delta[CPU_BUSY_NS] / 1e9 / seconds /
	       r->cfg.workers * 100.0;
}

/* Free the workers' arguments. */
static void cpu_cleanup(struct load_run *r)
{
	free(r->state);
	r->state = NULL;
}

const struct load_kind load_kind_cpu = {
	.name = "cpu",
	.unit = "%",
	.summary = "busy workers at a duty cycle, per worker",
	.rate_lo = 1,
	.rate_hi = 100,
	.counter_names = cpu_counters,
	.options = cpu_options,
	.usage = cpu_usage,
	.handle = cpu_handle,
	.finish = cpu_finish,
	.prepare = cpu_prepare,
	.params = cpu_params,
	.start = cpu_start,
	.achieved = cpu_achieved,
	.cleanup = cpu_cleanup,
};
