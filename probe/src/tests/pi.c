// SPDX-License-Identifier: MIT
/*
 * pi.c - priority inheritance (LTP pi_perf semantics).
 *
 * Three kinds of SCHED_FIFO threads share one CPU:
 *   holder  priority P - 20: takes the mutex and holds it for --hold of its
 *           own CPU time (CLOCK_THREAD_CPUTIME_ID: time it is preempted does
 *           not count, so starvation delays the release);
 *   waiter  priority P (--priority): once the holder has the lock it releases
 *           the hogs and then blocks in pthread_mutex_lock();
 *   hogs    priority P - 10, --hogs of them: busy until --hog-time after
 *           their release (wall clock), so the starvation is bounded.
 * With a PTHREAD_PRIO_INHERIT mutex the blocked waiter lends the holder its
 * priority, the holder runs above the hogs and the waiter gets the lock
 * about --hold after the holder took it.  With --no-pi (plain mutex) the
 * hogs run first and the waiter waits about --hog-time longer: priority
 * inversion.
 *
 * Sample per iteration: excess = (waiter acquires) - (holder locked) - hold,
 * the waiter's wait beyond the hold time.  Criterion: the largest excess
 * <= --max-excess.  After each iteration the waiter sleeps as long as the
 * iteration's busy part, so the CPU is RT-busy at most about half the time.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clocksleep.h"
#include "common.h"
#include "fmt.h"
#include "json.h"
#include "opt.h"
#include "percpu.h"
#include "rtprobe.h"
#include "run.h"
#include "series.h"
#include "sim.h"
#include "testdesc.h"

#define PI_MAX_HOGS 16
#define PI_HOLDER_BELOW 20
#define PI_HOG_BELOW 10
#define PI_WAIT_SLICE_NS (100 * NSEC_PER_MSEC)

struct pi_config {
	int cpu;
	uint64_t hold_ns;
	uint64_t hog_time_ns;
	unsigned int hogs;
	uint64_t iterations;
	uint64_t max_excess_ns;
	bool no_pi;
	bool force;
};

struct pi_test {
	struct pi_config cfg;
	const struct rtp_common *common;
	struct run *run;
	struct series *series;
	int holder_priority, hog_priority;
	pthread_mutex_t lock;
	sem_t holder_go, lock_taken, holder_idle, hog_go, hog_done;
	atomic_bool quit;
	atomic_uint ready;                 /* holder and hogs started */
	atomic_uint_fast64_t locked_at_ns; /* holder's lock time (run clock) */
	atomic_uint_fast64_t hog_until_ns; /* hogs stop at this time */
	/* waiter results */
	uint64_t done, max_excess_ns, sum_excess_ns;
	char error[160];
};

/*
 * Wait for a semaphore in slices so a stop request or quit is noticed;
 * true when it was taken.
 */
static bool pi_wait(struct pi_test *t, sem_t *sem)
{
	struct timespec ts;
	uint64_t abs;

	for (;;) {
		if (!sem_trywait(sem))
			return true;
		if (atomic_load(&t->quit) || run_stopping(t->run))
			return false;
		/* sem_timedwait takes a CLOCK_REALTIME deadline */
		abs = clock_now_ns(CLOCK_REALTIME) + PI_WAIT_SLICE_NS;
		ts.tv_sec = (time_t)(abs / NSEC_PER_SEC);
		ts.tv_nsec = (long)(abs % NSEC_PER_SEC);
		if (!sem_timedwait(sem, &ts))
			return true;
	}
}

/* Holder: on each go, lock, burn --hold of CPU time, unlock. */
static void *pi_holder(void *arg)
{
	struct pi_test *t = arg;
	uint64_t start;

	atomic_fetch_add(&t->ready, 1);
	while (pi_wait(t, &t->holder_go)) {
		if (atomic_load(&t->quit))
			break;
		pthread_mutex_lock(&t->lock);
		atomic_store(&t->locked_at_ns, run_now_ns(t->run));
		start = clock_now_ns(CLOCK_THREAD_CPUTIME_ID);
		sem_post(&t->lock_taken);
		while (clock_now_ns(CLOCK_THREAD_CPUTIME_ID) - start <
		       t->cfg.hold_ns)
			;
		pthread_mutex_unlock(&t->lock);
		sem_post(&t->holder_idle);
	}
	return NULL;
}

