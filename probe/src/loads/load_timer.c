// SPDX-License-Identifier: MIT
/*
 * load_timer.c - `rtprobe load timer`: many high-resolution timers.
 *
 * --timers periodic timerfds (CLOCK_MONOTONIC) share the rate: each expires
 * every timers/rate seconds, their phases spread evenly over the interval.
 * They are split between the workers (one thread per CPU in --cpus by
 * default, pinned, so the hrtimer interrupts land on those CPUs); each worker
 * waits for its timers with epoll and reads their expiration counts.  The
 * achieved rate counts expirations; "wakeups" counts reads, which are fewer
 * when the worker was late and one read collected several expirations.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "fmt.h"
#include "load.h"
#include "opt.h"
#include "rtprobe.h"

#define TIMER_MIN_INTERVAL_NS (10 * NSEC_PER_USEC)
#define TIMER_EVENTS 64

enum { TIMER_EXPIRATIONS, TIMER_WAKEUPS };

static const char *const timer_counters[] = {
	"expirations", "wakeups", NULL,
};

static const struct opt_desc timer_options[] = {
	{ .name = "timers", .id = LOPT_TIMERS, .type = OPT_INTEGER,
	  .def = "8", .help = HELP_LOAD_TIMER_TIMERS },
	{ .name = "workers", .id = LOPT_WORKERS, .type = OPT_INTEGER,
	  .help = HELP_LOAD_TIMER_WORKERS },
	{ .name = NULL },
};

/* One worker and its timers. */
struct timer_worker {
	struct load_run *run;
	int cpu;
	int epfd;
	int first;                 /* index of its first timer */
	int ntimers;
};

/* The timer kind's state. */
struct timer_state {
	uint64_t interval_ns;
	int *fd;                   /* cfg.timers timerfds */
	int nfds;
	struct timer_worker *worker;
};

/* Print the timer kind's example. */
static void timer_usage(FILE *f)
{
	fmt_fprintf(f,
		    "Each timer's interval is timers/rate, at least 10us "
		    "(--rate max uses 10us).\n"
		    "Example: rtprobe load timer --rate 20000 --timers 16 "
		    "--duration 10s\n");
}

/* Parse the timer kind's options. */
static void timer_handle(struct load_cfg *cfg, int id, const char *arg)
{
	if (id == LOPT_TIMERS)
		cfg->timers = (int)opt_u64("--timers", arg, 1, 4096);
}

/* Defaults and the interval check. */
static void timer_finish(struct load_cfg *cfg)
{
	char text[64];

	if (!cfg->timers)
		cfg->timers = 8;
	if (!cfg->workers)
		cfg->workers = cfg->ncpus;
	if (cfg->workers > cfg->timers)
		cfg->workers = cfg->timers;
	if (!cfg->rate_max &&
	    (double)cfg->timers / cfg->rate * 1e9 < TIMER_MIN_INTERVAL_NS) {
		fmt_snprintf(text, sizeof(text), "%.15g", cfg->rate);
		opt_fail("--rate", text, "over %d timers each would expire "
			 "more often than every 10us; raise --timers",
			 cfg->timers);
	}
}

/* Wait for the worker's timers and count expirations until stop. */
static void *timer_worker_main(void *arg)
{
	struct timer_worker *w = arg;
	struct load_shared *sh = w->run->shared;
	struct epoll_event ev[TIMER_EVENTS];
	uint64_t expirations;
	int i, n;

	while (!load_stopping(sh)) {
		n = epoll_wait(w->epfd, ev, TIMER_EVENTS, 100);
		if (n < 0 && errno != EINTR) {
			load_fail(sh, "epoll_wait on timers: %s",
				  strerror(errno));
			return (void *)1;
		}
		for (i = 0; i < n; i++) {
			if (read(ev[i].data.fd, &expirations,
				 sizeof(expirations)) != sizeof(expirations))
				continue;
			load_count(sh, TIMER_EXPIRATIONS, expirations);
			load_count(sh, TIMER_WAKEUPS, 1);
		}
	}
	return NULL;
}

