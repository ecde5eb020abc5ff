// SPDX-License-Identifier: MIT
/*
 * cyclic.c - `rtprobe cyclic`: timer wake-up latency (docs/definitions.md).
 *
 * Each measuring thread is due at d_k = t0 + k * interval and measures
 * latency_k = now - d_k on waking.  A thread that wakes after d_{k+1}
 * counts the periods it skipped as overruns and continues with the next
 * future deadline.  Four ways of waiting for d_k:
 *   abs      clock_nanosleep(TIMER_ABSTIME, d_k)           (default)
 *   rel      clock_nanosleep(relative, d_k - now)          (one clock read more)
 *   itimer   a POSIX timer armed absolute and periodic, its signal sent to
 *            the thread (SIGEV_THREAD_ID) and taken with sigwaitinfo
 *   timerfd  a periodic timerfd armed absolute, taken with read()
 * The timers report missed expirations themselves (si_overrun, the timerfd
 * expiration count); those are the overruns in their modes.
 *
 * A thread's first deadline is the first d_k at or after the moment it is
 * ready to wait (started, pinned, its policy set): t0 lies RUN_T0_AHEAD_NS
 * ahead of the start, but a thread slower than that to set up would otherwise
 * measure its set-up time as the first sample's latency (cyclic_first_k).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "clocksleep.h"
#include "common.h"
#include "fmt.h"
#include "json.h"
#include "opt.h"
#include "rtprobe.h"
#include "run.h"
#include "series.h"
#include "sim.h"
#include "testdesc.h"

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

#define CYCLIC_DEFAULT_DURATION_NS (10 * NSEC_PER_SEC)

enum cyclic_mode { MODE_ABS, MODE_REL, MODE_ITIMER, MODE_TIMERFD };

static const char *const cyclic_modes[] = { "abs", "rel", "itimer", "timerfd",
					    NULL };

enum cyclic_opt { OPT_INTERVAL = 1, OPT_MODE };

/* The test's own parameters. */
struct cyclic_cfg {
	uint64_t interval_ns;
	enum cyclic_mode mode;
};

/* What one measuring thread needs. */
struct cyclic_thread {
	struct run *run;
	struct series *s;
	const struct cyclic_cfg *cfg;
	clockid_t clock;
};

/*
 * The sample due at t_ns woke too late: count the `missed` deadlines after it
 * as overruns (see series.h).
 */
static void cyclic_overruns(const struct cyclic_thread *t, uint64_t t_ns,
			    uint64_t missed)
{
	const uint64_t interval = t->cfg->interval_ns;

	series_overrun_periods(t->s, t_ns + interval, interval, missed);
}

/*
 * series_add answered SERIES_BUSY: the probe itself (--break-on) just held
 * this thread after the sample due at t_ns.  The deadlines after t_ns that
 * passed meanwhile are a gap (series.h), not overruns: the thread was not
 * waiting for them.  The gap spans those deadlines' periods, so that samples,
 * overruns and gap_ns / interval add up to the deadlines, as for the set-up
 * gap (cyclic_ready_k).  Returns how many periods to advance past t_ns.  A
 * simulated run has no real time to lose: 1.
 */
static __attribute__((noinline)) uint64_t
cyclic_busy(const struct cyclic_thread *t, uint64_t t_ns)
{
	const uint64_t interval = t->cfg->interval_ns;
	const uint64_t next = t_ns + interval;
	uint64_t now, passed;

	if (series_sim(t->s))
		return 1;
	now = clock_now_ns(t->clock) - run_t0_ns(t->run);
	if (now <= next)
		return 1;
	passed = (now - next) / interval + 1;
	series_gap(t->s, next, passed * interval);
	return passed + 1;
}

/*
 * Record the sample due at t_ns and return how many periods to advance: 1
 * plus the deadlines that passed before the thread woke (counted as
 * overruns) or while the probe held it (a gap), or 0 when the series is
 * done.
 */
static inline uint64_t cyclic_record(const struct cyclic_thread *t,
				     uint64_t t_ns, int64_t latency_ns)
{
	const uint64_t interval = t->cfg->interval_ns;
	uint64_t missed;
	int rc = series_add(t->s, t_ns, latency_ns);

	if (rc == SERIES_DONE)
		return 0;
	if (latency_ns < (int64_t)interval)
		return rc == SERIES_BUSY ? cyclic_busy(t, t_ns) : 1;
	missed = (uint64_t)latency_ns / interval;
	cyclic_overruns(t, t_ns, missed);
	if (rc == SERIES_BUSY)
		return missed + cyclic_busy(t, t_ns + missed * interval);
	return missed + 1;
}

