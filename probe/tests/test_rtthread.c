// SPDX-License-Identifier: MIT
/*
 * test_rtthread.c - rt_thread_start (rt.h): a measuring thread is at its
 * policy and priority, and with glibc pinned, from its very first
 * instruction, not only after it raised itself; SCHED_DEADLINE and refused
 * attributes start a plain thread and say so; the main thread holds the
 * run's policy while it starts them (rt_start_raise) and gives it back.
 */
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "rt.h"
#include "tap.h"

#define STACK (128 * 1024)

/* What a thread found at its first instruction. */
struct first_look {
	int rc;
	int policy;
	int priority;
	cpu_set_t cpus;
};

/* Thread body: look at its own policy, priority and CPUs, nothing else. */
static void *look_first(void *arg)
{
	struct first_look *seen = arg;
	struct sched_param sp;

	seen->rc = pthread_getschedparam(pthread_self(), &seen->policy, &sp);
	seen->priority = sp.sched_priority;
	if (!seen->rc)
		seen->rc = pthread_getaffinity_np(pthread_self(),
						  sizeof(seen->cpus),
						  &seen->cpus);
	return NULL;
}

/* Start look_first through rt_thread_start and wait for it; its rc. */
static int start_and_join(enum rtp_policy policy, int priority, int cpu,
			  struct first_look *seen, bool *at_policy)
{
	char err[160] = "";
	pthread_t tid;
	int rc;

	memset(seen, 0, sizeof(*seen));
	seen->rc = -1;
	rc = rt_thread_start(&tid, STACK, policy, priority, cpu, look_first,
			     seen, at_policy, err, sizeof(err));
	if (rc) {
		tap_diag("rt_thread_start: %s", err);
		return rc;
	}
	pthread_join(tid, NULL);
	return 0;
}

/* The last CPU this process may run on (a test of pinning needs one). */
static int last_cpu(void)
{
	cpu_set_t set;
	int cpu, last = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &set))
			last = cpu;
	return last;
}

/* True when set holds cpu and no other CPU. */
static bool only_cpu(const cpu_set_t *set, int cpu)
{
	return CPU_COUNT(set) == 1 && CPU_ISSET(cpu, set);
}

static void test_fifo(struct tap *t, int cpu)
{
	struct first_look seen;
	bool at_policy = false;

	tap_is_int(t, start_and_join(POLICY_FIFO, 10, cpu, &seen, &at_policy),
		   0, "a SCHED_FIFO thread starts");
	tap_is_int(t, seen.rc, 0, "it read its own policy and CPUs");
	if (!at_policy) {
		/* no CAP_SYS_NICE: started plainly, for rt_apply_self */
		tap_ok(t, seen.policy == SCHED_OTHER,
		       "# SKIP SCHED_FIFO refused here (not root): the fallback "
		       "thread starts as an ordinary one");
		return;
	}
	tap_is_int(t, seen.policy, SCHED_FIFO,
		   "SCHED_FIFO at the thread's first instruction");
	tap_is_int(t, seen.priority, 10, "priority 10 at its first instruction");
#ifdef __GLIBC__
	tap_ok(t, only_cpu(&seen.cpus, cpu),
	       "pinned to CPU %d at its first instruction", cpu);
#endif
}

static void test_other_pinned(struct tap *t, int cpu)
{
	struct first_look seen;
	bool at_policy = false;

	tap_is_int(t, start_and_join(POLICY_OTHER, 0, cpu, &seen, &at_policy),
		   0, "a SCHED_OTHER thread starts");
	tap_ok(t, at_policy, "SCHED_OTHER is given as an attribute");
	tap_is_int(t, seen.policy, SCHED_OTHER,
		   "SCHED_OTHER at the thread's first instruction");
#ifdef __GLIBC__
	tap_ok(t, only_cpu(&seen.cpus, cpu),
	       "pinned to CPU %d at its first instruction", cpu);
#endif
}

