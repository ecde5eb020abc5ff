// SPDX-License-Identifier: MIT
/*
 * wakeup.c - `rtprobe wakeup`: waker -> wakee latency of a wake-up mechanism.
 *
 * One waker/wakee pair per mechanism; with a comma list the pairs run one
 * after the other (each waits for its turn), each a series labelled by its
 * mechanism whose schedule counts from the moment it started (data gives
 * that offset from t0 as start_ns), with its own warm-up.
 *
 * Every --interval the waker takes a timestamp immediately before the wake
 * call; the wakee takes one immediately after its blocking call returns and
 * publishes it in memory shared by both (MAP_SHARED, so it works between
 * processes too), then acknowledges through a futex word.  The waker waits
 * for that acknowledgement (outside the measured span) and records
 * latency = t_after - t_before.  A wake-up whose handling ran past later
 * wake-up times skips them; they are counted as overruns.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clocksleep.h"
#include "common.h"
#include "fmt.h"
#include "opt.h"
#include "rt.h"
#include "rtprobe.h"
#include "run.h"
#include "series.h"
#include "sim.h"
#include "testdesc.h"
#include "wakeup_mech.h"

#define WAKEUP_DEFAULT_INTERVAL_NS NSEC_PER_MSEC
#define WAKEUP_DEFAULT_DURATION_NS (3 * NSEC_PER_SEC)
#define WAKEUP_POLL_NS (100 * NSEC_PER_MSEC) /* re-check for a stop */
#define WAKEUP_SETUP_TIMEOUT_NS (5 * NSEC_PER_SEC)
#define WAKEE_STACK (256 * 1024)

enum {
	OPT_MECHANISM = 1,
	OPT_MODE,
	OPT_PLACEMENT,
	OPT_WAKER_PRIORITY,
	OPT_WAKEE_PRIORITY,
	OPT_INTERVAL,
};

enum wakee_state { WAKEE_STARTING, WAKEE_READY, WAKEE_FAILED, WAKEE_DONE };

static const char *const mode_names[] = { "threads", "processes", NULL };
static const char *const placement_names[] = { "same", "cross", NULL };

struct wakeup_cfg {
	enum wake_mech mechs[MECH_COUNT];
	int nmechs;
	bool processes;
	bool cross;
	int waker_cpu, wakee_cpu;
	int waker_priority, wakee_priority;
	uint64_t interval_ns;
	uint64_t warmup_ns;
};

/* What both sides of one pair share (lives in a MAP_SHARED mapping). */
struct wake_shared {
	struct wake_channel ch;
	_Atomic uint32_t ack;      /* wake-ups handled by the wakee */
	_Atomic uint64_t t_after;  /* the wakee's timestamp of the last one */
	_Atomic int stop;          /* wakee: leave at the next wake-up */
	_Atomic int state;         /* enum wakee_state */
	char error[192];
};

struct wakeup;

/* One mechanism's pair, seen from the waker (the series' producer). */
struct wakeup_pair {
	struct wakeup *w;
	int index;
	enum wake_mech mech;
	struct series *series;
	struct wake_shared *sh;
	uint64_t start_ns;   /* schedule origin, relative to t0 */
	uint64_t wakeups;    /* measured wake-ups */
	bool ran;
	pthread_t wakee_tid; /* thread mode */
	pid_t child;         /* process mode */
};

struct wakeup {
	struct wakeup_cfg cfg;
	const struct rtp_common *c;
	struct run *run;
	struct wakeup_pair pairs[MECH_COUNT];
	int npairs;
	_Atomic uint32_t turn;     /* index of the pair allowed to run */
	struct wake_shared *shared; /* npairs entries */
};

/* Parse the comma list of --mechanism. */
static void parse_mechanisms(struct wakeup_cfg *cfg, const char *arg)
{
	char item[32];
	const char *p = arg, *end;
	size_t len;
	int m, k;

	cfg->nmechs = 0;
	for (;;) {
		end = strchr(p, ',');
		len = end ? (size_t)(end - p) : strlen(p);
		if (len >= sizeof(item))
			opt_fail("--mechanism", arg, "unknown mechanism");
		memcpy(item, p, len);
		item[len] = '\0';
		m = opt_choice("--mechanism", item, wake_mech_names);
		for (k = 0; k < cfg->nmechs; k++)
			if (cfg->mechs[k] == (enum wake_mech)m)
				opt_fail("--mechanism", arg,
					 "'%s' given twice", item);
		cfg->mechs[cfg->nmechs++] = (enum wake_mech)m;
		if (!end)
			return;
		p = end + 1;
	}
}