/*
 * Index k of the thread's first deadline d_k = t0 + k * interval: the first
 * at or after ready_ns, when the thread is ready to wait.  The deadlines
 * before it passed during set-up; they are neither samples nor overruns.
 */
static uint64_t cyclic_first_k(uint64_t t0, uint64_t interval,
			       uint64_t ready_ns)
{
	if (ready_ns <= t0)
		return 0;
	return (ready_ns - t0 - 1) / interval + 1;
}

/*
 * The index k of this thread's first deadline, ready at ready_ns (relative
 * to t0): the deadlines before it are a gap (series.h), time the thread did
 * not measure because it was still being set up, and its warm-up and
 * measured part start at d_k (series_start, bounded), so a slow start does
 * not shorten what it measures.
 */
static uint64_t cyclic_ready_k(const struct cyclic_thread *t,
			       uint64_t ready_ns)
{
	uint64_t k = cyclic_first_k(0, t->cfg->interval_ns, ready_ns);

	if (k)
		series_start(t->s, k * t->cfg->interval_ns);
	return k;
}

/* The index of this thread's first deadline, from the clock now. */
static uint64_t cyclic_start_k(const struct cyclic_thread *t)
{
	uint64_t now = clock_now_ns(t->clock), t0 = run_t0_ns(t->run);

	return cyclic_ready_k(t, now > t0 ? now - t0 : 0);
}

/* Report a failed call of a measuring thread and stop the run. */
static void cyclic_fail(struct series *s, const char *call, int err)
{
	char msg[160];

	fmt_snprintf(msg, sizeof(msg), "cyclic thread of series %d: %s: %s",
		     series_index(s), call, strerror(err));
	series_fail(s, msg);
}

/*
 * itimer and timerfd modes, series_add answered SERIES_BUSY (--break-on held
 * the thread) after the deadline k - 1: the deadlines that passed meanwhile
 * are a gap (cyclic_busy), not expirations for the timer to report as
 * overruns and a late wake-up.  Moves *k past them and, when any passed,
 * re-arms the timer (re-arming drops the expirations counted so far).  A
 * POSIX timer is disarmed first and its pending signal taken, so that no
 * stale signal wakes the thread.  0, or -1 when a call failed (reported).
 */
static __attribute__((noinline)) int
cyclic_timer_busy(struct cyclic_thread *t, uint64_t *k, timer_t *timer,
		  int fd, const sigset_t *set)
{
	const uint64_t interval = t->cfg->interval_ns;
	const struct timespec none = { 0, 0 };
	struct itimerspec its;
	siginfo_t info;
	uint64_t step = cyclic_busy(t, (*k - 1) * interval);

	if (step == 1)
		return 0;
	*k += step - 1;
	if (timer) {
		memset(&its, 0, sizeof(its));
		if (timer_settime(*timer, 0, &its, NULL)) {
			cyclic_fail(t->s, "timer_settime", errno);
			return -1;
		}
		while (sigtimedwait(set, &info, &none) >= 0 || errno == EINTR)
			;
		if (errno != EAGAIN) {
			cyclic_fail(t->s, "sigtimedwait", errno);
			return -1;
		}
	}
	its.it_value = ns_to_ts(run_t0_ns(t->run) + *k * interval);
	its.it_interval = ns_to_ts(interval);
	if (timer && timer_settime(*timer, TIMER_ABSTIME, &its, NULL)) {
		cyclic_fail(t->s, "timer_settime", errno);
		return -1;
	}
	if (!timer && timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL)) {
		cyclic_fail(t->s, "timerfd_settime", errno);
		return -1;
	}
	return 0;
}

/* rel mode: sleep for the time left until each deadline (a clock read more). */
static void cyclic_rel_loop(struct cyclic_thread *t)
{
	const uint64_t interval = t->cfg->interval_ns;
	const uint64_t t0 = run_t0_ns(t->run);
	/* The first deadline first: it may move the end (series_start). */
	uint64_t t_ns = cyclic_start_k(t) * interval, due, now, step;
	const uint64_t end_ns = series_end_ns(t->s);
	struct timespec ts;
	int rc;

	while (t_ns < end_ns) {
		due = t0 + t_ns;
		now = clock_now_ns(t->clock);
		ts = ns_to_ts(due > now ? due - now : 0);
		rc = clock_sleep_ts(t->clock, 0, &ts);
		if (rc == EINTR)
			continue;
		if (rc) {
			cyclic_fail(t->s, "clock_nanosleep", rc);
			return;
		}
		now = clock_now_ns(t->clock);
		step = cyclic_record(t, t_ns, (int64_t)(now - due));
		if (!step)
			return;
		t_ns += step * interval;
	}
}