/* Create the timerfds (not armed yet) and one epoll set per worker. */
static int timer_prepare(struct load_run *r, char *err, size_t errlen)
{
	struct timer_state *st = calloc(1, sizeof(*st));
	struct epoll_event ev = { .events = EPOLLIN };
	struct timer_worker *w;
	int i, k, per, extra;

	if (!st) {
		fmt_snprintf(err, errlen, "out of memory");
		return RTP_EXIT_ENV;
	}
	r->state = st;
	load_workers_init(&r->workers, false);
	load_raise_nofile();
	st->interval_ns = r->cfg.rate_max ? TIMER_MIN_INTERVAL_NS :
		(uint64_t)((double)r->cfg.timers / r->cfg.rate * 1e9);
	st->fd = malloc((size_t)r->cfg.timers * sizeof(int));
	st->worker = calloc((size_t)r->cfg.workers, sizeof(*st->worker));
	if (!st->fd || !st->worker) {
		fmt_snprintf(err, errlen, "out of memory");
		return RTP_EXIT_ENV;
	}
	for (i = 0; i < r->cfg.workers; i++)
		st->worker[i].epfd = -1;
	per = r->cfg.timers / r->cfg.workers;
	extra = r->cfg.timers % r->cfg.workers;
	for (i = 0, k = 0; i < r->cfg.workers; i++) {
		w = &st->worker[i];
		w->run = r;
		w->cpu = r->cfg.cpu_list[i % r->cfg.ncpus];
		w->first = k;
		w->ntimers = per + (i < extra);
		w->epfd = epoll_create1(EPOLL_CLOEXEC);
		if (w->epfd < 0) {
			fmt_snprintf(err, errlen, "epoll_create1: %s",
				     strerror(errno));
			return RTP_EXIT_ENV;
		}
		for (; k < w->first + w->ntimers; k++) {
			st->fd[k] = timerfd_create(CLOCK_MONOTONIC,
						   TFD_NONBLOCK | TFD_CLOEXEC);
			if (st->fd[k] < 0) {
				fmt_snprintf(err, errlen, "timerfd_create for "
					     "--timers %d: %s", r->cfg.timers,
					     strerror(errno));
				return RTP_EXIT_ENV;
			}
			st->nfds++;
			ev.data.fd = st->fd[k];
			if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, st->fd[k], &ev)) {
				fmt_snprintf(err, errlen, "epoll_ctl: %s",
					     strerror(errno));
				return RTP_EXIT_ENV;
			}
		}
	}
	return 0;
}

/* Write the timer kind's parameters. */
static void timer_params(struct json *j, const struct load_run *r)
{
	const struct timer_state *st = r->state;

	json_i64(j, "timers", r->cfg.timers);
	json_i64(j, "workers", r->cfg.workers);
	json_u64(j, "interval_ns", st->interval_ns);
	json_str(j, "mechanism", "timerfd");
}

/* Arm every timer with spread phases and start the workers. */
static int timer_start(struct load_run *r, char *err, size_t errlen)
{
	struct timer_state *st = r->state;
	struct itimerspec its;
	uint64_t t0 = load_now_ns() + st->interval_ns, first;
	int i;

	for (i = 0; i < st->nfds; i++) {
		first = t0 + st->interval_ns * (uint64_t)i /
			     (uint64_t)st->nfds;
		its.it_value.tv_sec = (time_t)(first / NSEC_PER_SEC);
		its.it_value.tv_nsec = (long)(first % NSEC_PER_SEC);
		its.it_interval.tv_sec = (time_t)(st->interval_ns /
						  NSEC_PER_SEC);
		its.it_interval.tv_nsec = (long)(st->interval_ns %
						 NSEC_PER_SEC);
		if (timerfd_settime(st->fd[i], TFD_TIMER_ABSTIME, &its, NULL)) {
			fmt_snprintf(err, errlen, "timerfd_settime: %s",
				     strerror(errno));
			return RTP_EXIT_ENV;
		}
	}
	for (i = 0; i < r->cfg.workers; i++)
		if (load_workers_spawn(&r->workers, timer_worker_main,
				       &st->worker[i], st->worker[i].cpu, err,
				       errlen))
			return RTP_EXIT_ENV;
	return 0;
}

/* Expirations per second. */
static double timer_achieved(const struct load_run *r, const uint64_t *delta,
			     double seconds)
{
	(void)r;
	return (double)delta[TIMER_EXPIRATIONS] / seconds;
}

/* Close the timers and epoll sets. */
static void timer_cleanup(struct load_run *r)
{
	struct timer_state *st = r->state;
	int i;

	if (!st)
		return;
	for (i = 0; i < st->nfds; i++)
		close(st->fd[i]);
	for (i = 0; st->worker && i < r->cfg.workers; i++)
		if (st->worker[i].epfd >= 0)
			close(st->worker[i].epfd);
	free(st->fd);
	free(st->worker);
	free(st);
	r->state = NULL;
}

const struct load_kind load_kind_timer = {
	.name = "timer",
	.unit = "expirations/s",
	.summary = "many periodic high-resolution timers (timerfd)",
	.rate_lo = 1,
	.rate_hi = 1e8,
	.counter_names = timer_counters,
	.options = timer_options,
	.usage = timer_usage,
	.handle = timer_handle,
	.finish = timer_finish,
	.prepare = timer_prepare,
	.params = timer_params,
	.start = timer_start,
	.achieved = timer_achieved,
	.cleanup = timer_cleanup,
};
