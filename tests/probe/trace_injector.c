// SPDX-License-Identifier: MIT
/*
 * trace_injector.c - interference for the --trace tests: a SCHED_FIFO
 * thread pinned to one CPU that busy-spins for BURST_US every PERIOD_US,
 * named "rtb-inject" (its comm in the kernel's trace events).
 *
 *   trace_injector CPU PRIORITY BURST_US PERIOD_US DURATION_MS
 *
 * Prints "ready <pid>" on stdout once it runs at its priority on its CPU,
 * then "burst DUE END" after each burst, in CLOCK_MONOTONIC ns (the clock of
 * rtprobe's trace records): from the moment its timer was due (it is
 * runnable from then on, ahead of any lower priority on its CPU) to the end
 * of its spin, so a test can tell which wake-ups of the probe it held up.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

/* Monotonic time in ns. */
static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	struct sched_param sp = { 0 };
	struct timespec due;
	long long burst, period, end, next, stop;
	cpu_set_t set;

	if (argc != 6) {
		fprintf(stderr, "usage: trace_injector CPU PRIORITY BURST_US "
			"PERIOD_US DURATION_MS\n");
		return 2;
	}
	CPU_ZERO(&set);
	CPU_SET(atoi(argv[1]), &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "trace_injector: CPU %s: %s\n", argv[1],
			strerror(errno));
		return 3;
	}
	sp.sched_priority = atoi(argv[2]);
	if (sched_setscheduler(0, SCHED_FIFO, &sp)) {
		fprintf(stderr, "trace_injector: SCHED_FIFO %s: %s\n", argv[2],
			strerror(errno));
		return 3;
	}
	prctl(PR_SET_NAME, "rtb-inject");
	burst = atoll(argv[3]) * 1000;
	period = atoll(argv[4]) * 1000;
	end = now_ns() + atoll(argv[5]) * 1000000LL;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (next = now_ns() + period; next < end; next += period) {
		due.tv_sec = next / 1000000000LL;
		due.tv_nsec = next % 1000000000LL;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, NULL)
		       == EINTR)
			;
		for (stop = now_ns() + burst; now_ns() < stop;)
			;
		printf("burst %lld %lld\n", next, now_ns());
		fflush(stdout);
	}
	return 0;
}