/* Wakee loop, in a thread or a child process: wait, stamp, acknowledge. */
static void wakee_loop(struct wake_shared *sh)
{
	uint64_t t_after;
	int rc;

	rc = wake_wakee_init(&sh->ch);
	if (rc) {
		fmt_snprintf(sh->error, sizeof(sh->error),
			     "%s: the wakee's signal mask: %s",
			     wake_mech_names[sh->ch.mech], strerror(rc));
		atomic_store(&sh->state, WAKEE_FAILED);
		return;
	}
	atomic_store(&sh->state, WAKEE_READY);
	for (;;) {
		rc = wake_wait(&sh->ch, &t_after);
		if (rc) {
			fmt_snprintf(sh->error, sizeof(sh->error),
				     "%s: the wakee's wait failed: %s",
				     wake_mech_names[sh->ch.mech], strerror(rc));
			atomic_store(&sh->state, WAKEE_FAILED);
			break;
		}
		if (atomic_load(&sh->stop))
			break;
		atomic_store(&sh->t_after, t_after);
		atomic_fetch_add(&sh->ack, 1);
		wake_futex_wake(&sh->ack, sh->ch.processes);
	}
	if (atomic_load(&sh->state) != WAKEE_FAILED)
		atomic_store(&sh->state, WAKEE_DONE);
	wake_futex_wake(&sh->ack, sh->ch.processes);
}

/* Thread body of a wakee (thread mode): set itself up, then loop. */
static void *wakee_thread_fn(void *arg)
{
	struct wakeup_pair *p = arg;
	const struct rtp_common *c = p->w->c;
	char err[128];

	if (rt_apply_self(c, c->policy, p->w->cfg.wakee_priority,
			  p->w->cfg.wakee_cpu, err, sizeof(err))) {
		fmt_snprintf(p->sh->error, sizeof(p->sh->error), "wakee thread: %s",
			     err);
		atomic_store(&p->sh->state, WAKEE_FAILED);
		return NULL;
	}
	wakee_loop(p->sh);
	return NULL;
}

/* Body of a wakee process: set itself up like an RT thread, then loop. */
static void wakee_child(struct wakeup_pair *p, pid_t parent)
{
	const struct rtp_common *c = p->w->c;
	struct wake_shared *sh = p->sh;
	char err[128];

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		_exit(RTP_EXIT_ENV);
	if (rt_apply_self(c, c->policy, p->w->cfg.wakee_priority,
			  p->w->cfg.wakee_cpu, err, sizeof(err))) {
		fmt_snprintf(sh->error, sizeof(sh->error), "wakee process: %s",
			     err);
		atomic_store(&sh->state, WAKEE_FAILED);
		_exit(RTP_EXIT_ENV);
	}
	if (c->mlock && mlockall(MCL_CURRENT | MCL_FUTURE)) {
		fmt_snprintf(sh->error, sizeof(sh->error),
			     "wakee process: mlockall: %s (--no-mlock skips it)",
			     strerror(errno));
		atomic_store(&sh->state, WAKEE_FAILED);
		_exit(RTP_EXIT_ENV);
	}
	wakee_loop(sh);
	_exit(0);
}

/* Wait until the wakee left WAKEE_STARTING; false on timeout or stop. */
static bool wait_wakee_ready(struct wakeup_pair *p, bool stopping_ok)
{
	struct timespec pause = { 0, 1000000 };
	int waited_ms = 0;

	while (atomic_load(&p->sh->state) == WAKEE_STARTING) {
		if (!stopping_ok && run_stopping(p->w->run))
			return false;
		if (waited_ms++ > (int)(WAKEUP_SETUP_TIMEOUT_NS / NSEC_PER_MSEC))
			return false;
		nanosleep(&pause, NULL);
	}
	return atomic_load(&p->sh->state) == WAKEE_READY;
}

/* Wait for acknowledgement number expected; false if the wakee is gone. */
static bool wait_ack(struct wakeup_pair *p, uint32_t expected)
{
	struct wake_shared *sh = p->sh;
	uint32_t seen;

	for (;;) {
		seen = atomic_load(&sh->ack);
		if ((int32_t)(seen - expected) >= 0)
			return true;
		if (atomic_load(&sh->state) != WAKEE_READY)
			return false;
		wake_futex_wait(&sh->ack, seen, sh->ch.processes,
				WAKEUP_POLL_NS);
	}
}

