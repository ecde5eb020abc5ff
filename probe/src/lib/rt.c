// SPDX-License-Identifier: MIT
/*
 * rt.c - real-time set-up and release (see rt.h).
 */
#include "rt.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fmt.h"
#include "rtprobe.h"

#define PMQOS_PATH "/dev/cpu_dma_latency"

#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE 6
#endif

/* The kernel's struct sched_attr (first version, 48 bytes). */
struct rt_sched_attr {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime;
	uint64_t sched_deadline;
	uint64_t sched_period;
};

/* What the permission-probe thread tries and what it found. */
struct rt_probe {
	const struct rtp_common *c;
	int err;
	char msg[160];
};

/* Switch the calling thread to SCHED_DEADLINE with the test's parameters. */
static int rt_set_deadline(const struct rtp_common *c)
{
	struct rt_sched_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.sched_policy = SCHED_DEADLINE;
	attr.sched_runtime = c->dl_runtime_ns;
	attr.sched_deadline = c->dl_deadline_ns;
	attr.sched_period = c->dl_period_ns;
#ifdef SYS_sched_setattr
	if (syscall(SYS_sched_setattr, 0, &attr, 0) == 0)
		return 0;
	return errno;
#else
	return ENOSYS;
#endif
}

/*
 * The POSIX policy and parameter of policy at priority into *pol and *sp;
 * false for SCHED_DEADLINE, which has none (sched_setattr only).
 */
static bool rt_posix_policy(enum rtp_policy policy, int priority, int *pol,
			    struct sched_param *sp)
{
	memset(sp, 0, sizeof(*sp));
	switch (policy) {
	case POLICY_FIFO:
		*pol = SCHED_FIFO;
		sp->sched_priority = priority;
		return true;
	case POLICY_RR:
		*pol = SCHED_RR;
		sp->sched_priority = priority;
		return true;
	case POLICY_DEADLINE:
		return false;
	case POLICY_OTHER:
	default:
		*pol = SCHED_OTHER;
		return true;
	}
}

/* Apply policy and priority to the calling thread; 0 or an errno value. */
static int rt_set_policy(const struct rtp_common *c, enum rtp_policy policy,
			 int priority)
{
	struct sched_param sp;
	int pol;

	if (!rt_posix_policy(policy, priority, &pol, &sp))
		return rt_set_deadline(c);
	return pthread_setschedparam(pthread_self(), pol, &sp);
}

int rt_apply_self(const struct rtp_common *c, enum rtp_policy policy,
		  int priority, int cpu, char *err, size_t errlen)
{
	cpu_set_t set;
	int rc;

	/*
	 * SCHED_DEADLINE refuses an affinity narrower than its root domain,
	 * so deadline threads are not pinned (the start record says so).
	 */
	if (cpu >= 0 && policy != POLICY_DEADLINE) {
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
		if (rc) {
			fmt_snprintf(err, errlen, "pinning a thread to CPU %d: %s",
				     cpu, strerror(rc));
			return rc;
		}
	}
	rc = rt_set_policy(c, policy, priority);
	if (rc) {
		if (policy == POLICY_DEADLINE)
			fmt_snprintf(err, errlen, "sched_setattr(SCHED_DEADLINE "
				     "runtime %llu deadline %llu period %llu ns): %s",
				     (unsigned long long)c->dl_runtime_ns,
				     (unsigned long long)c->dl_deadline_ns,
				     (unsigned long long)c->dl_period_ns,
				     strerror(rc));
		else
			fmt_snprintf(err, errlen, "setting %s priority %d: %s",
				     common_policy_name(policy), priority,
				     strerror(rc));
	}
	return rc;
}

/* Ask attr for policy/priority set before the thread runs; 0 or an errno. */
static int rt_attr_policy(pthread_attr_t *attr, enum rtp_policy policy,
			  int priority)
{
	struct sched_param sp;
	int pol, rc;

	if (!rt_posix_policy(policy, priority, &pol, &sp))
		return 0;	/* no attribute: the thread sets it itself */
	rc = pthread_attr_setinheritsched(attr, PTHREAD_EXPLICIT_SCHED);
	if (!rc)
		rc = pthread_attr_setschedpolicy(attr, pol);
	if (!rc)
		rc = pthread_attr_setschedparam(attr, &sp);
	return rc;
}

/* Ask attr for the thread to start pinned to cpu, where the C library can. */
static int rt_attr_cpu(pthread_attr_t *attr, enum rtp_policy policy, int cpu)
{
#ifdef __GLIBC__
	cpu_set_t set;

	if (cpu < 0 || policy == POLICY_DEADLINE)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_attr_setaffinity_np(attr, sizeof(set), &set);
#else
	(void)attr;
	(void)policy;
	(void)cpu;
	return 0;	/* musl: the thread pins itself, already at its policy */
#endif
}