/*
 * abs mode, a wake-up a period or more after its deadline: record it with
 * the deadlines it skipped and move *due_ts past them.  Returns the next
 * deadline's t_ns, or UINT64_MAX when the series is done.
 */
static __attribute__((noinline)) uint64_t
cyclic_abs_late(struct cyclic_thread *t, uint64_t t_ns, int64_t latency_ns,
		struct timespec *due_ts)
{
	const uint64_t step = cyclic_record(t, t_ns, latency_ns);

	if (!step)
		return UINT64_MAX;
	t_ns += step * t->cfg->interval_ns;
	*due_ts = ns_to_ts(run_t0_ns(t->run) + t_ns);
	return t_ns;
}

/*
 * abs mode: sleep until each deadline d_k = t0 + t_ns.  The deadline is kept
 * as a timespec, advanced by one period without a division (a 64-bit division
 * is a library call on 32-bit targets), and the latency is the difference of
 * the two timespecs: now - d_k in ns, as in rel mode.  A wake-up a period or
 * more late leaves the straight path (cyclic_abs_late).
 */
static void cyclic_abs_loop(struct cyclic_thread *t)
{
	const clockid_t clock = t->clock;
	struct series *const s = t->s;
	const uint64_t interval = t->cfg->interval_ns;
	/* The first deadline first: it may move the end (series_start). */
	uint64_t t_ns = cyclic_start_k(t) * interval;
	const uint64_t end_ns = series_end_ns(s);
	const struct timespec period = ns_to_ts(interval);
	struct timespec due_ts = ns_to_ts(run_t0_ns(t->run) + t_ns), now;
	int64_t latency;
	int rc;

	while (t_ns < end_ns) {
		rc = clock_sleep_ts(clock, TIMER_ABSTIME, &due_ts);
		if (rc == EINTR)
			continue;
		if (rc) {
			cyclic_fail(s, "clock_nanosleep", rc);
			return;
		}
		clock_gettime(clock, &now);
		latency = (int64_t)(((uint64_t)now.tv_sec -
				     (uint64_t)due_ts.tv_sec) * NSEC_PER_SEC +
				    (uint64_t)(now.tv_nsec - due_ts.tv_nsec));
		if (latency >= (int64_t)interval) {
			t_ns = cyclic_abs_late(t, t_ns, latency, &due_ts);
			continue;
		}
		rc = series_add(s, t_ns, latency);
		if (rc == SERIES_DONE)
			return;
		if (rc == SERIES_BUSY) {
			t_ns += cyclic_busy(t, t_ns) * interval;
			due_ts = ns_to_ts(run_t0_ns(t->run) + t_ns);
			continue;
		}
		t_ns += interval;
		ts_advance(&due_ts, &period);
	}
}

/* itimer mode: a periodic POSIX timer whose signal this thread waits for. */
static void cyclic_itimer_loop(struct cyclic_thread *t)
{
	const uint64_t interval = t->cfg->interval_ns;
	const uint64_t t0 = run_t0_ns(t->run);
	struct itimerspec its;
	struct sigevent sev;
	siginfo_t info;
	sigset_t set;
	timer_t timer;
	uint64_t k, t_ns, due, now;
	int64_t latency;
	int signo = SIGRTMIN + 1, rc;

	sigemptyset(&set);
	sigaddset(&set, signo);
	rc = pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (rc) {
		cyclic_fail(t->s, "pthread_sigmask", rc);
		return;
	}
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = signo;
	sev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
	if (timer_create(t->clock, &sev, &timer)) {
		cyclic_fail(t->s, "timer_create", errno);
		return;
	}
	k = cyclic_start_k(t);
	its.it_value = ns_to_ts(t0 + k * interval);
	its.it_interval = ns_to_ts(interval);
	if (timer_settime(timer, TIMER_ABSTIME, &its, NULL)) {
		cyclic_fail(t->s, "timer_settime", errno);
		timer_delete(timer);
		return;
	}
	for (;;) {
		t_ns = k * interval;
		if (series_past_end(t->s, t_ns))
			break;
		due = t0 + t_ns;
		if (sigwaitinfo(&set, &info) < 0) {
			if (errno == EINTR)
				continue;
			cyclic_fail(t->s, "sigwaitinfo", errno);
			break;
		}
		now = clock_now_ns(t->clock);
		latency = (int64_t)(now - due);
		rc = series_add(t->s, t_ns, latency);
		if (rc == SERIES_DONE)
			break;
		/* The kernel re-armed past every expiry it counted as missed. */
		if (info.si_overrun > 0)
			cyclic_overruns(t, t_ns, (uint64_t)info.si_overrun);
		k += 1 + (uint64_t)(info.si_overrun > 0 ? info.si_overrun : 0);
		if (rc == SERIES_BUSY &&
		    cyclic_timer_busy(t, &k, &timer, -1, &set))
			break;
	}
	timer_delete(timer);
}