/* Tell the wakee to leave, wake it once more, and reap it. */
static void stop_wakee(struct wakeup_pair *p)
{
	struct timespec pause = { 0, 1000000 };
	uint64_t dummy;
	int status, i;

	wait_wakee_ready(p, true);
	if (atomic_load(&p->sh->state) == WAKEE_READY) {
		atomic_store(&p->sh->stop, 1);
		wake_post(&p->sh->ch, &dummy);
	}
	if (!p->w->cfg.processes) {
		pthread_join(p->wakee_tid, NULL);
		return;
	}
	for (i = 0; i < 1000; i++) {
		if (waitpid(p->child, &status, WNOHANG) == p->child)
			return;
		nanosleep(&pause, NULL);
	}
	kill(p->child, SIGKILL);
	waitpid(p->child, &status, 0);
}

/* Next wake-up index after wake-up i whose handling ended at end_ns. */
static uint64_t next_wakeup(struct wakeup_pair *p, uint64_t i, uint64_t due,
			    uint64_t end_ns)
{
	uint64_t interval = p->w->cfg.interval_ns, next;

	/* the usual case, no wake-up time missed: no division */
	if (end_ns <= (i + 1) * interval)
		return i + 1;
	next = (end_ns + interval - 1) / interval;
	series_overrun(p->series, due, next - (i + 1));
	return next;
}

/*
 * series_add answered SERIES_BUSY: the probe itself (--break-on) held the
 * waker before wake-up next, from held_ns on (relative to the pair's start).
 * The wake-up times that passed meanwhile are a gap (series.h), not overruns;
 * the latencies are not touched (the waker stamps right before its wake call).
 * Returns the next wake-up index, the first at or after now.
 */
static __attribute__((noinline)) uint64_t
wakeup_busy(struct wakeup_pair *p, uint64_t next, uint64_t start_abs)
{
	uint64_t interval = p->w->cfg.interval_ns;
	uint64_t now = run_now_ns(p->w->run) - start_abs, after;

	if (now <= next * interval)
		return next;
	after = (now + interval - 1) / interval;
	series_gap(p->series, next * interval, (after - next) * interval);
	return after;
}

/* The measured schedule of one pair (the wakee is ready). */
static void measure_pair(struct wakeup_pair *p, uint64_t start_abs)
{
	struct run *r = p->w->run;
	struct wake_shared *sh = p->sh;
	clockid_t clock = run_common(r)->clock;
	uint64_t i = 0, t_before;
	uint32_t expected = atomic_load(&sh->ack);
	char why[200];
	int rc;

	for (;;) {
		uint64_t due = i * p->w->cfg.interval_ns, end;
		int64_t latency;

		if (series_past_end(p->series, due) || run_stopping(r))
			return;
		rc = clock_sleep_until(clock, start_abs + due);
		if (rc) {
			fmt_snprintf(why, sizeof(why), "clock_nanosleep: %s",
				     strerror(rc));
			series_fail(p->series, why);
			return;
		}
		expected++;
		rc = wake_post(&sh->ch, &t_before);
		if (rc) {
			fmt_snprintf(why, sizeof(why), "%s: the wake call failed: %s",
				     wake_mech_names[p->mech], strerror(rc));
			series_fail(p->series, why);
			return;
		}
		if (!wait_ack(p, expected)) {
			fmt_snprintf(why, sizeof(why), "%s",
				     sh->error[0] ? sh->error :
				     "the wakee stopped answering");
			series_fail(p->series, why);
			return;
		}
		latency = (int64_t)(atomic_load(&sh->t_after) - t_before);
		if (due >= p->w->cfg.warmup_ns)
			p->wakeups++;
		end = run_now_ns(r) - start_abs;
		rc = series_add(p->series, due, latency);
		if (rc == SERIES_DONE)
			return;
		i = next_wakeup(p, i, due, end);
		if (rc == SERIES_BUSY)
			i = wakeup_busy(p, i, start_abs);
	}
}

/* The simulated schedule: latencies from the series' synthetic stream. */
static void simulate_pair(struct wakeup_pair *p)
{
	struct sim_stream *sim = series_sim(p->series);
	uint64_t i = 0;

	for (;;) {
		uint64_t due = i * p->w->cfg.interval_ns, latency;

		if (series_past_end(p->series, due) || run_stopping(p->w->run))
			return;
		latency = sim_next_ns(sim);
		if (due >= p->w->cfg.warmup_ns)
			p->wakeups++;
		if (series_add(p->series, due, (int64_t)latency) == SERIES_DONE)
			return;
		i = next_wakeup(p, i, due, due + latency);
	}
}

