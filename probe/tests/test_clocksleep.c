// SPDX-License-Identifier: MIT
/*
 * test_clocksleep.c - the hot loop's clock helpers: the division-free deadline
 * step agrees with the division, and the sleep call (a direct trap on some
 * arches, see clocksleep.h) sleeps, returns at once for a past deadline and
 * gives the C library's errno values for bad arguments.
 */
#include <errno.h>
#include <stdint.h>
#include <time.h>

#include "clocksleep.h"
#include "tap.h"

/* ts_advance from ns_to_ts(start) by steps of `by` matches ns_to_ts each time. */
static bool advance_matches(uint64_t start, uint64_t by, int steps)
{
	const struct timespec step = ns_to_ts(by);
	struct timespec ts = ns_to_ts(start), want;
	int i;

	for (i = 1; i <= steps; i++) {
		ts_advance(&ts, &step);
		want = ns_to_ts(start + (uint64_t)i * by);
		if (ts.tv_sec != want.tv_sec || ts.tv_nsec != want.tv_nsec)
			return false;
	}
	return true;
}

int main(void)
{
	struct tap t = { 0 };
	struct timespec ts;
	uint64_t before, after;

	tap_ok(&t, advance_matches(0, 1000000, 5000), "1 ms steps from 0");
	tap_ok(&t, advance_matches(999999999, 1, 10), "1 ns steps across a second");
	tap_ok(&t, advance_matches(123456789012ULL, 999999999, 100),
	       "just under a second, carrying every step");
	tap_ok(&t, advance_matches(5 * NSEC_PER_SEC - 1, 2500 * NSEC_PER_MSEC, 100),
	       "2.5 s steps");
	tap_ok(&t, advance_matches(17, 199999, 100000), "200 us steps");

	before = clock_now_ns(CLOCK_MONOTONIC);
	ts = ns_to_ts(before + 2 * NSEC_PER_MSEC);
	tap_ok(&t, clock_sleep_ts(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts) == 0,
	       "absolute sleep returns 0");
	after = clock_now_ns(CLOCK_MONOTONIC);
	tap_ok(&t, after >= before + 2 * NSEC_PER_MSEC,
	       "absolute sleep wakes at or after its deadline");
	ts = ns_to_ts(before);
	tap_ok(&t, clock_sleep_ts(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts) == 0,
	       "a past deadline returns 0 at once");
	ts = ns_to_ts(1 * NSEC_PER_MSEC);
	before = clock_now_ns(CLOCK_MONOTONIC);
	tap_ok(&t, clock_sleep_ts(CLOCK_MONOTONIC, 0, &ts) == 0 &&
	       clock_now_ns(CLOCK_MONOTONIC) >= before + NSEC_PER_MSEC,
	       "relative sleep of 1 ms");
	ts.tv_sec = 0;
	ts.tv_nsec = (long)NSEC_PER_SEC;
	tap_ok(&t, clock_sleep_ts(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts) == EINVAL,
	       "tv_nsec of a second: EINVAL");
	ts.tv_nsec = 0;
	tap_ok(&t, clock_sleep_ts((clockid_t)-1000, TIMER_ABSTIME, &ts) == EINVAL,
	       "an unknown clock: EINVAL");
	tap_ok(&t, clock_sleep_until(CLOCK_MONOTONIC,
				     clock_now_ns(CLOCK_MONOTONIC) +
				     NSEC_PER_MSEC) == 0,
	       "clock_sleep_until");
	printf("# direct trap: %s\n", RTP_RAW_NANOSLEEP ? "yes" : "no");
	return tap_done(&t);
}
