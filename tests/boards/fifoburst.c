// SPDX-License-Identifier: MIT
/*
 * fifoburst: known interference for the zoo's trace checks (tests/boards/test_zoo.py).
 *
 *   fifoburst BURST_MS PERIOD_MS PRIORITY
 *
 * Runs at SCHED_FIFO PRIORITY and keeps the CPU busy for BURST_MS every PERIOD_MS until
 * killed: a thread of the measured CPU that a trace must name as the cause of the
 * latencies it makes.  Built static for each board's CPU with Zig's C compiler (musl).
 * musl's sched_setscheduler() is a stub that fails with ENOSYS, so the policy is set
 * with the raw system call.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NS_PER_MS 1000000LL
#define NS_PER_S 1000000000LL

/* Nanoseconds of CLOCK_MONOTONIC. */
static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

/* A whole number in [low, high] from text, or -1 with a message naming what. */
static long parse(const char *text, const char *what, long low, long high)
{
	char *end;
	long value;

	errno = 0;
	value = strtol(text, &end, 10);
	if (errno || end == text || *end || value < low || value > high) {
		fprintf(stderr, "fifoburst: %s %s: expected a number from %ld to %ld\n",
			what, text, low, high);
		return -1;
	}
	return value;
}

int main(int argc, char **argv)
{
	struct sched_param param = { 0 };
	struct timespec next;
	long burst_ms, period_ms, priority;
	long long due;

	if (argc != 4) {
		fprintf(stderr, "usage: fifoburst BURST_MS PERIOD_MS PRIORITY\n");
		return 2;
	}
	burst_ms = parse(argv[1], "BURST_MS", 1, 10000);
	period_ms = parse(argv[2], "PERIOD_MS", 1, 100000);
	priority = parse(argv[3], "PRIORITY", 1, 99);
	if (burst_ms < 0 || period_ms < 0 || priority < 0)
		return 2;
	if (burst_ms >= period_ms) {
		fprintf(stderr, "fifoburst: BURST_MS must be shorter than PERIOD_MS\n");
		return 2;
	}
	param.sched_priority = (int)priority;
	if (syscall(SYS_sched_setscheduler, 0, SCHED_FIFO, &param) != 0) {
		fprintf(stderr, "fifoburst: SCHED_FIFO %ld: %s\n", priority, strerror(errno));
		return 3;
	}
	due = now_ns();
	for (;;) {
		long long until = now_ns() + burst_ms * NS_PER_MS;

		while (now_ns() < until)
			;
		due += period_ms * NS_PER_MS;
		next.tv_sec = due / NS_PER_S;
		next.tv_nsec = due % NS_PER_S;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
			;
	}
}