/* timerfd mode: a periodic timerfd; read() returns the expirations. */
static void cyclic_timerfd_loop(struct cyclic_thread *t)
{
	const uint64_t interval = t->cfg->interval_ns;
	const uint64_t t0 = run_t0_ns(t->run);
	struct itimerspec its;
	uint64_t k, t_ns, due, now, expirations;
	ssize_t n;
	int fd, rc;

	fd = timerfd_create(t->clock, TFD_CLOEXEC);
	if (fd < 0) {
		cyclic_fail(t->s, "timerfd_create", errno);
		return;
	}
	k = cyclic_start_k(t);
	its.it_value = ns_to_ts(t0 + k * interval);
	its.it_interval = ns_to_ts(interval);
	if (timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL)) {
		cyclic_fail(t->s, "timerfd_settime", errno);
		close(fd);
		return;
	}
	for (;;) {
		t_ns = k * interval;
		if (series_past_end(t->s, t_ns))
			break;
		due = t0 + t_ns;
		n = read(fd, &expirations, sizeof(expirations));
		if (n != (ssize_t)sizeof(expirations)) {
			if (n < 0 && errno == EINTR)
				continue;
			cyclic_fail(t->s, "read timerfd",
				    n < 0 ? errno : EIO);
			break;
		}
		now = clock_now_ns(t->clock);
		rc = series_add(t->s, t_ns, (int64_t)(now - due));
		if (rc == SERIES_DONE)
			break;
		if (expirations > 1)
			cyclic_overruns(t, t_ns, expirations - 1);
		k += expirations ? expirations : 1;
		if (rc == SERIES_BUSY &&
		    cyclic_timer_busy(t, &k, NULL, fd, NULL))
			break;
	}
	close(fd);
}

/*
 * --simulate: no sleeping; the thread is ready at t0 + setup (setup=V of the
 * distribution, 0 by default) and wakes at d_k plus a synthetic latency, on a
 * time line of its own.  Its first deadline is chosen as in the real modes
 * (the first at or after ready), so a slow set-up never enters a sample.
 */
static void cyclic_sim_loop(struct cyclic_thread *t)
{
	const uint64_t interval = t->cfg->interval_ns;
	struct sim_stream *sim = series_sim(t->s);
	uint64_t k = cyclic_ready_k(t, sim->cfg->setup_ns), step, due;

	for (;;) {
		due = k * interval;
		if (series_past_end(t->s, due))
			return;
		step = cyclic_record(t, due, (int64_t)sim_next_ns(sim));
		if (!step)
			return;
		k += step;
	}
}

/* Body of a measuring thread (policy and pinning already applied). */
static void *cyclic_thread_main(void *arg)
{
	struct cyclic_thread *t = arg;

	if (series_sim(t->s))
		cyclic_sim_loop(t);
	else if (t->cfg->mode == MODE_ABS)
		cyclic_abs_loop(t);
	else if (t->cfg->mode == MODE_REL)
		cyclic_rel_loop(t);
	else if (t->cfg->mode == MODE_ITIMER)
		cyclic_itimer_loop(t);
	else
		cyclic_timerfd_loop(t);
	series_finish(t->s);
	return NULL;
}

/* Write the start record's params. */
static void cyclic_params(struct json *j, void *ctx)
{
	const struct cyclic_cfg *cfg = ctx;

	json_u64(j, "interval_ns", cfg->interval_ns);
	json_str(j, "mode", cyclic_modes[cfg->mode]);
}

/* Refuse a --clock that cannot drive the chosen timer mode (exit 2). */
static void cyclic_check_clock(const struct rtp_common *c,
			       const struct cyclic_cfg *cfg)
{
	struct sigevent sev;
	timer_t timer;
	int fd;

	if (SIMULATED(c->simulate))
		return;
	if (cfg->mode == MODE_TIMERFD) {
		fd = timerfd_create(c->clock, TFD_CLOEXEC);
		if (fd < 0)
			opt_fail("--clock", c->clock_name, "cannot drive "
				 "--mode timerfd (timerfd_create: %s); use "
				 "--clock monotonic", strerror(errno));
		close(fd);
	} else if (cfg->mode == MODE_ITIMER) {
		memset(&sev, 0, sizeof(sev));
		sev.sigev_notify = SIGEV_NONE;
		if (timer_create(c->clock, &sev, &timer))
			opt_fail("--clock", c->clock_name, "cannot drive "
				 "--mode itimer (timer_create: %s); use "
				 "--clock monotonic", strerror(errno));
		timer_delete(timer);
	}
}