/* pthread_create with a fresh attribute set: stack size, then extras. */
static int rt_create(pthread_t *tid, size_t stack_size, bool with_policy,
		     enum rtp_policy policy, int priority, int cpu,
		     void *(*fn)(void *), void *arg, const char **what)
{
	pthread_attr_t attr;
	int rc;

	*what = "pthread_attr_init";
	rc = pthread_attr_init(&attr);
	if (rc)
		return rc;
	*what = "pthread_attr_setstacksize";
	rc = pthread_attr_setstacksize(&attr, stack_size);
	if (!rc && with_policy) {
		*what = "setting the thread's policy attributes";
		rc = rt_attr_policy(&attr, policy, priority);
		if (!rc) {
			*what = "pthread_attr_setaffinity_np";
			rc = rt_attr_cpu(&attr, policy, cpu);
		}
	}
	if (!rc) {
		*what = "pthread_create";
		rc = pthread_create(tid, &attr, fn, arg);
	}
	pthread_attr_destroy(&attr);
	return rc;
}

int rt_thread_start(pthread_t *tid, size_t stack_size, enum rtp_policy policy,
		    int priority, int cpu, void *(*fn)(void *), void *arg,
		    bool *at_policy, char *err, size_t errlen)
{
	const char *what;
	int rc;

	*at_policy = policy != POLICY_DEADLINE;
	rc = rt_create(tid, stack_size, *at_policy, policy, priority, cpu,
		       fn, arg, &what);
	if (*at_policy && (rc == EPERM || rc == EINVAL || rc == ENOTSUP)) {
		/* refused as attributes: the thread applies them itself */
		*at_policy = false;
		rc = rt_create(tid, stack_size, false, policy, priority, cpu,
			       fn, arg, &what);
	}
	if (rc)
		fmt_snprintf(err, errlen, "%s for a thread on CPU %d: %s",
			     what, cpu, strerror(rc));
	return rc;
}

/* Thread body that tries the requested policy on itself and exits. */
static void *rt_probe_thread(void *arg)
{
	struct rt_probe *p = arg;

	p->err = rt_apply_self(p->c, p->c->policy, p->c->priority, -1, p->msg,
			       sizeof(p->msg));
	return NULL;
}

/* Write the remedy line for a refused policy into err. */
static void rt_remedy(const struct rtp_common *c, const struct rt_probe *p,
		      char *err, size_t errlen)
{
	if (c->policy == POLICY_DEADLINE && p->err == EPERM)
		fmt_snprintf(err, errlen, "SCHED_DEADLINE not permitted: run as "
			     "root or grant CAP_SYS_NICE; --policy fifo or "
			     "--policy other measure without it");
	else if (c->policy == POLICY_DEADLINE)
		fmt_snprintf(err, errlen, "SCHED_DEADLINE refused (%s): the "
			     "kernel lacks it or rejects these parameters; use "
			     "--policy fifo", p->msg);
	else if (p->err == EPERM)
		fmt_snprintf(err, errlen, "SCHED_%s priority %d not permitted: "
			     "run as root, grant CAP_SYS_NICE, or raise "
			     "RLIMIT_RTPRIO (ulimit -r %d); --policy other "
			     "measures without RT",
			     c->policy == POLICY_RR ? "RR" : "FIFO", c->priority,
			     c->priority);
	else
		fmt_snprintf(err, errlen, "%s; --policy other measures without RT",
			     p->msg);
}

/* Try the policy on a short-lived thread; 0 or RTP_EXIT_ENV with err set. */
static int rt_check_policy(const struct rtp_common *c, char *err,
			   size_t errlen)
{
	struct rt_probe p = { .c = c, .err = 0, .msg = "" };
	pthread_attr_t attr;
	pthread_t tid;
	int rc;

	if (c->policy == POLICY_OTHER)
		return 0;
	/*
	 * A small stack: glibc caches it after the join, and mlockall()
	 * would otherwise lock (and fault in) a default 8 MiB of it.
	 */
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	rc = pthread_create(&tid, &attr, rt_probe_thread, &p);
	pthread_attr_destroy(&attr);
	if (rc) {
		fmt_snprintf(err, errlen, "cannot start a thread to check the "
			     "scheduling policy: %s", strerror(rc));
		return RTP_EXIT_ENV;
	}
	pthread_join(tid, NULL);
	if (!p.err)
		return 0;
	rt_remedy(c, &p, err, errlen);
	return RTP_EXIT_ENV;
}

/* Open the PM-QoS device and hold the requested value (recorded, not fatal). */
static void rt_hold_pmqos(const struct rtp_common *c, struct rt_state *st)
{
	int32_t value = c->pmqos_us;
	ssize_t n;
	int fd;

	st->pmqos_value_us = c->pmqos_us;
	fd = open(PMQOS_PATH, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		fmt_snprintf(st->pmqos_error, sizeof(st->pmqos_error),
			     "open %s: %s", PMQOS_PATH, strerror(errno));
		return;
	}
	/* The kernel takes the value as a binary s32 (or as hex text). */
	n = write(fd, &value, sizeof(value));
	if (n != (ssize_t)sizeof(value)) {
		fmt_snprintf(st->pmqos_error, sizeof(st->pmqos_error),
			     "write %s: %s", PMQOS_PATH,
			     n < 0 ? strerror(errno) : "short write");
		close(fd);
		return;
	}
	st->pmqos_fd = fd;
}

