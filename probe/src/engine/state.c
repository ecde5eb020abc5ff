// SPDX-License-Identifier: MIT
/*
 * state.c - the state of a run that every part of it reads: stop requests,
 * the clock, the status and measured time a run ended with.  It calls no
 * other file of the run, so the run's files call one another as a tree:
 * run.c at the top; record.c, hooks.c, trace.c, raw.c and summary.c below
 * it; state.c at the bottom (trace.c writes its records through record.c).
 */
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/types.h>

#include "clocksleep.h"
#include "fmt.h"
#include "rtprobe.h"
#include "run_impl.h"
#include "series.h"

bool run_stopping(const struct run *r)
{
	return atomic_load_explicit(&r->stop, memory_order_relaxed);
}

void run_request_stop(struct run *r, const char *why)
{
	const char *expected = NULL;

	atomic_compare_exchange_strong(&r->stop_why, &expected, why);
	atomic_store_explicit(&r->stop, 1, memory_order_release);
}

uint64_t run_t0_ns(const struct run *r)
{
	return r->t0_ns;
}

uint64_t run_now_ns(const struct run *r)
{
	return clock_now_ns(r->c->clock);
}

const struct rtp_common *run_common(const struct run *r)
{
	return r->c;
}

void run_notify(struct run *r)
{
	kill(r->pid, SIGUSR1);
}

/*
 * strsignal's text (the same in glibc and musl) for the signals run_wait
 * stops on: SIGINT, SIGTERM, SIGHUP; without strsignal's table of all.
 */
static const char *stop_signal_name(int sig)
{
	if (sig == SIGINT)
		return "Interrupt";
	return sig == SIGTERM ? "Terminated" : "Hangup";
}

/* Decide status, reason and exit code from how the run ended. */
int run_status(struct run *r, const char **status, char *reason,
		      size_t len)
{
	const char *why = atomic_load(&r->stop_why);
	const char *err = NULL;
	int i;

	for (i = 0; i < r->nseries && !err; i++)
		err = r->series[i]->setup_error[0] ?
		      r->series[i]->setup_error : series_error(r->series[i]->s);
	for (i = 0; i < r->nthreads && !err; i++)
		if (r->threads[i]->error[0] && !SIMULATED(r->c->simulate))
			err = r->threads[i]->error;
	if (!err && r->raw_error[0])
		err = r->raw_error;
	if (err || r->out_failed || (why && !strcmp(why, "error"))) {
		*status = "error";
		fmt_snprintf(reason, len, "%s", err ? err : r->out_failed ?
			     r->out_error : "a measuring thread failed");
		return RTP_EXIT_ENV;
	}
	if (why && !strcmp(why, "interrupted")) {
		*status = "interrupted";
		fmt_snprintf(reason, len, "interrupted by %s",
			     r->signo ? stop_signal_name(r->signo) : "a signal");
		return RTP_EXIT_INTERRUPTED;
	}
	if (why && !strcmp(why, "break")) {
		*status = "break";
		fmt_snprintf(reason, len, "--break-on: series %d had %llu ns at "
			     "t %llu ns", r->break_series,
			     (unsigned long long)r->break_latency_ns,
			     (unsigned long long)r->break_t_ns);
		return RTP_EXIT_FAIL;
	}
	for (i = 0; i < r->nverdicts; i++) {
		if (!r->verdicts[i].pass) {
			*status = "fail";
			fmt_snprintf(reason, len, "%s: %s", r->verdicts[i].name,
				     r->verdicts[i].detail);
			return RTP_EXIT_FAIL;
		}
	}
	*status = "ok";
	reason[0] = '\0';
	if (why && strcmp(why, "break"))
		fmt_snprintf(reason, len, "%s", why);
	return RTP_EXIT_OK;
}

/*
 * Time measured after warm-up: the duration when the run went to its end,
 * else up to the due time of the last measured sample, counted from the
 * measured start of its series (see docs/schema.md; series_start).
 */
uint64_t run_measured_ns(const struct run *r, const char *status)
{
	uint64_t m = 0, from, last;
	int i;

	if (!r->c->loops && (!strcmp(status, "ok") || !strcmp(status, "fail")))
		return r->c->duration_ns;
	for (i = 0; i < r->nseries; i++) {
		if (!r->series[i]->count)
			continue;
		from = series_start_ns(r->series[i]->s) + r->c->warmup_ns;
		last = r->series[i]->last_t_ns;
		if (last > from && last - from > m)
			m = last - from;
	}
	if (!r->c->loops && m > r->c->duration_ns)
		m = r->c->duration_ns;
	return m;
}