static void test_deadline_is_plain(struct tap *t, int cpu)
{
	struct first_look seen;
	bool at_policy = true;

	tap_is_int(t, start_and_join(POLICY_DEADLINE, 0, cpu, &seen,
				     &at_policy),
		   0, "a thread for SCHED_DEADLINE starts");
	tap_ok(t, !at_policy, "SCHED_DEADLINE has no attribute: not at policy");
	tap_is_int(t, seen.policy, SCHED_OTHER,
		   "it starts at the creator's policy, for itself to set");
	tap_ok(t, !only_cpu(&seen.cpus, cpu) || cpu == 0,
	       "a SCHED_DEADLINE thread is not pinned");
}

static void test_refused_attributes(struct tap *t, int cpu)
{
	struct first_look seen;
	bool at_policy = true;

	/* Linux's SCHED_FIFO priorities are 1-99: 0 is refused (EINVAL). */
	tap_is_int(t, start_and_join(POLICY_FIFO, 0, cpu, &seen, &at_policy),
		   0, "refused attributes still start a thread");
	tap_ok(t, !at_policy, "and say it is not at its policy");
	tap_is_int(t, seen.policy, SCHED_OTHER,
		   "it starts as an ordinary thread, for rt_apply_self");
}

static void test_start_raise(struct tap *t, int cpu)
{
	struct rtp_common c;
	struct rt_state st;
	struct first_look seen;
	struct sched_param sp;
	bool at_policy = false;
	char err[160] = "";
	int policy = -1;

	memset(&c, 0, sizeof(c));
	memset(&st, 0, sizeof(st));
	c.policy = POLICY_FIFO;
	c.priority = 10;
	if (rt_start_raise(&c, &st, err, sizeof(err))) {
		tap_ok(t, true, "# SKIP the main thread cannot take SCHED_FIFO "
		       "here (%s)", err);
		return;
	}
	pthread_getschedparam(pthread_self(), &policy, &sp);
	tap_ok(t, st.main_raised && policy == SCHED_FIFO &&
	       sp.sched_priority == 10,
	       "the starting main thread holds SCHED_FIFO 10");
	/* the record writers must not inherit it */
	start_and_join(POLICY_OTHER, 0, -1, &seen, &at_policy);
	tap_is_int(t, seen.policy, SCHED_OTHER,
		   "a SCHED_OTHER thread it starts is so from its start");
	start_and_join(POLICY_FIFO, 20, cpu, &seen, &at_policy);
	tap_ok(t, seen.policy == SCHED_FIFO && seen.priority == 20,
	       "a measuring thread gets its own priority, not the creator's");
	tap_is_int(t, rt_start_drop(&st, err, sizeof(err)), 0,
		   "the main thread gives the policy back");
	pthread_getschedparam(pthread_self(), &policy, &sp);
	tap_is_int(t, policy, SCHED_OTHER, "and is SCHED_OTHER again");
	tap_is_int(t, rt_start_drop(&st, err, sizeof(err)), 0,
		   "giving it back twice is harmless");
}

static void test_start_raise_other(struct tap *t)
{
	struct rtp_common c;
	struct rt_state st;
	char err[160] = "";
	struct sched_param sp;
	int policy = -1;

	memset(&c, 0, sizeof(c));
	memset(&st, 0, sizeof(st));
	c.policy = POLICY_OTHER;
	tap_is_int(t, rt_start_raise(&c, &st, err, sizeof(err)), 0,
		   "--policy other: nothing to raise");
	pthread_getschedparam(pthread_self(), &policy, &sp);
	tap_ok(t, !st.main_raised && policy == SCHED_OTHER,
	       "the main thread stays SCHED_OTHER");
}

int main(void)
{
	struct tap t = { 0, 0 };
	int cpu = last_cpu();

	test_fifo(&t, cpu);
	test_other_pinned(&t, cpu);
	test_deadline_is_plain(&t, cpu);
	test_refused_attributes(&t, cpu);
	test_start_raise(&t, cpu);
	test_start_raise_other(&t);
	return tap_done(&t);
}