/* Block until it is this pair's turn (or the run stops). */
static void wait_turn(struct wakeup_pair *p)
{
	uint32_t turn;

	for (;;) {
		turn = atomic_load(&p->w->turn);
		if (turn == (uint32_t)p->index || run_stopping(p->w->run))
			return;
		wake_futex_wait(&p->w->turn, turn, false, WAKEUP_POLL_NS);
	}
}

/* Start the wakee thread or process of a pair; false with the series failed. */
static bool start_wakee(struct wakeup_pair *p)
{
	pid_t parent = getpid();
	pthread_attr_t attr;
	char why[160];
	int rc;

	if (!p->w->cfg.processes) {
		rc = pthread_attr_init(&attr);
		if (!rc)
			rc = pthread_attr_setstacksize(&attr, WAKEE_STACK);
		if (!rc)
			rc = pthread_create(&p->wakee_tid, &attr,
					    wakee_thread_fn, p);
		pthread_attr_destroy(&attr);
		if (rc) {
			fmt_snprintf(why, sizeof(why), "cannot start the wakee "
				     "thread: %s", strerror(rc));
			series_fail(p->series, why);
			return false;
		}
		return true;
	}
	p->child = fork();
	if (p->child < 0) {
		fmt_snprintf(why, sizeof(why), "fork of the wakee process: %s",
			     strerror(errno));
		series_fail(p->series, why);
		return false;
	}
	if (p->child == 0)
		wakee_child(p, parent);
	return true;
}

/* Thread body of a waker: wait for its turn, run its pair, pass the turn on. */
static void *waker_thread_fn(void *arg)
{
	struct wakeup_pair *p = arg;
	struct wakeup *w = p->w;
	struct run *r = w->run;
	uint64_t start_abs;

	wait_turn(p);
	if (!run_stopping(r)) {
		start_abs = p->index ? run_now_ns(r) + NSEC_PER_MSEC
				     : run_t0_ns(r);
		p->ran = true;
		p->start_ns = start_abs - run_t0_ns(r);
		series_set_origin(p->series, p->start_ns);
		if (SIMULATED(run_common(r)->simulate)) {
			simulate_pair(p);
		} else if (start_wakee(p)) {
			if (wait_wakee_ready(p, false))
				measure_pair(p, start_abs);
			else if (atomic_load(&p->sh->state) == WAKEE_FAILED)
				series_fail(p->series, p->sh->error);
			stop_wakee(p);
		}
	}
	series_finish(p->series);
	atomic_fetch_add(&w->turn, 1);
	wake_futex_wake(&w->turn, false);
	return NULL;
}

/* Start record "params". */
static void wakeup_write_params(struct json *j, void *ctx)
{
	const struct wakeup *w = ctx;
	int i;

	json_begin_array(j, "mechanisms");
	for (i = 0; i < w->cfg.nmechs; i++)
		json_str(j, NULL, wake_mech_names[w->cfg.mechs[i]]);
	json_end_array(j);
	json_str(j, "mode", mode_names[w->cfg.processes]);
	json_str(j, "placement", placement_names[w->cfg.cross]);
	json_i64(j, "waker_cpu", w->cfg.waker_cpu);
	json_i64(j, "wakee_cpu", w->cfg.wakee_cpu);
	json_i64(j, "waker_priority", w->cfg.waker_priority);
	json_i64(j, "wakee_priority", w->cfg.wakee_priority);
	json_u64(j, "interval_ns", w->cfg.interval_ns);
}

/* Result record "data": per mechanism, when it started and what it did. */
static void wakeup_write_data(struct json *j, void *ctx)
{
	const struct wakeup *w = ctx;
	int i;

	json_begin_array(j, "mechanisms");
	for (i = 0; i < w->npairs; i++) {
		const struct wakeup_pair *p = &w->pairs[i];

		json_begin_object(j, NULL);
		json_u64(j, "series", (uint64_t)series_index(p->series));
		json_str(j, "mechanism", wake_mech_names[p->mech]);
		json_bool(j, "ran", p->ran);
		if (p->ran)
			json_u64(j, "start_ns", p->start_ns);
		else
			json_null(j, "start_ns");
		json_u64(j, "wakeups", p->wakeups);
		json_end_object(j);
	}
	json_end_array(j);
}