/* Hog: on each release, spin until the shared end time, then report. */
static void *pi_hog(void *arg)
{
	struct pi_test *t = arg;

	atomic_fetch_add(&t->ready, 1);
	while (pi_wait(t, &t->hog_go)) {
		if (atomic_load(&t->quit))
			break;
		while (run_now_ns(t->run) < atomic_load(&t->hog_until_ns))
			;
		sem_post(&t->hog_done);
	}
	return NULL;
}

/* Sleep ns on the run clock. */
static void pi_sleep(clockid_t clock, uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / NSEC_PER_SEC),
		.tv_nsec = (long)(ns % NSEC_PER_SEC),
	};

	while (clock_nanosleep(clock, 0, &ts, &ts) == EINTR)
		;
}

/* Account one measured excess and pass it to the series; SERIES_DONE to end. */
static int pi_record(struct pi_test *t, uint64_t t_ns, int64_t excess_ns)
{
	uint64_t e = excess_ns > 0 ? (uint64_t)excess_ns : 0;
	int rc = series_add(t->series, t_ns, excess_ns);

	if (t_ns >= t->common->warmup_ns) {
		t->done++;
		t->sum_excess_ns += e;
		if (e > t->max_excess_ns)
			t->max_excess_ns = e;
	}
	return rc;
}

/* One real iteration; returns the excess, or -1 (stop) with nothing recorded. */
static int pi_iteration(struct pi_test *t, uint64_t *locked_ns,
			int64_t *excess_ns)
{
	uint64_t acquired;
	unsigned int i;

	sem_post(&t->holder_go);
	if (!pi_wait(t, &t->lock_taken))
		return -1;
	*locked_ns = atomic_load(&t->locked_at_ns);
	atomic_store(&t->hog_until_ns,
		     run_now_ns(t->run) + t->cfg.hog_time_ns);
	for (i = 0; i < t->cfg.hogs; i++)
		sem_post(&t->hog_go);
	pthread_mutex_lock(&t->lock);
	acquired = run_now_ns(t->run);
	pthread_mutex_unlock(&t->lock);
	*excess_ns = (int64_t)(acquired - *locked_ns) -
		     (int64_t)t->cfg.hold_ns;
	for (i = 0; i < t->cfg.hogs; i++)
		if (!pi_wait(t, &t->hog_done))
			return -1;
	if (!pi_wait(t, &t->holder_idle))
		return -1;
	return 0;
}

/* Wait until t0 and until the holder and every hog run; false on stop. */
static bool pi_wait_ready(struct pi_test *t)
{
	uint64_t t0 = run_t0_ns(t->run);

	while (run_now_ns(t->run) < t0 ||
	       atomic_load(&t->ready) < 1 + t->cfg.hogs) {
		if (run_stopping(t->run))
			return false;
		pi_sleep(t->common->clock, NSEC_PER_MSEC);
	}
	return true;
}

/* Waiter: run iterations until the series is complete, then stop the others. */
static void *pi_waiter(void *arg)
{
	struct pi_test *t = arg;
	struct sim_stream *sim = series_sim(t->series);
	uint64_t t0 = run_t0_ns(t->run), locked, busy, k;
	int64_t excess;

	busy = t->cfg.hog_time_ns + t->cfg.hold_ns;
	if (!sim)
		pi_wait_ready(t); /* on a stop the loop below ends at once */
	for (k = 0; !run_stopping(t->run); k++) {
		if (sim) {
			locked = t0 + k * 2 * busy;
			excess = (int64_t)sim_next_ns(sim);
		} else {
			if (pi_iteration(t, &locked, &excess))
				break;
		}
		if (pi_record(t, locked - t0, excess) == SERIES_DONE)
			break;
		if (!sim)
			pi_sleep(t->common->clock, busy);
	}
	atomic_store(&t->quit, true);
	series_finish(t->series);
	return NULL;
}

/* Write the start record's params. */
static void pi_write_params(struct json *j, void *arg)
{
	const struct pi_test *t = arg;
	const struct pi_config *cfg = &t->cfg;

	json_i64(j, "cpu", cfg->cpu);
	json_bool(j, "pi", !cfg->no_pi);
	json_str(j, "protocol", cfg->no_pi ? "none" : "inherit");
	json_u64(j, "hold_ns", cfg->hold_ns);
	json_u64(j, "hogs", cfg->hogs);
	json_u64(j, "hog_time_ns", cfg->hog_time_ns);
	json_u64(j, "iterations", cfg->iterations);
	json_u64(j, "max_excess_ns", cfg->max_excess_ns);
	json_i64(j, "waiter_priority", t->common->priority);
	json_i64(j, "hog_priority", t->hog_priority);
	json_i64(j, "holder_priority", t->holder_priority);
}

