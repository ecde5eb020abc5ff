/* SPDX-License-Identifier: MIT */
/*
 * rt.h - real-time set-up and release.
 *
 * rt_prepare() runs in the main thread before any measuring thread starts:
 * it checks that the requested policy/priority can be set (by setting it on
 * a short-lived probe thread), locks memory (mlockall MCL_CURRENT|MCL_FUTURE)
 * and opens /dev/cpu_dma_latency, writing the requested value and keeping the
 * descriptor open for the run (the kernel drops the request when it closes).
 * On failure it writes one line naming the remedy into err and returns
 * RTP_EXIT_ENV (3); e.g.
 *   "SCHED_FIFO priority 80 not permitted: run as root, grant CAP_SYS_NICE,
 *    or raise RLIMIT_RTPRIO (ulimit -r 80); --policy other measures without RT"
 * A missing /dev/cpu_dma_latency is recorded (held=false, reason) rather than
 * fatal.  Everything effective is recorded in struct rt_state and written to
 * the start record by rt_write_state().
 */
#ifndef RTP_RT_H
#define RTP_RT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "common.h"
#include "json.h"

struct rt_state {
	bool mlocked;
	char mlock_error[96];
	int pmqos_fd;        /* -1 when not held */
	int pmqos_value_us;
	char pmqos_error[96];
	bool simulated;      /* nothing was set up */
	/* the main thread's own policy while it holds the run's */
	bool main_raised;
	int main_policy;
	int main_priority;
};

/* Check permissions, mlockall, hold PM-QoS; 0 or RTP_EXIT_ENV with err set. */
int rt_prepare(const struct rtp_common *c, struct rt_state *st, char *err,
	       size_t errlen);

/*
 * Raise the calling (main) thread to the run's FIFO or RR policy and priority
 * for the run's start: from just before t0 until its measuring threads are
 * started, so that on a CPU crowded with ordinary tasks the start (t0, the
 * start record, each pthread_create) does not wait for turns among them
 * while the measured time runs.  Its own policy is kept in st for
 * rt_start_drop.  Nothing for other policies or a simulated run.  0 or an
 * errno value (err set); a refusal only leaves the start slower.
 */
int rt_start_raise(const struct rtp_common *c, struct rt_state *st,
		   char *err, size_t errlen);

/* Give the main thread its own policy back; 0 or an errno (err set). */
int rt_start_drop(struct rt_state *st, char *err, size_t errlen);

/* Release PM-QoS and unlock memory; safe to call twice. */
void rt_release(struct rt_state *st);

/*
 * Apply policy/priority and pin the calling thread to cpu (cpu < 0: no pin).
 * Returns 0 or an errno value; err names the failing call.
 */
int rt_apply_self(const struct rtp_common *c, enum rtp_policy policy,
		  int priority, int cpu, char *err, size_t errlen);

/*
 * Start fn(arg) on a new thread (stack_size bytes of stack) that runs at
 * policy/priority from its first instruction: the attributes ask for them
 * (PTHREAD_EXPLICIT_SCHED), and the C library sets them on the new thread
 * before it runs any of fn (glibc and musl both do, musl through the raw
 * sched_setscheduler syscall).  Where the C library has
 * pthread_attr_setaffinity_np (glibc), the thread is also created pinned to
 * cpu (cpu < 0: not pinned); elsewhere (musl) it starts on the creator's
 * CPUs at its policy, so that its own rt_apply_self() pins it at once, not
 * after a turn among the CPU's ordinary tasks.  SCHED_DEADLINE has no
 * pthread attribute and refuses a pinned thread: such a thread starts at the
 * creator's policy, unpinned, and sets its policy itself (rt_apply_self).
 * When pthread_create refuses the attributes (EPERM, EINVAL, ENOTSUP), the
 * thread is started plainly instead and *at_policy is false: its body must
 * apply policy and pinning itself (rt_apply_self reports a refusal).
 * Returns 0 or pthread_create's errno value; err names the failing call.
 */
int rt_thread_start(pthread_t *tid, size_t stack_size, enum rtp_policy policy,
		    int priority, int cpu, void *(*fn)(void *), void *arg,
		    bool *at_policy, char *err, size_t errlen);

/* Write the "rt" object of the start record. */
void rt_write_state(struct json *j, const char *key,
		    const struct rtp_common *c, const struct rt_state *st);

#endif /* RTP_RT_H */