/* Check option combinations and resolve CPUs and priorities. */
static void wakeup_resolve(struct wakeup *w, struct rtp_common *c,
			   const char *waker_prio, const char *wakee_prio)
{
	struct wakeup_cfg *cfg = &w->cfg;

	if (c->policy == POLICY_OTHER && (waker_prio || wakee_prio))
		opt_refuse(waker_prio ? "--waker-priority" : "--wakee-priority",
			   waker_prio ? waker_prio : wakee_prio, "--policy other",
			   "priorities apply to fifo or rr only");
	if (c->policy == POLICY_OTHER) {
		cfg->waker_priority = cfg->wakee_priority = 0;
	} else {
		if (!wakee_prio)
			cfg->wakee_priority = c->priority;
		if (!waker_prio)
			cfg->waker_priority = c->priority > 1 ?
					      c->priority - 1 : 1;
	}
	cfg->waker_cpu = c->cpu_list[0];
	cfg->wakee_cpu = c->cpu_list[0];
	if (cfg->cross) {
		if (c->nthreads < 2)
			opt_fail("--placement", "cross", "needs two CPUs in "
				 "--cpus (the waker's, then the wakee's)");
		cfg->wakee_cpu = c->cpu_list[1];
	}
	cfg->warmup_ns = c->warmup_ns;
}

/* Map the shared pair state and open every channel; 0 or an exit code. */
static int wakeup_open(struct wakeup *w, const struct rtp_common *c)
{
	size_t len = sizeof(struct wake_shared) * (size_t)w->cfg.nmechs;
	char err[160];
	int i;

	w->shared = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (w->shared == MAP_FAILED) {
		fmt_fprintf(stderr, "rtprobe: wakeup: mmap of %zu bytes shared "
			    "with the wakee failed: %s\n", len, strerror(errno));
		return RTP_EXIT_ENV;
	}
	if (SIMULATED(c->simulate))
		return 0;
	if (wake_process_init(err, sizeof(err))) {
		fmt_fprintf(stderr, "rtprobe: wakeup: %s\n", err);
		return RTP_EXIT_ENV;
	}
	for (i = 0; i < w->cfg.nmechs; i++) {
		if (wake_channel_open(&w->shared[i].ch, w->cfg.mechs[i],
				      w->cfg.processes, c->clock, err,
				      sizeof(err))) {
			fmt_fprintf(stderr, "rtprobe: --mechanism %s: cannot set "
				    "it up (%s); leave it out of the list\n",
				    wake_mech_names[w->cfg.mechs[i]], err);
			while (i-- > 0)
				wake_channel_close(&w->shared[i].ch);
			return RTP_EXIT_ENV;
		}
	}
	return 0;
}

/* Release every channel. */
static void wakeup_close(struct wakeup *w, const struct rtp_common *c)
{
	int i;

	if (!SIMULATED(c->simulate))
		for (i = 0; i < w->npairs; i++)
			wake_channel_close(&w->shared[i].ch);
	munmap(w->shared, sizeof(struct wake_shared) * (size_t)w->cfg.nmechs);
}

/* Entry point of `rtprobe wakeup`. */
static const struct opt_desc wakeup_opts[] = {
	{ .name = "mechanism", .id = OPT_MECHANISM, .type = OPT_CHOICES,
	  .def = "condvar", .choices = wake_mech_names,
	  .help = HELP_WAKEUP_MECHANISM },
	{ .name = "mode", .id = OPT_MODE, .type = OPT_CHOICE,
	  .def = "threads", .metavar = "M", .choices = mode_names,
	  .help = HELP_WAKEUP_MODE },
	{ .name = "placement", .id = OPT_PLACEMENT, .type = OPT_CHOICE,
	  .def = "same", .metavar = "P", .choices = placement_names,
	  .help = HELP_WAKEUP_PLACEMENT },
	{ .name = "waker-priority", .id = OPT_WAKER_PRIORITY,
	  .type = OPT_INTEGER,
	  .help = HELP_WAKEUP_WAKER_PRIORITY },
	{ .name = "wakee-priority", .id = OPT_WAKEE_PRIORITY,
	  .type = OPT_INTEGER, .help = HELP_WAKEUP_WAKEE_PRIORITY },
	{ .name = "interval", .id = OPT_INTERVAL, .type = OPT_DURATION,
	  .def = "1ms", .unit = "us",
	  .help = HELP_WAKEUP_INTERVAL },
	{ .name = NULL },
};