/* Write the result's data: the excess summary. */
static void pi_write_data(struct json *j, void *arg)
{
	const struct pi_test *t = arg;

	json_bool(j, "pi", !t->cfg.no_pi);
	json_u64(j, "iterations", t->done);
	json_u64(j, "hold_ns", t->cfg.hold_ns);
	if (t->done) {
		json_u64(j, "max_excess_ns", t->max_excess_ns);
		json_u64(j, "mean_excess_ns", t->sum_excess_ns / t->done);
	} else {
		json_null(j, "max_excess_ns");
		json_null(j, "mean_excess_ns");
	}
	json_u64(j, "limit_ns", t->cfg.max_excess_ns);
}

/* Verdict: the largest excess within --max-excess. */
static void pi_verdicts(struct run *r, void *arg)
{
	const struct pi_test *t = arg;
	char name[64], detail[200];

	fmt_snprintf(name, sizeof(name), "waiter excess <= %.3fus",
		     (double)t->cfg.max_excess_ns / 1000.0);
	if (!t->done) {
		run_add_verdict(r, name, run_stopping(r),
				"no iteration completed");
		return;
	}
	fmt_snprintf(detail, sizeof(detail), "max %.3fus, mean %.3fus over %llu "
		     "iterations (%s mutex, %u hogs for %.3fus)",
		     (double)t->max_excess_ns / 1000.0,
		     (double)(t->sum_excess_ns / t->done) / 1000.0,
		     (unsigned long long)t->done,
		     t->cfg.no_pi ? "plain" : "priority-inheritance",
		     t->cfg.hogs, (double)t->cfg.hog_time_ns / 1000.0);
	run_add_verdict(r, name, t->max_excess_ns <= t->cfg.max_excess_ns,
			detail);
}

/* Initialise the mutex (PI unless --no-pi) and semaphores; 0 or exit code. */
static int pi_init_sync(struct pi_test *t)
{
	pthread_mutexattr_t attr;
	int err;

	err = pthread_mutexattr_init(&attr);
	if (!err)
		err = pthread_mutexattr_setprotocol(&attr, t->cfg.no_pi ?
						    PTHREAD_PRIO_NONE :
						    PTHREAD_PRIO_INHERIT);
	if (!err)
		err = pthread_mutex_init(&t->lock, &attr);
	if (err) {
		fmt_fprintf(stderr, "rtprobe: pi: cannot create a %s mutex (%s); "
			    "this C library or kernel lacks PI futexes: --no-pi "
			    "runs without\n", t->cfg.no_pi ? "plain" :
			    "priority-inheritance", strerror(err));
		return RTP_EXIT_ENV;
	}
	pthread_mutexattr_destroy(&attr);
	if (sem_init(&t->holder_go, 0, 0) || sem_init(&t->lock_taken, 0, 0) ||
	    sem_init(&t->holder_idle, 0, 0) || sem_init(&t->hog_go, 0, 0) ||
	    sem_init(&t->hog_done, 0, 0)) {
		fmt_fprintf(stderr, "rtprobe: pi: sem_init: %s\n",
			    strerror(errno));
		return RTP_EXIT_ENV;
	}
	return 0;
}

enum {
	PI_OPT_CPU = 1,
	PI_OPT_HOLD,
	PI_OPT_HOGS,
	PI_OPT_HOG_TIME,
	PI_OPT_ITERATIONS,
	PI_OPT_MAX_EXCESS,
	PI_OPT_NO_PI,
	PI_OPT_FORCE,
};

/* Resolve --cpu and refuse using the only CPU without --force (not
 * applicable: common_needs_cpus); 0 or exit code. */
static int pi_resolve_cpu(struct pi_test *t, struct rtp_common *c,
			  bool cpu_given)
{
	cpu_set_t allowed;
	int cpu;

	if (sched_getaffinity(0, sizeof(allowed), &allowed)) {
		fmt_fprintf(stderr, "rtprobe: pi: sched_getaffinity: %s; give "
			    "--cpu\n", strerror(errno));
		return RTP_EXIT_ENV;
	}
	if (!cpu_given) {
		for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
			if (CPU_ISSET((size_t)cpu, &allowed))
				break;
		t->cfg.cpu = cpu;
	}
	if (CPU_COUNT(&allowed) < 2 && !t->cfg.force &&
	    !SIMULATED(c->simulate))
		return common_needs_cpus("pi", 2, CPU_COUNT(&allowed),
					 (int)sysconf(_SC_NPROCESSORS_ONLN),
					 "the hogs would take the only one for "
					 "--hog-time", "add --force to run anyway");
	/* the waiter's series is measured on that CPU */
	CPU_ZERO(&c->cpus);
	CPU_SET((size_t)t->cfg.cpu, &c->cpus);
	c->cpus_given = true;
	c->cpu_list[0] = t->cfg.cpu;
	c->nthreads = 1;
	return 0;
}

