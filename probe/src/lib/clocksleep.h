/* SPDX-License-Identifier: MIT */
/*
 * clocksleep.h - read a clock in nanoseconds, sleep until an absolute time.
 *
 * Inline because measuring threads call them right around the wake-up whose
 * delay they measure.
 */
#ifndef RTP_CLOCKSLEEP_H
#define RTP_CLOCKSLEEP_H

#include <errno.h>
#include <stdint.h>
#include <time.h>

#include "rtprobe.h"

/* Current time on clock in ns (async-signal-safe: usable in forked children). */
static inline uint64_t clock_now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* Sleep until abs_ns on clock, resuming after signals; 0 or an errno value. */
static inline int clock_sleep_until(clockid_t clock, uint64_t abs_ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(abs_ns / NSEC_PER_SEC),
		.tv_nsec = (long)(abs_ns % NSEC_PER_SEC),
	};
	int err;

	do
		err = clock_nanosleep(clock, TIMER_ABSTIME, &ts, NULL);
	while (err == EINTR);
	return err;
}

#endif /* RTP_CLOCKSLEEP_H */