/* wakeup's parse state: the test and the priorities as given. */
struct wakeup_parse {
	struct wakeup w;
	const char *waker_prio, *wakee_prio;
};

/* Defaults: condvar, one wake-up a millisecond. */
static void wakeup_defaults(void *ctx, struct rtp_common *c)
{
	struct wakeup_parse *wp = ctx;

	(void)c;
	wp->w.cfg.mechs[0] = MECH_CONDVAR;
	wp->w.cfg.nmechs = 1;
	wp->w.cfg.interval_ns = WAKEUP_DEFAULT_INTERVAL_NS;
}

/* Parse one of wakeup's own options. */
static void wakeup_option(void *ctx, struct rtp_common *c, int id,
			  const char *arg)
{
	struct wakeup_parse *wp = ctx;
	struct wakeup_cfg *cfg = &wp->w.cfg;

	(void)c;
	switch (id) {
	case OPT_MECHANISM:
		parse_mechanisms(cfg, arg);
		break;
	case OPT_MODE:
		cfg->processes = opt_choice("--mode", arg, mode_names) == 1;
		break;
	case OPT_PLACEMENT:
		cfg->cross = opt_choice("--placement", arg,
					placement_names) == 1;
		break;
	case OPT_WAKER_PRIORITY:
		wp->waker_prio = arg;
		cfg->waker_priority = (int)opt_u64("--waker-priority", arg, 1,
						   99);
		break;
	case OPT_WAKEE_PRIORITY:
		wp->wakee_prio = arg;
		cfg->wakee_priority = (int)opt_u64("--wakee-priority", arg, 1,
						   99);
		break;
	default:
		cfg->interval_ns = opt_duration("--interval", arg, "us");
		if (!cfg->interval_ns)
			opt_fail("--interval", arg, "must be greater than zero");
	}
}

/* Measure each mechanism in turn with one waker/wakee pair. */
static int wakeup_run(void *ctx, struct rtp_common *c, int argc, char **argv)
{
	struct wakeup_parse *wp = ctx;
	struct wakeup *w = &wp->w;
	int i, rc;

	wakeup_resolve(w, c, wp->waker_prio, wp->wakee_prio);
	w->c = c;
	rc = wakeup_open(w, c);
	if (rc)
		return rc;

	w->run = run_create(c, argc, argv);
	run_set_params(w->run, wakeup_write_params, w);
	run_set_result_data(w->run, wakeup_write_data, w);
	w->npairs = w->cfg.nmechs;
	for (i = 0; i < w->npairs; i++) {
		struct wakeup_pair *p = &w->pairs[i];

		p->w = w;
		p->index = i;
		p->mech = w->cfg.mechs[i];
		p->sh = &w->shared[i];
		p->series = run_add_series(w->run, wake_mech_names[p->mech],
					   w->cfg.wakee_cpu);
	}
	rc = run_begin(w->run);
	if (rc) {
		wakeup_close(w, c);
		return rc;
	}
	for (i = 0; i < w->npairs; i++)
		run_spawn(w->run, waker_thread_fn, &w->pairs[i],
			  w->cfg.waker_cpu, c->policy, w->cfg.waker_priority);
	rc = run_finish(w->run);
	wakeup_close(w, c);
	return rc;
}

const struct test_desc test_wakeup = {
	.name = "wakeup",
	.summary = "waker -> wakee latency of a wake-up mechanism",
	.intro = INTRO_WAKEUP,
	.examples = EXAMPLES_WAKEUP,
	.traits = TEST_TIMED | TEST_SERIES | TEST_WARMUP | TEST_SIMULATE |
		  TEST_NO_DEADLINE | TEST_TRACE,
	.host = {
		.runs_per = "mechanism",
		.figures = TEST_LIST("mechanisms"),
		.layouts = TEST_LIST("arm-preemptrt", "celleb"),
	},
	.default_duration_ns = WAKEUP_DEFAULT_DURATION_NS,
	.cpu_option = "cpus",
	.options = wakeup_opts,
	.refused = COMMON_BIT(C_THREADS),
	.refused_why = "wakeup runs one waker/wakee pair; place it with "
		       "--cpus and --placement",
	.ctx_size = sizeof(struct wakeup_parse),
	.defaults = wakeup_defaults,
	.option = wakeup_option,
	.run = wakeup_run,
};