static const struct opt_desc pi_opts[] = {
	{ .name = "cpu", .id = PI_OPT_CPU, .type = OPT_CPU,
	  .help = HELP_PI_CPU },
	{ .name = "hold", .id = PI_OPT_HOLD, .type = OPT_DURATION,
	  .def = "1ms", .unit = "us",
	  .help = HELP_PI_HOLD },
	{ .name = "hogs", .id = PI_OPT_HOGS, .type = OPT_INTEGER, .def = "2",
	  .help = HELP_PI_HOGS },
	{ .name = "hog-time", .id = PI_OPT_HOG_TIME, .type = OPT_DURATION,
	  .def = "20ms", .unit = "us",
	  .help = HELP_PI_HOG_TIME },
	{ .name = "iterations", .id = PI_OPT_ITERATIONS, .type = OPT_INTEGER,
	  .def = "50", .help = HELP_PI_ITERATIONS },
	{ .name = "max-excess", .id = PI_OPT_MAX_EXCESS, .type = OPT_DURATION,
	  .unit = "us",
	  .help = HELP_PI_MAX_EXCESS },
	{ .name = "no-pi", .id = PI_OPT_NO_PI, .type = OPT_FLAG,
	  .help = HELP_PI_NO_PI },
	{ .name = "force", .id = PI_OPT_FORCE, .type = OPT_FLAG,
	  .help = HELP_PI_FORCE },
	{ .name = NULL },
};

/* pi's parse state: the test and which defaults were overridden. */
struct pi_parse {
	struct pi_test *t;
	bool cpu_given, max_given;
};

/* Defaults: 1 ms hold, 2 hogs busy 20 ms, 50 iterations. */
static void pi_defaults(void *ctx, struct rtp_common *c)
{
	struct pi_parse *pp = ctx;

	pp->t = calloc(1, sizeof(*pp->t));
	if (!pp->t) {
		fmt_fprintf(stderr, "rtprobe: pi: out of memory\n");
		exit(RTP_EXIT_ENV);
	}
	c->warmup_ns = 0;
	c->threads_requested = 1;
	pp->t->cfg.hold_ns = NSEC_PER_MSEC;
	pp->t->cfg.hog_time_ns = 20 * NSEC_PER_MSEC;
	pp->t->cfg.hogs = 2;
	pp->t->cfg.iterations = 50;
}

/* Parse one of pi's own options. */
static void pi_option(void *ctx, struct rtp_common *c, int id,
		      const char *arg)
{
	struct pi_parse *pp = ctx;
	struct pi_test *t = pp->t;
	cpu_set_t one;

	(void)c;
	switch (id) {
	case PI_OPT_CPU:
		t->cfg.cpu = (int)opt_u64("--cpu", arg, 0, CPU_SETSIZE - 1);
		CPU_ZERO(&one);
		CPU_SET((size_t)t->cfg.cpu, &one);
		opt_cpulist_allowed("--cpu", arg, &one);
		pp->cpu_given = true;
		break;
	case PI_OPT_HOLD:
		t->cfg.hold_ns = opt_duration("--hold", arg, "us");
		if (!t->cfg.hold_ns || t->cfg.hold_ns > 100 * NSEC_PER_MSEC)
			opt_fail("--hold", arg, "must be > 0 and <= 100ms");
		break;
	case PI_OPT_HOGS:
		t->cfg.hogs = (unsigned int)opt_u64("--hogs", arg, 1,
						    PI_MAX_HOGS);
		break;
	case PI_OPT_HOG_TIME:
		t->cfg.hog_time_ns = opt_duration("--hog-time", arg, "us");
		if (!t->cfg.hog_time_ns ||
		    t->cfg.hog_time_ns > 200 * NSEC_PER_MSEC)
			opt_fail("--hog-time", arg, "must be > 0 and <= 200ms "
				 "(it starves the CPU)");
		break;
	case PI_OPT_ITERATIONS:
		t->cfg.iterations = opt_u64("--iterations", arg, 1, 1000000);
		break;
	case PI_OPT_MAX_EXCESS:
		t->cfg.max_excess_ns = opt_duration("--max-excess", arg, "us");
		pp->max_given = true;
		break;
	case PI_OPT_NO_PI:
		t->cfg.no_pi = true;
		break;
	default:
		t->cfg.force = true;
	}
}

