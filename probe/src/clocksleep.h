/* SPDX-License-Identifier: MIT */
/*
 * clocksleep.h - sleep until an absolute time on a clock.
 *
 * Inline because measuring threads call it right before the wake-up whose
 * delay they measure.
 */
#ifndef RTP_CLOCKSLEEP_H
#define RTP_CLOCKSLEEP_H

#include <errno.h>
#include <stdint.h>
#include <time.h>

#include "rtprobe.h"

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