int rt_prepare(const struct rtp_common *c, struct rt_state *st, char *err,
	       size_t errlen)
{
	int rc;

	memset(st, 0, sizeof(*st));
	st->pmqos_fd = -1;
	if (SIMULATED(c->simulate)) {
		st->simulated = true;
		fmt_snprintf(st->mlock_error, sizeof(st->mlock_error),
			     "not done: simulated run");
		fmt_snprintf(st->pmqos_error, sizeof(st->pmqos_error),
			     "not done: simulated run");
		return 0;
	}
	rc = rt_check_policy(c, err, errlen);
	if (rc)
		return rc;
	if (c->mlock) {
		if (mlockall(MCL_CURRENT | MCL_FUTURE) == 0)
			st->mlocked = true;
		else
			fmt_snprintf(st->mlock_error, sizeof(st->mlock_error),
				     "mlockall: %s (raise RLIMIT_MEMLOCK: "
				     "ulimit -l unlimited)", strerror(errno));
	} else {
		fmt_snprintf(st->mlock_error, sizeof(st->mlock_error),
			     "not done: --no-mlock");
	}
	if (c->pmqos)
		rt_hold_pmqos(c, st);
	else
		fmt_snprintf(st->pmqos_error, sizeof(st->pmqos_error),
			     "not done: --no-pmqos");
	return 0;
}

int rt_start_raise(const struct rtp_common *c, struct rt_state *st,
		   char *err, size_t errlen)
{
	struct sched_param sp;
	int policy, rc;

	if (SIMULATED(c->simulate) ||
	    (c->policy != POLICY_FIFO && c->policy != POLICY_RR))
		return 0;
	rc = pthread_getschedparam(pthread_self(), &policy, &sp);
	if (rc) {
		fmt_snprintf(err, errlen, "reading the main thread's policy: "
			     "%s", strerror(rc));
		return rc;
	}
	rc = rt_set_policy(c, c->policy, c->priority);
	if (rc) {
		fmt_snprintf(err, errlen, "raising the main thread to %s "
			     "priority %d for the start: %s",
			     common_policy_name(c->policy), c->priority,
			     strerror(rc));
		return rc;
	}
	st->main_raised = true;
	st->main_policy = policy;
	st->main_priority = sp.sched_priority;
	return 0;
}

int rt_start_drop(struct rt_state *st, char *err, size_t errlen)
{
	struct sched_param sp;
	int rc;

	if (!st->main_raised)
		return 0;
	st->main_raised = false;
	memset(&sp, 0, sizeof(sp));
	sp.sched_priority = st->main_priority;
	rc = pthread_setschedparam(pthread_self(), st->main_policy, &sp);
	if (rc)
		fmt_snprintf(err, errlen, "giving the main thread its policy "
			     "back: %s", strerror(rc));
	return rc;
}

void rt_release(struct rt_state *st)
{
	if (st->pmqos_fd >= 0) {
		close(st->pmqos_fd);
		st->pmqos_fd = -1;
	}
	if (st->mlocked) {
		munlockall();
		st->mlocked = false;
	}
}

/* Write a string member, or null when it is empty. */
static void rt_str_or_null(struct json *j, const char *key, const char *s)
{
	if (s[0])
		json_str(j, key, s);
	else
		json_null(j, key);
}

void rt_write_state(struct json *j, const char *key,
		    const struct rtp_common *c, const struct rt_state *st)
{
	bool rt_policy = c->policy == POLICY_FIFO || c->policy == POLICY_RR;

	json_begin_object(j, key);
	if (SIMULATED(st->simulated)) {
		json_str(j, "policy", "other");
		json_u64(j, "priority", 0);
	} else {
		json_str(j, "policy", common_policy_name(c->policy));
		json_u64(j, "priority", rt_policy ? (uint64_t)c->priority : 0);
	}
	json_bool(j, "pinned", !SIMULATED(st->simulated) ?
		  c->policy != POLICY_DEADLINE : true);
	if (c->policy == POLICY_DEADLINE && !SIMULATED(st->simulated)) {
		json_begin_object(j, "deadline");
		json_u64(j, "runtime_ns", c->dl_runtime_ns);
		json_u64(j, "deadline_ns", c->dl_deadline_ns);
		json_u64(j, "period_ns", c->dl_period_ns);
		json_end_object(j);
	}
	json_bool(j, "mlockall", st->mlocked);
	rt_str_or_null(j, "mlock_error", st->mlock_error);
	json_begin_object(j, "pmqos");
	json_bool(j, "held", st->pmqos_fd >= 0);
	json_i64(j, "value_us", st->pmqos_fd >= 0 ? st->pmqos_value_us :
		 c->pmqos_us);
	rt_str_or_null(j, "error", st->pmqos_error);
	json_end_object(j);
	json_end_object(j);
}