static const struct opt_desc cyclic_opts[] = {
	{ .name = "interval", .id = OPT_INTERVAL, .type = OPT_DURATION,
	  .def = "1000us", .unit = "us",
	  .help = HELP_CYCLIC_INTERVAL },
	{ .name = "mode", .id = OPT_MODE, .type = OPT_CHOICE, .def = "abs",
	  .metavar = "M", .choices = cyclic_modes,
	  .help = HELP_CYCLIC_MODE },
	{ .name = NULL },
};

/* Defaults: 1000 us, abs. */
static void cyclic_defaults(void *ctx, struct rtp_common *c)
{
	struct cyclic_cfg *cfg = ctx;

	(void)c;
	cfg->interval_ns = 1000 * NSEC_PER_USEC;
	cfg->mode = MODE_ABS;
}

/* Parse one of cyclic's own options. */
static void cyclic_option(void *ctx, struct rtp_common *c, int id,
			  const char *arg)
{
	struct cyclic_cfg *cfg = ctx;

	(void)c;
	if (id == OPT_INTERVAL) {
		cfg->interval_ns = opt_duration("--interval", arg, "us");
		if (!cfg->interval_ns)
			opt_fail("--interval", arg, "must be greater than zero");
	} else {
		cfg->mode = (enum cyclic_mode)opt_choice("--mode", arg,
							 cyclic_modes);
	}
}

/* SCHED_DEADLINE: one job per period, a tenth of it as budget. */
static void cyclic_check(void *ctx, struct rtp_common *c)
{
	const struct cyclic_cfg *cfg = ctx;

	c->dl_period_ns = cfg->interval_ns;
	c->dl_deadline_ns = cfg->interval_ns;
	c->dl_runtime_ns = cfg->interval_ns / 10 > 1024 ?
			   cfg->interval_ns / 10 : 1024;
	/* --trace: the window reaches two periods back (at least 1 ms) */
	if (!c->trace_margin_ns && 2 * cfg->interval_ns > TRACE_DEFAULT_MARGIN_NS)
		c->trace_margin_ns = 2 * cfg->interval_ns;
}

/* Measure: one thread per CPU, each sleeping to its deadlines. */
static int cyclic_run(void *ctx, struct rtp_common *cp, int argc,
		      char **argv)
{
	const struct rtp_common *c = cp;
	struct cyclic_cfg *cfg = ctx;
	struct cyclic_thread *threads;
	struct run *r;
	int i, rc;

	cyclic_check_clock(c, cfg);

	threads = calloc((size_t)c->nthreads, sizeof(*threads));
	if (!threads) {
		fmt_fprintf(stderr, "rtprobe: out of memory\n");
		return RTP_EXIT_ENV;
	}
	r = run_create(c, argc, argv);
	run_set_params(r, cyclic_params, cfg);
	for (i = 0; i < c->nthreads; i++) {
		char label[24];

		fmt_snprintf(label, sizeof(label), "cpu%d", c->cpu_list[i]);
		threads[i].run = r;
		threads[i].cfg = cfg;
		threads[i].clock = c->clock;
		threads[i].s = run_add_series(r, label, c->cpu_list[i]);
	}
	rc = run_begin(r);
	if (rc) {
		free(threads);
		return rc;
	}
	for (i = 0; i < c->nthreads; i++)
		if (run_spawn(r, cyclic_thread_main, &threads[i],
			      c->cpu_list[i], c->policy, c->priority))
			break;
	rc = run_finish(r);
	free(threads);
	return rc;
}

const struct test_desc test_cyclic = {
	.name = "cyclic",
	.summary = "timer wake-up latency (cyclictest-style)",
	.intro = INTRO_CYCLIC,
	.examples = EXAMPLES_CYCLIC,
	.traits = TEST_TIMED | TEST_SERIES | TEST_WARMUP | TEST_SIMULATE |
		  TEST_TRACE | TEST_OWN_CPUS,
	.host = {
		.layouts = TEST_LIST("loongson2f", "arm-preemptrt", "celleb",
				     "lrtai"),
	},
	.default_duration_ns = CYCLIC_DEFAULT_DURATION_NS,
	.cpu_option = "cpus",
	.options = cyclic_opts,
	.ctx_size = sizeof(struct cyclic_cfg),
	.defaults = cyclic_defaults,
	.option = cyclic_option,
	.check = cyclic_check,
	.run = cyclic_run,
};