/* fifo or rr with room below --priority; the default criterion. */
static void pi_check(void *ctx, struct rtp_common *c)
{
	struct pi_parse *pp = ctx;
	struct pi_test *t = pp->t;
	char prio_text[16];

	fmt_snprintf(prio_text, sizeof(prio_text), "%d", c->priority);
	if (c->policy != POLICY_FIFO && c->policy != POLICY_RR)
		opt_fail("--policy", common_policy_name(c->policy),
			 "pi needs fifo or rr (priorities decide the test)");
	if (c->priority <= PI_HOLDER_BELOW)
		opt_fail("--priority", prio_text, "must be > %d (the holder "
			 "runs %d below the waiter)", PI_HOLDER_BELOW,
			 PI_HOLDER_BELOW);
	if (!pp->max_given) {
		t->cfg.max_excess_ns = 2 * t->cfg.hold_ns;
		if (t->cfg.max_excess_ns < 100 * NSEC_PER_USEC)
			t->cfg.max_excess_ns = 100 * NSEC_PER_USEC;
	}
}

/* Run the waiter, holder and hogs on one CPU. */
static int pi_run(void *ctx, struct rtp_common *c, int argc, char **argv)
{
	struct pi_parse *pp = ctx;
	struct pi_test *t = pp->t;
	struct run *r;
	unsigned int i;
	int rc;

	c->duration_ns = 0;
	c->loops = t->cfg.iterations;
	rc = pi_resolve_cpu(t, c, pp->cpu_given);
	if (!rc && !SIMULATED(c->simulate))
		rc = pi_init_sync(t);
	if (rc) {
		free(t);
		return rc;
	}
	t->common = c;
	t->holder_priority = c->priority - PI_HOLDER_BELOW;
	t->hog_priority = c->priority - PI_HOG_BELOW;

	r = run_create(c, argc, argv);
	t->run = r;
	t->series = percpu_add_series(r, c, 0); /* cpu_list[0] is --cpu */
	run_set_params(r, pi_write_params, t);
	run_set_result_data(r, pi_write_data, t);
	run_set_verdicts(r, pi_verdicts, t);
	rc = run_begin(r);
	if (rc) {
		free(t);
		return rc;
	}
	/* the waiter first: the engine ties the series to it */
	run_spawn(r, pi_waiter, t, t->cfg.cpu, c->policy, c->priority);
	if (!SIMULATED(c->simulate)) {
		run_spawn(r, pi_holder, t, t->cfg.cpu, c->policy,
			  t->holder_priority);
		for (i = 0; i < t->cfg.hogs; i++)
			run_spawn(r, pi_hog, t, t->cfg.cpu, c->policy,
				  t->hog_priority);
	}
	rc = run_finish(r);
	if (!SIMULATED(c->simulate))
		pthread_mutex_destroy(&t->lock);
	free(t);
	return rc;
}

const struct test_desc test_pi = {
	.name = "pi",
	.summary = "priority inheritance vs inversion (pi_perf)",
	.intro = INTRO_PI,
	.examples = EXAMPLES_PI,
	.traits = TEST_SERIES | TEST_WARMUP | TEST_SIMULATE | TEST_NO_DEADLINE |
		  TEST_RT_ONLY,
	.host = {
		.figures = TEST_LIST("max_excess_ns", "mean_excess_ns",
				     "limit_ns", "pi"),
	},
	.default_duration_ns = 2 * NSEC_PER_SEC,
	.cpu_option = "cpu",
	.options = pi_opts,
	.refused = COMMON_BIT(C_DURATION) | COMMON_BIT(C_LOOPS) |
		   COMMON_BIT(C_THREADS) | COMMON_BIT(C_CPUS),
	.refused_why = "pi runs --iterations on one CPU: use --iterations "
		       "and --cpu N",
	.ctx_size = sizeof(struct pi_parse),
	.defaults = pi_defaults,
	.option = pi_option,
	.check = pi_check,
	.run = pi_run,
};
